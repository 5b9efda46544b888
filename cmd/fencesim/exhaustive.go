package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fencesim/fencesim/internal/systems"
)

// runExhaustive is explore --exhaustive: system A's bounded exhaustive
// mode (model/judge/harness.Space). It prints the worlds, the number of
// schedules, the time and the result: exit 0 when every run passed, 1 when
// one failed, 2 for bad usage or another system.
func runExhaustive(e *env, cmd string, sel *selection, explicit bool, pairs, workers int) int {
	if !explicit && !sel.changed() {
		sel.system = "arbiter"
	}
	if pairs < 0 {
		return e.fail(cmd, usagef("--pairs %d: want 0 (every pair) or more", pairs))
	}
	if err := checkWorkers(workers); err != nil {
		return e.fail(cmd, err)
	}
	syss, err := sel.systems(explicit)
	if err != nil {
		return e.fail(cmd, err)
	}
	if len(syss) != 1 || syss[0].Name() != "arbiter" {
		var names []string
		for _, s := range syss {
			names = append(names, s.Name())
		}
		return e.fail(cmd, usagef("--exhaustive supports --system arbiter only, not %s (twopc has its own crash enumeration: go test ./model/twopc/harness -run Enumerate)", strings.Join(names, ",")))
	}
	d, err := sel.designOf(syss[0])
	if err != nil {
		return e.fail(cmd, err)
	}
	r, err := systems.RunExhaustive(d, pairs, workers, 5)
	if err != nil {
		return e.fail(cmd, err)
	}
	w := e.stdout
	fmt.Fprintf(w, "exhaustive mode, system arbiter, design %s\n", sel.describe(d))
	fmt.Fprintf(w, "single faults:\n  %s\n", strings.ReplaceAll(r.Singles, "\n", "\n  "))
	fmt.Fprintf(w, "the old leader (A-S6):\n  %s\n", strings.ReplaceAll(r.Leaders, "\n", "\n  "))
	fmt.Fprintf(w, "pairs:\n  %s\n", strings.ReplaceAll(r.PairWorld, "\n", "\n  "))
	spread := ""
	if r.NPairs < r.PairsTotal {
		spread = fmt.Sprintf(" (an even spread of the %d pairs; --pairs 0 runs all)", r.PairsTotal)
	}
	fmt.Fprintf(w, "schedules: %d singles + %d old-leader freezes + %d pairs%s + 3 fault-free = %d runs in %.1fs on %d workers\n",
		r.NSingles, r.NLeaders, r.NPairs, spread, r.NSingles+r.NLeaders+r.NPairs+3, r.Elapsed.Seconds(), workers)
	if r.Failed == 0 {
		fmt.Fprintf(w, "result: PASS (every property held in every run)\n")
		return 0
	}
	var props []string
	for p := range r.ByProperty {
		props = append(props, p)
	}
	sort.Strings(props)
	for i, p := range props {
		props[i] = fmt.Sprintf("%s: %d", p, r.ByProperty[p])
	}
	fmt.Fprintf(w, "result: FAIL in %d runs (%s)\n", r.Failed, strings.Join(props, ", "))
	for i, f := range r.Failures {
		fmt.Fprintf(w, "failure %d (%s world): %s: %s\n  schedule: %s\n  json: %s\n", i+1, f.World, f.Property, oneLine(f.Message),
			strings.ReplaceAll(f.Schedule.String(), "\n", "; "), f.Schedule.JSON())
	}
	return 1
}
