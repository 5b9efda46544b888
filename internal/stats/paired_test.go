package stats_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fencesim/fencesim/internal/stats"
)

// TestSignTest: the two-sided sign test against exact binomial sums
// (python3: min(1, 2*sum(comb(n, i) for i in range(k+1))/2**n)).
func TestSignTest(t *testing.T) {
	for _, tc := range []struct {
		up, down int
		want     float64
	}{
		{0, 0, 1},           // nothing moved
		{9, 1, 0.021484375}, // 2·11/1024
		{1, 9, 0.021484375}, // symmetric
		{10, 0, 0.001953125},
		{3, 1, 0.625},
		{5, 5, 1},
		{12, 3, 0.03515625},
		{41, 2, 2.1532287064474076e-10},
	} {
		assert.InDelta(t, tc.want, stats.SignTest(tc.up, tc.down), tc.want*1e-9+1e-15, "%d up, %d down", tc.up, tc.down)
	}
}

// TestPairedInterval: the paired t interval against Student's t table
// values (t(0.975, 4) = 2.7764451051977987, t(0.975, 7) =
// 2.3646242510102993) times s/√n worked by hand.
func TestPairedInterval(t *testing.T) {
	c := stats.Interval([]float64{1, 2, 3, 4, 5}) // s² = 2.5
	assert.Equal(t, 5, c.N)
	assert.InDelta(t, 3, c.Mean, 1e-12)
	assert.InDelta(t, 3-1.9632431614775607, c.CI[0], 1e-9)
	assert.InDelta(t, 3+1.9632431614775607, c.CI[1], 1e-9)
	c = stats.Interval([]float64{2, 4, 4, 4, 5, 5, 7, 9}) // s² = 32/7
	assert.InDelta(t, 5-1.7874879177958927, c.CI[0], 1e-9)
	assert.InDelta(t, 5+1.7874879177958927, c.CI[1], 1e-9)
	c = stats.Interval([]float64{1, 1, 1})
	assert.Equal(t, [2]float64{1, 1}, c.CI, "equal differences: an interval of width 0")
	c = stats.Interval([]float64{2})
	assert.Equal(t, 2.0, c.Mean)
	assert.True(t, math.IsNaN(c.CI[0]), "one seed has no interval")
	c = stats.Interval(nil)
	assert.True(t, math.IsNaN(c.Mean), "no seed has no mean")
}
