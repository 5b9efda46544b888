package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/fencesim/fencesim/internal/systems"
)

// comparison is compare's result.
type comparison struct {
	Format   string        `json:"format"`
	System   string        `json:"system"`
	Faults   string        `json:"faults"`
	Seeds    string        `json:"seeds"`
	Baseline SystemSummary `json:"baseline"`
	Changed  SystemSummary `json:"changed"`
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
			if base, err = sys.NewDesign(nil, nil, b); err != nil {
				return usagef("--baseline %s: %v", *baseline, err)
			}
			if sel.design == "" {
				sel.design = *baseline
			}
		}
		changed, err = sel.designOf(sys)
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
			for _, t := range []task{{sys: sys, d: base, tag: 0, seed: seed}, {sys: sys, d: changed, tag: 1, seed: seed}} {
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
	half := map[uint64]finished{}
	collect(e.ctx, runPool(*workers, f, in), func(x finished) {
		prog.add(1)
		other, ok := half[x.seed]
		if !ok {
			x.r.Events = nil // only the verdicts and metrics are read
			half[x.seed] = x
			return
		}
		delete(half, x.seed)
		aggs[x.tag].add(x.r, x.dur)
		aggs[other.tag].add(other.r, other.dur)
	})
	prog.done()
	wall := time.Since(start)
	cmp := comparison{Format: summaryFormat, System: sys.Name(), Faults: string(f), Seeds: p.text(),
		Baseline: aggs[0].done(wall, *workers), Changed: aggs[1].done(wall, *workers), Interrupted: interruption(e.ctx)}
	if *asJSON {
		b, _ := json.MarshalIndent(cmp, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
	} else {
		cmp.writeText(e.stdout)
	}
	if cmp.Interrupted != "" {
		return exitInterrupted
	}
	if cmp.Baseline.FailedRuns > 0 || cmp.Changed.FailedRuns > 0 {
		return exitFail
	}
	return exitOK
}

func (c *comparison) writeText(w io.Writer) {
	b, x := &c.Baseline, &c.Changed
	fmt.Fprintf(w, "== compare %s: baseline %s vs changed %s; faults %s; seeds %s (%d runs each) ==\n\n",
		c.System, b.Design, x.Design, c.Faults, c.Seeds, b.Runs)
	tw := rightTable(w)
	var names []string
	for _, p := range append(append([]PropertyCount(nil), b.Properties...), x.Properties...) {
		names = append(names, p.Property)
	}
	for _, m := range b.Metrics {
		names = append(names, m.Name)
	}
	pad := leftColumn(append(names, "property", "metric"))
	fmt.Fprintf(tw, "%s\tbaseline failed\tchanged failed\t\n", pad("property"))
	props := map[string][2]int{}
	for _, p := range b.Properties {
		v := props[p.Property]
		v[0] = p.Failed
		props[p.Property] = v
	}
	for _, p := range x.Properties {
		v := props[p.Property]
		v[1] = p.Failed
		props[p.Property] = v
	}
	for _, name := range sortedKeys(props) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t\n", pad(name), props[name][0], props[name][1])
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = rightTable(w)
	fmt.Fprintf(tw, "%s\tbaseline mean\tp50\tp99\tmax\tchanged mean\tp50\tp99\tmax\tdelta mean\tdelta p99\t\n", pad("metric"))
	for _, m := range b.Metrics {
		var o []float64
		for _, y := range x.Metrics {
			if y.Name == m.Name {
				o = y.Values
			}
		}
		v, u := m.Values, m.Unit
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", pad(m.Name),
			num(mean(v), u), num(quantile(v, .5), u), num(quantile(v, .99), u), num(quantile(v, 1), u),
			num(mean(o), u), num(quantile(o, .5), u), num(quantile(o, .99), u), num(quantile(o, 1), u),
			delta(mean(v), mean(o), u), delta(quantile(v, .99), quantile(o, .99), u))
	}
	tw.Flush()
	if len(b.Probes) > 0 {
		fmt.Fprintln(w)
		tw = rightTable(w)
		pp := leftColumn(append(probeNames(b.Probes), "probe"))
		fmt.Fprintf(tw, "%s\tbaseline rate\tchanged rate\t\n", pp("probe"))
		for i, p := range b.Probes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t\n", pp(p.Name), pct(p.Runs, b.Runs), pct(x.Probes[i].Runs, x.Runs))
		}
		tw.Flush()
	}
	for _, s := range []*SystemSummary{b, x} {
		if len(s.Failures) > 0 {
			fmt.Fprintf(w, "\n%s: first failure: seed %d: %s\n", s.Design, s.Failures[0].Seed, s.Failures[0].Message)
		}
	}
	if c.Interrupted != "" {
		fmt.Fprintf(w, "\nINTERRUPTED (%s): the comparison covers only the %d seeds whose two runs both finished\n", c.Interrupted, b.Runs)
	}
}

func delta(a, b float64, unit string) string {
	if math.IsNaN(a) || math.IsNaN(b) {
		return "-"
	}
	d := b - a
	s := num(d, unit)
	if d > 0 {
		s = "+" + s
	}
	if a != 0 {
		s += fmt.Sprintf(" (%+.0f%%)", 100*d/math.Abs(a))
	}
	return s
}

func probeNames(ps []ProbeCount) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}
