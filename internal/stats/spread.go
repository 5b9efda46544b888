package stats

import (
	"encoding/json"
	"math"
	"sort"
)

// Spread is one metric's spread on one side.
type Spread struct {
	Samples int `json:"samples"`
	// Runs counts the runs with a nonzero sample, exactly: a rare event
	// (one false system_error in 1,000 runs) shows as "1 run", never as a
	// mean rounded to zero. RunSeeds lists them when they are few.
	Runs     int        `json:"runs"`
	RunSeeds []uint64   `json:"run_seeds,omitempty"`
	Total    float64    `json:"total"`
	Mean     float64    `json:"mean"`
	MeanCI   [2]float64 `json:"mean_ci"`
	P50      float64    `json:"p50"`
	P99      float64    `json:"p99"`
	Max      float64    `json:"max"`
}

// FewSeeds is how many seeds a count lists by seed.
const FewSeeds = 5

// SpreadOf is the spread of samples v, of which the runs listed had a
// nonzero sample, summing to total. The mean's interval is the normal
// approximation's 95%.
func SpreadOf(v []float64, runs []uint64, total float64) Spread {
	s := Spread{Samples: len(v), Runs: len(runs), Total: total, Mean: math.NaN(), P50: math.NaN(), P99: math.NaN(), Max: math.NaN(),
		MeanCI: [2]float64{math.NaN(), math.NaN()}}
	if len(runs) <= FewSeeds {
		s.RunSeeds = runs
	}
	if len(v) == 0 {
		return s
	}
	sorted := append([]float64(nil), v...)
	sort.Float64s(sorted)
	s.Mean, s.P50, s.P99, s.Max = Mean(sorted), Quantile(sorted, .5), Quantile(sorted, .99), Quantile(sorted, 1)
	h := 1.96 * math.Sqrt(Variance(v)/float64(len(v)))
	s.MeanCI = [2]float64{s.Mean - h, s.Mean + h}
	return s
}

// WelchCI is the 95% interval of diff, a difference of the means of
// samples b and a taken as independent (unpaired): the normal
// approximation with Welch's standard error.
func WelchCI(diff float64, a, b []float64) [2]float64 {
	se := math.Sqrt(Variance(a)/float64(len(a)) + Variance(b)/float64(len(b)))
	return [2]float64{diff - 1.96*se, diff + 1.96*se}
}

// Quantile is the nearest-rank quantile of sorted values (NaN for none).
func Quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(v)))) - 1
	if i < 0 {
		i = 0
	}
	return v[i]
}

// Mean is the mean of v (NaN for none).
func Mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	var t float64
	for _, x := range v {
		t += x
	}
	return t / float64(len(v))
}

// Variance is the sample variance (NaN below two samples).
func Variance(v []float64) float64 {
	if len(v) < 2 {
		return math.NaN()
	}
	m := Mean(v)
	var t float64
	for _, x := range v {
		t += (x - m) * (x - m)
	}
	return t / float64(len(v)-1)
}

// Sum is the sum of v.
func Sum(v []float64) float64 {
	var t float64
	for _, x := range v {
		t += x
	}
	return t
}

// ---- JSON: NaN (no samples) is null ----

// Null is x for JSON: nil (null) when it is NaN or infinite.
func Null(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// NullPair is an interval for JSON (Null).
func NullPair(p [2]float64) [2]*float64 { return [2]*float64{Null(p[0]), Null(p[1])} }

// MarshalJSON writes a statistic without samples as null.
func (s Spread) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Samples  int         `json:"samples"`
		Runs     int         `json:"runs"`
		RunSeeds []uint64    `json:"run_seeds,omitempty"`
		Total    float64     `json:"total"`
		Mean     *float64    `json:"mean"`
		MeanCI   [2]*float64 `json:"mean_ci"`
		P50      *float64    `json:"p50"`
		P99      *float64    `json:"p99"`
		Max      *float64    `json:"max"`
	}{s.Samples, s.Runs, s.RunSeeds, s.Total, Null(s.Mean), NullPair(s.MeanCI), Null(s.P50), Null(s.P99), Null(s.Max)})
}
