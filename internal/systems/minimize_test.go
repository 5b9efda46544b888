package systems

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// firstFailing returns the first seed from 1 whose moderate random faults
// make a design fail (for fence-by-worker-id, A-S5's damage: a late result
// of a lease that was reclaimed and granted to the same worker again).
func firstFailing(t *testing.T, sys System, d Design, max uint64) (uint64, *Result) {
	for seed := uint64(1); seed <= max; seed++ {
		if r := Run(sys, d, seed, Moderate, Options{}); len(r.Failed()) > 0 {
			return seed, r
		}
	}
	t.Fatalf("no seed in 1..%d fails", max)
	return 0, nil
}

// TestMinimizeFenceByWorkerID: minimizing a failing fence-by-worker-id run
// leaves a schedule whose every fault is needed: removing any one of them
// alone makes the failure disappear.
func TestMinimizeFenceByWorkerID(t *testing.T) {
	sys := Arbiter{}
	d, err := sys.NewDesign([]string{"fence-by-worker-id"}, nil, nil)
	require.NoError(t, err)
	fenceSeed, r := firstFailing(t, sys, d, 200)
	start := time.Now()
	m, err := Minimize(sys, d, fenceSeed, Moderate, r, 300)
	require.NoError(t, err)
	t.Logf("seed %d: %s kept failing; %d actions -> %d in %d runs (%v):\n%s", fenceSeed, m.Property, len(m.Original), len(m.Schedule), m.Runs, time.Since(start).Round(time.Millisecond), m.Schedule)
	require.True(t, m.Complete, "the search must finish within its budget")
	require.NotNil(t, m.Result)
	assert.True(t, m.Result.Fails(m.Property))
	assert.Equal(t, m.Schedule, m.Result.Schedule, "Result is the run of the minimized schedule")
	assert.Less(t, len(m.Schedule), len(m.Original))
	assert.Len(t, m.Needed, len(m.Schedule))
	for i, a := range m.Schedule {
		if !Removable(a) {
			continue
		}
		assert.True(t, m.Needed[i], "action %s is kept but not needed", a)
		// Check it directly, not through the attribution's own bookkeeping.
		rest := append(m.Schedule[:i:i], m.Schedule[i+1:]...)
		again := Run(sys, d, fenceSeed, Moderate, Options{Schedule: rest, Given: true})
		assert.False(t, again.Fails(m.Property), "without %s the failure must disappear", a)
	}
	// The same schedule on the default design passes: the knob is the bug.
	ok := Run(sys, sys.Default(), fenceSeed, Moderate, Options{Schedule: m.Schedule, Given: true})
	assert.Empty(t, ok.Failed(), "the default design must pass the minimized schedule")
}

// counting is a system that cancels a context at its n-th run.
type counting struct {
	Arbiter
	runs   *int
	n      int
	cancel context.CancelFunc
}

func (c counting) Draw(d Design, seed uint64, f Faults, o Options) (*World, error) {
	*c.runs++
	if *c.runs == c.n {
		c.cancel()
	}
	return c.Arbiter.Draw(d, seed, f, o)
}

// TestMinimizeContext: no run starts once the context ends; a search cut
// short returns what it reached, marked incomplete; one cut before its
// first run is an error that wraps the context's.
func TestMinimizeContext(t *testing.T) {
	d, err := Arbiter{}.NewDesign([]string{"fence-by-worker-id"}, nil, nil)
	require.NoError(t, err)
	seed, r := firstFailing(t, Arbiter{}, d, 200)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = MinimizeContext(ctx, Arbiter{}, d, seed, Moderate, r, 300)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	runs := 0
	m, err := MinimizeContext(ctx, counting{runs: &runs, n: 3, cancel: cancel}, d, seed, Moderate, r, 300)
	require.NoError(t, err)
	assert.Equal(t, 3, runs, "no run starts after the context ends")
	assert.Equal(t, 3, m.Runs)
	assert.False(t, m.Complete)
	assert.Len(t, m.Needed, len(m.Schedule))
	require.NotNil(t, m.Result)
	assert.True(t, m.Result.Fails(m.Property))
}
