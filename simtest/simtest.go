package simtest

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/internal/artifact"
	"github.com/fencesim/fencesim/internal/hunt"
	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// System, Design, Result and Faults are the command line's own types.
type (
	System = systems.System
	Design = systems.Design
	Result = systems.Result
	Faults = systems.Faults
)

// The fault intensities.
const (
	None     = systems.None
	Moderate = systems.Moderate
	Heavy    = systems.Heavy
)

var (
	outDir = flag.String("fencesim.out", "fencesim-out", "simtest: the directory for a failing property's artifacts (relative to the test's package directory)")
	draws  = flag.Bool("fencesim.draws", false, "simtest: print rapid's log of every draw of a failing check (thousands of lines)")
)

// NewDesign is a system's design by name, with knobs turned on and
// parameters set ("lease=90s"), as fencesim --system, --knob and --set
// (a knob or a parameter given twice is refused, as there).
func NewDesign(system string, knobs []string, sets ...string) (System, Design, error) {
	for i, k := range knobs {
		if slices.Contains(knobs[:i], k) {
			return nil, Design{}, fmt.Errorf("knob %s is given twice: give it once", k)
		}
	}
	for i, s := range sets {
		name, _, _ := strings.Cut(s, "=")
		for _, prev := range sets[:i] {
			if p, _, _ := strings.Cut(prev, "="); strings.TrimSpace(p) == strings.TrimSpace(name) {
				return nil, Design{}, fmt.Errorf("parameter %s is set twice (%s, %s): set it once, with the value you mean", strings.TrimSpace(name), prev, s)
			}
		}
	}
	sys, err := systems.ByName(system)
	if err != nil {
		return nil, Design{}, err
	}
	d, err := sys.NewDesign(knobs, sets, nil)
	return sys, d, err
}

// Options change Check.
type Options struct {
	// Faults is the fault intensity (default Moderate).
	Faults Faults
	// World is system A's world mode: drawn (default), fixed or wide
	// (refused for a system that draws no worlds, as MustRun and --world
	// refuse it).
	World string
	// Seed and Checks fix rapid's seed and its number of checks for this
	// Check (0: rapid's flags, -rapid.seed and -rapid.checks, decide; its
	// seed is then random, a new search each run). Under -short rapid runs
	// a fifth of the checks, at least one.
	Seed   uint64
	Checks int
}

// Property is the system's rapid property under a design (the world, the
// schedule and the streams drawn; every property judged), for rapid.Check
// by hand (rapid's flags decide the seed and the checks: Options.Seed and
// Options.Checks are refused). Check is the same property with short
// output and artifacts.
func Property(sys System, d Design, o Options) func(*rapid.T) {
	err := o.check(sys)
	if err == nil && (o.Seed != 0 || o.Checks != 0) {
		err = fmt.Errorf("Options.Seed and Options.Checks are Check's: under rapid.Check, -rapid.seed and -rapid.checks decide")
	}
	if err != nil {
		return func(t *rapid.T) { t.Fatalf("simtest.Property: %v", err) }
	}
	d, f := o.apply(d)
	return sys.Property(d, f, nil)
}

// check reports an option the system cannot take (a panic or a silent
// default otherwise).
func (o Options) check(sys System) error {
	if o.Faults != "" {
		if _, err := systems.ParseFaults(string(o.Faults)); err != nil {
			return fmt.Errorf("Options.Faults: %v", err)
		}
	}
	if o.World != "" {
		if err := sys.Supports().WorldCheck(o.World); err != nil {
			return fmt.Errorf("Options.World: %v", err)
		}
	}
	if o.Checks < 0 {
		return fmt.Errorf("Options.Checks %d: want a number of checks above 0 (0: -rapid.checks decides)", o.Checks)
	}
	return nil
}

func (o Options) apply(d Design) (Design, Faults) {
	f := o.Faults
	if f == "" {
		f = Moderate
	}
	if o.World != "" {
		d.World = o.World
	}
	return d, f
}

// timelineLines bounds the failure's timeline in the test's output.
const timelineLines = 16

// maxLines bounds each message rapid reports (a counterexample's schedule
// is in the schedule file).
const maxLines = 8

// Check runs the system's property with rapid (-rapid.checks, -rapid.seed
// and rapid's other flags apply). On a failure it writes the shrunk run's
// artifacts, prints at most a few dozen lines (what failed, the world, the
// files, the commands to replay), and fails the test. rapid's flags are
// global: a Check of parallel tests that fixes Seed or Checks runs alone
// (other Checks wait for it). As rapid.Check does, Check ends its search
// early, passing, when go test's -timeout is near and no check has failed.
func Check(t *testing.T, sys System, d Design, o Options) {
	t.Helper()
	if err := o.check(sys); err != nil {
		t.Fatalf("simtest.Check: %v", err)
	}
	d, f := o.apply(d)
	set := map[string]string{}
	if o.Seed != 0 {
		set["rapid.seed"] = strconv.FormatUint(o.Seed, 10)
	}
	if n := o.Checks; n != 0 {
		if testing.Short() && n < 5 {
			n = 5 // rapid runs a fifth under -short: one, not none
		}
		set["rapid.checks"] = strconv.Itoa(n)
	}
	var last traces.Header
	found := false
	inner := sys.Property(d, f, func(h traces.Header) { last, found = h, true })
	// rapid ends its search early near the test's deadline only on a
	// *testing.T; Check does it as rapid does (when five checks' time is
	// all that is left, and half a second to spare), while no check has
	// failed.
	deadline, timed := t.Deadline()
	checks, stopped := 0, false
	var start time.Time
	prop := func(rt *rapid.T) {
		if timed && !found {
			if checks == 0 {
				start = time.Now()
			} else if time.Until(deadline) < time.Since(start)/time.Duration(checks)*5+time.Second/2 {
				stopped = true
				runtime.Goexit() // ends rapid.Check, on the recorder's goroutine
			}
			checks++
		}
		inner(rt)
	}
	var lines lineFilter
	rec := &hunt.Recorder{TestName: t.Name(), Filter: lines.keep}
	hunt.WithFlags(set, func() { rec.Check(prop) }) // one at a time with other tests' flags
	for _, l := range rec.Lines {
		t.Log(l)
	}
	if stopped {
		t.Logf("simtest: OK, passed %d checks (%v): the search ended early, near the test's deadline (-timeout)", checks, time.Since(start).Round(time.Millisecond))
		return
	}
	if rec.Skipped() {
		t.SkipNow()
	}
	if !rec.Failed() {
		return
	}
	if found {
		for _, l := range writeFailure(t, sys, last, f) {
			t.Log(l)
		}
	}
	t.FailNow()
}

// writeFailure replays the shrunk case in full and writes its trace,
// schedule and report; it returns the lines to print.
func writeFailure(t *testing.T, sys System, h traces.Header, f Faults) []string {
	r, err := sys.Replay(h)
	if err != nil {
		return []string{fmt.Sprintf("simtest: the shrunk case did not replay: %v", err)}
	}
	dir, err := filepath.Abs(*outDir)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return []string{fmt.Sprintf("simtest: -fencesim.out %s: %v", *outDir, err)}
	}
	base := filepath.Join(dir, fmt.Sprintf("%s-%s", sys.Name(), fileName(t.Name())))
	trace, sched, page := base+".jsonl", base+"-schedule.txt", base+"-report.html"
	hash, err := artifact.Trace(trace, r)
	if err != nil {
		return []string{fmt.Sprintf("simtest: writing %s: %v", trace, err)}
	}
	var lines []string
	var needed []sim.Action
	for _, a := range r.Schedule {
		lines = append(lines, a.String())
		if systems.Removable(a) {
			needed = append(needed, a) // rapid shrank the schedule: what is left is needed
		}
	}
	st := artifact.StoryOf(r, "", needed, timelineLines)
	failed := strings.Join(r.FailedIDs(), ", ")
	if err := os.WriteFile(sched, []byte(snippet(t, sys, r, trace, failed, f)), 0o644); err != nil {
		return []string{fmt.Sprintf("simtest: writing %s: %v", sched, err)}
	}
	porc, err := artifact.Report(page, base+"-porcupine.html", r, artifact.Page{
		Story: st,
		Title: fmt.Sprintf("%s: %s failed (%s, rapid's shrunk case)", t.Name(), failed, sys.Name()), Schedule: lines,
		Hash: hash, Replay: "fencesim replay " + trace, TracePath: trace})
	if err != nil {
		return []string{fmt.Sprintf("simtest: writing %s: %v", page, err)}
	}
	out := []string{
		fmt.Sprintf("simtest: %s failed %s; rapid's shrunk case: %d fault actions", sys.Name(), failed, len(lines)),
		"  trace:    " + trace,
		"  schedule: " + sched,
		"  report:   " + page,
	}
	if porc != "" {
		out = append(out, "  porcupine: "+porc)
	}
	out = append(out, "  replay:   go run github.com/fencesim/fencesim/cmd/fencesim replay "+trace) // the package path: runs from any directory of the module, as go test does
	return append(out, st.Lines...)
}

// snippet is the schedule file: the shrunk schedule, and how to keep the
// counterexample as a regression test.
func snippet(t *testing.T, sys System, r *Result, trace, failed string, f Faults) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s: %s failed in rapid's shrunk case of %s\n", t.Name(), failed, sys.Name())
	for _, v := range r.Failed() {
		msg := strings.ReplaceAll(v.String(), "\n", " ")
		if len(msg) > 400 {
			msg = msg[:400] + "..."
		}
		fmt.Fprintf(&b, "// %s\n", msg)
	}
	fmt.Fprintf(&b, "//\n// To keep it as a regression test (imports: simtest; all exported), copy\n// %s under testdata/ and:\n", trace)
	fmt.Fprintf(&b, "//\n//\tr := simtest.Replay(t, \"testdata/%s\")\n", filepath.Base(trace))
	fmt.Fprintf(&b, "//\t// r.Fails(%q) is true while the bug stands\n", strings.Split(failed, ", ")[0])
	if mustRunPlays(sys, r, f) {
		fmt.Fprintf(&b, "//\n// or, from the seed and the schedule below (imports: %s, simtest):\n//\n", systems.GoImports(r.Schedule))
		fmt.Fprintf(&b, "//\tr := simtest.MustRun(t, %q, `%s`, \"\", %d, %q, schedule)\n", sys.Name(), r.Header.Design, r.Header.Seed, f)
	} else {
		fmt.Fprintf(&b, "//\n// (rapid drew parts of this run that neither the design nor the seed\n// hold, recorded in the trace's header: the trace file, not a seed,\n// reproduces it.)\n")
	}
	fmt.Fprintf(&b, "\nschedule := %s\n", systems.GoLiteral(r.Schedule))
	return b.String()
}

// mustRunPlays reports whether MustRun, given the run's design, seed,
// faults and schedule, plays the run again: not when rapid drew more of
// it (system A's network, system B's workload).
func mustRunPlays(sys System, r *Result, f Faults) bool {
	if r.Header.Entropy != "pcg" {
		return false
	}
	d, err := sys.NewDesign(nil, nil, r.Header.Design)
	if err != nil {
		return false
	}
	m := systems.Run(sys, d, r.Header.Seed, f, systems.Options{Full: true, Schedule: r.Schedule, Given: true})
	return traces.Compare(m.Events, r.Events).Identical
}

func fileName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// MustRun plays one seed of a system with a given fault schedule, recording
// every event: what explore's schedule file tells a regression test to
// paste. design is the design's JSON (as the trace header holds it); world
// is system A's world mode ("" for the default).
func MustRun(t testing.TB, system, design, world string, seed uint64, faults string, schedule sim.Schedule) *Result {
	t.Helper()
	sys, err := systems.ByName(system)
	if err != nil {
		t.Fatalf("simtest.MustRun: %v", err)
	}
	d, err := sys.NewDesign(nil, nil, []byte(design))
	if err != nil {
		t.Fatalf("simtest.MustRun: the design: %v", err)
	}
	f, err := systems.ParseFaults(faults)
	if err != nil {
		t.Fatalf("simtest.MustRun: %v", err)
	}
	if world != "" {
		if err := sys.Supports().WorldCheck(world); err != nil {
			t.Fatalf("simtest.MustRun: %v", err)
		}
		d.World = world
	}
	return systems.Run(sys, d, seed, f, systems.Options{Full: true, Schedule: schedule, Given: true})
}

// Replay re-runs a trace file (a kept counterexample) from its header and
// returns the judged run.
func Replay(t testing.TB, path string) *Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("simtest.Replay: %v", err)
	}
	defer f.Close()
	h, _, err := traces.ReadAll(f)
	if err != nil {
		t.Fatalf("simtest.Replay %s: %v", path, err)
	}
	sys, err := systems.ByName(h.System)
	if err != nil {
		t.Fatalf("simtest.Replay %s: %v", path, err)
	}
	r, err := sys.Replay(h)
	if err != nil {
		t.Fatalf("simtest.Replay %s: %v", path, err)
	}
	return r
}

// lineFilter is what Check keeps of rapid's lines for the test's log: the
// draw log dropped unless -fencesim.draws, a message seen already dropped,
// each message clipped.
type lineFilter struct {
	full []string // the messages kept, before clipping
}

func (r *lineFilter) keep(s string) (string, bool) {
	if !*draws && strings.HasPrefix(s, "[rapid] draw ") {
		return "", false
	}
	for _, l := range r.full {
		if strings.Contains(l, s) {
			return "", false // the failure's message again (rapid's replay of the shrunk case)
		}
	}
	r.full = append(r.full, s)
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > maxLines {
		// rapid's own lines (how to reproduce) stay; the rest is clipped.
		var kept, rapids []string
		for i, l := range ls {
			switch {
			case strings.HasPrefix(l, "To reproduce") || strings.HasPrefix(l, "To try to reproduce") || strings.HasPrefix(l, "Failed test output"):
				rapids = append(rapids, l)
			case i < maxLines:
				kept = append(kept, l)
			}
		}
		if n := len(ls) - len(kept) - len(rapids); n > 0 {
			kept = append(kept, fmt.Sprintf("    ... (%d more lines: the schedule file has the whole schedule)", n))
		}
		ls = append(kept, rapids...)
	}
	return strings.Join(ls, "\n"), true
}
