package harness

import (
	"fmt"
	"slices"
	"time"

	"github.com/fencesim/fencesim/model/twopc"

	"github.com/fencesim/fencesim/sim"
)

// The world a run is played in is drawn per run, before its faults (swarm
// testing). Every count is drawn as an extra above its minimum and every
// timing as a choice whose zero is the design's own value, so that rapid,
// which shrinks draws toward zero, shrinks a failure toward the smallest
// world with the design's own timings: two participants, one coordinator,
// no standby, one transaction.

// twopc.World sizes: the largest world DrawWorld draws.
const (
	MaxParticipants = 4
	MaxCoordinators = 2
	MaxStandby      = 1
	MaxTxns         = 4
)

// DrawWorld draws a run's world from r: the design with its world's
// parameters drawn (the ones the design pins keep the design's values: the
// ones a user set; the same draws are made either way), its transactions
// written out as an explicit Schedule (so that a trace header holds the
// world, and replay plays it again):
//
//   - 2-4 participants, 1-2 coordinators sharing the log, 0-1 standby
//     coordinator (started only by a fault: a takeover), cooperative
//     termination on or as the design has it;
//   - 1-4 transactions, the first at 100 ms, 0, 20 ms or 1 s, each next
//     one after txn_every or 0, 2 ms, 50 ms or 300 ms (concurrent ones
//     meet on sku-1's row lock), each asked of a drawn coordinator (a
//     design with a schedule or gids of its own keeps its transactions);
//   - the vote, request, retry, agent and lock timings and
//     max_prepared_transactions, each the design's value or one of a few
//     others within its valid range.
func DrawWorld(r sim.Rand, base twopc.Design) twopc.Design {
	d := base
	d.Knobs = slices.Clone(base.Knobs)
	d.Pinned = slices.Clone(base.Pinned)
	fixed := base.Pinned
	d.GIDs = slices.Clone(base.GIDs)
	d.Schedule = slices.Clone(base.Schedule)
	free := func(name string) bool { return !slices.Contains(fixed, name) }
	extra := func(name string, p *int, min, n int) {
		if v := min + int(r.Uint64n("extra-"+name, uint64(n))); free(name) {
			*p = v
		}
	}
	dur := func(name string, p *time.Duration, alts ...time.Duration) {
		if i := r.Uint64n(name, uint64(len(alts))+1); i > 0 && free(name) {
			*p = alts[i-1]
		}
	}
	extra("participants", &d.Participants, 2, MaxParticipants-1)
	extra("coordinators", &d.Coordinators, 1, MaxCoordinators)
	extra("standby", &d.Standby, 0, MaxStandby+1)
	if r.Uint64n("cooperative", 2) == 1 && free("cooperative") {
		d.Cooperative = true
	}
	dur("vote_timeout", &d.VoteTimeout, time.Second, 3*time.Second)
	dur("request_timeout", &d.ReqTimeout, 200*time.Millisecond, 500*time.Millisecond, 5*time.Second)
	dur("retry_base", &d.RetryBase, 100*time.Millisecond, time.Second)
	dur("retry_cap", &d.RetryCap, time.Second, 10*time.Second)
	dur("ask_after", &d.AskAfter, 500*time.Millisecond, time.Second, 4*time.Second)
	dur("abort_after", &d.AbortAfter, time.Second, 2*time.Second, 10*time.Second)
	dur("agent_poll", &d.AgentPoll, 200*time.Millisecond, 500*time.Millisecond)
	dur("lock_timeout", &d.LockTimeout, 200*time.Millisecond, time.Second, 10*time.Second)
	if i := r.Uint64n("max_prepared", 4); i > 0 && free("max_prepared") {
		d.MaxPrepared = []int{1, 2, 4}[i-1]
	}
	// retry_cap >= retry_base: the drawn one of the two gives way (a
	// pinned cap holds a drawn base down).
	if d.RetryCap < d.RetryBase {
		if free("retry_cap") {
			d.RetryCap = d.RetryBase
		} else if free("retry_base") {
			d.RetryBase = d.RetryCap
		}
	}
	n := 1 + int(r.Uint64n("extra-txns", MaxTxns))
	if !free("txns") {
		n = base.Txns
	}
	at := []time.Duration{100 * time.Millisecond, 0, 20 * time.Millisecond, time.Second}[r.Uint64n("first-txn", 4)]
	if !free("first_txn") {
		at = base.FirstTxn
	}
	var plan []twopc.TxnAt
	names := twopc.NamesOf(d).Started
	for i := range n {
		if i > 0 {
			gap := []time.Duration{d.TxnEvery, 0, 2 * time.Millisecond, 50 * time.Millisecond, 300 * time.Millisecond}[r.Uint64n("txn-gap", 5)]
			if !free("txn_every") {
				gap = d.TxnEvery
			}
			at += gap
		}
		c := names[r.Uint64n("txn-coordinator", uint64(len(names)))]
		if c == names[0] {
			c = "" // the first coordinator, as a plan without coordinators says
		}
		plan = append(plan, twopc.TxnAt{At: at, GID: fmt.Sprintf("x%d", i+1), Coordinator: c})
	}
	// A design that lists its transactions, or names them, keeps them.
	if len(base.Schedule) == 0 && len(base.GIDs) == 0 {
		d.Txns, d.Schedule = n, plan
	}
	return d
}
