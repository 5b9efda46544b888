package main

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fencesim/fencesim/internal/stats"
	"github.com/fencesim/fencesim/internal/summary"
	"github.com/fencesim/fencesim/internal/systems"
)

// worst is one --keep-worst METRIC=N: the N passing runs with the highest
// value of a metric.
type worst struct {
	spec, metric, unit string
	n                  int
	top                []summary.Kept // highest first, then by seed
}

// parseWorst parses --keep-worst METRIC=N against a system's metrics.
func parseWorst(spec string, sys systems.System) (*worst, error) {
	key, n, err := worstSpec(spec)
	if err != nil {
		return nil, err
	}
	names, units := metricsOf(sys)
	m, err := matchMetric(key, names)
	if err != nil {
		return nil, usagef("--keep-worst %q: %v", spec, err)
	}
	return &worst{spec: spec, metric: m, unit: units[m], n: n}, nil
}

// worstSpec checks the form METRIC=N.
func worstSpec(spec string) (string, int, error) {
	key, count, ok := strings.Cut(spec, "=")
	n, err := strconv.Atoi(count)
	if !ok || key == "" || err != nil || n < 1 {
		return "", 0, usagef("--keep-worst %q: want METRIC=N with N >= 1, e.g. --keep-worst MA1=3 (the 3 passing runs with the largest extra latency)", spec)
	}
	return key, n, nil
}

// matchMetric finds a metric by its name, its name without the id, or its
// id in parentheses (MA2).
func matchMetric(key string, names []string) (string, error) {
	var match []string
	for _, n := range names {
		base, id, _ := strings.Cut(n, " (")
		id = strings.TrimSuffix(id, ")")
		if n == key || base == key || id == key {
			match = append(match, n)
		}
	}
	switch len(match) {
	case 0:
		return "", fmt.Errorf("no metric %q (metrics: %s)", key, strings.Join(names, ", "))
	case 1:
		return match[0], nil
	}
	return "", fmt.Errorf("%q names %d metrics (%s): use the name", key, len(match), strings.Join(match, ", "))
}

// runValue is a run's value of a metric: a count's total, a duration's
// largest sample; ok is false when the run has no sample.
func runValue(r *systems.Result, metric string) (float64, bool) {
	for _, m := range r.Metrics {
		if m.Name != metric || len(m.Values) == 0 {
			continue
		}
		if m.Unit == "s" {
			v := math.Inf(-1)
			for _, x := range m.Values {
				v = math.Max(v, x)
			}
			return v, true
		}
		return stats.Sum(m.Values), true
	}
	return 0, false
}

// add considers a passing run.
func (w *worst) add(r *systems.Result) {
	v, ok := runValue(r, w.metric)
	if !ok || len(r.Failed()) > 0 {
		return
	}
	w.top = append(w.top, summary.Kept{Metric: w.metric, Value: v, Unit: w.unit, Seed: r.Seed})
	sort.SliceStable(w.top, func(i, j int) bool {
		if w.top[i].Value != w.top[j].Value {
			return w.top[i].Value > w.top[j].Value
		}
		return w.top[i].Seed < w.top[j].Seed
	})
	if len(w.top) > w.n {
		w.top = w.top[:w.n]
	}
}

// keepWorst runs the kept seeds again in full and writes their traces and
// reports under dir.
func keepWorst(ws []*worst, dir string, sys systems.System, d systems.Design, f systems.Faults, what string) []summary.Kept {
	var out []summary.Kept
	for _, w := range ws {
		for _, k := range w.top {
			r := systems.Run(sys, d, k.Seed, f, systems.Options{Full: true})
			title := fmt.Sprintf("%s seed %d (%s; %s %s, among the worst passing runs)", sys.Name(), k.Seed, what, w.metric, num(k.Value, w.unit))
			p, err := writeRun(filepath.Clean(dir), sys, r, title)
			k.Trace, k.Report = p.trace, p.report
			if err != nil {
				k.Error = err.Error()
			}
			out = append(out, k)
		}
	}
	return out
}
