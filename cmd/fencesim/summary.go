package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/internal/stats"
	"github.com/fencesim/fencesim/internal/summary"
	"github.com/fencesim/fencesim/internal/systems"
)

// ---- building ----

// aggregate collects the runs of one system.
type aggregate struct {
	s       summary.System
	props   map[string]int
	undec   map[string]int
	probes  map[string]int
	metrics map[string]*summary.MetricSamples
	order   []string
	probeNs []string
}

func newAggregate(sys systems.System, d systems.Design, design string) *aggregate {
	return &aggregate{
		s:       summary.System{System: sys.Name(), Title: sys.Title(), Design: design, World: d.World, DesignJSON: d.JSON},
		props:   map[string]int{},
		undec:   map[string]int{},
		probes:  map[string]int{},
		metrics: map[string]*summary.MetricSamples{},
		probeNs: sys.Probes(),
	}
}

func (a *aggregate) add(r *systems.Result, d time.Duration) {
	a.s.Runs++
	a.s.Timing.RunNS += int64(d)
	a.s.Timing.CheckNS += int64(r.CheckTime())
	for _, v := range r.Verdicts {
		if _, ok := a.props[v.Property]; !ok {
			a.props[v.Property] = 0
		}
		if !v.OK {
			a.props[v.Property]++
		}
		if checker.IsUndecided(v) {
			a.undec[v.Property]++
		}
	}
	var undecided []checker.Verdict
	for _, v := range r.Verdicts {
		if checker.IsUndecided(v) {
			undecided = append(undecided, v)
		}
	}
	if len(undecided) > 0 {
		var names []string
		for _, v := range undecided {
			names = append(names, v.Property)
		}
		a.s.Undecided = append(a.s.Undecided, summary.Failure{Seed: r.Seed, Properties: names, Message: clip(undecided[0].String(), 300)})
	}
	if f := r.Failed(); len(f) > 0 {
		a.s.FailedRuns++
		var names []string
		for _, v := range f {
			names = append(names, v.Property)
		}
		a.s.Failures = append(a.s.Failures, summary.Failure{Seed: r.Seed, Properties: names, Message: clip(f[0].String(), 300)})
	}
	for name, hit := range r.Probes {
		if hit {
			a.probes[name]++
		}
	}
	for _, m := range r.Metrics {
		ms := a.metrics[m.Name]
		if ms == nil {
			ms = &summary.MetricSamples{Name: m.Name, Unit: m.Unit, Values: []float64{}}
			a.metrics[m.Name] = ms
			a.order = append(a.order, m.Name)
		}
		ms.Values = append(ms.Values, m.Values...)
	}
}

func (a *aggregate) done(wall time.Duration, workers int) summary.System {
	s := a.s
	s.Timing.WallNS, s.Timing.Workers = int64(wall), workers
	for _, name := range slices.Sorted(maps.Keys(a.props)) {
		s.Properties = append(s.Properties, summary.PropertyCount{Property: name, Failed: a.props[name], Undecided: a.undec[name]})
	}
	for _, name := range a.probeNs {
		s.Probes = append(s.Probes, summary.ProbeCount{Name: name, Runs: a.probes[name]})
	}
	for _, name := range a.order {
		ms := *a.metrics[name]
		sort.Float64s(ms.Values)
		s.Metrics = append(s.Metrics, ms)
	}
	sort.Slice(s.Failures, func(i, j int) bool { return s.Failures[i].Seed < s.Failures[j].Seed })
	sort.Slice(s.Undecided, func(i, j int) bool { return s.Undecided[i].Seed < s.Undecided[j].Seed })
	return s
}

// runSeeds names the first 20 seeds of a list of runs, and how many more.
func runSeeds(fs []summary.Failure) string {
	var seeds []string
	for i, f := range fs {
		if i == 20 {
			seeds = append(seeds, fmt.Sprintf("(+%d more)", len(fs)-20))
			break
		}
		seeds = append(seeds, fmt.Sprint(f.Seed))
	}
	return strings.Join(seeds, ", ")
}

func clip(s string, n int) string {
	s = oneLine(s)
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// exitCode is the exit code a summary calls for: 1 when it has a failure.
func exitCode(s *summary.Summary) int {
	if s.Failed() {
		return exitFail
	}
	return exitOK
}

// ---- rendering ----

func num(x float64, unit string) string {
	if math.IsNaN(x) {
		return "-"
	}
	if unit == "s" {
		switch a := math.Abs(x); {
		case a == 0:
			return "0s"
		case a >= 1:
			return fmt.Sprintf("%.1fs", x)
		case a >= 0.001:
			return fmt.Sprintf("%.1fms", x*1e3)
		default:
			return fmt.Sprintf("%.0fµs", x*1e6)
		}
	}
	if x == math.Trunc(x) {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

func pct(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
}

// writeText renders the summary as tables.
func writeText(w io.Writer, s *summary.Summary) {
	for i, x := range s.Systems {
		if i > 0 {
			fmt.Fprintln(w)
		}
		writeSystem(w, &x, s)
	}
	if len(s.Mutants) > 0 || s.Command == "mutants" {
		writeMutants(w, s)
	}
	writeFailFast(w, s)
	writeInterrupted(w, s)
}

// writeFailFast marks a summary that --failfast stopped at a failing run:
// its counts are of the runs made until then.
func writeFailFast(w io.Writer, s *summary.Summary) {
	if !s.FailFast || !s.Failed() {
		return
	}
	fmt.Fprintf(w, "\nFAILFAST: stopped at the first failing run (--failfast): the counts cover the runs made until then, not every seed")
	if len(s.NotRun) > 0 && s.Interrupted == "" {
		fmt.Fprintf(w, "; systems not run: %s", strings.Join(s.NotRun, ", "))
	}
	fmt.Fprintln(w)
}

// writeInterrupted marks a summary that a signal cut short.
func writeInterrupted(w io.Writer, s *summary.Summary) {
	if s.Interrupted == "" {
		return
	}
	fmt.Fprintf(w, "\nINTERRUPTED (%s): the summary covers only the runs that finished", s.Interrupted)
	if len(s.NotRun) > 0 {
		what := "systems not run"
		if s.Command == "mutants" {
			what = "knobs not run or not finished (no row)"
		}
		fmt.Fprintf(w, "; %s: %s", what, strings.Join(s.NotRun, ", "))
	}
	fmt.Fprintln(w)
}

// seedsText is the seeds a summary ran: a shard's are those of its shard
// (the header said "seeds: 1-20" over a shard's 5 runs).
func seedsText(s *summary.Summary) string {
	sh, err := summary.ParseShard(s.Shard)
	if err != nil || sh.N <= 1 {
		return s.Seeds
	}
	return fmt.Sprintf("%s, shard %s (the seeds s with s mod %d = %d)", s.Seeds, sh, sh.N, sh.I)
}

// writeSystem renders one system's exploration.
func writeSystem(w io.Writer, x *summary.System, s *summary.Summary) {
	fmt.Fprintf(w, "== %s (%s) ==\n", x.System, x.Title)
	world := ""
	if x.World != "" {
		world = "; world: " + x.World
	}
	fmt.Fprintf(w, "design: %s%s; faults: %s; seeds: %s\n", x.Design, world, s.Faults, seedsText(s))
	fmt.Fprintf(w, "runs: %d, failed: %d (%s)\n", x.Runs, x.FailedRuns, pct(x.FailedRuns, x.Runs))
	if d := x.Directed; d != nil {
		first := "no run failed"
		if d.FirstFailure > 0 {
			first = fmt.Sprintf("first failure at run %d (seed %d)", d.FirstFailure, d.Order[d.FirstFailure-1])
		}
		fmt.Fprintf(w, "directed search (target %s, search seed %d): %s\n", d.Target, d.SearchSeed, first)
		if len(d.Favoured) > 0 {
			var fav []string
			for _, f := range d.Favoured {
				fav = append(fav, fmt.Sprintf("%s (%.2f over %d runs)", f.Feature, f.Rate, f.Runs))
			}
			fmt.Fprintf(w, "favoured (mean reward %.2f): %s\n", d.Favoured[0].Mean, strings.Join(fav, ", "))
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "property\tfailed runs\n")
	for _, p := range x.Properties {
		mark := ""
		if p.Failed > 0 {
			mark = "  <-- FAILED"
		}
		fmt.Fprintf(tw, "%s\t%d%s\n", p.Property, p.Failed, mark)
	}
	tw.Flush()
	if len(x.Probes) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "probe\truns that hit it\trate\n")
		for _, p := range x.Probes {
			fmt.Fprintf(tw, "%s\t%d\t%s\n", p.Name, p.Runs, pct(p.Runs, x.Runs))
		}
		tw.Flush()
	}
	if len(x.Metrics) > 0 {
		fmt.Fprintln(w)
		tw := rightTable(w)
		names := []string{"metric"}
		for _, m := range x.Metrics {
			names = append(names, m.Name)
		}
		pad := leftColumn(names)
		fmt.Fprintf(tw, "%s\tsamples\tmean\tp50\tp90\tp99\tmax\t\n", pad("metric"))
		for _, m := range x.Metrics {
			v := m.Values
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", pad(m.Name), len(v), num(stats.Mean(v), m.Unit), num(stats.Quantile(v, .5), m.Unit),
				num(stats.Quantile(v, .9), m.Unit), num(stats.Quantile(v, .99), m.Unit), num(stats.Quantile(v, 1), m.Unit))
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	if len(x.Failures) > 0 {
		fmt.Fprintf(w, "failing seeds: %s\n", runSeeds(x.Failures))
		fmt.Fprintf(w, "first failure: seed %d: %s\n", x.Failures[0].Seed, x.Failures[0].Message)
	}
	if len(x.Undecided) > 0 {
		var per []string
		for _, p := range x.Properties {
			if p.Undecided > 0 {
				per = append(per, fmt.Sprintf("%s in %d", p.Property, p.Undecided))
			}
		}
		fmt.Fprintf(w, "undecided runs: %d (a check could not decide: not failed, not judged by that check; fencesim run --seed S says why): %s; seeds: %s\n",
			len(x.Undecided), strings.Join(per, ", "), runSeeds(x.Undecided))
	}
	if len(x.Audit.Mismatches) == 0 {
		fmt.Fprintf(w, "determinism audit: %d seeds run twice, every trace hash identical\n", x.Audit.Runs)
	} else {
		fmt.Fprintf(w, "determinism audit: %d seeds run twice, %d NOT IDENTICAL:\n", x.Audit.Runs, len(x.Audit.Mismatches))
		for _, m := range x.Audit.Mismatches {
			fmt.Fprintf(w, "  seed %d: first difference at event %d:\n    first run:  %s\n    second run: %s\n", m.Seed, m.Index, m.First, m.Second)
		}
	}
	told := false
	for _, a := range x.Artifacts {
		if a.Skipped != "" {
			fmt.Fprintf(w, "artifacts: seed %d: skipped (%s)\n", a.Seed, a.Skipped)
			continue
		}
		if a.Error != "" {
			fmt.Fprintf(w, "artifacts: seed %d: %s\n", a.Seed, a.Error)
			continue
		}
		all := "each one needed"
		switch {
		case a.Kept == 0:
			all = "none needed: it fails without a fault"
		case a.Needed < a.Kept:
			all = fmt.Sprintf("%d of them needed", a.Needed)
		}
		if !a.Complete {
			all += "; the minimization ran out of budget"
		}
		fmt.Fprintf(w, "artifacts: seed %d (%s): %d -> %d fault actions, %s; report %s; schedule %s; trace %s\n",
			a.Seed, a.Property, a.Faults, a.Kept, all, a.Report, a.Schedule, a.Trace)
		if s.FailFast {
			fmt.Fprintf(w, "minimized schedule of seed %d, one action a line:\n", a.Seed)
			for _, l := range a.Lines {
				fmt.Fprintf(w, "  %s\n", l)
			}
			fmt.Fprintf(w, "replay: fencesim replay %s\n", a.Minimized)
		}
		if !told && len(a.Timeline) > 0 {
			// The first failure, told: one timeline per system.
			told = true
			fmt.Fprintf(w, "seed %d, the minimized run (%s): %s\n", a.Seed, a.Minimized, strings.Join(a.Timeline, "\n"))
		}
	}
	for _, k := range x.Kept {
		if k.Error != "" {
			fmt.Fprintf(w, "kept: seed %d (%s %s): %s\n", k.Seed, k.Metric, num(k.Value, k.Unit), k.Error)
			continue
		}
		fmt.Fprintf(w, "kept: seed %d (%s %s, passing): report %s; trace %s\n", k.Seed, k.Metric, num(k.Value, k.Unit), k.Report, k.Trace)
	}
	if x.Abandoned > 0 {
		fmt.Fprintf(w, "abandoned: %d runs still in progress %v after the stop (not counted)\n", x.Abandoned, grace)
	}
	t := x.Timing
	if t.RunNS > 0 {
		perCore := float64(x.Runs) / time.Duration(t.RunNS).Seconds()
		fmt.Fprintf(w, "timing: %d runs in %v on %d workers (%.1f runs/s); %.1f runs/s per core; checker %v (%v per run)\n",
			x.Runs, time.Duration(t.WallNS).Round(time.Millisecond), t.Workers, float64(x.Runs)/time.Duration(t.WallNS).Seconds(),
			perCore, time.Duration(t.CheckNS).Round(time.Millisecond), (time.Duration(t.CheckNS) / time.Duration(max(x.Runs, 1))).Round(time.Microsecond))
	}
}

// rightTable is a table with right-aligned columns (numbers) that
// starts at the left margin: Flush writes it.
func rightTable(w io.Writer) *table {
	t := &table{w: w}
	t.tw = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', tabwriter.AlignRight)
	return t
}

type table struct {
	w   io.Writer
	buf bytes.Buffer
	tw  *tabwriter.Writer
}

func (t *table) Write(p []byte) (int, error) { return t.tw.Write(p) }

// Flush writes the table without the padding a right-aligned table puts
// before its first column.
func (t *table) Flush() {
	t.tw.Flush()
	for _, l := range strings.SplitAfter(t.buf.String(), "\n") {
		io.WriteString(t.w, strings.TrimPrefix(l, "  "))
	}
	t.buf.Reset()
}

// leftColumn returns a function that pads a first-column cell to the
// widest of names, so that it stays left-aligned in a right-aligned table.
func leftColumn(names []string) func(string) string {
	w := 0
	for _, n := range names {
		w = max(w, len(n))
	}
	return func(s string) string { return s + strings.Repeat(" ", w-len(s)) }
}
