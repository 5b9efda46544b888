package stats_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fencesim/fencesim/internal/stats"
)

// TestSpreadOf: nearest-rank quantiles, an exact count of runs (listed
// when few), and nulls for a side without samples.
func TestSpreadOf(t *testing.T) {
	s := stats.SpreadOf([]float64{4, 0, 1, 0, 5}, []uint64{3, 7, 9}, 10)
	assert.Equal(t, 5, s.Samples)
	assert.Equal(t, 3, s.Runs)
	assert.Equal(t, []uint64{3, 7, 9}, s.RunSeeds, "few runs are listed by seed")
	assert.InDelta(t, 2, s.Mean, 1e-12)
	assert.Equal(t, 1.0, s.P50)
	assert.Equal(t, 5.0, s.P99)
	assert.Equal(t, 5.0, s.Max)
	h := 1.96 * math.Sqrt(5.5/5) // s² = 22/4
	assert.InDelta(t, 2-h, s.MeanCI[0], 1e-12)
	assert.InDelta(t, 2+h, s.MeanCI[1], 1e-12)

	many := stats.SpreadOf([]float64{1, 1, 1, 1, 1, 1}, []uint64{1, 2, 3, 4, 5, 6}, 6)
	assert.Nil(t, many.RunSeeds, "more than FewSeeds runs are only counted")

	none := stats.SpreadOf(nil, nil, 0)
	b, err := none.MarshalJSON()
	assert.NoError(t, err)
	assert.JSONEq(t, `{"samples":0,"runs":0,"total":0,"mean":null,"mean_ci":[null,null],"p50":null,"p99":null,"max":null}`, string(b))
}

// TestWelchCI: the unpaired interval is diff ± 1.96·√(s²a/na + s²b/nb).
func TestWelchCI(t *testing.T) {
	ci := stats.WelchCI(1, []float64{1, 2, 3}, []float64{2, 3, 4, 5, 6})
	h := 1.96 * math.Sqrt(1.0/3+2.5/5)
	assert.InDelta(t, 1-h, ci[0], 1e-12)
	assert.InDelta(t, 1+h, ci[1], 1e-12)
}

// TestWorse: the warning rule needs more seeds up than down and p < WarnP.
func TestWorse(t *testing.T) {
	assert.True(t, stats.Worse(stats.PairedOf(pairs(20, 0))), "20 up, 0 down")
	assert.False(t, stats.Worse(stats.PairedOf(pairs(0, 20))), "better is no warning")
	assert.False(t, stats.Worse(stats.PairedOf(pairs(4, 0))), "too few seeds: p = 0.125")
}

func pairs(up, down int) []stats.Pair {
	var out []stats.Pair
	for range up {
		out = append(out, stats.Pair{A: 0, B: 1, Altered: true})
	}
	for range down {
		out = append(out, stats.Pair{A: 1, B: 0, Altered: true})
	}
	return out
}
