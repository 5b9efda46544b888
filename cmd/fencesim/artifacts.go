package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/traces"
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
func artifact(ctx, minCtx context.Context, dir string, sys systems.System, d systems.Design, seed uint64, f systems.Faults, budget int, probes []report.Probe, sel selection) (_ Artifact, ok bool) {
	a := Artifact{Seed: seed}
	fail := func(err error) (Artifact, bool) {
		a.Error = err.Error()
		return a, true
	}
	if ctx.Err() != nil {
		return a, false
	}
	r := sys.Run(d, seed, f, systems.Options{})
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
	a.Property, a.MinRuns, a.Complete = m.Property, m.Runs, m.Complete
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
	full := sys.Run(d, seed, f, systems.Options{Full: true})
	if ctx.Err() != nil {
		return a, false
	}
	minFull := sys.Run(d, seed, f, systems.Options{Full: true, Schedule: m.Schedule, Given: true})
	if ctx.Err() != nil {
		return a, false
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	base := filepath.Join(dir, fmt.Sprintf("%s-seed-%d", sys.Name(), seed))
	a.Trace, a.Minimized, a.Schedule, a.Report = base+".jsonl", base+"-minimized.jsonl", base+"-schedule.txt", base+"-report.html"
	hash, err := writeTrace(a.Trace, full)
	if err != nil {
		return fail(err)
	}
	if _, err := writeTrace(a.Minimized, minFull); err != nil {
		return fail(err)
	}
	if err := os.WriteFile(a.Schedule, []byte(scheduleText(sys, d, seed, f, m, a, full)), 0o644); err != nil {
		return fail(err)
	}
	if a.Porcupine, err = writePage(a.Report, base, full, fmt.Sprintf("%s seed %d: %s failed (%s)", sys.Name(), seed, m.Property, sel.describe(d)),
		a.Trace, hash, scheduleLines(m), probes); err != nil {
		return fail(err)
	}
	return a, true
}

// writePage writes the HTML report of a full run to path (the page explore,
// run and report write), and porcupine's visualization, when a
// linearization failed, to base+"-porcupine.html", whose path it returns.
// tracePath is the run's trace file, hash its hash; schedule is the
// minimized schedule (nil: none).
func writePage(path, base string, full *systems.Result, title, tracePath, hash string, schedule []string, probes []report.Probe) (porcupine string, err error) {
	var lin []byte
	if full.Visualize != nil {
		var buf bytes.Buffer
		if err := full.Visualize(&buf); err == nil {
			lin = buf.Bytes()
			porcupine = base + "-porcupine.html"
			if err := os.WriteFile(porcupine, lin, 0o644); err != nil {
				return "", err
			}
		}
	}
	in := report.Input{
		Title:         title,
		Header:        full.Header,
		Events:        full.Events,
		Nodes:         full.Nodes,
		Schedule:      schedule,
		Probes:        probes,
		Hash:          hash,
		Replay:        "fencesim replay " + tracePath,
		TracePath:     tracePath,
		Linearization: lin,
	}
	for _, v := range full.Failed() {
		in.Violations = append(in.Violations, report.Violation{Property: v.Property, Message: v.Message, Events: v.Events, Detail: v.Detail})
	}
	for _, t := range full.Timings {
		in.Timings = append(in.Timings, report.Timing{Name: t.Name, D: t.D})
	}
	var page bytes.Buffer
	if err := report.Write(&page, in); err != nil {
		return porcupine, err
	}
	return porcupine, os.WriteFile(path, page.Bytes(), 0o644)
}

// writeTrace writes a run's header and events as JSON Lines and returns
// the trace's canonical hash.
func writeTrace(path string, r *systems.Result) (string, error) {
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	h := r.Header
	if h.Commit == "" {
		h.Commit = revision() // not part of the hash: a seed reproduces a run only on its commit
	}
	w, err := traces.NewWriter(f, h)
	if err != nil {
		f.Close()
		return "", err
	}
	for i := range r.Events {
		w.Record(&r.Events[i])
	}
	if err := w.Close(); err != nil {
		f.Close()
		return "", err
	}
	return w.Hash(), f.Close()
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
func scheduleText(sys systems.System, d systems.Design, seed uint64, f systems.Faults, m *systems.Minimized, a Artifact, full *systems.Result) string {
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
	fmt.Fprintf(&b, "// To play it in a Go test (imports: clock, sim, time, internal/systems):\n")
	fmt.Fprintf(&b, "//\n//\tsys := systems.%s{}\n", goTypeOf(sys))
	fmt.Fprintf(&b, "//\td, _ := sys.NewDesign(nil, nil, []byte(`%s`))\n", d.JSON)
	if d.World != "" {
		fmt.Fprintf(&b, "//\td.World = %q // the world the seed draws\n", d.World)
	}
	fmt.Fprintf(&b, "//\tr := sys.Run(d, %d, systems.Faults(%q), systems.Options{Schedule: schedule, Given: true})\n", seed, f)
	fmt.Fprintf(&b, "//\t// r.Fails(%q) is true\n\n", m.Property)
	fmt.Fprintf(&b, "schedule := %s\n", systems.GoLiteral(m.Schedule))
	return b.String()
}

func goTypeOf(sys systems.System) string {
	switch sys.(type) {
	case systems.Arbiter:
		return "Arbiter"
	case systems.Outbox:
		return "Outbox"
	case systems.TwoPC:
		return "TwoPC"
	}
	return fmt.Sprintf("%T", sys)
}

// probesOf are the exploration's probe rates, for the report.
func probesOf(x SystemSummary) []report.Probe {
	var out []report.Probe
	for _, p := range x.Probes {
		out = append(out, report.Probe{Name: p.Name, Count: p.Runs, Runs: x.Runs})
	}
	return out
}

// revision is the source revision the binary was built from (with
// "-dirty" when the tree had changes): from the build's VCS stamp, else from
// git in the working directory (go run, -buildvcs=false), else "unknown".
func revision() string {
	rev, dirty := "", false
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if rev == "" {
		out, err := exec.Command("git", "rev-parse", "HEAD").Output()
		if err != nil {
			return "unknown"
		}
		rev = strings.TrimSpace(string(out))
		st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
		dirty = err == nil && len(strings.TrimSpace(string(st))) > 0
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
