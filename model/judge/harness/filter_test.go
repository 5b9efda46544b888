package harness

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/judge"
)

// TestCheckerFilterIsCheckerKinds: the switch and the documented set agree.
func TestCheckerFilterIsCheckerKinds(t *testing.T) {
	for k := range CheckerKinds {
		assert.True(t, CheckerFilter(k), "CheckerFilter refuses %q", k)
	}
	for _, k := range []string{"send", "deliver", "db", "timer", "drop", "dial", "note"} {
		assert.False(t, CheckerFilter(k), "CheckerFilter takes %q, which the checkers never read", k)
	}
}

// TestFilteredRunNumbersAsFull: a run recorded through CheckerFilter (what
// explore checks) numbers its events as the full record of the same run
// (what a trace file holds), so that an event a verdict names by number is
// that line of the trace: event #N of the filtered record is event #N of
// the full one.
func TestFilteredRunNumbersAsFull(t *testing.T) {
	for _, mode := range []WorldMode{WorldFixed, WorldDrawn} {
		for seed := uint64(1); seed <= 4; seed++ {
			fast, _ := SeedOptionsIn(judge.Default(), mode, Moderate(), seed)
			full := fast
			full.Filter = nil
			a, err := Play(fast)
			require.NoError(t, err)
			b, err := Play(full)
			require.NoError(t, err)
			require.Less(t, len(a.Events), len(b.Events), "seed %d: the filter keeps fewer events", seed)
			for _, e := range a.Events {
				require.LessOrEqual(t, e.Seq, uint64(len(b.Events)), "seed %d", seed)
				f := b.Events[e.Seq-1]
				require.Equal(t, f.String(), e.String(), "seed %d (%s): event #%d of the filtered record is not #%d of the full one", seed, mode, e.Seq, e.Seq)
			}
		}
	}
}
