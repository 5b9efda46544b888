package harness

import (
	"slices"
	"sort"

	check "github.com/fencesim/fencesim/checker/outbox"
	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/sim"
)

// prefixClosed are the properties whose failure on a prefix of a run is a
// failure of the whole run, whatever follows: PB1 (a second charge or
// effect for a key, answers no order explains: a delivery still in flight
// in the prefix is only more permissive), PB4 (a ledger row changed or
// deleted) and PB6 (a keyless request answered otherwise, or changing a
// row). PB2, PB3 and PB5 have liveness halves (published at least once,
// applied, the sender stopped on a success) that only the settled end of
// a run decides.
var prefixClosed = map[string]func(*check.History) check.Verdict{
	check.PB1: check.CheckPB1, check.PB4: check.CheckPB4, check.PB6: check.CheckPB6,
}

// Stop replays a failed run only up to its first violation: the earliest
// event after which the trace fails the first of its failed properties
// that a prefix decides (prefixClosed), replayed with the same inputs to
// that instant (PlayUntil) and judged. It returns the stopped
// run and the violation's time; ok is false when the run failed no such
// property (a failure of PB2, PB3 or PB5 alone is decided at its settled
// end), or the stopped run does not fail it again.
func Stop(o *Outcome) (stopped *Outcome, at clock.Time, ok bool) {
	if o.Err != nil || o.World == nil {
		return nil, 0, false
	}
	var prop string
	for _, f := range o.Failed() {
		if _, closed := prefixClosed[f]; closed {
			prop = f
			break
		}
	}
	if prop == "" {
		return nil, 0, false
	}
	fails := func(n int) bool {
		h, err := check.Decode(o.Trace[:n])
		return err == nil && !prefixClosed[prop](h).OK
	}
	n := sort.Search(len(o.Trace), func(i int) bool { return fails(i + 1) }) + 1
	if n > len(o.Trace) {
		return nil, 0, false
	}
	at = clock.Time(o.Trace[n-1].T)
	s := Judge(PlayUntil(o.Design, o.World.Workload, o.Events, o.Schedule, sim.NewPCG(o.Seed), at))
	s.Seed, s.Profile = o.Seed, o.Profile
	return s, at, slices.Contains(s.Failed(), prop)
}
