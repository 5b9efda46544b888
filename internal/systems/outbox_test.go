package systems

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/outbox"
)

// TestOutboxWorldPerSeed: explore plays a world drawn per seed (the trace
// header holds it), keeps the parameters the user set, and a given
// schedule replays the seed's world.
func TestOutboxWorldPerSeed(t *testing.T) {
	sys := Outbox{}
	shapes := map[int]bool{}
	for seed := uint64(1); seed <= 20; seed++ {
		r := Run(sys, sys.Default(), seed, Moderate, Options{})
		d, err := outbox.ParseDesign(r.Header.Design)
		require.NoError(t, err)
		shapes[d.Handlers] = true
	}
	assert.Greater(t, len(shapes), 1, "the number of handlers is drawn per seed")

	set, err := sys.NewDesign(nil, []string{"handlers=5", "db_timeout=2s"}, nil)
	require.NoError(t, err)
	for seed := uint64(1); seed <= 10; seed++ {
		r := Run(sys, set, seed, Moderate, Options{})
		d, err := outbox.ParseDesign(r.Header.Design)
		require.NoError(t, err)
		assert.Equal(t, 5, d.Handlers, "seed %d: a parameter the user set is kept", seed)
		assert.Equal(t, "2s", d.DBTimeout.String())
	}
	file, err := sys.NewDesign(nil, nil, []byte(`{"senders": 2, "pinned": ["senders"]}`))
	require.NoError(t, err)
	r := Run(sys, file, 3, Moderate, Options{})
	d, err := outbox.ParseDesign(r.Header.Design)
	require.NoError(t, err)
	assert.Equal(t, 2, d.Senders, "a parameter the design file pins is kept")
	// The design an artifact's reproduction builds from the explored
	// design's JSON draws the same world.
	again, err := sys.NewDesign(nil, nil, set.JSON)
	require.NoError(t, err)
	assert.Equal(t, Run(sys, set, 4, Moderate, Options{Hash: true}).Hash, Run(sys, again, 4, Moderate, Options{Hash: true}).Hash)
	_, err = sys.NewDesign(nil, nil, []byte(`{"pinned": ["nope"]}`))
	assert.ErrorContains(t, err, `pinned "nope" is not a parameter`)

	a := Run(sys, sys.Default(), 7, Moderate, Options{Hash: true})
	b := Run(sys, sys.Default(), 7, Moderate, Options{Hash: true, Schedule: a.Schedule, Given: true})
	assert.Equal(t, a.Header.Design, b.Header.Design, "a given schedule plays the seed's world")
	assert.Equal(t, a.Header.Workload, b.Header.Workload)
	assert.Equal(t, a.Events, b.Events)
}
