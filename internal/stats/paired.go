package stats

import (
	"encoding/json"
	"math"

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

// Paired is one metric's seed-by-seed comparison.
type Paired struct {
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
	All     MeanCI `json:"all"`
	Altered MeanCI `json:"altered"`
}

// MeanCI is a mean difference and its 95% interval (NaN where undefined:
// no seed, or one seed for the interval).
type MeanCI struct {
	N    int        `json:"n"`
	Mean float64    `json:"mean"`
	CI   [2]float64 `json:"ci"`
}

// SignTest is the two-sided sign test's p-value for up seeds that rose
// and down that fell: 2·P(X ≤ min(up, down)) for X ~ Binomial(up+down,
// 1/2), at most 1. No seed that moved gives 1.
func SignTest(up, down int) float64 {
	n := up + down
	if n == 0 {
		return 1
	}
	k := min(up, down)
	p := 2 * distuv.Binomial{N: float64(n), P: 0.5}.CDF(float64(k))
	return math.Min(p, 1)
}

// Interval is the mean of the differences d with its 95% paired t
// interval (mean ± t(0.975, n-1)·s/√n). One difference has a mean and no
// interval; equal differences an interval of width 0.
func Interval(d []float64) MeanCI {
	c := MeanCI{N: len(d), Mean: math.NaN(), CI: [2]float64{math.NaN(), math.NaN()}}
	if len(d) == 0 {
		return c
	}
	c.Mean = Mean(d)
	if len(d) < 2 {
		return c
	}
	h := 0.0
	if s := math.Sqrt(Variance(d)); s > 0 {
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(d) - 1)}.Quantile(0.975)
		h = t * s / math.Sqrt(float64(len(d)))
	}
	c.CI = [2]float64{c.Mean - h, c.Mean + h}
	return c
}

// Pair is one seed's per-run totals on both sides; Altered when the
// seed's two runs differ (their trace hashes).
type Pair struct {
	A, B    float64
	Altered bool
}

// PairedOf computes a metric's paired statistics.
func PairedOf(pairs []Pair) Paired {
	var p Paired
	var all, altered []float64
	for _, x := range pairs {
		d := x.B - x.A
		switch {
		case d > 0:
			p.Up++
		case d < 0:
			p.Down++
		default:
			p.Same++
		}
		all = append(all, d)
		if x.Altered {
			altered = append(altered, d)
		}
	}
	p.SignP = SignTest(p.Up, p.Down)
	p.All, p.Altered = Interval(all), Interval(altered)
	return p
}

// WarnP is the sign test's p-value under which a metric that got worse
// warns (Worse).
const WarnP = 0.01

// Worse is the warning rule for a metric whose up is worse: more seeds
// rose than fell, and the sign test says so at p < WarnP. A significant
// fall (better) and a lopsided split of too few seeds do not warn.
func Worse(p Paired) bool {
	return p.Up > p.Down && p.SignP < WarnP
}

// MarshalJSON writes a mean or an interval without enough seeds as null.
func (c MeanCI) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		N    int         `json:"n"`
		Mean *float64    `json:"mean"`
		CI   [2]*float64 `json:"ci"`
	}{c.N, Null(c.Mean), NullPair(c.CI)})
}
