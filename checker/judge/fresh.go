package judge

import (
	"fmt"
	"time"

	"github.com/fencesim/fencesim/checker"
)

// freshSlack is how much later than its commit a grant's statement may
// have run (the rest of the claim transaction: recording the claim, the
// COMMIT) and still be on time: a lease's expiry is at most the unconfirmed
// lease after the commit, by the database's clock.
const freshSlack = time.Second

// UnconfirmedFirst (MA1, A-S1: an orphan lease costs at most the
// unconfirmed lease): every new lease starts with the unconfirmed lease,
// counted on the database's clock from its grant; its expiry is never
// later than the grant's commit plus unconfirmed_lease. A lease nobody heard
// of (its claim's reply lost, its worker gone) then comes back after that
// long, not after a full lease. Checked on the commit log: grants are the
// commits that move a submission from pending to judging with a token; a
// design whose arbiter computes the expiry on its own clock (the
// arbiter-clock knob) is measured by the database's clock too.
func UnconfirmedFirst(r *Run) checker.Verdict {
	at := make(map[uint64]int64, len(r.Commits))
	for i := range r.Commits {
		at[r.Commits[i].Event] = r.Commits[i].At
	}
	limit := int64(r.P.UnconfirmedLease + freshSlack)
	noExpiry, clockBack := 0, 0
	for _, g := range r.grants() {
		v := r.versionAt(g.sub, g.event)
		if v == nil || v.Expires == 0 {
			noExpiry++ // no expiry to judge (the model writes one with every grant)
			continue
		}
		dbAt, ok := at[g.event]
		if !ok {
			continue // cannot be: a grant is a commit
		}
		if r.dbClockBack(g.t-int64(2*freshSlack), g.t) {
			clockBack++ // the database's clock went back between the grant and its commit
			continue
		}
		if v.Expires-dbAt > limit {
			return checker.Fail(MA1, []uint64{g.event}, "submission %d: the lease %s granted to %s expires %v after its commit, beyond the unconfirmed lease %v: a lease nobody heard of would be held that long",
				g.sub, g.token, g.worker, time.Duration(v.Expires-dbAt).Round(time.Millisecond), r.P.UnconfirmedLease)
		}
	}
	v := checker.Pass(MA1)
	if noExpiry+clockBack > 0 {
		// Say what was not judged rather than pass it in silence.
		v.Message = fmt.Sprintf("%d new leases not judged: %d without an expiry, %d with the database's clock going back between the grant and its commit", noExpiry+clockBack, noExpiry, clockBack)
	}
	return v
}

// dbClockBack reports whether a database node's clock jumped back during
// [a, b].
func (r *Run) dbClockBack(a, b int64) bool {
	db := map[string]bool{}
	for i := range r.Commits {
		db[r.Commits[i].Node] = true
	}
	for _, f := range r.Faults {
		if f.Kind == "jump" && f.Amount < 0 && db[f.Node] && f.T >= a && f.T <= b {
			return true
		}
	}
	return false
}

// versionAt returns a submission's row version written by a commit event.
func (r *Run) versionAt(sub int64, event uint64) *Version {
	vs := r.Subs[sub]
	for i := range vs {
		if vs[i].Event == event {
			return &vs[i]
		}
	}
	return nil
}
