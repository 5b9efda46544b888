package harness

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/outbox"
	"github.com/fencesim/fencesim/model/outbox/scenario"
	"github.com/fencesim/fencesim/sim"
)

// TestRunSeedIsDeterministic: one seed, one trace, bit for bit.
func TestRunSeedIsDeterministic(t *testing.T) {
	a := RunSeed(outbox.Default(), 42)
	b := RunSeed(outbox.Default(), 42)
	require.NoError(t, a.Err)
	require.Equal(t, len(a.Trace), len(b.Trace))
	for i := range a.Trace {
		if a.Trace[i].String() != b.Trace[i].String() {
			t.Fatalf("runs of one seed differ at event %d:\n%s\n%s", i, a.Trace[i], b.Trace[i])
		}
	}
	assert.Equal(t, a.Verdicts, b.Verdicts)
}

// TestRunsLeaveNoCoroutines: every run's world is closed, so its processes
// are unwound and memory stays flat in the number of runs.
func TestRunsLeaveNoCoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	for seed := uint64(1); seed <= 50; seed++ {
		require.NoError(t, RunSeed(outbox.Default(), seed).Err)
	}
	runtime.GC()
	assert.LessOrEqual(t, runtime.NumGoroutine(), before+2, "every process of a finished run is unwound")
}

// TestPlayCheckedKnowsTheFullRecord: a run recorded through the checker's
// filter knows its full record's length and end (Metrics.TraceEvents,
// Played.End), which the probes read (History.End), and measures it the
// same.
func TestPlayCheckedKnowsTheFullRecord(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		x, err := DrawSeed(outbox.Default(), seed, Moderate)
		require.NoError(t, err)
		full := Play(x.Design, x.Workload, x.Workload.Plan, x.Schedule, sim.NewPCG(seed))
		fast := scenario.PlayChecked(x.Design, x.Workload, x.Workload.Plan, x.Schedule, sim.NewPCG(seed))
		require.NoError(t, full.Err)
		require.Less(t, len(fast.Trace), len(full.Trace), "seed %d", seed)
		assert.Equal(t, full.Metrics, fast.Metrics, "seed %d", seed)
		assert.Equal(t, len(full.Trace), full.Metrics.TraceEvents, "seed %d", seed)
		assert.Equal(t, full.Trace[len(full.Trace)-1].T, int64(fast.End), "seed %d", seed)
		assert.Equal(t, full.End, fast.End, "seed %d", seed)
	}
}
