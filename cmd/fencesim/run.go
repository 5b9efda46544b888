package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	art "github.com/fencesim/fencesim/internal/artifact"
	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/report"
)

// runRun plays one seed as explore plays it (the same --system, --knob,
// --set, --design, --world, --unsafe and --faults make the same world,
// design and fault profile) and writes its full trace and report, pass or
// fail. --schedule plays a given fault schedule instead of the seed's;
// --minimize ID minimizes the schedule while property ID keeps failing, as
// explore minimizes a failure, and writes the minimized run and its
// schedule (diff keeps its changed seeds this way, one side minimizing,
// the other playing what it found).
func runRun(e *env, args []string) int {
	c := commandByName("run")
	fs := newFlags(c.name)
	var sel selection
	sel.register(fs, "")
	seed := fs.Uint64("seed", 0, "the seed `N` to run (as explore numbers them)")
	faults := fs.String("faults", "moderate", "fault intensity: none, moderate or heavy (as explore's)")
	out := fs.String("out", "fencesim-out", "`DIR` for the trace and the report (<system>-seed-<N>.jsonl, <system>-seed-<N>-report.html: explore's names)")
	schedFile := fs.String("schedule", "", "play the fault schedule in `FILE` instead of the seed's drawn one (the workload and every other draw still come from the seed): a JSON list of actions, as a trace header's \"schedule\" or the <system>-seed-<N>-schedule.json --minimize writes, or a trace (.jsonl) of the same system whose schedule to play; its actions must name nodes of the seed's world")
	minimize := fs.String("minimize", "", "when the run fails property `ID` (e.g. PA1), minimize its fault schedule with the seed fixed while ID keeps failing (as explore minimizes a failure); the trace and report are then the minimized run's, and the schedule is written as <system>-seed-<N>-schedule.json for --schedule")
	minBudget := fs.Int("minimize-budget", 300, "runs the minimization may make")
	pos, code, done := parse(e, fs, c, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return e.fail(c.name, usagef("unexpected argument %q (run takes flags only, e.g. --system arbiter --seed 7)", pos[0]))
	}
	var sys systems.System
	var d systems.Design
	var f systems.Faults
	var given sim.Schedule
	err := func() error {
		if !isSet(fs, "seed") {
			return usagef("--seed N is missing: give the seed to run, e.g. --seed 7 (explore prints its failing seeds)")
		}
		all, err := sel.systems(isSet(fs, "system"))
		if err != nil {
			return err
		}
		if len(all) != 1 {
			return usagef("run plays one system: pick it with --system (one of %s)", strings.Join(systems.Names(), ", "))
		}
		sys = all[0]
		if err := (plan{first: *seed, last: *seed}).checkSteered(all); err != nil {
			return err
		}
		if f, err = parseFaults(*faults); err != nil {
			return err
		}
		if d, err = sel.designOf(sys); err != nil {
			return err
		}
		if *schedFile != "" {
			if given, err = readSchedule(*schedFile, sys.Name()); err != nil {
				return err
			}
			if given == nil {
				given = sim.Schedule{} // "[]": no fault at all, not the seed's
			}
			// The actions must name the nodes of the seed's world (a
			// schedule of another system, or of another drawn fleet, would
			// only fail to play).
			w, err := sys.Draw(d, *seed, f, systems.Options{Schedule: given, Given: true})
			if err != nil {
				return usagef("--schedule %s: %v", *schedFile, err)
			}
			if err := given.Validate(w.Nodes); err != nil {
				return usagef("--schedule %s: %v: not a schedule of %s seed %d's world: give one of its own (this seed's trace, or the schedule run --minimize writes)", *schedFile, err, sys.Name(), *seed)
			}
		}
		if *minimize == "" && isSet(fs, "minimize-budget") {
			return usagef("--minimize-budget bounds --minimize: add --minimize ID, or drop --minimize-budget")
		}
		if *minimize != "" {
			if ids := propertyIDs(sys, d); !contains(ids, *minimize) {
				return usagef("--minimize %q: not a property id of %s (one of %s)", *minimize, sys.Name(), strings.Join(ids, ", "))
			}
			if *minBudget < 1 {
				return usagef("--minimize-budget %d: want at least 1 run", *minBudget)
			}
		}
		if err := checkOutDir(*out); err != nil {
			return err
		}
		return checkRunFiles(*out, sys.Name(), *seed)
	}()
	if err != nil {
		return e.fail(c.name, err)
	}
	if sel.warning != "" {
		fmt.Fprintf(e.stderr, "fencesim %s: %s\n", c.name, sel.warning)
	}
	opts := systems.Options{Full: true, Hash: true, Schedule: given, Given: given != nil}
	r := systems.Run(sys, d, *seed, f, opts)
	what := fmt.Sprintf("%s seed %d (design: %s", sys.Name(), *seed, sel.describe(d))
	if d.World != "" {
		what += "; world: " + d.World
	}
	what += "; faults: " + string(f)
	if given != nil {
		what += "; schedule: " + *schedFile
	}
	var m *systems.Minimized
	if *minimize != "" {
		var err error
		if m, err = systems.MinimizeProperty(e.ctx, sys, d, *seed, f, r, *minimize, *minBudget); err != nil {
			// Not a refusal: the run is written as played, and the
			// missing schedule file says it was not minimized.
			fmt.Fprintf(e.stderr, "fencesim %s: not minimized: %v; the run is written as played\n", c.name, err)
			m = nil
		} else {
			r = systems.Run(sys, d, *seed, f, systems.Options{Full: true, Hash: true, Schedule: m.Schedule, Given: true})
			what += fmt.Sprintf("; schedule minimized while %s kept failing, %d -> %d fault actions", m.Property, faultCount(m.Original), faultCount(m.Schedule))
		}
	}
	what += ")"
	var lines []string
	switch {
	case m != nil:
		lines = scheduleLines(m)
	case given != nil:
		for _, a := range given {
			lines = append(lines, "given       "+a.String())
		}
	}
	paths, err := writeRunPage(*out, sys, r, what, m, lines)
	if err == nil && m != nil {
		paths.schedule = filepath.Join(*out, fmt.Sprintf("%s-seed-%d-schedule.json", sys.Name(), *seed))
		err = os.WriteFile(paths.schedule, append(m.Schedule.JSON(), '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "fencesim %s: --out %s: %v\n", c.name, *out, unwrapPath(err))
		return exitUsage
	}
	writeVerdicts(e.stdout, what, r)
	paths.write(e.stdout)
	if len(r.Failed()) > 0 {
		return exitFail
	}
	return exitOK
}

// checkRunFiles refuses, before anything is written, a path under dir
// that run would write and that is there but not a file (a directory of
// that name): the write would fail after the trace was replaced.
func checkRunFiles(dir, system string, seed uint64) error {
	base := filepath.Join(dir, fmt.Sprintf("%s-seed-%d", system, seed))
	for _, p := range []string{base + ".jsonl", base + "-report.html", base + "-porcupine.html", base + "-schedule.json"} {
		if st, err := os.Stat(p); err == nil && !st.Mode().IsRegular() {
			return usagef("--out %s: %s is a %s, not a file run can write: move it away or give another --out", dir, p, kindOf(st.Mode()))
		}
	}
	return nil
}

// kindOf names what a path that is not a regular file is.
func kindOf(m os.FileMode) string {
	if m.IsDir() {
		return "directory"
	}
	return "special file"
}

// written is where a run's files went.
type written struct {
	trace, report, porcupine string
	schedule                 string // --minimize's schedule file
	events                   int
	hash                     string
}

func (w written) write(out io.Writer) {
	fmt.Fprintf(out, "trace:     %s (%d events, hash %s)\n", w.trace, w.events, w.hash)
	fmt.Fprintf(out, "report:    %s\n", w.report)
	if w.porcupine != "" {
		fmt.Fprintf(out, "porcupine: %s\n", w.porcupine)
	}
	if w.schedule != "" {
		fmt.Fprintf(out, "schedule:  %s (fencesim run --schedule FILE plays it)\n", w.schedule)
	}
	fmt.Fprintf(out, "replay:    fencesim replay %s\n", w.trace)
}

// writeRun writes a full run's trace and report under dir.
func writeRun(dir string, sys systems.System, r *systems.Result, what string) (written, error) {
	return writeRunPage(dir, sys, r, what, nil, nil)
}

// writeRunPage is writeRun whose report lists a schedule (nil: none) and,
// for a minimized run (m), tells the story of the property kept failing
// with the faults it needs, as explore's artifacts do.
func writeRunPage(dir string, sys systems.System, r *systems.Result, what string, m *systems.Minimized, schedule []string) (written, error) {
	if err := mkdir(dir); err != nil {
		return written{}, err
	}
	base := filepath.Join(dir, fmt.Sprintf("%s-seed-%d", sys.Name(), r.Seed))
	w := written{trace: base + ".jsonl", report: base + "-report.html", events: len(r.Events)}
	var err error
	if w.hash, err = art.Trace(w.trace, r); err != nil {
		return w, err
	}
	if m == nil {
		w.porcupine, err = writePage(w.report, base, r, pageTitle(what, r), w.trace, w.hash, schedule, runProbes(sys, r))
		return w, err
	}
	w.porcupine, err = art.Report(w.report, base+"-porcupine.html", r, art.Page{Story: art.StoryOf(r, m.Property, neededActions(m), timelineLines),
		Title: pageTitle(what, r), Schedule: schedule, Probes: runProbes(sys, r), Hash: w.hash, Replay: "fencesim replay " + w.trace, TracePath: w.trace})
	return w, err
}

// faultCount counts a schedule's fault actions (what minimization may
// remove).
func faultCount(s sim.Schedule) int {
	n := 0
	for _, a := range s {
		if systems.Removable(a) {
			n++
		}
	}
	return n
}

// propertyIDs are the ids of the properties a system's runs are judged by
// (from one fault-free run of the design).
func propertyIDs(sys systems.System, d systems.Design) []string {
	r := systems.Run(sys, d, 1, systems.None, systems.Options{})
	var out []string
	for _, v := range r.Verdicts {
		if id := systems.PropertyID(v.Property); !contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// pageTitle is a single run's report title: the run and its outcome.
func pageTitle(what string, r *systems.Result) string {
	if ids := r.FailedIDs(); len(ids) > 0 {
		return what + ": " + strings.Join(ids, ", ") + " failed" + undecidedNote(r)
	}
	if note := undecidedNote(r); note != "" {
		return what + ": no property failed" + note
	}
	return what + ": every property held"
}

// undecidedNote names the properties whose check could not decide
// ("; PA3 undecided"), so that a headline saying every property held does
// not hide that one of them was not decided; "" when every check decided.
func undecidedNote(r *systems.Result) string {
	ids := r.UndecidedIDs()
	if len(ids) == 0 {
		return ""
	}
	return "; " + strings.Join(ids, ", ") + " undecided"
}

// runProbes are a single run's probes for its report: hit or not.
func runProbes(sys systems.System, r *systems.Result) []report.Probe {
	var out []report.Probe
	for _, name := range sys.Probes() {
		n := 0
		if r.Probes[name] {
			n = 1
		}
		out = append(out, report.Probe{Name: name, Count: n, Runs: 1})
	}
	return out
}

// writeVerdicts prints a run's verdicts, the failing ones first.
func writeVerdicts(w io.Writer, what string, r *systems.Result) {
	bad := r.Failed()
	gaveUp := ""
	if note := undecidedNote(r); note != "" {
		gaveUp = note + " (its check could not decide: nothing was shown to break, nor to hold; its line says why)"
	}
	switch {
	case len(bad) == 0 && gaveUp == "":
		fmt.Fprintf(w, "%s: every property held (%d)\n", what, len(r.Verdicts))
	case len(bad) == 0:
		fmt.Fprintf(w, "%s: no property failed (%d)%s\n", what, len(r.Verdicts), gaveUp)
	default:
		fmt.Fprintf(w, "%s: %d of %d properties FAILED%s\n", what, len(bad), len(r.Verdicts), gaveUp)
	}
	for _, v := range bad {
		fmt.Fprintf(w, "  %s\n", clip(v.String(), 400))
	}
	for _, v := range r.Verdicts {
		if v.OK {
			fmt.Fprintf(w, "  %s\n", v.String())
		}
	}
}

func mkdir(dir string) error { return os.MkdirAll(dir, 0o755) }
