package judge

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fencesim/fencesim/checker"
)

// freshRun is a run with one grant of submission 101 committed at db time
// 5 s (world time 5 s) whose lease expires at expires.
func freshRun(expires time.Duration) *Run {
	r := &Run{P: Params{UnconfirmedLease: 10 * time.Second, Lease: 60 * time.Second, MaxAttempts: 3}}
	r.Commits = []checker.Commit{{Event: 7, T: int64(5 * time.Second), At: int64(5 * time.Second)}}
	r.Subs = map[int64][]Version{101: {
		{Event: 3, T: int64(time.Second), Status: "pending"},
		{Event: 7, T: int64(5 * time.Second), Status: "judging", Token: "a.1", Gen: 1, Worker: "home-1", Expires: int64(expires)},
	}}
	return r
}

// TestUnconfirmedFirst: a new lease that expires the unconfirmed lease
// after its commit (or sooner: its statement ran a little before the
// COMMIT) holds; one that expires a full lease after fails MA1, as under
// long-first-lease; one expired already (dead on arrival) holds here (it is
// MA3's business when it costs an attempt).
func TestUnconfirmedFirst(t *testing.T) {
	assert.True(t, UnconfirmedFirst(freshRun(15*time.Second)).OK, "10 s after the commit")
	assert.True(t, UnconfirmedFirst(freshRun(15*time.Second+freshSlack)).OK, "within the slack")
	assert.True(t, UnconfirmedFirst(freshRun(2*time.Second)).OK, "already expired: not MA1's to judge")
	v := UnconfirmedFirst(freshRun(65 * time.Second))
	assert.False(t, v.OK, "a full lease on a new grant")
	assert.Contains(t, v.Message, "expires 1m0s after its commit")
	assert.Equal(t, []uint64{7}, v.Events)
	r := freshRun(65 * time.Second)
	r.Commits[0].At = int64(55 * time.Second) // the database's clock ran 50 s ahead: 10 s by its clock
	assert.True(t, UnconfirmedFirst(r).OK, "measured by the database's clock")
}

// TestUnconfirmedFirstClockBack: the database's clock jumping back between
// a grant's statement (after the row's previous commit, at 1 s) and its
// commit makes the expiry look that much later than the commit: by the
// jump's amount, and no more, the grant is excused. A jump seconds before
// the commit counts (a claim held up on a delayed link: seed 2883 of the
// fixed world under heavy faults); one before the row was pending, or of
// another node's clock, does not.
func TestUnconfirmedFirstClockBack(t *testing.T) {
	r := freshRun(65 * time.Second)
	r.Commits[0].Node = "db"
	r.Faults = []FaultAt{{Kind: "jump", Node: "db", T: int64(5 * time.Second), Amount: -int64(50 * time.Second)}}
	assert.True(t, UnconfirmedFirst(r).OK)
	r.Faults[0].T = int64(2 * time.Second)
	assert.True(t, UnconfirmedFirst(r).OK, "3 s before the commit, after the row was pending")
	r.Faults[0].Amount = -int64(40 * time.Second)
	assert.False(t, UnconfirmedFirst(r).OK, "a jump of 40 s explains 40 s, not 50")
	r.Faults[0].Amount = -int64(50 * time.Second)
	r.Faults[0].T = int64(time.Second / 2)
	assert.False(t, UnconfirmedFirst(r).OK, "before the row was pending: not between the grant and its commit")
	r.Faults[0].T = int64(5 * time.Second)
	r.Faults[0].Node = "arbiter-1"
	assert.False(t, UnconfirmedFirst(r).OK, "another node's clock is not the database's")
}

// TestPoisonBound: a poison submission of the header's workload lengthens
// PA8's bound by its attempts.
func TestPoisonBound(t *testing.T) {
	r := freshRun(15 * time.Second)
	base := r.Bound()
	r.Poison = []int64{101}
	assert.Equal(t, base+PoisonBound(r.P), r.Bound())
	assert.Greater(t, PoisonBound(r.P), 3*r.P.Lease, "three attempts, each a lease at least")
}
