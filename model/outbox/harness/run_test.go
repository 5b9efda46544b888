package harness

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/outbox"
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
