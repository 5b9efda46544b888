package harness

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/judge"
)

func seeds(def int) int {
	if v := os.Getenv("FENCESIM_SEEDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err == nil {
			return n
		}
	}
	return def
}

// TestSeedsDefaultDesign: seeded runs of the default design under moderate
// random faults never panic or get stuck, every property holds, and every
// submission is terminal once the faults heal.
func TestSeedsDefaultDesign(t *testing.T) {
	n := seeds(200)
	start := time.Now()
	failures := 0
	for s := 1; s <= n; s++ {
		o, err := RunSeed(judge.Default(), judge.DefaultWorkload(), Moderate(), uint64(s))
		require.NoError(t, err, "seed %d", s)
		for _, v := range o.Failed() {
			failures++
			if failures <= 10 {
				t.Errorf("seed %d (profile %s): %s", s, o.Profile, v)
			}
		}
	}
	el := time.Since(start)
	t.Logf("%d seeds in %v: %.1f seeds/s, %d failures", n, el.Round(time.Millisecond), float64(n)/el.Seconds(), failures)
}
