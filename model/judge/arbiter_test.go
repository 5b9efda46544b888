package judge

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// These tests drive the arbiter's claim and submit (A.2) alone, as raft's
// tests drive a RawNode: a world of the arbiter's database and one arbiter
// node that runs, one step at a time, the call the test asks for (a.claim,
// a.submit, a.sweep), then the world runs until it is quiet. No dispatch
// loop, no workers, no harness, no checker: each step is asserted on what
// the call returned and on the rows the database holds after it.

const arbiterName = "arbiter-1"

// rig is such a world.
type rig struct {
	t    *testing.T
	d    Design
	w    *sim.World
	mem  *traces.Memory
	step func(a *Arbiter, p *sim.Proc) // what the next "step" command runs
	done bool                          // the step returned (false: the arbiter crashed in it)
}

// newRig builds the world: the database with the design's schema and the
// seed rows, and the arbiter. Each incarnation of the arbiter is built as
// NewArbiter builds it, in the state its main process reaches as the leader
// with the database up (lead, ping), and serves only the test's steps.
func newRig(t *testing.T, d Design, faults sim.Schedule, seed map[string][]db.Row) *rig {
	t.Helper()
	r := &rig{t: t, d: d, mem: &traces.Memory{}}
	r.w = sim.New(sim.Config{
		Entropy: sim.NewPCG(1), Network: network.Policy{DelayMin: time.Millisecond, DelayMax: time.Millisecond},
		Schedule: faults, Recorder: r.mem, Limits: sim.Limits{MaxEvents: 100_000},
	})
	t.Cleanup(r.w.Close)
	r.w.Add("db", db.New(Schema(d), db.Config{Seed: seed}))
	var inc int64
	r.w.Add(arbiterName, func(name string, _ *sim.Disk) sim.Node {
		inc++
		a := &Arbiter{d: d, name: name, inc: inc, cache: map[int64]string{},
			lock: &db.Conn{DB: "db"}, pool: db.NewPool("db", d.Pool, 0), leader: true, dbUp: true}
		return sim.Program(func(p *sim.Proc) {
			p.OnCommand(func(p *sim.Proc, _ sim.Cmd) {
				f := r.step
				r.step = nil
				f(a, p)
				r.done = true
			})
		})
	})
	r.settle()
	return r
}

// settle runs the world until nothing is left to happen.
func (r *rig) settle() {
	r.t.Helper()
	require.NoError(r.t, r.w.Run())
}

// do runs f in a process of the arbiter now and the world until it is
// quiet; it reports whether f returned.
func (r *rig) do(f func(a *Arbiter, p *sim.Proc)) bool {
	r.t.Helper()
	r.step, r.done = f, false
	require.NoError(r.t, r.w.Inject(sim.Action{At: r.w.Now(), Kind: sim.Do, Node: arbiterName, Point: "step"}))
	r.settle()
	return r.done
}

// advance lets time pass.
func (r *rig) advance(d time.Duration) {
	r.t.Helper()
	require.NoError(r.t, r.w.RunUntil(r.w.Now().Add(d)))
}

// restart brings a crashed arbiter back: a new incarnation.
func (r *rig) restart() {
	r.t.Helper()
	require.NoError(r.t, r.w.Inject(sim.Action{At: r.w.Now(), Kind: sim.Restart, Node: arbiterName}))
	r.settle()
}

// claimed is what one claim did.
type claimed struct {
	returned   bool          // claim returned (false: the arbiter crashed in it)
	paired     bool          // its report: the claim got its lease
	answers    []claimAnswer // what it handed the claim's handler
	unread     int           // answers handed and never taken (the arbiter crashed first)
	start, end clock.Time    // the arbiter's clock around the call
	sql        []string      // the statements the database ran meanwhile, in order
}

// leasesIn is the one place a test reads the leases of a claim's answer.
func leasesIn(c claimed) []Lease {
	if len(c.answers) == 0 {
		return nil
	}
	return c.answers[0].leases
}

// claim runs the claim transaction for a claim of (worker, request_id), as
// the dispatch loop does for a waiting claim, and takes the answer it hands
// the claim's handler.
func (r *rig) claim(worker, requestID string) claimed {
	r.t.Helper()
	var c claimed
	w := &waitClaim{worker: worker, requestID: requestID, answer: &sim.Queue[claimAnswer]{}}
	from := len(r.mem.Events)
	c.returned = r.do(func(a *Arbiter, p *sim.Proc) {
		c.start = p.Now()
		c.paired, _ = a.claim(p, w)
		c.end = p.Now()
		for w.answer.Len() > 0 {
			ans, err := w.answer.Get(p, 0, "claim answer")
			if err == nil {
				c.answers = append(c.answers, ans)
			}
		}
	})
	c.unread = w.answer.Len()
	c.sql = r.statements(from)
	return c
}

// submit runs a submit on a pool connection, as serve does.
func (r *rig) submit(req Request) Reply {
	r.t.Helper()
	var rep Reply
	req.Op = OpSubmit
	require.True(r.t, r.do(func(a *Arbiter, p *sim.Proc) {
		c := a.pool.Get(p)
		rep = a.submit(p, c, req)
		a.pool.Put(c)
	}), "submit returned")
	return rep
}

// heartbeat runs a heartbeat on a pool connection, as serve does.
func (r *rig) heartbeat(l Lease, worker string) Reply {
	r.t.Helper()
	var rep Reply
	require.True(r.t, r.do(func(a *Arbiter, p *sim.Proc) {
		c := a.pool.Get(p)
		rep = a.heartbeat(p, c, Request{Op: OpHeartbeat, Worker: worker, Sub: l.Sub, Token: l.Token})
		a.pool.Put(c)
	}), "heartbeat returned")
	return rep
}

// TestAttemptCountsAtConfirmation: the first heartbeat confirms the lease
// and counts its attempt; later heartbeats count nothing; under
// attempts-at-grant the grant counts and heartbeats do not.
func TestAttemptCountsAtConfirmation(t *testing.T) {
	for _, tc := range []struct {
		d                     Design
		granted, beat1, beat2 int64
	}{{Default(), 0, 1, 1}, {Default().MustWith(AttemptsAtGrant), 1, 1, 1}} {
		r := newRig(t, tc.d, nil, queued([3]int64{101, 1, 1}))
		first := r.claim("home-1", "r1")
		require.True(t, first.paired)
		l := leasesIn(first)[0]
		assert.Equal(t, tc.granted, r.sub(101).Int("judge_attempts"), "%v: at the grant", tc.d.Knobs)
		require.Equal(t, Code200, r.heartbeat(l, "home-1").Code)
		assert.Equal(t, tc.beat1, r.sub(101).Int("judge_attempts"), "%v: after the first heartbeat", tc.d.Knobs)
		assert.True(t, r.sub(101).Bool("lease_confirmed"))
		require.Equal(t, Code200, r.heartbeat(l, "home-1").Code)
		assert.Equal(t, tc.beat2, r.sub(101).Int("judge_attempts"), "%v: after the second", tc.d.Knobs)
	}
}

// sweep runs the arbiter's sweep (in a process of its own) to its end.
func (r *rig) sweep() {
	r.t.Helper()
	require.True(r.t, r.do(func(a *Arbiter, p *sim.Proc) { a.sweep(p) }))
}

// result is a worker's submit of a verdict under a lease.
func result(l Lease, worker, verdict string) Request {
	return Request{Worker: worker, Sub: l.Sub, Token: l.Token, Gen: l.Gen, Verdict: verdict}
}

func (r *rig) db() *db.Node {
	n, ok := r.w.Node("db").(*db.Node)
	require.True(r.t, ok, "the database is down")
	return n
}

func (r *rig) rows(table string) []db.Row { return r.db().Rows(table) }

// sub returns a submission's row.
func (r *rig) sub(id int64) db.Row {
	r.t.Helper()
	for _, row := range r.rows(TSubmissions) {
		if row.Int("id") == id {
			return row
		}
	}
	r.t.Fatalf("no submission %d", id)
	return nil
}

// snapshot returns every table's committed rows.
func (r *rig) snapshot() map[string][]db.Row {
	out := map[string][]db.Row{}
	for _, table := range r.db().Tables() {
		out[table] = r.rows(table)
	}
	return out
}

// history renders the judging-history rows: "101 arbiter-1.1.1 gen=1 home-1 AC".
func (r *rig) history() []string {
	var out []string
	for _, row := range r.rows(TJudgings) {
		out = append(out, fmt.Sprintf("%d %s gen=%d %s %s", row.Int("submission_id"), row.Text("lease_token"), row.Int("lease_gen"), row.Text("worker_id"), row.Text("verdict")))
	}
	return out
}

// xp returns a user's experience.
func (r *rig) xp(user int64) int64 {
	for _, row := range r.rows(TUsers) {
		if row.Int("id") == user {
			return row.Int("xp")
		}
	}
	r.t.Fatalf("no user %d", user)
	return 0
}

// statements returns the SQL the database ran from the from-th event on
// (its "db" notes of statements; a session's end has no data, a lock wait
// names what it waits for).
func (r *rig) statements(from int) []string {
	var out []string
	for _, e := range r.mem.Events[from:] {
		if e.Kind != "db" || !e.HasData() {
			continue
		}
		var n struct {
			SQL  string `json:"sql"`
			Wait uint64 `json:"wait"`
		}
		require.NoError(r.t, json.Unmarshal(e.DataJSON(), &n))
		if n.Wait == 0 {
			out = append(out, n.SQL)
		}
	}
	return out
}

// queued seeds pending submissions (id, user, problem) and their users.
func queued(subs ...[3]int64) map[string][]db.Row {
	seed := map[string][]db.Row{}
	users := map[int64]bool{}
	for _, s := range subs {
		seed[TSubmissions] = append(seed[TSubmissions], db.Row{"id": s[0], "user_id": s[1], "problem_id": s[2]})
		if !users[s[1]] {
			users[s[1]] = true
			seed[TUsers] = append(seed[TUsers], db.Row{"id": s[1], "xp": int64(0)})
		}
	}
	return seed
}

// TestClaim (A.2 Claim): the oldest pending submission becomes a lease; the
// same (worker, request_id) again gets the same lease and grants nothing;
// with nothing pending the claim gets nothing and rolls back.
func TestClaim(t *testing.T) {
	d := Default()
	r := newRig(t, d, nil, queued([3]int64{101, 1, 1}, [3]int64{102, 2, 1}))

	first := r.claim("home-1", "r1")
	require.True(t, first.returned)
	assert.True(t, first.paired, "the claim is paired")
	require.Len(t, first.answers, 1, "one answer handed to the claim's handler")
	assert.Equal(t, Code200, first.answers[0].code)
	assert.True(t, first.answers[0].fresh, "a new lease, not one found by its request_id")
	lease := Lease{Sub: 101, Token: "arbiter-1.1.1", Gen: 1, User: 1, Problem: 1}
	assert.Equal(t, []Lease{lease}, leasesIn(first), "the oldest pending submission, a fresh token, lease_gen 0+1")

	row := r.sub(101)
	assert.Equal(t, StatusJudging, row.Text("status"))
	assert.Equal(t, "home-1", row.Text("worker_id"))
	assert.Equal(t, lease.Token, row.Text("lease_token"))
	assert.Equal(t, int64(1), row.Int("lease_gen"), "lease_gen + 1")
	assert.Equal(t, int64(0), row.Int("judge_attempts"), "an attempt counts when its worker confirms the lease, not at the grant")
	assert.False(t, row.Bool("lease_confirmed"), "no heartbeat yet")
	exp := row.Time("lease_expires_at")
	assert.Truef(t, exp >= first.start.Add(d.UnconfirmedLease) && exp <= first.end.Add(d.UnconfirmedLease),
		"the unconfirmed lease: now() + %v, now() within [%s, %s]; got %s", d.UnconfirmedLease, first.start, first.end, exp)
	assert.Equal(t, StatusPending, r.sub(102).Text("status"), "the younger submission still waits")
	assert.Equal(t, []db.Row{{"worker_id": "home-1", "request_id": "r1", "submission_id": int64(101), "slot": int64(0), "lease_token": lease.Token,
		"lease_gen": int64(1), "user_id": int64(1), "problem_id": int64(1)}}, r.rows(TClaims), "the request_id is recorded with its lease")

	// The same (worker, request_id) again: an answer that was lost.
	before := r.snapshot()
	again := r.claim("home-1", "r1")
	require.True(t, again.returned)
	assert.True(t, again.paired)
	require.Len(t, again.answers, 1)
	assert.Equal(t, Code200, again.answers[0].code)
	assert.Equal(t, []Lease{lease}, leasesIn(again), "the same lease again")
	assert.False(t, again.answers[0].fresh, "found by its request_id, not granted")
	after := r.snapshot()
	renewed := r.sub(101).Time("lease_expires_at")
	assert.Truef(t, renewed >= again.start.Add(d.UnconfirmedLease) && renewed <= again.end.Add(d.UnconfirmedLease),
		"sent again, its unconfirmed lease counts from now: now() + %v, now() within [%s, %s]; got %s", d.UnconfirmedLease, again.start, again.end, renewed)
	before[TSubmissions][0]["lease_expires_at"] = renewed
	assert.Equal(t, before, after, "no second grant: no other row or column changed")

	// Another worker takes the other one; then nothing is pending.
	other := r.claim("home-2", "r1")
	assert.Equal(t, []Lease{{Sub: 102, Token: "arbiter-1.1.2", Gen: 1, User: 2, Problem: 1}}, leasesIn(other))

	before = r.snapshot()
	empty := r.claim("home-1", "r2")
	require.True(t, empty.returned)
	assert.False(t, empty.paired, "nothing pending: not paired")
	assert.Empty(t, empty.answers, "no answer: the claim keeps hanging until its hold expires")
	assert.Nil(t, leasesIn(empty))
	assert.Equal(t, before, r.snapshot(), "no row changed")
	require.NotEmpty(t, empty.sql)
	assert.Equal(t, "ROLLBACK", empty.sql[len(empty.sql)-1], "the transaction is rolled back; statements: %q", empty.sql)
	assert.NotContains(t, empty.sql, "COMMIT")
}

// TestClaimAfterSweep: a lease that expired unconfirmed is swept back to
// pending, and the next claim of it gets lease_gen + 1 and, in the design, a
// new token (A.0 principle 3). Under reclaim-keeps-token the swept row keeps
// its token and the next claim hands the old owner's token out again.
func TestClaimAfterSweep(t *testing.T) {
	for _, tc := range []struct {
		name  string
		d     Design
		swept any    // the swept row's lease_token
		token string // the next claim's token
	}{
		{"default", Default(), nil, "arbiter-1.1.2"},
		{string(ReclaimKeepsToken), Default().MustWith(ReclaimKeepsToken), "arbiter-1.1.1", "arbiter-1.1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.d, nil, queued([3]int64{101, 1, 1}))
			first := r.claim("home-1", "r1")
			require.Equal(t, []Lease{{Sub: 101, Token: "arbiter-1.1.1", Gen: 1, User: 1, Problem: 1}}, leasesIn(first))

			r.advance(tc.d.UnconfirmedLease + time.Second) // no heartbeat came
			r.sweep()
			row := r.sub(101)
			assert.Equal(t, StatusPending, row.Text("status"), "the expired lease is swept back")
			assert.True(t, row.Null("worker_id"))
			assert.Equal(t, tc.swept, row["lease_token"], "the swept row's token")

			next := r.claim("home-2", "r1")
			require.True(t, next.paired)
			assert.Equal(t, []Lease{{Sub: 101, Token: tc.token, Gen: 2, User: 1, Problem: 1}}, leasesIn(next))
			row = r.sub(101)
			assert.Equal(t, tc.token, row.Text("lease_token"))
			assert.Equal(t, int64(2), row.Int("lease_gen"))
			assert.Equal(t, int64(0), row.Int("judge_attempts"), "a lease nobody confirmed spent no attempt")
		})
	}
}

// TestSubmit (A.2 Submit, A-S4): the current token's result sets the
// verdict, records one judging-history row and credits a first AC once; the
// same result again is a duplicate: 200 as the first time and nothing
// written (under duplicate-is-error: 500, still nothing written).
func TestSubmit(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    Design
		dup  Reply // the answer to the duplicate
	}{
		{"default", Default(), Reply{Code: Code200, Sub: 101, Token: "arbiter-1.1.1", Why: "duplicate: already recorded"}},
		{string(DuplicateIsError), Default().MustWith(DuplicateIsError), Reply{Code: Code500, Sub: 101, Token: "arbiter-1.1.1", Why: "duplicate result"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Two submissions of user 1 for problem 1.
			r := newRig(t, tc.d, nil, queued([3]int64{101, 1, 1}, [3]int64{102, 1, 1}))
			l := leasesIn(r.claim("home-1", "r1"))
			require.Len(t, l, 1)

			rep := r.submit(result(l[0], "home-1", "AC"))
			assert.Equal(t, Reply{Code: Code200, Sub: 101, Token: l[0].Token}, rep)
			row := r.sub(101)
			assert.Equal(t, "AC", row.Text("status"), "the verdict is set")
			assert.True(t, row.Null("lease_expires_at"), "no lease left")
			assert.Equal(t, []string{"101 arbiter-1.1.1 gen=1 home-1 AC"}, r.history(), "one judging row, naming the lease that decided")
			require.Len(t, r.rows(TFirstAC), 1)
			assert.Equal(t, int64(101), r.rows(TFirstAC)[0].Int("submission_id"), "user 1's first AC of problem 1")
			assert.Equal(t, int64(XPPerFirstAC), r.xp(1))

			// The reply was lost: the worker submits the same result again.
			before := r.snapshot()
			assert.Equal(t, tc.dup, r.submit(result(l[0], "home-1", "AC")))
			assert.Equal(t, before, r.snapshot(), "the duplicate writes nothing: still one judging row, XP credited once")

			// A second AC of the same problem by the same user: no second credit.
			l2 := leasesIn(r.claim("home-1", "r2"))
			require.Len(t, l2, 1)
			assert.Equal(t, Code200, r.submit(result(l2[0], "home-1", "AC")).Code)
			assert.Equal(t, []string{"101 arbiter-1.1.1 gen=1 home-1 AC", "102 arbiter-1.1.2 gen=1 home-1 AC"}, r.history())
			require.Len(t, r.rows(TFirstAC), 1, "first AC counted once")
			assert.Equal(t, int64(101), r.rows(TFirstAC)[0].Int("submission_id"))
			assert.Equal(t, int64(XPPerFirstAC), r.xp(1), "XP credited once")
		})
	}
}

// TestSubmitStaleToken (A-S5): home-1 claims 101 (token A), its lease is
// swept, home-1 claims 101 again (token B); the late token-A result gets 410
// and changes nothing; the token-B result decides.
func TestSubmitStaleToken(t *testing.T) {
	d := Default()
	r := newRig(t, d, nil, queued([3]int64{101, 1, 1}))
	a := leasesIn(r.claim("home-1", "r1"))
	require.Len(t, a, 1)
	r.advance(d.UnconfirmedLease + time.Second)
	r.sweep()
	b := leasesIn(r.claim("home-1", "r2"))
	require.Len(t, b, 1)
	require.NotEqual(t, a[0].Token, b[0].Token, "a new lease, a new token")
	assert.Equal(t, int64(2), b[0].Gen)

	before := r.snapshot()
	rep := r.submit(result(a[0], "home-1", "WA"))
	assert.Equal(t, Reply{Code: Code410, Sub: 101, Token: a[0].Token, Why: "stale token"}, rep, "token A is void")
	assert.Equal(t, before, r.snapshot(), "nothing changed: no verdict, no judging row for token A")
	assert.Equal(t, StatusJudging, r.sub(101).Text("status"), "still token B's")

	assert.Equal(t, Reply{Code: Code200, Sub: 101, Token: b[0].Token}, r.submit(result(b[0], "home-1", "AC")))
	assert.Equal(t, "AC", r.sub(101).Text("status"))
	assert.Equal(t, []string{"101 arbiter-1.1.2 gen=2 home-1 AC"}, r.history(), "only token B decided")
}

// TestClaimRetryAfterSweep (A-S1, found by steered seed
// 9254907748326310764): a claim's answer was lost and its retry comes after
// the unconfirmed lease ran out and the sweep took the lease back (another
// worker may hold it by then). The retry must not send the worker that
// dead lease: it gets 204 (a new claim, a new request_id) and changes
// nothing. A retry that comes while the lease is still the submission's,
// even expired and not yet swept, gets it with its unconfirmed lease from
// now, so the next sweep leaves it to the worker about to confirm it.
// Under resend-as-found the look-up sends what it found, as found: the
// dead lease, whose worker judges until its first heartbeat's 410 (MA2).
func TestClaimRetryAfterSweep(t *testing.T) {
	dead := Lease{Sub: 101, Token: "arbiter-1.1.1", Gen: 1, User: 1, Problem: 1}
	for _, d := range []Design{Default(), Default().MustWith(ResendAsFound)} {
		r := newRig(t, d, nil, queued([3]int64{101, 1, 1}))
		require.Equal(t, []Lease{dead}, leasesIn(r.claim("home-1", "r1")))
		r.advance(d.UnconfirmedLease + time.Second) // the answer was lost: no heartbeat
		r.sweep()
		require.Equal(t, StatusPending, r.sub(101).Text("status"), "%v: taken back", d.Knobs)
		other := r.claim("home-2", "r7")
		require.Equal(t, []Lease{{Sub: 101, Token: "arbiter-1.1.2", Gen: 2, User: 1, Problem: 1}}, leasesIn(other))

		before := r.snapshot()
		retry := r.claim("home-1", "r1")
		require.True(t, retry.returned)
		require.Len(t, retry.answers, 1)
		if d.Has(ResendAsFound) {
			assert.Equal(t, Code200, retry.answers[0].code)
			assert.Equal(t, []Lease{dead}, leasesIn(retry), "the source's look-up: the dead lease, as found")
			assert.Equal(t, before, r.snapshot())
			continue
		}
		assert.Equal(t, Code204, retry.answers[0].code, "not the dead lease: a new claim")
		assert.Empty(t, leasesIn(retry))
		assert.False(t, retry.paired, "no lease handed out")
		assert.Equal(t, before, r.snapshot(), "nothing changed: home-2's lease stands")
	}

	// Expired but not swept yet: still the submission's, sent again with a
	// fresh unconfirmed lease, which the next sweep leaves alone.
	d := Default()
	r := newRig(t, d, nil, queued([3]int64{101, 1, 1}))
	require.Equal(t, []Lease{dead}, leasesIn(r.claim("home-1", "r1")))
	r.advance(d.UnconfirmedLease + time.Second)
	retry := r.claim("home-1", "r1")
	require.Len(t, retry.answers, 1)
	assert.Equal(t, Code200, retry.answers[0].code)
	assert.Equal(t, []Lease{dead}, leasesIn(retry))
	r.sweep()
	assert.Equal(t, StatusJudging, r.sub(101).Text("status"), "the lease just sent again is not swept")
	assert.Equal(t, Code200, r.heartbeat(dead, "home-1").Code, "its worker confirms it")
}

// TestClaimCrash (A-S1 a, b): the arbiter is killed in the claim, before or
// after its COMMIT, and restarted; the worker retries with the same
// request_id. Before COMMIT nothing is left and the retry gets a new lease;
// after COMMIT the lease is in the database, no answer was given, and the
// retry gets that same lease.
func TestClaimCrash(t *testing.T) {
	for _, tc := range []struct {
		point     string
		committed bool
		retry     Lease
	}{
		{PointBeforeCommit, false, Lease{Sub: 101, Token: "arbiter-1.2.1", Gen: 1, User: 1, Problem: 1}},
		{PointAfterCommit, true, Lease{Sub: 101, Token: "arbiter-1.1.1", Gen: 1, User: 1, Problem: 1}},
	} {
		t.Run(tc.point, func(t *testing.T) {
			faults := sim.Schedule{{At: 0, Kind: sim.CrashAt, Node: arbiterName, Point: tc.point}}
			r := newRig(t, Default(), faults, queued([3]int64{101, 1, 1}))

			c := r.claim("home-1", "r1")
			assert.False(t, c.returned, "killed at %s", tc.point)
			assert.False(t, r.w.Up(arbiterName))
			assert.Empty(t, c.answers, "no answer given")
			assert.Zero(t, c.unread, "no answer handed to the claim's handler")
			assert.NoError(t, r.db().Quiet(), "the crashed arbiter's sessions ended: nothing held")
			row := r.sub(101)
			if tc.committed {
				assert.Equal(t, StatusJudging, row.Text("status"), "the lease is committed")
				assert.Equal(t, "arbiter-1.1.1", row.Text("lease_token"))
				assert.Len(t, r.rows(TClaims), 1, "with its request_id")
			} else {
				assert.Equal(t, StatusPending, row.Text("status"), "rolled back with the session")
				assert.True(t, row.Null("lease_token"))
				assert.Empty(t, r.rows(TClaims))
			}

			r.restart()
			retry := r.claim("home-1", "r1")
			require.True(t, retry.returned)
			require.Len(t, retry.answers, 1)
			assert.Equal(t, []Lease{tc.retry}, leasesIn(retry))
			assert.Equal(t, !tc.committed, retry.answers[0].fresh, "granted now, or found by its request_id")
			assert.Equal(t, int64(1), r.sub(101).Int("lease_gen"), "one grant in all")
			assert.Len(t, r.rows(TClaims), 1)
			if tc.committed {
				assert.NotContains(t, strings.Join(retry.sql, "\n"), "SET status", "the retry after COMMIT grants nothing")
				assert.Contains(t, strings.Join(retry.sql, "\n"), "SET lease_expires_at = greatest(", "it sends the lease again with its unconfirmed lease from now")
			}
		})
	}
}

// TestNonLeaderRefuses: by default a non-leader refuses claims only (its
// heartbeats' and submits' writes are fenced by the token); under
// leader-only-serves, the source's "抢到的才干活" read strictly, it refuses
// every request. The database out of reach refuses everything; the
// probe is answered apart (serve).
func TestNonLeaderRefuses(t *testing.T) {
	for _, tc := range []struct {
		knob                  bool
		leader, dbUp          bool
		claim, heartbeat, sub string
	}{
		{false, true, true, "", "", ""},
		{false, false, true, "not the leader", "", ""},
		{false, true, false, "database unreachable", "database unreachable", "database unreachable"},
		{false, false, false, "database unreachable", "database unreachable", "database unreachable"},
		{true, true, true, "", "", ""},
		{true, false, true, "not the leader", "not the leader", "not the leader"},
		{true, true, false, "database unreachable", "database unreachable", "database unreachable"},
		{true, false, false, "not the leader", "not the leader", "not the leader"},
	} {
		d := Default()
		if tc.knob {
			d = d.MustWith(LeaderOnlyServes)
		}
		a := &Arbiter{d: d, leader: tc.leader, dbUp: tc.dbUp}
		name := fmt.Sprintf("knob=%v leader=%v db=%v", tc.knob, tc.leader, tc.dbUp)
		assert.Equal(t, tc.claim, a.refusal(OpClaim), name)
		assert.Equal(t, tc.heartbeat, a.refusal(OpHeartbeat), name)
		assert.Equal(t, tc.sub, a.refusal(OpSubmit), name)
	}
}
