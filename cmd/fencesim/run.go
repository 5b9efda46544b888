package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	art "github.com/fencesim/fencesim/internal/artifact"
	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/traces/report"
)

// runRun plays one seed as explore plays it (the same --system, --knob,
// --set, --design, --world, --unsafe and --faults make the same world,
// design and fault profile) and writes its full trace and report, pass or
// fail.
func runRun(e *env, args []string) int {
	c := commandByName("run")
	fs := newFlags(c.name)
	var sel selection
	sel.register(fs, "")
	seed := fs.Uint64("seed", 0, "the seed `N` to run (as explore numbers them)")
	faults := fs.String("faults", "moderate", "fault intensity: none, moderate or heavy (as explore's)")
	out := fs.String("out", "fencesim-out", "`DIR` for the trace and the report (<system>-seed-<N>.jsonl, <system>-seed-<N>-report.html: explore's names)")
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
		if f, err = parseFaults(*faults); err != nil {
			return err
		}
		if d, err = sel.designOf(sys); err != nil {
			return err
		}
		return checkOutDir(*out)
	}()
	if err != nil {
		return e.fail(c.name, err)
	}
	if sel.warning != "" {
		fmt.Fprintf(e.stderr, "fencesim %s: %s\n", c.name, sel.warning)
	}
	r := sys.Run(d, *seed, f, systems.Options{Full: true, Hash: true})
	what := fmt.Sprintf("%s seed %d (design: %s", sys.Name(), *seed, sel.describe(d))
	if d.World != "" {
		what += "; world: " + d.World
	}
	what += "; faults: " + string(f) + ")"
	paths, err := writeRun(*out, sys, r, what)
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

// written is where a run's files went.
type written struct {
	trace, report, porcupine string
	events                   int
	hash                     string
}

func (w written) write(out io.Writer) {
	fmt.Fprintf(out, "trace:     %s (%d events, hash %s)\n", w.trace, w.events, w.hash)
	fmt.Fprintf(out, "report:    %s\n", w.report)
	if w.porcupine != "" {
		fmt.Fprintf(out, "porcupine: %s\n", w.porcupine)
	}
	fmt.Fprintf(out, "replay:    fencesim replay %s\n", w.trace)
}

// writeRun writes a full run's trace and report under dir.
func writeRun(dir string, sys systems.System, r *systems.Result, what string) (written, error) {
	if err := mkdir(dir); err != nil {
		return written{}, err
	}
	base := filepath.Join(dir, fmt.Sprintf("%s-seed-%d", sys.Name(), r.Seed))
	w := written{trace: base + ".jsonl", report: base + "-report.html", events: len(r.Events)}
	var err error
	if w.hash, err = art.Trace(w.trace, r); err != nil {
		return w, err
	}
	w.porcupine, err = writePage(w.report, base, r, pageTitle(what, r), w.trace, w.hash, nil, runProbes(sys, r))
	return w, err
}

// pageTitle is a single run's report title: the run and its outcome.
func pageTitle(what string, r *systems.Result) string {
	if ids := r.FailedIDs(); len(ids) > 0 {
		return what + ": " + strings.Join(ids, ", ") + " failed"
	}
	return what + ": every property held"
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
	if len(bad) == 0 {
		fmt.Fprintf(w, "%s: every property held (%d)\n", what, len(r.Verdicts))
	} else {
		fmt.Fprintf(w, "%s: %d of %d properties FAILED\n", what, len(bad), len(r.Verdicts))
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
