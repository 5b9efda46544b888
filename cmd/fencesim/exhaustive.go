package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fencesim/fencesim/internal/systems"
)

// runExhaustive is explore --exhaustive: a system's bounded exhaustive
// mode (Support.Exhaustive; system A's model/judge/harness.Space). It
// prints the worlds, the number of schedules, the time and the result:
// exit 0 when every run passed, 1 when one failed, 2 for bad usage or a
// system without the mode.
func runExhaustive(e *env, cmd string, sel *selection, explicit bool, pairs, workers int) int {
	with := supporting(func(s systems.Support) bool { return s.Exhaustive != nil })
	if !explicit && !sel.changed() && len(with) > 0 {
		sel.system = with[0]
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
	if len(syss) != 1 || syss[0].Supports().Exhaustive == nil {
		var names, instead []string
		for _, s := range syss {
			names = append(names, s.Name())
			if n := s.Supports().NoExhaustive; n != "" {
				instead = append(instead, n)
			}
		}
		why := ""
		if len(instead) > 0 {
			why = " (" + strings.Join(instead, "; ") + ")"
		}
		return e.fail(cmd, usagef("--exhaustive supports --system %s only, not %s%s", strings.Join(with, ","), strings.Join(names, ","), why))
	}
	sys := syss[0]
	d, err := sel.designOf(sys)
	if err != nil {
		return e.fail(cmd, err)
	}
	r, err := systems.RunExhaustive(sys, d, pairs, workers, 5)
	if err != nil {
		return e.fail(cmd, err)
	}
	w := e.stdout
	fmt.Fprintf(w, "exhaustive mode, system %s, design %s\n", sys.Name(), sel.describe(d))
	var counts []string
	for _, x := range r.Worlds {
		fmt.Fprintf(w, "%s:\n  %s\n", x.Title, strings.ReplaceAll(x.Describe, "\n", "\n  "))
		c := fmt.Sprintf("%d %s", x.Runs, x.Label)
		if x.Runs < x.Total {
			c += fmt.Sprintf(" (an even spread of the %d %s; --pairs 0 runs all)", x.Total, x.Label)
		}
		counts = append(counts, c)
	}
	fmt.Fprintf(w, "schedules: %s + %d fault-free = %d runs in %.1fs on %d workers\n",
		strings.Join(counts, " + "), r.FaultFree, r.Runs(), r.Elapsed.Seconds(), workers)
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
	fmt.Fprintf(w, "result: FAIL in %d runs (runs failing each property: %s)\n", r.Failed, strings.Join(props, ", "))
	for i, f := range r.Failures {
		fmt.Fprintf(w, "failure %d (%s world): %s: %s\n  schedule: %s\n  json: %s\n", i+1, f.World, f.Property, oneLine(f.Message),
			strings.ReplaceAll(f.Schedule.String(), "\n", "; "), f.Schedule.JSON())
	}
	if n := r.Failed - len(r.Failures); n > 0 {
		fmt.Fprintf(w, "(%d more failing runs not shown: the first %d in enumeration order are)\n", n, len(r.Failures))
	}
	return 1
}

// supporting lists the systems (hidden ones aside) whose Support passes
// has.
func supporting(has func(systems.Support) bool) []string {
	var out []string
	for _, s := range systems.All() {
		if has(s.Supports()) {
			out = append(out, s.Name())
		}
	}
	return out
}
