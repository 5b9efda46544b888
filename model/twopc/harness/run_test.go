package harness

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/twopc"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// TestRunSeedDeterministic: the same seed gives the same trace, bit for bit.
func TestRunSeedDeterministic(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		a, b := RunSeed(twopc.Default(), seed), RunSeed(twopc.Default(), seed)
		require.NoError(t, a.Err)
		h := traces.Header{System: "twopc", Design: a.World.Design.JSON(), Seed: seed, Entropy: "pcg", Schedule: a.Schedule.JSON()}
		assert.Equal(t, traces.HashOf(h, a.Events), traces.HashOf(h, b.Events), "seed %d", seed)
		assert.True(t, a.OK(), "seed %d: %v\n%s", seed, a.Failed(), a.Schedule)
	}
}

// TestReplayFromSchedule: a seeded run is reproduced by its drawn design,
// its recorded fault schedule and its seed alone (what a trace header
// holds).
func TestReplayFromSchedule(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		a := RunSeed(twopc.Default(), seed)
		b := DefaultHarness().Run(a.World.Design, a.Schedule, sim.NewPCG(seed))
		h := traces.Header{System: twopc.System, Seed: seed, Entropy: "pcg"}
		require.Equal(t, traces.HashOf(h, a.Events), traces.HashOf(h, b.Events), "seed %d: replay from the schedule differs", seed)
	}
}
