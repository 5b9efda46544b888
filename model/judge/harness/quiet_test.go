package harness

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	jc "github.com/fencesim/fencesim/checker/judge"
	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/traces"
)

// TestQuietEnd: a seeded run ends once the world is quiet after healing
// (plus the settle period), long before its end time, and PA8 is still
// judged on it from the decision times: if Quiet said yes too early, PA8
// would find submissions undecided; if it never said yes, the runs would
// go to their end time. The trace header keeps the settle period, so a
// replay ends at the same moment.
func TestQuietEnd(t *testing.T) {
	d, wl := judge.Default(), judge.DefaultWorkload()
	early := 0
	for seed := uint64(1); seed <= 20; seed++ {
		o, err := RunSeed(d, wl, Moderate(), seed)
		require.NoError(t, err)
		require.Empty(t, o.Failed(), "seed %d", seed)
		if int64(o.World.Now()) < o.Run.HealAt+int64(o.Run.Bound()) {
			early++
			assert.True(t, o.World.Idle(), "seed %d ended early but is not idle", seed)
		}
		for _, v := range o.Result.Verdicts {
			if v.Property == jc.PA8 {
				assert.NotContains(t, v.Message, "not checked", "seed %d", seed)
			}
		}
	}
	assert.GreaterOrEqual(t, early, 18, "most default runs must end quiet, before the liveness bound")

	full, _ := SeedOptions(d, wl, Moderate(), 3)
	full.Filter = nil
	first, err := Play(full)
	require.NoError(t, err)
	h := first.Header
	again, err := Replay(h)
	require.NoError(t, err)
	assert.Equal(t, traces.HashOf(h, first.Events), traces.HashOf(again.Header, again.Events), "a quiet run replays identical")
	assert.Less(t, time.Duration(again.World.Now()), full.Until)
}

// TestQuietNeedsAnEmptyNetwork: an idle world is quiet only at a moment
// with nothing in flight.
func TestQuietNeedsAnEmptyNetwork(t *testing.T) {
	o, _ := SeedOptions(judge.Default(), judge.DefaultWorkload(), Moderate(), 3)
	w, err := o.Build()
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, w.RunUntil(clock.Time(o.Until/2)))
	require.True(t, w.Idle(), "seed 3 is idle by half its end time")
	sawBusy, sawQuiet := false, false
	for i := 0; i < 2000 && !(sawBusy && sawQuiet); i++ {
		if len(w.Net().InFlight()) > 0 {
			assert.False(t, w.Quiet(), "a message in flight: not quiet")
			sawBusy = true
		} else {
			assert.True(t, w.Quiet(), "idle and nothing in flight: quiet")
			sawQuiet = true
		}
		_, err := w.Step()
		require.NoError(t, err)
	}
	assert.True(t, sawBusy && sawQuiet)
}
