package systems

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/twopc"
)

// TestTwoPCWorldPerSeed: explore plays a world drawn per seed (the trace
// header's design holds it, transactions included), keeps the parameters
// the user set, and a given schedule replays the seed's world.
func TestTwoPCWorldPerSeed(t *testing.T) {
	sys := TwoPC{}
	shapes := map[int]bool{}
	for seed := uint64(1); seed <= 20; seed++ {
		r := Run(sys, sys.Default(), seed, Moderate, Options{})
		d, err := twopc.ParseDesign(r.Header.Design)
		require.NoError(t, err)
		require.NotEmpty(t, d.Schedule, "seed %d: the transactions are in the header", seed)
		shapes[d.Participants] = true
	}
	assert.Greater(t, len(shapes), 1, "the number of participants is drawn per seed")

	set, err := sys.NewDesign([]string{"timeout-abort"}, []string{"participants=3", "abort_after=30s"}, nil)
	require.NoError(t, err)
	for seed := uint64(1); seed <= 10; seed++ {
		r := Run(sys, set, seed, Moderate, Options{})
		d, err := twopc.ParseDesign(r.Header.Design)
		require.NoError(t, err)
		assert.Equal(t, 3, d.Participants, "seed %d: a parameter the user set is kept", seed)
		assert.Equal(t, "30s", d.AbortAfter.String())
		assert.True(t, d.Has(twopc.TimeoutAbort))
	}

	again, err := sys.NewDesign(nil, nil, set.JSON)
	require.NoError(t, err)
	assert.Equal(t, Run(sys, set, 4, Moderate, Options{Hash: true}).Hash, Run(sys, again, 4, Moderate, Options{Hash: true}).Hash,
		"the design an artifact's reproduction builds from the explored design's JSON draws the same world")

	a := Run(sys, sys.Default(), 7, Moderate, Options{Hash: true})
	b := Run(sys, sys.Default(), 7, Moderate, Options{Hash: true, Schedule: a.Schedule, Given: true})
	assert.Equal(t, a.Header.Design, b.Header.Design, "a given schedule plays the seed's world")
	assert.Equal(t, a.Hash, b.Hash)
}
