package harness

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/internal/hunt"
	"github.com/fencesim/fencesim/model/judge"
)

// violationAt is the world time of the earliest event a failing verdict of
// the outcome names (-1: none).
func violationAt(o *Outcome) time.Duration {
	at := map[uint64]int64{}
	for i := range o.Events {
		at[o.Events[i].Seq] = o.Events[i].T
	}
	first := int64(-1)
	for _, v := range o.Failed() {
		for _, e := range v.Events {
			if t, ok := at[e]; ok && (first < 0 || t < first) {
				first = t
			}
		}
	}
	return time.Duration(first)
}

// TestMinimizedCounterexample: rapid's shrunk counterexample of
// fence-by-worker-id in the drawn world is small (at most two submissions)
// and stops at its violation (at most 30 s of simulated time after it);
// heartbeat-by-worker-id's names two processes sharing one worker_id.
func TestMinimizedCounterexample(t *testing.T) {
	for _, tc := range []struct {
		knob judge.Knob
		subs int
	}{{judge.FenceByWorkerID, 2}, {judge.HeartbeatByWorkerID, 0}} {
		t.Run(string(tc.knob), func(t *testing.T) {
			var last *Outcome
			res := hunt.RunShrink(t.Name(), genericBudget, 1, 10*time.Second, PropertyIn(judge.Default().MustWith(tc.knob), WorldDrawn, Moderate(), func(o *Outcome) { last = o }))
			require.True(t, res.Found, "%s must be caught within %d runs", tc.knob, genericBudget)
			require.NotNil(t, last)
			v := violationAt(last)
			end := time.Duration(last.World.Now())
			d, wl := last.Options.Design, last.Options.Workload
			t.Logf("shrunk after %d runs: %s; %d fault actions; violation at %v, run ends at %v\n%s", res.Runs, DescribeWorld(d, wl), last.Options.Schedule.Faults(), v, end, last.Failed()[0])
			if tc.subs > 0 {
				assert.LessOrEqual(t, len(wl.Arrivals), tc.subs, "submissions in the shrunk world")
			}
			if v >= 0 {
				assert.LessOrEqual(t, end-v, 30*time.Second, "the counterexample ends at most 30 s after its violation")
			} else {
				// porcupine names no event: the run was cut to the shortest
				// prefix that still fails.
				assert.Less(t, end, 3*time.Minute, "a failure without events is cut to its shortest failing prefix")
			}
			if tc.knob == judge.HeartbeatByWorkerID {
				assert.True(t, d.Sandboxes > 1 || d.Zombies > 0, "the shrunk world has processes sharing a worker_id")
			}
		})
	}
}
