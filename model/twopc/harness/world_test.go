package harness

import (
	"testing"
	"time"

	"github.com/fencesim/fencesim/model/twopc"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/sim"
)

// TestDrawWorldZeroIsSmallest: the zero draw is the source's world: two
// participants, one coordinator, one transaction at 100 ms, the design's
// timings.
func TestDrawWorldZeroIsSmallest(t *testing.T) {
	d := DrawWorld(zero{}, twopc.Default())
	want := twopc.Default()
	want.Schedule = []twopc.TxnAt{{At: 100 * time.Millisecond, GID: "x1"}}
	assert.Equal(t, want, d)
	assert.Equal(t, twopc.Default().Plan(), d.Plan(), "the same transaction as the default design's")
}

// TestDrawWorldRanges: over many seeds the drawn worlds are valid, within
// their ranges, and reach every shape they promise.
func TestDrawWorldRanges(t *testing.T) {
	seen := map[string]int{}
	for seed := uint64(1); seed <= 300; seed++ {
		d := DrawWorld(sim.NewPCG(seed).Stream("world"), twopc.Default())
		require.NoError(t, d.Validate(), "seed %d", seed)
		assert.LessOrEqual(t, d.Participants, MaxParticipants)
		assert.LessOrEqual(t, d.Coordinators, MaxCoordinators)
		assert.LessOrEqual(t, d.Standby, MaxStandby)
		plan := d.Plan()
		require.NotEmpty(t, plan)
		assert.LessOrEqual(t, len(plan), MaxTxns)
		assert.LessOrEqual(t, plan[len(plan)-1].At, 5*time.Second, "the workload ends well before the heal-all")
		if d.Participants > 2 {
			seen["participants"]++
		}
		if d.Coordinators > 1 {
			seen["coordinators"]++
		}
		if d.Standby > 0 {
			seen["standby"]++
		}
		if d.Cooperative {
			seen["cooperative"]++
		}
		if d.VoteTimeout != twopc.Default().VoteTimeout {
			seen["timing"]++
		}
		for i, x := range plan {
			if x.Coordinator != "" {
				seen["second-coordinator"]++
			}
			if i > 0 && x.At-plan[i-1].At < 100*time.Millisecond {
				seen["concurrent"]++
			}
		}
	}
	for _, k := range []string{"participants", "coordinators", "standby", "cooperative", "timing", "second-coordinator", "concurrent"} {
		assert.Greater(t, seen[k], 10, "%s reached in too few worlds: %v", k, seen)
	}
	t.Logf("over 300 worlds: %v", seen)
}

// TestDrawWorldKeepsPinned: parameters the design pins, and a design's own
// list of transactions, keep the design's values; the other draws are the
// same.
func TestDrawWorldKeepsPinned(t *testing.T) {
	base := twopc.Default()
	base.Participants, base.VoteTimeout, base.Txns = 5, 7*time.Second, 2
	pinned := base
	pinned.Pinned = []string{"participants", "vote_timeout", "txns"}
	require.NoError(t, pinned.Validate())
	for seed := uint64(1); seed <= 50; seed++ {
		d := DrawWorld(sim.NewPCG(seed).Stream("world"), pinned)
		free := DrawWorld(sim.NewPCG(seed).Stream("world"), base)
		assert.Equal(t, 5, d.Participants)
		assert.Equal(t, 7*time.Second, d.VoteTimeout)
		assert.Len(t, d.Plan(), 2)
		assert.Equal(t, free.Coordinators, d.Coordinators, "seed %d", seed)
		assert.Equal(t, free.LockTimeout, d.LockTimeout)
	}
	own := twopc.Default()
	own.Schedule = []twopc.TxnAt{{At: time.Second, GID: "mine"}}
	d := DrawWorld(sim.NewPCG(1).Stream("world"), own)
	assert.Equal(t, own.Schedule, d.Schedule, "a design's own transactions are kept")
	bad := twopc.Default()
	bad.Pinned = []string{"participant"}
	assert.ErrorContains(t, bad.Validate(), `pinned "participant" is not a parameter`)
}
