package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fencesim/fencesim/internal/stats"
	"github.com/fencesim/fencesim/internal/systems"
)

// summaryFormat is the version of the JSON summary (--summary-out, --json).
const summaryFormat = "fencesim-summary/1"

// Summary is what explore and mutants print: the same from one machine or
// from merged shards (except timings and which failures got artifacts).
type Summary struct {
	Format  string `json:"format"`
	Command string `json:"command"` // explore or mutants
	Faults  string `json:"faults"`
	Seeds   string `json:"seeds"` // the whole range, the same in every shard
	Budget  int    `json:"budget,omitempty"`
	Shard   string `json:"shard,omitempty"` // "i/n" of a shard's summary; empty when whole or merged
	// FailFast: explore --failfast stopped at the first failing run; the
	// text prints its minimized schedule.
	FailFast bool            `json:"failfast,omitempty"`
	Systems  []SystemSummary `json:"systems,omitempty"`
	Mutants  []MutantRow     `json:"mutants,omitempty"`
	// Interrupted names the signal (SIGINT, SIGTERM) that stopped the
	// command: the summary covers only the runs that finished.
	Interrupted string `json:"interrupted,omitempty"`
	// NotRun lists the systems (explore) or knobs (mutants) an
	// interruption left out, or whose unfinished results were dropped.
	NotRun []string `json:"not_run,omitempty"`
}

// SystemSummary is one system's exploration.
type SystemSummary struct {
	System     string          `json:"system"`
	Title      string          `json:"title"`
	Design     string          `json:"design"`          // in words: default, or the knobs and parameters set
	World      string          `json:"world,omitempty"` // system A: how much of each run's world was drawn
	DesignJSON json.RawMessage `json:"design_json"`
	Runs       int             `json:"runs"`
	FailedRuns int             `json:"failed_runs"`
	Properties []PropertyCount `json:"properties"`
	Failures   []Failure       `json:"failures,omitempty"` // every failing seed, by seed
	Probes     []ProbeCount    `json:"probes,omitempty"`
	Metrics    []MetricSamples `json:"metrics"`
	Audit      Audit           `json:"audit"`
	Artifacts  []Artifact      `json:"artifacts,omitempty"`
	Kept       []Kept          `json:"kept,omitempty"` // --keep-worst: passing runs written in full
	// Abandoned counts the runs still in progress when the system stopped
	// (Ctrl-C, the end of --time) that did not finish within the grace:
	// they are not in the counts.
	Abandoned int    `json:"abandoned,omitempty"`
	Timing    Timing `json:"timing"`
}

// PropertyCount is how many runs failed a property.
type PropertyCount struct {
	Property string `json:"property"`
	Failed   int    `json:"failed"`
}

// Failure is one failing seed.
type Failure struct {
	Seed       uint64   `json:"seed"`
	Properties []string `json:"properties"`
	Message    string   `json:"message"`
}

// ProbeCount is how many runs hit a probe.
type ProbeCount struct {
	Name string `json:"name"`
	Runs int    `json:"runs"`
}

// MetricSamples are every sample of a metric over the runs, sorted.
type MetricSamples struct {
	Name   string    `json:"name"`
	Unit   string    `json:"unit,omitempty"`
	Values []float64 `json:"values"`
}

// Audit is the determinism audit: seeds run twice and compared.
type Audit struct {
	Runs       int        `json:"runs"`
	Mismatches []Mismatch `json:"mismatches,omitempty"`
}

// Mismatch is a seed whose two runs differed.
type Mismatch struct {
	Seed   uint64 `json:"seed"`
	Index  int    `json:"index"` // the first differing event, from 1
	First  string `json:"first"`
	Second string `json:"second"`
}

// Artifact is what was written for one failing seed.
type Artifact struct {
	Seed      uint64 `json:"seed"`
	Property  string `json:"property"` // the property kept failing while minimizing
	Trace     string `json:"trace"`
	Minimized string `json:"minimized_trace"`
	Schedule  string `json:"schedule"`
	Report    string `json:"report"`
	Porcupine string `json:"porcupine,omitempty"`
	Faults    int    `json:"faults"`   // fault actions in the failing run's schedule
	Kept      int    `json:"kept"`     // fault actions after minimization
	Needed    int    `json:"needed"`   // of those, the ones the failure needs
	MinRuns   int    `json:"min_runs"` // runs the minimization made
	Complete  bool   `json:"complete"` // the minimization finished within its budget
	Error     string `json:"error,omitempty"`
	Skipped   string `json:"skipped,omitempty"` // why nothing was written: the command ran out of time or was interrupted
	// Lines is the minimized schedule, one action a line, each marked
	// needed, not needed or end.
	Lines []string `json:"schedule_lines,omitempty"`
	// Timeline is the failure told in at most 25 lines: the needed faults
	// and the violating key's story, one step a line.
	Timeline []string `json:"timeline,omitempty"`
}

// Timing is wall-clock time: it differs between machines and runs.
type Timing struct {
	WallNS  int64 `json:"wall_ns"`  // elapsed, for the system's runs
	RunNS   int64 `json:"run_ns"`   // the sum of the runs' durations (one core each)
	CheckNS int64 `json:"check_ns"` // the sum of the checkers' durations
	Workers int   `json:"workers"`
}

// ---- building ----

// aggregate collects the runs of one system.
type aggregate struct {
	s       SystemSummary
	props   map[string]int
	probes  map[string]int
	metrics map[string]*MetricSamples
	order   []string
	probeNs []string
}

func newAggregate(sys systems.System, d systems.Design, design string) *aggregate {
	return &aggregate{
		s:       SystemSummary{System: sys.Name(), Title: sys.Title(), Design: design, World: d.World, DesignJSON: d.JSON},
		props:   map[string]int{},
		probes:  map[string]int{},
		metrics: map[string]*MetricSamples{},
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
	}
	if f := r.Failed(); len(f) > 0 {
		a.s.FailedRuns++
		var names []string
		for _, v := range f {
			names = append(names, v.Property)
		}
		a.s.Failures = append(a.s.Failures, Failure{Seed: r.Seed, Properties: names, Message: clip(f[0].String(), 300)})
	}
	for name, hit := range r.Probes {
		if hit {
			a.probes[name]++
		}
	}
	for _, m := range r.Metrics {
		ms := a.metrics[m.Name]
		if ms == nil {
			ms = &MetricSamples{Name: m.Name, Unit: m.Unit, Values: []float64{}}
			a.metrics[m.Name] = ms
			a.order = append(a.order, m.Name)
		}
		ms.Values = append(ms.Values, m.Values...)
	}
}

func (a *aggregate) done(wall time.Duration, workers int) SystemSummary {
	s := a.s
	s.Timing.WallNS, s.Timing.Workers = int64(wall), workers
	for _, name := range sortedKeys(a.props) {
		s.Properties = append(s.Properties, PropertyCount{name, a.props[name]})
	}
	for _, name := range a.probeNs {
		s.Probes = append(s.Probes, ProbeCount{name, a.probes[name]})
	}
	for _, name := range a.order {
		ms := *a.metrics[name]
		sort.Float64s(ms.Values)
		s.Metrics = append(s.Metrics, ms)
	}
	sort.Slice(s.Failures, func(i, j int) bool { return s.Failures[i].Seed < s.Failures[j].Seed })
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func clip(s string, n int) string {
	s = oneLine(s)
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// failed reports whether the summary has a failure (a property, a missed
// or falsely caught knob, or a determinism mismatch).
func (s *Summary) failed() bool {
	for _, x := range s.Systems {
		if x.FailedRuns > 0 || len(x.Audit.Mismatches) > 0 {
			return true
		}
	}
	for _, m := range s.Mutants {
		if !m.asExpected() || len(m.BaseFails) > 0 {
			return true // a knob not judged as expected, or a design that fails on its own
		}
	}
	return false
}

func (s *Summary) exitCode() int {
	if s.failed() {
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
func (s *Summary) writeText(w io.Writer) {
	for i, x := range s.Systems {
		if i > 0 {
			fmt.Fprintln(w)
		}
		x.writeText(w, s)
	}
	if len(s.Mutants) > 0 || s.Command == "mutants" {
		writeMutants(w, s)
	}
	s.writeInterrupted(w)
}

// writeInterrupted marks a summary that a signal cut short.
func (s *Summary) writeInterrupted(w io.Writer) {
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

func (x *SystemSummary) writeText(w io.Writer, s *Summary) {
	fmt.Fprintf(w, "== %s (%s) ==\n", x.System, x.Title)
	world := ""
	if x.World != "" {
		world = "; world: " + x.World
	}
	fmt.Fprintf(w, "design: %s%s; faults: %s; seeds: %s\n", x.Design, world, s.Faults, s.Seeds)
	fmt.Fprintf(w, "runs: %d, failed: %d (%s)\n\n", x.Runs, x.FailedRuns, pct(x.FailedRuns, x.Runs))
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
		var seeds []string
		for i, f := range x.Failures {
			if i == 20 {
				seeds = append(seeds, fmt.Sprintf("(+%d more)", len(x.Failures)-20))
				break
			}
			seeds = append(seeds, fmt.Sprint(f.Seed))
		}
		fmt.Fprintf(w, "failing seeds: %s\n", strings.Join(seeds, ", "))
		fmt.Fprintf(w, "first failure: seed %d: %s\n", x.Failures[0].Seed, x.Failures[0].Message)
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
		if a.Needed < a.Kept {
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

// writeJSON writes the summary as indented JSON.
func (s *Summary) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// save writes the summary to a file (--summary-out).
func (s *Summary) save(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := s.writeJSON(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ---- merging ----

// merge combines shard summaries into the summary one run over every seed
// prints. The shards must come from the same command, seeds, faults and
// designs, each shard once.
func merge(parts []*Summary) (*Summary, []string, error) {
	if len(parts) == 0 {
		return nil, nil, usagef("nothing to merge")
	}
	first := parts[0]
	out := &Summary{Format: summaryFormat, Command: first.Command, Faults: first.Faults, Seeds: first.Seeds, Budget: first.Budget}
	seen := map[string]bool{}
	var n uint64
	var notes []string
	for i, p := range parts {
		if p.Format != summaryFormat {
			return nil, nil, usagef("summary %d: format %q is not %q", i+1, p.Format, summaryFormat)
		}
		if p.Command != first.Command || p.Faults != first.Faults || p.Seeds != first.Seeds || p.Budget != first.Budget {
			return nil, nil, usagef("summary %d is of %s --faults %s --seeds %s, summary 1 of %s --faults %s --seeds %s: not shards of one run",
				i+1, p.Command, p.Faults, p.Seeds, first.Command, first.Faults, first.Seeds)
		}
		key := p.Shard
		if key == "" {
			key = "0/1"
		}
		sh, err := parseShard(key)
		if err != nil {
			return nil, nil, usagef("summary %d: %v", i+1, err)
		}
		if n == 0 {
			n = sh.N
		}
		if sh.N != n {
			return nil, nil, usagef("summary %d is shard %s, summary 1 is of %d shards", i+1, key, n)
		}
		if seen[key] {
			return nil, nil, usagef("shard %s is given twice", key)
		}
		seen[key] = true
	}
	if uint64(len(seen)) != n {
		var missing []string
		for i := uint64(0); i < n; i++ {
			if k := fmt.Sprintf("%d/%d", i, n); !seen[k] {
				missing = append(missing, k)
			}
		}
		notes = append(notes, fmt.Sprintf("shards missing: %s (the summary covers only the others)", strings.Join(missing, ", ")))
	}
	for i, p := range parts {
		for _, x := range p.Systems {
			if err := out.mergeSystem(x); err != nil {
				return nil, nil, err
			}
		}
		for _, m := range p.Mutants {
			out.mergeMutant(m)
		}
		if p.Interrupted != "" {
			out.Interrupted = p.Interrupted
			for _, n := range p.NotRun {
				if !slices.Contains(out.NotRun, n) {
					out.NotRun = append(out.NotRun, n)
				}
			}
			notes = append(notes, fmt.Sprintf("summary %d (shard %s) was interrupted: the merged summary covers only what finished", i+1, p.Shard))
		}
	}
	for i := range out.Systems {
		x := &out.Systems[i]
		sort.Slice(x.Failures, func(a, b int) bool { return x.Failures[a].Seed < x.Failures[b].Seed })
		sort.Slice(x.Audit.Mismatches, func(a, b int) bool { return x.Audit.Mismatches[a].Seed < x.Audit.Mismatches[b].Seed })
		sort.Slice(x.Artifacts, func(a, b int) bool { return x.Artifacts[a].Seed < x.Artifacts[b].Seed })
		for j := range x.Metrics {
			sort.Float64s(x.Metrics[j].Values)
		}
	}
	return out, notes, nil
}

func (s *Summary) mergeSystem(x SystemSummary) error {
	for i := range s.Systems {
		y := &s.Systems[i]
		if y.System != x.System {
			continue
		}
		if string(y.DesignJSON) != string(x.DesignJSON) {
			return usagef("the shards ran different designs of %s", x.System)
		}
		y.Runs += x.Runs
		y.FailedRuns += x.FailedRuns
		y.Properties = mergeCounts(y.Properties, x.Properties)
		y.Failures = append(y.Failures, x.Failures...)
		for j, p := range x.Probes {
			if j < len(y.Probes) && y.Probes[j].Name == p.Name {
				y.Probes[j].Runs += p.Runs
			}
		}
		for _, m := range x.Metrics {
			found := false
			for j := range y.Metrics {
				if y.Metrics[j].Name == m.Name {
					y.Metrics[j].Values = append(y.Metrics[j].Values, m.Values...)
					found = true
				}
			}
			if !found {
				y.Metrics = append(y.Metrics, m)
			}
		}
		y.Audit.Runs += x.Audit.Runs
		y.Audit.Mismatches = append(y.Audit.Mismatches, x.Audit.Mismatches...)
		y.Artifacts = append(y.Artifacts, x.Artifacts...)
		y.Abandoned += x.Abandoned
		y.Timing.WallNS = max(y.Timing.WallNS, x.Timing.WallNS)
		y.Timing.RunNS += x.Timing.RunNS
		y.Timing.CheckNS += x.Timing.CheckNS
		y.Timing.Workers += x.Timing.Workers
		return nil
	}
	x.Metrics = append([]MetricSamples(nil), x.Metrics...)
	for j := range x.Metrics {
		x.Metrics[j].Values = append([]float64{}, x.Metrics[j].Values...)
	}
	s.Systems = append(s.Systems, x)
	return nil
}

func mergeCounts(a, b []PropertyCount) []PropertyCount {
	m := map[string]int{}
	for _, p := range a {
		m[p.Property] += p.Failed
	}
	for _, p := range b {
		m[p.Property] += p.Failed
	}
	var out []PropertyCount
	for _, k := range sortedKeys(m) {
		out = append(out, PropertyCount{k, m[k]})
	}
	return out
}

// readSummary reads a summary file.
func readSummary(path string) (*Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("%v", err)
	}
	var s Summary
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, usagef("%s: not a fencesim summary: %v", path, err)
	}
	if s.Format != summaryFormat {
		return nil, usagef("%s: format %q is not %q", path, s.Format, summaryFormat)
	}
	return &s, nil
}
