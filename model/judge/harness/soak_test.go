package harness

import (
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fencesim/fencesim/model/judge"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	jc "github.com/fencesim/fencesim/checker/judge"
	"github.com/fencesim/fencesim/sim"
)

// probeMinimum is the rate each probe must reach over a sweep of the
// probe design (a standby arbiter added, so that two arbiters can meet).
var probeMinimum = map[string]float64{
	jc.ProbeLeaseExpiredWhileJudging: 0.02,
	jc.ProbeStaleTokenRejected:       0.02,
	jc.ProbeDuplicateSubmit200:       0.02,
	jc.ProbeCrashCommitReply:         0.005,
	jc.ProbeTwoArbitersDispatch:      0.005,
	jc.ProbeDBDownWhileRetrying:      0.02,
}

func probeDesign() judge.Design {
	d := judge.Default()
	d.StandbyArbiters = 1
	return d
}

// sweep runs n seeds of the random family in parallel (one run per
// goroutine) and returns the failures and the probe counts.
func sweep(t *testing.T, d judge.Design, n int) (failed []string, probes map[string]int) {
	f, err := FamilyByName("random")
	require.NoError(t, err)
	probes = map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan uint64)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range next {
				ent := sim.NewPCG(s)
				o, err := f.Judged(ent.Stream("family"), d, ent)
				mu.Lock()
				if err != nil {
					failed = append(failed, "seed "+strconv.FormatUint(s, 10)+": "+err.Error())
				} else {
					for _, v := range o.Failed() {
						failed = append(failed, "seed "+strconv.FormatUint(s, 10)+": "+v.String())
					}
					for p := range jc.Probes(o.Run) {
						probes[p]++
					}
				}
				mu.Unlock()
			}
		}()
	}
	for s := 1; s <= n; s++ {
		next <- uint64(s)
	}
	close(next)
	wg.Wait()
	return failed, probes
}

func soakRuns(def int) int {
	if v := os.Getenv("FENCESIM_SOAK_RUNS"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	}
	return def
}

// TestSoakArbiter runs the default design (with a standby arbiter) under
// random faults: every run must pass every property. `make soak` runs
// 10,000; plain go test runs 150. It reports the probe rates and fails when
// one falls under its minimum.
func TestSoakArbiter(t *testing.T) {
	n := soakRuns(150)
	start := time.Now()
	failed, probes := sweep(t, probeDesign(), n)
	el := time.Since(start)
	for i, f := range failed {
		if i < 10 {
			t.Error(f)
		}
	}
	t.Logf("%d runs in %v (%.1f runs/s on %d cores), %d failures", n, el.Round(time.Millisecond), float64(n)/el.Seconds(), runtime.GOMAXPROCS(0), len(failed))
	for _, p := range jc.ProbeNames {
		rate := float64(probes[p]) / float64(n)
		t.Logf("probe %-45s %5d runs  %6.2f%%  (minimum %.0f%%)", p, probes[p], 100*rate, 100*probeMinimum[p])
		assert.GreaterOrEqual(t, rate, probeMinimum[p], "probe %q fell under its minimum: the generators no longer reach it", p)
	}
}
