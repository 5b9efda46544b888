package judge

import (
	"compress/gzip"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/traces"
)

// TestOutageLoadOnTheWorkersClock keeps the history that made MA5 a false
// alarm (explore --faults heavy, seed 1606, minimized, on the drawn world):
// home-1.3's clock drifts 18% fast (drift rate=181402) through an outage,
// so its backoff, which runs on its own monotonic clock, sent 14 claims
// and submits in one real minute against a bound of 12 (two retry streams
// of 6 a minute each). In a minute of its own clock it sent 12: the design
// backed off as it says. The same history with the drift taken out of the
// schedule counts the real minute again, 14: the test fails on a checker
// that counts world time.
func TestOutageLoadOnTheWorkersClock(t *testing.T) {
	r := kept(t, "testdata/ma5-drift-seed-1606.jsonl.gz")
	require.Equal(t, 12, Measure(r).OutageLoad, "a minute of the worker's own clock")

	r.Faults = slices.DeleteFunc(r.Faults, func(f FaultAt) bool { return f.Kind == "drift" })
	require.Equal(t, 14, Measure(r).OutageLoad, "a real minute: the history still shows the drift's effect")
}

// TestOutageLoadPerIncarnation keeps the history of explore --world wide
// --faults heavy seed 1700 (minimized): home-1 crashed at a claim during a
// database outage and restarted 22 s later. Its old process had backed off
// to the cap; the new one starts its backoff afresh, as a new process
// does: 14 claims in one minute by the name home-1, 12 at most by either
// process. MA5 counts per process incarnation (a call's id,
// "process#incarnation.n"); by name alone the history counts 14 again.
func TestOutageLoadPerIncarnation(t *testing.T) {
	r := kept(t, "testdata/ma5-restart-seed-1700.jsonl.gz")
	require.Equal(t, 12, Measure(r).OutageLoad, "per incarnation")

	for i := range r.Ops {
		r.Ops[i].Call.ID = ""
	}
	require.Equal(t, 14, Measure(r).OutageLoad, "by name: the restart's fresh ramp counted with the old process's retries")
}

// kept decodes a kept history: a gzipped trace under testdata.
func kept(t *testing.T, path string) *Run {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	z, err := gzip.NewReader(f)
	require.NoError(t, err)
	h, evs, err := traces.ReadAll(z)
	require.NoError(t, err)
	r, err := Decode(h, evs)
	require.NoError(t, err)
	return r
}

// TestOutageLoadRestartsAfterAnAnswer keeps the history of explore --world
// wide --faults heavy seed 15000480 (run --minimize MA5: five faults): a
// partition from 56 s to the end of the run is an outage, but home-2 is on
// the database's side with arbiter-1, and its claim and its submit are
// answered 200 at 120 s. arbiter-1 crashes at 126 s; from 130.5 s each of
// the two streams backs off from the base again, as worker.go says, 7
// requests in the minute (1, 2, 4, 8, 16 s, then the 16.6 s cap): 14, the
// bound. A minute from 119.8 s held the answered requests too, and they
// counted with the fresh ramps: 17. With the answers taken out of the history
// the requests are retries of one run again and count as before.
func TestOutageLoadRestartsAfterAnAnswer(t *testing.T) {
	r := kept(t, "testdata/ma5-answered-seed-15000480.jsonl.gz")
	require.Equal(t, 14, Measure(r).OutageLoad, "each stream's run of failures on its own")

	for i := range r.Ops {
		if ret := r.Ops[i].Return; ret != nil && (r.Ops[i].Call.Op == "claim" || r.Ops[i].Call.Op == "submit") {
			ret.Code = 503
		}
	}
	require.Equal(t, 17, Measure(r).OutageLoad, "no answer for good: the ramps are one run's retries")
}
