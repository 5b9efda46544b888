package main

import (
	"fmt"
	"math"

	"github.com/fencesim/fencesim/internal/systems"
	"gonum.org/v1/gonum/stat/distuv"
)

// Paired statistics. diff and compare run every seed on both sides, so a
// metric's two samples are pairs, one per seed: the seed's value on the
// second side minus its value on the first. The per-seed value of a metric
// is its per-run total, the sum of the run's samples (a count has one
// sample, so it is the count; a duration is the sum of the run's
// durations: extra_latency the run's total extra latency, blocked_max the
// run's one sample), the same sum as the tables' "total" and "runs with
// any" (a run has any when its total is not 0).
//
// The distributions come from gonum's stat/distuv (the binomial's CDF
// and Student's t quantile), a maintained library, rather than from
// series of our own.

// pairedStats is one metric's seed-by-seed comparison.
type pairedStats struct {
	// Up, Down and Same count the seeds whose per-run total rose, fell or
	// stayed from the first side to the second.
	Up   int `json:"up"`
	Down int `json:"down"`
	Same int `json:"same"`
	// SignP is the two-sided sign test's p-value over the seeds that moved
	// (ties left out): the chance, were up and down equally likely, of a
	// split at least as lopsided as Up:Down.
	SignP float64 `json:"sign_p"`
	// All is the mean per-seed difference over every paired seed, with
	// its 95% paired t interval; Altered over the seeds whose trace hash
	// differs (the others have a difference of 0).
	All     meanCI `json:"all"`
	Altered meanCI `json:"altered"`
}

// meanCI is a mean difference and its 95% interval (NaN where undefined:
// no seed, or one seed for the interval).
type meanCI struct {
	N    int        `json:"n"`
	Mean float64    `json:"mean"`
	CI   [2]float64 `json:"ci"`
}

// signTest is the two-sided sign test's p-value for up seeds that rose
// and down that fell: 2·P(X ≤ min(up, down)) for X ~ Binomial(up+down,
// 1/2), at most 1. No seed that moved gives 1.
func signTest(up, down int) float64 {
	n := up + down
	if n == 0 {
		return 1
	}
	k := min(up, down)
	p := 2 * distuv.Binomial{N: float64(n), P: 0.5}.CDF(float64(k))
	return math.Min(p, 1)
}

// pairedInterval is the mean of the differences d with its 95% t
// interval (mean ± t(0.975, n-1)·s/√n). One difference has a mean and no
// interval; equal differences an interval of width 0.
func pairedInterval(d []float64) meanCI {
	c := meanCI{N: len(d), Mean: math.NaN(), CI: [2]float64{math.NaN(), math.NaN()}}
	if len(d) == 0 {
		return c
	}
	c.Mean = mean(d)
	if len(d) < 2 {
		return c
	}
	h := 0.0
	if s := math.Sqrt(variance(d)); s > 0 {
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(d) - 1)}.Quantile(0.975)
		h = t * s / math.Sqrt(float64(len(d)))
	}
	c.CI = [2]float64{c.Mean - h, c.Mean + h}
	return c
}

// pairSample is one seed's per-run totals on both sides.
type pairSample struct {
	a, b    float64
	altered bool
}

// pairedOf computes a metric's paired statistics.
func pairedOf(pairs []pairSample) pairedStats {
	var p pairedStats
	var all, altered []float64
	for _, x := range pairs {
		d := x.b - x.a
		switch {
		case d > 0:
			p.Up++
		case d < 0:
			p.Down++
		default:
			p.Same++
		}
		all = append(all, d)
		if x.altered {
			altered = append(altered, d)
		}
	}
	p.SignP = signTest(p.Up, p.Down)
	p.All, p.Altered = pairedInterval(all), pairedInterval(altered)
	return p
}

// warnP is the sign test's p-value under which a promise metric that got
// worse is a WARNING.
const warnP = 0.01

// isPromise says whether a metric of a system measures a promise the
// design makes (its Support.Promises: the arbiter's MA1, MA2, MA3 and MA5,
// the outbox's retry load and give-ups, two-phase commit's blocking and
// leftover prepared transactions). Worse is up for every one of them.
func isPromise(system, metric string) bool {
	sys, err := systems.ByName(system)
	return err == nil && contains(sys.Supports().Promises, metric)
}

// warning is a promise metric that got significantly worse.
type warning struct {
	System string      `json:"system"`
	Metric string      `json:"metric"`
	Unit   string      `json:"unit,omitempty"`
	Paired pairedStats `json:"paired"`
	Text   string      `json:"text"`
}

// worse is the warning rule: more seeds rose than fell, and the sign test
// says so at p < warnP. A significant fall (better) and a lopsided split
// of too few seeds do not warn.
func worse(p pairedStats) bool {
	return p.Up > p.Down && p.SignP < warnP
}

// warningsOf lists the promise metrics of a delta that got worse.
func warningsOf(d *runDelta) []warning {
	var out []warning
	for _, m := range d.Metrics {
		if !isPromise(d.System, m.Name) || !worse(m.Paired) {
			continue
		}
		w := warning{System: d.System, Metric: m.Name, Unit: m.Unit, Paired: m.Paired}
		p := m.Paired
		w.Text = fmt.Sprintf("WARNING: %s %s worse: %d seeds up, %d down, p %s; per run %s",
			d.System, m.Name, p.Up, p.Down, pText(p.SignP), plusMinus(p.All, m.Unit))
		out = append(out, w)
	}
	return out
}

// plusMinus is "+0.15 ±0.05", the short form of a symmetric interval.
func plusMinus(c meanCI, unit string) string {
	if math.IsNaN(c.Mean) {
		return "-"
	}
	if math.IsNaN(c.CI[0]) || c.CI[0] == c.CI[1] {
		return signed(c.Mean, unit)
	}
	return signed(c.Mean, unit) + " ±" + num((c.CI[1]-c.CI[0])/2, unit)
}

// pText is a p-value in a few characters: 1, 0.032, 2.1e-05.
func pText(p float64) string {
	switch {
	case math.IsNaN(p):
		return "-"
	case p >= 0.9995:
		return "1"
	case p >= 0.001:
		return fmt.Sprintf("%.3f", p)
	}
	return fmt.Sprintf("%.1e", p)
}
