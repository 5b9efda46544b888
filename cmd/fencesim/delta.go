package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fencesim/fencesim/internal/stats"
)

// runDelta is what changed between two sides run on the same seeds (compare:
// two designs in one binary; diff: two revisions of the code), built from
// per-seed records: which runs changed at all, which properties flipped
// on which seeds, and each metric side by side with exact counts.
type runDelta struct {
	System string `json:"system"`
	// Labels name the two sides ("baseline"/"changed", "base"/"working").
	Labels [2]string `json:"labels"`
	Seeds  int       `json:"seeds"` // seeds run on both sides
	// Altered counts the seeds whose two runs differ event for event (by
	// the hash of their events); AlteredSeeds lists them.
	Altered      int      `json:"altered"`
	AlteredSeeds []uint64 `json:"altered_seeds"`
	// Unpaired lists seeds run on one side only (an interruption).
	Unpaired []uint64 `json:"unpaired,omitempty"`
	// UndecidedSeeds lists, per side, the seeds a check of some property
	// could not decide (held, not judged by that check: propertyDelta's
	// Undecided).
	UndecidedSeeds [2][]uint64     `json:"undecided_seeds"`
	Properties     []propertyDelta `json:"properties"`
	Metrics        []metricDelta   `json:"metrics"`
	Thresholds     []threshold     `json:"thresholds,omitempty"`
	// Warnings are the promise metrics that got significantly worse,
	// seed by seed (paired.go).
	Warnings []warning `json:"warnings,omitempty"`
}

// propertyDelta is one property on both sides.
type propertyDelta struct {
	Property string `json:"property"`
	Failed   [2]int `json:"failed"` // runs failing it on each side
	// NewlyFailing are the seeds that pass it on the first side and fail
	// it on the second; NewlyPassing the other way.
	NewlyFailing []uint64 `json:"newly_failing"`
	NewlyPassing []uint64 `json:"newly_passing"`
	// Undecided counts the runs on each side a check of the property could
	// not decide (held, not judged by that check); Unsure lists the flipped
	// seeds whose held side was such a run: a flip that may be none.
	Undecided [2]int   `json:"undecided"`
	Unsure    []uint64 `json:"unsure,omitempty"`
}

// metricDelta is one metric on both sides.
type metricDelta struct {
	Name  string          `json:"name"`
	Unit  string          `json:"unit,omitempty"`
	Sides [2]stats.Spread `json:"sides"`
	// Diff is the second side's mean minus the first's, with a 95%
	// confidence interval (normal approximation, Welch's standard error):
	// the samples taken as independent, unpaired.
	Diff   float64    `json:"diff"`
	DiffCI [2]float64 `json:"diff_ci"`
	// Paired compares the per-run totals seed by seed: what the text
	// prints and --fail-on's noise and the warnings read.
	Paired stats.Paired `json:"paired"`
	// Promise: a metric of a promise the design makes (promiseMetrics).
	Promise bool `json:"promise,omitempty"`
}

// newDelta pairs two sides' records by seed.
func newDelta(system string, labels [2]string, a, b []seedRecord) *runDelta {
	d := &runDelta{System: system, Labels: labels, AlteredSeeds: []uint64{}, UndecidedSeeds: [2][]uint64{{}, {}}}
	bySeed := [2]map[uint64]*seedRecord{{}, {}}
	for i, recs := range [2][]seedRecord{a, b} {
		for j := range recs {
			if recs[j].System == system || system == "" {
				bySeed[i][recs[j].Seed] = &recs[j]
			}
		}
	}
	var seeds []uint64
	for s := range bySeed[0] {
		if _, ok := bySeed[1][s]; ok {
			seeds = append(seeds, s)
		} else {
			d.Unpaired = append(d.Unpaired, s)
		}
	}
	for s := range bySeed[1] {
		if _, ok := bySeed[0][s]; !ok {
			d.Unpaired = append(d.Unpaired, s)
		}
	}
	sortSeeds(seeds)
	sortSeeds(d.Unpaired)
	d.Seeds = len(seeds)
	props := map[string]*propertyDelta{}
	prop := func(name string) *propertyDelta {
		p := props[name]
		if p == nil {
			p = &propertyDelta{Property: name, NewlyFailing: []uint64{}, NewlyPassing: []uint64{}}
			props[name] = p
		}
		return p
	}
	type samples struct {
		unit  string
		v     [2][]float64
		runs  [2][]uint64
		total [2]float64
		pairs []stats.Pair
	}
	metrics := map[string]*samples{}
	var order []string
	for _, s := range seeds {
		x, y := bySeed[0][s], bySeed[1][s]
		altered := x.Hash != y.Hash || x.Hash == ""
		if altered {
			d.Altered++
			d.AlteredSeeds = append(d.AlteredSeeds, s)
		}
		// The seed's per-run total of each metric on each side.
		var runTotal [2]map[string]float64
		for i, r := range [2]*seedRecord{x, y} {
			runTotal[i] = map[string]float64{}
			for _, p := range r.Failed {
				prop(p).Failed[i]++
			}
			for _, p := range r.Held {
				prop(p)
			}
			for _, p := range r.Undecided {
				prop(p).Undecided[i]++
			}
			if len(r.Undecided) > 0 {
				d.UndecidedSeeds[i] = append(d.UndecidedSeeds[i], s)
			}
			for _, m := range r.Metrics {
				ms := metrics[m.Name]
				if ms == nil {
					ms = &samples{unit: m.Unit}
					metrics[m.Name] = ms
					order = append(order, m.Name)
				}
				ms.v[i] = append(ms.v[i], m.Values...)
				any := false
				runTotal[i][m.Name] += 0 // a run without a sample has a total of 0
				for _, v := range m.Values {
					ms.total[i] += v
					runTotal[i][m.Name] += v
					any = any || v != 0
				}
				if any {
					ms.runs[i] = append(ms.runs[i], s)
				}
			}
		}
		// A metric measured on one side only (renamed by the change) has
		// no pair.
		for _, m := range x.Metrics {
			if b, ok := runTotal[1][m.Name]; ok {
				ms := metrics[m.Name]
				ms.pairs = append(ms.pairs, stats.Pair{A: runTotal[0][m.Name], B: b, Altered: altered})
			}
		}
		for _, p := range x.Failed {
			if !y.failedOn(p) {
				prop(p).NewlyPassing = append(prop(p).NewlyPassing, s)
				if y.undecidedOn(p) {
					prop(p).Unsure = append(prop(p).Unsure, s)
				}
			}
		}
		for _, p := range y.Failed {
			if !x.failedOn(p) {
				prop(p).NewlyFailing = append(prop(p).NewlyFailing, s)
				if x.undecidedOn(p) {
					prop(p).Unsure = append(prop(p).Unsure, s)
				}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		d.Properties = append(d.Properties, *props[name])
	}
	for _, name := range order {
		ms := metrics[name]
		md := metricDelta{Name: name, Unit: ms.unit, Paired: stats.PairedOf(ms.pairs), Promise: isPromise(system, name)}
		for i := range 2 {
			md.Sides[i] = stats.SpreadOf(ms.v[i], ms.runs[i], ms.total[i])
		}
		a, b := md.Sides[0], md.Sides[1]
		md.Diff = b.Mean - a.Mean
		md.DiffCI = stats.WelchCI(md.Diff, ms.v[0], ms.v[1])
		d.Metrics = append(d.Metrics, md)
	}
	d.Warnings = warningsOf(d)
	return d
}

func sortSeeds(s []uint64) { sort.Slice(s, func(i, j int) bool { return s[i] < s[j] }) }

// newlyFailing reports whether a property fails on a seed of the second
// side that passed it on the first.
func (d *runDelta) newlyFailing() bool {
	for _, p := range d.Properties {
		if len(p.NewlyFailing) > 0 {
			return true
		}
	}
	return false
}

// crossed reports whether a --fail-on threshold was crossed.
func (d *runDelta) crossed() bool {
	for _, t := range d.Thresholds {
		if t.Crossed {
			return true
		}
	}
	return false
}

// writeText renders the delta: the runs that changed, the properties, the
// metrics side by side, the rare events in exact counts, the thresholds.
func (d *runDelta) writeText(w io.Writer, what string) {
	a, b := d.Labels[0], d.Labels[1]
	switch {
	case d.Seeds == 0:
		fmt.Fprintf(w, "no seed ran on both sides\n")
	case d.Altered == 0:
		fmt.Fprintf(w, "%s altered 0 of %d runs: every run is identical event for event (by trace hash)\n", what, d.Seeds)
	default:
		fmt.Fprintf(w, "%s altered %d of %d runs (by trace hash; %d identical event for event):\n %s\n",
			what, d.Altered, d.Seeds, d.Seeds-d.Altered, seedList(" seeds ", d.AlteredSeeds, 10))
	}
	if len(d.Unpaired) > 0 {
		fmt.Fprintf(w, "%d seeds ran on one side only and are left out:%s\n", len(d.Unpaired), seedList(" ", d.Unpaired, 10))
	}
	if u := d.UndecidedSeeds; len(u[0])+len(u[1]) > 0 {
		var per []string
		for _, p := range d.Properties {
			if p.Undecided[0]+p.Undecided[1] > 0 {
				per = append(per, fmt.Sprintf("%s in %d and %d", p.Property, p.Undecided[0], p.Undecided[1]))
			}
		}
		for i, label := range d.Labels {
			if l := seedList(label+" seeds ", u[i], 10); l != "" {
				per = append(per, l)
			}
		}
		fmt.Fprintf(w, "undecided runs: %s %d, %s %d (a check could not decide: held, not judged by that check; fencesim run --seed S says why): %s\n",
			a, len(u[0]), b, len(u[1]), strings.Join(per, "; "))
	}
	fmt.Fprintln(w)
	var props, names []string
	for _, p := range d.Properties {
		props = append(props, p.Property)
	}
	for _, m := range d.Metrics {
		names = append(names, m.Name)
		if m.Promise {
			names = append(names, m.Name+" *")
		}
	}
	pp := leftColumn(append(props, "property"))
	tw := rightTable(w)
	fmt.Fprintf(w, "runs failing each property:\n")
	fmt.Fprintf(tw, "%s\t%s\t%s\tnewly failing\tnewly passing\t\n", pp("property"), a, b)
	var flips []string
	for _, p := range d.Properties {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t\n", pp(p.Property), p.Failed[0], p.Failed[1],
			orDash(countText(len(p.NewlyFailing))), orDash(countText(len(p.NewlyPassing))))
		id := propertyLabel(p.Property)
		if n := len(p.NewlyFailing); n > 0 {
			flips = append(flips, fmt.Sprintf("  %s newly fails on %d:%s", id, n, seedList(" seeds ", p.NewlyFailing, 10)))
		}
		if n := len(p.NewlyPassing); n > 0 {
			flips = append(flips, fmt.Sprintf("  %s newly passes on %d:%s", id, n, seedList(" seeds ", p.NewlyPassing, 10)))
		}
		if n := len(p.Unsure); n > 0 {
			flips = append(flips, fmt.Sprintf("  %s: %d of these flips held undecided (a check gave up): the run may have failed it too:%s", id, n, seedList(" seeds ", p.Unsure, 10)))
		}
	}
	tw.Flush()
	if len(flips) > 0 {
		fmt.Fprintln(w, strings.Join(flips, "\n"))
	}
	fmt.Fprintln(w)
	pad := leftColumn(append(names, "metric"))
	tw = rightTable(w)
	fmt.Fprintf(tw, "%s\t%s mean [95%% CI]\t%s mean [95%% CI]\truns with any\t\n", pad("metric"), a, b)
	for _, m := range d.Metrics {
		x, y, u := m.Sides[0], m.Sides[1], m.Unit
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d -> %d\t\n", pad(m.Name),
			withCI(x.Mean, x.MeanCI, u), withCI(y.Mean, y.MeanCI, u), x.Runs, y.Runs)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = rightTable(w)
	fmt.Fprintf(tw, "%s\t%s p50\tp99\tmax\t%s p50\tp99\tmax\t\n", pad("metric"), a, b)
	for _, m := range d.Metrics {
		x, y, u := m.Sides[0], m.Sides[1], m.Unit
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", pad(m.Name),
			num(x.P50, u), num(x.P99, u), num(x.Max, u), num(y.P50, u), num(y.P99, u), num(y.Max, u))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nseed by seed (each run's total, %s minus %s; %d seeds, %d altered; p: sign test):\n", b, a, d.Seeds, d.Altered)
	tw = rightTable(w)
	fmt.Fprintf(tw, "%s\tup\tdown\tsame\tp\tall runs ±95%%\taltered runs ±95%%\t\n", pad("metric"))
	for _, m := range d.Metrics {
		p, u := m.Paired, m.Unit
		name := m.Name
		if m.Promise {
			name += " *"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t\n", pad(name), p.Up, p.Down, p.Same, pText(p.SignP),
			plusMinus(p.All, u), plusMinus(p.Altered, u))
	}
	tw.Flush()
	fmt.Fprintf(w, "(±: the 95%% paired t interval; * a promise metric: up is worse, and up at p < %g warns)\n", stats.WarnP)
	var rare []string
	for _, m := range d.Metrics {
		x, y := m.Sides[0], m.Sides[1]
		if m.Unit == "" && x.Runs != y.Runs && min(x.Runs, y.Runs) <= stats.FewSeeds {
			rare = append(rare, fmt.Sprintf("  %s: %s with any on %s, %s on %s", m.Name, runsText(x), a, runsText(y), b))
		}
	}
	if len(rare) > 0 {
		fmt.Fprintf(w, "\nexact counts:\n%s\n", strings.Join(rare, "\n"))
	}
	if len(d.Thresholds) > 0 {
		fmt.Fprintf(w, "\nthresholds:\n")
		for _, t := range d.Thresholds {
			verdict := "held"
			if t.Crossed {
				verdict = "CROSSED"
			}
			noise := ""
			if t.Stat == "mean" && t.noise(d) {
				noise = " (the paired 95% CI includes 0: it may be noise; run more seeds)"
			}
			fmt.Fprintf(w, "  --fail-on %s: %s %s %s, %s %s: %s%s\n", t.Spec, t.Stat, a, num(t.Values[0], t.Unit), b, num(t.Values[1], t.Unit), verdict, noise)
		}
	}
	if len(d.Warnings) > 0 {
		fmt.Fprintln(w)
		for _, x := range d.Warnings {
			fmt.Fprintln(w, x.Text)
		}
	}
}

// countText is a count, or "" for none.
func countText(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// seedList renders up to n seeds after prefix ("" when there are none).
func seedList(prefix string, seeds []uint64, n int) string {
	if len(seeds) == 0 {
		return ""
	}
	var parts []string
	for i, s := range seeds {
		if i == n {
			parts = append(parts, fmt.Sprintf("... (%d more)", len(seeds)-n))
			break
		}
		parts = append(parts, strconv.FormatUint(s, 10))
	}
	return prefix + strings.Join(parts, ", ")
}

// runsText is an exact count of runs: "0 runs", "1 run (seed 17)".
func runsText(s stats.Spread) string {
	unit := "runs"
	if s.Runs == 1 {
		unit = "run"
	}
	out := fmt.Sprintf("%d %s", s.Runs, unit)
	if len(s.RunSeeds) > 0 {
		word := "seeds"
		if len(s.RunSeeds) == 1 {
			word = "seed"
		}
		out += fmt.Sprintf(" (%s%s, total %s)", word, seedList(" ", s.RunSeeds, stats.FewSeeds), num(s.Total, ""))
	}
	return out
}

func withCI(m float64, ci [2]float64, unit string) string {
	if math.IsNaN(m) {
		return "-"
	}
	if math.IsNaN(ci[0]) || ci[0] == ci[1] {
		return num(m, unit)
	}
	return fmt.Sprintf("%s [%s, %s]", num(m, unit), num(ci[0], unit), num(ci[1], unit))
}

func signed(x float64, unit string) string {
	s := num(x, unit)
	if x > 0 {
		s = "+" + s
	}
	return s
}

// ---- thresholds ----

// threshold is one --fail-on: a metric's statistic may not move more than
// a bound from the first side to the second.
type threshold struct {
	Spec   string     `json:"spec"`
	Metric string     `json:"metric"`
	Stat   string     `json:"stat"` // mean, p50, p99, max, runs or total
	Unit   string     `json:"unit,omitempty"`
	Values [2]float64 `json:"values"`
	// Crossed: the statistic moved past the bound in the bound's direction.
	Crossed bool `json:"crossed"`
	bound   float64
	percent bool
	fall    bool // the bound is on a fall (-X): "-0" is one too
}

// thresholdStats are the statistics a threshold can bound.
var thresholdStats = []string{"mean", "p50", "p99", "max", "runs", "total"}

// parseThreshold parses METRIC[.STAT]=+X% (a rise of more than X% crosses
// it), =+X (a rise of more than X, in the metric's unit: seconds for
// durations), or -X% / -X (a fall). METRIC is a metric's name, or its id
// in parentheses (MA2), or its name without the id.
func parseThreshold(spec string, names []string, units map[string]string) (threshold, error) {
	t := threshold{Spec: spec, Stat: "mean"}
	key, bound, ok := strings.Cut(spec, "=")
	if !ok || key == "" || bound == "" {
		return t, usagef("--fail-on %q: want METRIC[.STAT]=+X%% or =+X, e.g. --fail-on MA2=+10%% or --fail-on 'extra_latency.p99=+0.5'", spec)
	}
	if k, stat, ok := strings.Cut(key, "."); ok {
		if !contains(thresholdStats, stat) {
			return t, usagef("--fail-on %q: unknown statistic %q (one of %s)", spec, stat, strings.Join(thresholdStats, ", "))
		}
		key, t.Stat = k, stat
	}
	m, err := matchMetric(key, names)
	if err != nil {
		return t, usagef("--fail-on %q: %v", spec, err)
	}
	t.Metric = m
	t.Unit = units[t.Metric]
	if t.Stat == "runs" {
		t.Unit = ""
	}
	if strings.HasSuffix(bound, "%") {
		t.percent, bound = true, strings.TrimSuffix(bound, "%")
	}
	if bound == "" || (bound[0] != '+' && bound[0] != '-') {
		return t, usagef("--fail-on %q: the bound %q must be signed, + for a rise or - for a fall, e.g. +10%% or -0.5", spec, bound)
	}
	v, err := strconv.ParseFloat(bound, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return t, usagef("--fail-on %q: the bound %q is not a number, e.g. +10%% or -0.5", spec, bound)
	}
	t.bound, t.fall = v, bound[0] == '-'
	return t, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// noise reports whether the paired 95% interval of the metric's per-seed
// difference (over every paired seed) includes zero. An interval of one
// seed or none is noise too: nothing says the move is real.
func (t *threshold) noise(d *runDelta) bool {
	for _, m := range d.Metrics {
		if m.Name == t.Metric {
			ci := m.Paired.All.CI
			return math.IsNaN(ci[0]) || (ci[0] <= 0 && ci[1] >= 0)
		}
	}
	return false
}

// judge sets the threshold's values from the delta and whether it crossed.
// A relative bound on a statistic that is 0 on the first side is crossed
// by any move in its direction.
func (t *threshold) judge(d *runDelta) {
	for _, m := range d.Metrics {
		if m.Name != t.Metric {
			continue
		}
		for i, s := range m.Sides {
			switch t.Stat {
			case "mean":
				t.Values[i] = s.Mean
			case "p50":
				t.Values[i] = s.P50
			case "p99":
				t.Values[i] = s.P99
			case "max":
				t.Values[i] = s.Max
			case "runs":
				t.Values[i] = float64(s.Runs)
			case "total":
				t.Values[i] = s.Total
			}
		}
	}
	a, b := t.Values[0], t.Values[1]
	if math.IsNaN(a) || math.IsNaN(b) {
		return
	}
	move := b - a
	limit := t.bound
	if t.percent {
		limit = t.bound / 100 * math.Abs(a)
	}
	if t.fall {
		t.Crossed = move < limit
	} else {
		t.Crossed = move > limit
	}
}

// ---- JSON: NaN (no samples) is null ----

// MarshalJSON writes a difference without samples as null.
func (m metricDelta) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Name    string          `json:"name"`
		Unit    string          `json:"unit,omitempty"`
		Sides   [2]stats.Spread `json:"sides"`
		Diff    *float64        `json:"diff"`
		DiffCI  [2]*float64     `json:"diff_ci"`
		Paired  stats.Paired    `json:"paired"`
		Promise bool            `json:"promise,omitempty"`
	}{m.Name, m.Unit, m.Sides, stats.Null(m.Diff), stats.NullPair(m.DiffCI), m.Paired, m.Promise})
}

// MarshalJSON writes a statistic without samples as null.
func (t threshold) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Spec    string      `json:"spec"`
		Metric  string      `json:"metric"`
		Stat    string      `json:"stat"`
		Unit    string      `json:"unit,omitempty"`
		Values  [2]*float64 `json:"values"`
		Crossed bool        `json:"crossed"`
	}{t.Spec, t.Metric, t.Stat, t.Unit, stats.NullPair(t.Values), t.Crossed})
}

// propertyLabel is a property's short name in a line about it: its id, and
// the view it is checked in when it has one, so that two checks of one
// property ("PA1 at-most-one-owner" and "PA1 at-most-one-owner (porcupine,
// oracle view)") read apart: "PA1", "PA1 (porcupine, oracle view)".
func propertyLabel(p string) string {
	id := strings.Fields(p)[0]
	if i := strings.Index(p, " ("); i >= 0 && strings.HasSuffix(p, ")") {
		return id + p[i:]
	}
	return id
}
