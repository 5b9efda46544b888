package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/fencesim/fencesim/internal/summary"
	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/traces"
)

// comparison is compare's result.
type comparison struct {
	Format   string         `json:"format"`
	System   string         `json:"system"`
	Faults   string         `json:"faults"`
	Seeds    string         `json:"seeds"`
	Baseline summary.System `json:"baseline"`
	Changed  summary.System `json:"changed"`
	// Delta is the two side by side, seed by seed.
	Delta *runDelta `json:"delta"`
	// Interrupted names the signal that stopped the comparison: it covers
	// only the seeds whose two runs both finished.
	Interrupted string `json:"interrupted,omitempty"`
}

func runCompare(e *env, args []string) int {
	c := commandByName("compare")
	fs := newFlags(c.name)
	var sel selection
	sel.register(fs, "")
	baseline := fs.String("baseline", "", "the baseline design `FILE` (default: the system's default design)")
	var sf seedFlags
	sf.register(fs, 200, false)
	faults := fs.String("faults", "moderate", "fault intensity: none, moderate or heavy")
	workers := workersFlag(fs)
	asJSON := fs.Bool("json", false, "print the comparison as JSON")
	perSeed := fs.String("per-seed", "", "also write every run to `FILE` (JSON Lines: seed, side, trace hash, failed properties, metrics)")
	var failOn multi
	fs.Var(&failOn, "fail-on", "exit 1 when a metric moves past a bound from baseline to changed, `METRIC[.STAT]=+X%` (repeatable), e.g. --fail-on MA2=+10% or --fail-on extra_latency.p99=+0.5 (seconds); STAT is mean (default), p50, p99, max, runs (with a nonzero sample) or total")
	pos, code, done := parse(e, fs, c, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return e.fail(c.name, usagef("unexpected argument %q (compare takes flags only)", pos[0]))
	}
	var sys systems.System
	var base, changed systems.Design
	var p plan
	var f systems.Faults
	var limits []threshold
	var out *perSeedWriter
	err := func() error {
		if !sel.changed() {
			return usagef("nothing to compare: change the design with --set, --knob or --design (e.g. --system arbiter --set confirm_aware_grace=true)")
		}
		list, err := sel.systems(isSet(fs, "system") && sel.system != "")
		if err != nil {
			return err
		}
		if len(list) != 1 {
			return usagef("compare needs one system (--system)")
		}
		sys = list[0]
		if p, err = sf.plan(fs); err != nil {
			return err
		}
		if p, err = sf.steered(fs, p, []systems.System{sys}); err != nil {
			return err
		}
		if err := p.checkSteered([]systems.System{sys}); err != nil {
			return err
		}
		if f, err = parseFaults(*faults); err != nil {
			return err
		}
		if err := checkWorkers(*workers); err != nil {
			return err
		}
		base = sys.Default()
		if *baseline != "" {
			b, err := os.ReadFile(*baseline)
			if err != nil {
				return usagef("--baseline: %v", err)
			}
			if err := checkDesignFile("baseline", *baseline, b, sys); err != nil {
				return err
			}
			if base, err = sys.NewDesign(nil, nil, b); err != nil {
				if strings.Contains(err.Error(), "json:") {
					return usagef("--baseline %s: %v: %s", *baseline, err, designWant(sys))
				}
				return usagef("--baseline %s: %v", *baseline, err)
			}
			if sel.design == "" {
				sel.design = *baseline
			}
		}
		if changed, err = sel.designOf(sys); err != nil {
			return err
		}
		// Both sides play the same worlds: --world is the comparison's, not
		// the changed design's alone.
		base.World = changed.World
		if limits, err = parseThresholds(failOn, sys); err != nil {
			return err
		}
		if err := checkOutFile("per-seed", *perSeed); err != nil {
			return err
		}
		out, err = createPerSeed(*perSeed, traces.HashV2)
		return err
	}()
	if err != nil {
		return e.fail(c.name, err)
	}
	if sel.warning != "" {
		fmt.Fprintf(e.stderr, "fencesim %s: %s\n", c.name, sel.warning)
	}
	seeds := p.seeds()
	prog := newProgress(e.stderr, !*asJSON, int64(2*len(seeds)), "compare "+sys.Name())
	in := make(chan task)
	go func() {
		defer close(in)
		for _, seed := range seeds {
			// Every event is hashed (Digest): the trace hashes say which
			// runs the change altered at all.
			full := systems.Options{Digest: traces.HashV2}
			for _, t := range []task{{sys: sys, d: base, tag: 0, seed: seed, opts: full}, {sys: sys, d: changed, tag: 1, seed: seed, opts: full}} {
				select {
				case in <- t:
				case <-e.ctx.Done():
					return
				}
			}
		}
	}()
	start := time.Now()
	baseText := "default"
	if *baseline != "" {
		baseText = "file " + *baseline
	}
	aggs := []*aggregate{newAggregate(sys, base, baseText), newAggregate(sys, changed, sel.describe(changed))}
	// A seed counts once both its runs are done (an interrupted comparison
	// covers the same seeds on both sides); the two are given to the pool
	// one after the other, so few wait for their other half.
	type halfDone struct {
		finished
		rec seedRecord
	}
	half := map[uint64]halfDone{}
	var recs [2][]seedRecord
	out.begin(p)
	sides := [2]string{"baseline", "changed"}
	collect(e.ctx, runPool(*workers, f, in), func(x finished) {
		prog.add(1)
		h := halfDone{x, recordOf(x.r, sides[x.tag], traces.HashV2)}
		h.r.Events = nil // only the verdicts and metrics are read
		other, ok := half[x.seed]
		if !ok {
			half[x.seed] = h
			return
		}
		delete(half, x.seed)
		for _, y := range []halfDone{other, h} {
			aggs[y.tag].add(y.r, y.dur)
			y.rec.Metrics = append([]systems.Metric(nil), y.rec.Metrics...)
			recs[y.tag] = append(recs[y.tag], y.rec)
		}
		if other.tag == 0 {
			out.add(other.rec, h.rec)
		} else {
			out.add(h.rec, other.rec)
		}
	})
	prog.done()
	if err := out.close(); err != nil {
		fmt.Fprintf(e.stderr, "fencesim %s: %v\n", c.name, err)
	}
	wall := time.Since(start)
	cmp := comparison{Format: summary.Format, System: sys.Name(), Faults: string(f), Seeds: p.text(),
		Baseline: aggs[0].done(wall, *workers), Changed: aggs[1].done(wall, *workers), Interrupted: interruption(e.ctx)}
	cmp.Delta = newDelta(sys.Name(), sides, recs[0], recs[1])
	for i := range limits {
		limits[i].judge(cmp.Delta)
	}
	cmp.Delta.Thresholds = limits
	if *asJSON {
		b, _ := json.MarshalIndent(cmp, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
	} else {
		cmp.writeText(e.stdout)
	}
	if cmp.Interrupted != "" {
		return exitInterrupted
	}
	if cmp.Baseline.FailedRuns > 0 || cmp.Changed.FailedRuns > 0 || cmp.Delta.crossed() {
		return exitFail
	}
	return exitOK
}

func (c *comparison) writeText(w io.Writer) {
	b, x := &c.Baseline, &c.Changed
	fmt.Fprintf(w, "== compare %s: baseline %s vs changed %s; faults %s; seeds %s (%d runs each) ==\n\n",
		c.System, b.Design, x.Design, c.Faults, c.Seeds, b.Runs)
	c.Delta.writeText(w, "the change")
	if len(b.Probes) > 0 {
		fmt.Fprintln(w)
		tw := rightTable(w)
		pp := leftColumn(append(probeNames(b.Probes), "probe"))
		fmt.Fprintf(tw, "%s\tbaseline rate\tchanged rate\t\n", pp("probe"))
		for i, p := range b.Probes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t\n", pp(p.Name), pct(p.Runs, b.Runs), pct(x.Probes[i].Runs, x.Runs))
		}
		tw.Flush()
	}
	for _, s := range []*summary.System{b, x} {
		if len(s.Failures) > 0 {
			fmt.Fprintf(w, "\n%s: first failure: seed %d: %s\n", s.Design, s.Failures[0].Seed, s.Failures[0].Message)
		}
	}
	if c.Interrupted != "" {
		fmt.Fprintf(w, "\nINTERRUPTED (%s): the comparison covers only the %d seeds whose two runs both finished\n", c.Interrupted, b.Runs)
	}
}

// parseThresholds parses --fail-on against a system's metrics.
func parseThresholds(specs []string, sys systems.System) ([]threshold, error) {
	names, units := metricsOf(sys)
	var out []threshold
	for _, s := range specs {
		t, err := parseThreshold(s, names, units)
		if err != nil {
			return nil, err
		}
		for _, o := range out {
			if o.Metric == t.Metric && o.Stat == t.Stat && o.fall == t.fall {
				return nil, usagef("--fail-on %q and %q both bound the %s of %s on a %s: give each bound once", o.Spec, t.Spec, t.Stat, t.Metric, map[bool]string{true: "fall", false: "rise"}[t.fall])
			}
		}
		out = append(out, t)
	}
	return out, nil
}

func probeNames(ps []summary.ProbeCount) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

// metricsOf lists a system's metrics and their units, from one fault-free
// run of its default design (every run has the same metrics).
func metricsOf(sys systems.System) ([]string, map[string]string) {
	r := systems.Run(sys, sys.Default(), 1, systems.None, systems.Options{})
	units := map[string]string{}
	var names []string
	for _, m := range r.Metrics {
		names = append(names, m.Name)
		units[m.Name] = m.Unit
	}
	return names, units
}
