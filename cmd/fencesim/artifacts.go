package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	art "github.com/fencesim/fencesim/internal/artifact"
	"github.com/fencesim/fencesim/internal/summary"
	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/report"
)

// artifact minimizes one failing seed and writes, under dir:
//
//	<system>-seed-<N>.jsonl            the failing run's full trace
//	<system>-seed-<N>-minimized.jsonl  the run of the minimized schedule
//	<system>-seed-<N>-schedule.txt     the minimized schedule, as Go to paste into a test
//	<system>-seed-<N>-porcupine.html   porcupine's visualization (when a linearization failed)
//	<system>-seed-<N>-report.html      the self-contained HTML report
//
// The minimization stops when minCtx ends (its schedule is then marked
// incomplete); when ctx ends, no further run starts and nothing is
// written: ok is false and the artifact is skipped.
func artifact(ctx, minCtx context.Context, dir string, sys systems.System, d systems.Design, seed uint64, f systems.Faults, budget int, probes []report.Probe, sel selection) (_ summary.Artifact, ok bool) {
	a := summary.Artifact{Seed: seed}
	fail := func(err error) (summary.Artifact, bool) {
		a.Error = err.Error()
		return a, true
	}
	if ctx.Err() != nil {
		return a, false
	}
	r := systems.Run(sys, d, seed, f, systems.Options{})
	if len(r.Failed()) == 0 {
		return fail(fmt.Errorf("seed %d did not fail when run again: the runs are not deterministic", seed))
	}
	m, err := systems.MinimizeContext(minCtx, sys, d, seed, f, r, budget)
	if ctx.Err() != nil || (err != nil && minCtx.Err() != nil) {
		return a, false
	}
	if err != nil {
		return fail(err)
	}
	a.Property, a.MinRuns, a.Complete, a.Lines = m.Property, m.Runs, m.Complete, scheduleLines(m)
	for _, x := range m.Original {
		if systems.Removable(x) {
			a.Faults++
		}
	}
	for i, x := range m.Schedule {
		if systems.Removable(x) {
			a.Kept++
			if m.Needed[i] {
				a.Needed++
			}
		}
	}
	full := systems.Run(sys, d, seed, f, systems.Options{Full: true})
	if ctx.Err() != nil {
		return a, false
	}
	minFull := systems.Run(sys, d, seed, f, systems.Options{Full: true, Schedule: m.Schedule, Given: true})
	if ctx.Err() != nil {
		return a, false
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	base := filepath.Join(dir, fmt.Sprintf("%s-seed-%d", sys.Name(), seed))
	a.Trace, a.Minimized, a.Schedule, a.Report = base+".jsonl", base+"-minimized.jsonl", base+"-schedule.txt", base+"-report.html"
	hash, err := art.Trace(a.Trace, full)
	if err != nil {
		return fail(err)
	}
	minHash, err := art.Trace(a.Minimized, minFull)
	if err != nil {
		return fail(err)
	}
	if err := os.WriteFile(a.Schedule, []byte(scheduleText(sys, d, seed, f, m, a, full)), 0o644); err != nil {
		return fail(err)
	}
	// The report draws the minimized run (the failing one when the
	// minimized schedule, run in full, does not fail), opening on the
	// needed faults and the violation, with the key's story.
	shown, shownTrace, shownHash, title := minFull, a.Minimized, minHash, "minimized run"
	if len(minFull.Failed()) == 0 {
		shown, shownTrace, shownHash, title = full, a.Trace, hash, "failing run"
	}
	st := art.StoryOf(shown, m.Property, neededActions(m), timelineLines)
	a.Timeline = st.Lines
	a.Porcupine, err = art.Report(a.Report, base+"-porcupine.html", shown, art.Page{
		Story:     st,
		Title:     fmt.Sprintf("%s seed %d: %s failed (%s; the %s)", sys.Name(), seed, m.Property, sel.describe(d), title),
		Schedule:  scheduleLines(m),
		Probes:    probes,
		Hash:      shownHash,
		Replay:    "fencesim replay " + shownTrace,
		TracePath: shownTrace,
	})
	if err != nil {
		return fail(err)
	}
	return a, true
}

// timelineLines bounds the terminal timeline of a failure.
const timelineLines = 25

// neededActions are the minimized schedule's fault actions the failure
// needs.
func neededActions(m *systems.Minimized) []sim.Action {
	var out []sim.Action
	for i, x := range m.Schedule {
		if systems.Removable(x) && m.Needed[i] {
			out = append(out, x)
		}
	}
	return out
}

// writePage writes the HTML report of a full run to path (the page explore,
// run and report write), and porcupine's visualization, when a
// linearization failed, to base+"-porcupine.html", whose path it returns.
// tracePath is the run's trace file, hash its hash; schedule is the
// minimized schedule (nil: none). A failing run's page tells the story of
// its first failure (no fault is marked needed: the run is not minimized).
func writePage(path, base string, full *systems.Result, title, tracePath, hash string, schedule []string, probes []report.Probe) (porcupine string, err error) {
	return art.Report(path, base+"-porcupine.html", full, art.Page{Story: art.StoryOf(full, "", nil, timelineLines),
		Title: title, Schedule: schedule, Probes: probes, Hash: hash, Replay: "fencesim replay " + tracePath, TracePath: tracePath})
}

// scheduleLines renders the minimized schedule for the report.
func scheduleLines(m *systems.Minimized) []string {
	var out []string
	for i, a := range m.Schedule {
		mark := "needed    "
		switch {
		case !systems.Removable(a):
			mark = "end       "
		case !m.Needed[i]:
			mark = "not needed"
		}
		out = append(out, mark+"  "+a.String())
	}
	return out
}

// scheduleText is the minimized schedule as Go to paste into a regression
// test, with how it was found.
func scheduleText(sys systems.System, d systems.Design, seed uint64, f systems.Faults, m *systems.Minimized, a summary.Artifact, full *systems.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s seed %d, faults %s, design %s\n", sys.Name(), seed, f, d.JSON)
	for _, v := range full.Failed() {
		fmt.Fprintf(&b, "// %s\n", clip(v.String(), 400))
	}
	fmt.Fprintf(&b, "//\n// Minimized with the seed fixed, removing fault actions while %s kept failing:\n", m.Property)
	fmt.Fprintf(&b, "// %d -> %d fault actions in %d runs; removing each kept action alone:\n", a.Faults, a.Kept, a.MinRuns)
	for _, l := range scheduleLines(m) {
		fmt.Fprintf(&b, "//   %s\n", l)
	}
	if !m.Complete {
		fmt.Fprintf(&b, "// (the minimization ran out of its budget: the schedule may not be minimal)\n")
	}
	fmt.Fprintf(&b, "//\n// Traces: %s (the failing run), %s (the minimized run);\n", a.Trace, a.Minimized)
	fmt.Fprintf(&b, "// replay either with: fencesim replay FILE\n//\n")
	fmt.Fprintf(&b, "// To play it in a Go test (imports: %s, simtest; all exported):\n", systems.GoImports(m.Schedule))
	fmt.Fprintf(&b, "//\n//\tr := simtest.MustRun(t, %q, `%s`, %q, %d, %q, schedule)\n", sys.Name(), d.JSON, d.World, seed, f)
	fmt.Fprintf(&b, "//\t// r.Fails(%q) is true: assert it while the bug stands, assert.False once fixed\n\n", m.Property)
	fmt.Fprintf(&b, "schedule := %s\n", systems.GoLiteral(m.Schedule))
	return b.String()
}

// probesOf are the exploration's probe rates, for the report.
func probesOf(x summary.System) []report.Probe {
	var out []report.Probe
	for _, p := range x.Probes {
		out = append(out, report.Probe{Name: p.Name, Count: p.Runs, Runs: x.Runs})
	}
	return out
}
