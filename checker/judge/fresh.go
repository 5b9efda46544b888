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
		// The database's clock may have gone back between the grant's
		// statement and its commit (the statement ran after the row's
		// previous commit, when it was pending); by that much the expiry
		// is later than the commit's clock says, and it is the clock's
		// doing, not the lease's (a claim held up on a delayed link for
		// seconds met a jump back: explore --world fixed --faults heavy,
		// seed 2883).
		back := r.dbClockBack(r.before(g.sub, g.event), g.t)
		if v.Expires-dbAt > limit && v.Expires-dbAt-back <= limit {
			clockBack++ // excused by the database's clock going back
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
		v.Message = fmt.Sprintf("%d new leases not judged: %d without an expiry, %d excused by the database's clock going back between the grant and its commit", noExpiry+clockBack, noExpiry, clockBack)
	}
	return v
}

// dbClockBack returns how far the database's clock jumped back during
// [a, b], all its backward jumps added up.
func (r *Run) dbClockBack(a, b int64) int64 {
	db := map[string]bool{}
	for i := range r.Commits {
		db[r.Commits[i].Node] = true
	}
	var back int64
	for _, f := range r.Faults {
		if f.Kind == "jump" && f.Amount < 0 && db[f.Node] && f.T >= a && f.T <= b {
			back -= f.Amount
		}
	}
	return back
}

// before returns when the version before the one a commit event wrote was
// committed (0 when it is the first).
func (r *Run) before(sub int64, event uint64) int64 {
	vs := r.Subs[sub]
	for i := 1; i < len(vs); i++ {
		if vs[i].Event == event {
			return vs[i-1].T
		}
	}
	return 0
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
