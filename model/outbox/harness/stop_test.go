package harness

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	check "github.com/fencesim/fencesim/checker/outbox"
	"github.com/fencesim/fencesim/model/outbox"
)

// firstFailing returns the first seed of RunSeed whose run fails prop.
func firstFailing(t *testing.T, d outbox.Design, prop string) *Outcome {
	t.Helper()
	for seed := uint64(1); seed <= 100; seed++ {
		if o := RunSeed(d, seed); slices.Contains(o.Failed(), prop) {
			return o
		}
	}
	t.Fatalf("no seed in 1..100 fails %s", prop)
	return nil
}

// TestStopAtViolation: a run that fails a property a prefix decides is
// replayed up to its violation and fails there already; one that fails
// only a property decided at the settled end is not stopped.
func TestStopAtViolation(t *testing.T) {
	for _, c := range []struct {
		knob outbox.Knob
		prop string
	}{{outbox.EditInPlaceRefund, check.PB4}, {outbox.CheckThenInsert, check.PB1}} {
		o := firstFailing(t, outbox.Default().MustWith(c.knob), c.prop)
		s, at, ok := Stop(o)
		require.True(t, ok, "%s: the run stops at its %s violation", c.knob, c.prop)
		assert.Contains(t, s.Failed(), c.prop)
		assert.Equal(t, time.Duration(at), s.Metrics.SimTime, "the stopped run ends at the violation")
		assert.Less(t, s.Metrics.SimTime, o.Metrics.SimTime)
		assert.Less(t, len(s.Trace), len(o.Trace))
		for i := range s.Trace {
			require.Equal(t, o.Trace[i].String(), s.Trace[i].String(), "%s: the stopped run is the run's prefix (event %d)", c.knob, i)
		}
		t.Logf("%s: %s violated at %v; the stopped run has %d events, the whole run %d (%v)", c.knob, c.prop, at, len(s.Trace), len(o.Trace), o.Metrics.SimTime)
	}
	o := firstFailing(t, outbox.Default().MustWith(outbox.ConflictIs500), check.PB5)
	if !slices.ContainsFunc(o.Failed(), func(p string) bool { return p == check.PB1 || p == check.PB4 || p == check.PB6 }) {
		_, _, ok := Stop(o)
		assert.False(t, ok, "PB5 is decided at the settled end: the run is not stopped")
	}
}
