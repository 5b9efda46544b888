package judge

import (
	"fmt"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// ArbiterConfig configures one arbiter.
type ArbiterConfig struct {
	Design Design
	DB     network.Addr
}

// Crash points (A-S1).
const (
	PointBeforeCommit = "claim-before-commit"
	PointAfterCommit  = "claim-after-commit"
	PointAfterReply   = "claim-after-reply"
)

// waitClaim is a claim hanging in the arbiter until the dispatch loop pairs
// it with work or its hold expires (A.4).
type waitClaim struct {
	worker    string
	proc      string // the process of the worker_id that claims (empty: the worker_id's own)
	requestID string
	home      bool
	deadline  clock.Time // when the hold expires (monotonic): answered 204 if still unpaired
	busy      bool       // a claim transaction is running for it
	gone      bool       // its client hung up while the transaction ran
	answered  bool       // answered without a pairing (its found lease was taken back)
	answer    *sim.Queue[claimAnswer]
}

// claimAnswer is what the dispatch loop (or a failing database) tells the
// request handler that holds a claim.
type claimAnswer struct {
	code       int
	leases     []Lease
	why        string
	fresh      bool // a new lease (not one found by its request_id)
	superseded bool // a newer request of the worker took the claim over: no answer here
}

// Arbiter is one arbiter process: the central dispatcher of A.4.
type Arbiter struct {
	rejudged map[string]bool // the rejudge operations' ids so far (they must be unique in a history)
	d        Design
	name     string
	inc      int64

	lock     *db.Conn // the leader lock's session
	leader   bool
	lockLost bool

	pool *db.Pool

	dbUp      bool
	pinging   bool
	needGrace bool

	waiting []*waitClaim
	rr      int
	round   bool
	kick    sim.Queue[struct{}] // starts a dispatch round
	// The probe's facts (A-S8), on the monotonic clock: when a dispatch
	// round last completed, when a claim was last paired, since when the
	// queue's picks have found work (claimable), and since when each
	// worker process has kept a claim hanging (waitSince; leftAt: when its
	// claim was last answered "no work", after which it hangs another).
	lastRound   clock.Time
	lastPair    clock.Time
	claimable   bool
	claimableAt clock.Time
	waitSince   map[string]clock.Time
	leftAt      map[string]clock.Time
	stalled     bool

	tokens int
	cache  map[int64]string // memory-facts: leases this process granted

	sweepSQL []db.Stmt  // the sweep's statements, when they do not depend on the arbiter's clock
	woke     clock.Time // when a tick last woke (monotonic): a wake much later means the process was frozen
}

// Stalled reports whether the arbiter's dispatch loop is stalled (the
// stall command, A-S8): the run is not quiet while it is.
func (a *Arbiter) Stalled() bool { return a.stalled }

// NewArbiter returns the arbiter's factory.
func NewArbiter(cfg ArbiterConfig) sim.Factory {
	return func(name string, disk *sim.Disk) sim.Node {
		a := &Arbiter{d: cfg.Design, name: name, cache: map[int64]string{}, waitSince: map[string]clock.Time{}, leftAt: map[string]clock.Time{},
			lock: &db.Conn{DB: cfg.DB}, pool: db.NewPool(cfg.DB, cfg.Design.Pool, 0)}
		if v, ok := disk.Get("incarnation"); ok {
			a.inc = v.(int64)
		}
		return sim.Program(a.main)
	}
}

// main starts the arbiter: its HTTP handlers, the leader lock, the database
// check, the dispatch loop and the sweep.
func (a *Arbiter) main(p *sim.Proc) {
	a.inc++
	p.Disk().Put("incarnation", a.inc)
	p.Handle(a.serve)
	p.OnCommand(a.command)
	a.lastRound, a.lastPair = p.Mono(), p.Mono()
	a.ping(p)
	p.Go("leader", a.lead)
	p.Go("dispatch", a.dispatchLoop)
	a.woke = p.Mono()
	p.Go("dispatch-tick", func(p *sim.Proc) {
		for {
			p.Sleep(a.d.DispatchEvery, "dispatch tick")
			a.wake(p)
			a.dispatch()
		}
	})
	p.Go("sweep-tick", func(p *sim.Proc) {
		for {
			p.Sleep(a.d.SweepEvery, "sweep tick")
			a.wake(p)
			a.sweep(p)
		}
	})
}

// wake is called by the ticks as they wake. The dispatch tick wakes every
// DispatchEvery, so a wake more than that plus Away after the last one
// means the process was frozen meanwhile (a GC pause, SIGSTOP, a VM
// migration): no heartbeat could land, and the grace is owed before the
// sweep reclaims anything, as after a restart (A-S2: the time the arbiter
// was away is not the workers' fault).
func (a *Arbiter) wake(p *sim.Proc) {
	now := p.Mono()
	if gap := now.Sub(a.woke); gap > a.d.DispatchEvery+a.d.Away() {
		a.away(p, "frozen", gap)
	}
	a.woke = now
}

// away is an absence noticed after the fact (a freeze, a database that
// answered late): it owes the grace, which runs now, and reports true.
// Under blind-sweep (the source's sweep) nothing is owed.
func (a *Arbiter) away(p *sim.Proc, why string, gap time.Duration) bool {
	if a.d.Has(BlindSweep) {
		return false
	}
	if !a.needGrace {
		a.needGrace = true
		a.state(p, why, int(gap/time.Millisecond))
		a.grace(p)
	}
	return true
}

func (a *Arbiter) state(p *sim.Proc, what string, n int) {
	p.Note(hist.State{What: what, Count: n})
}

// ---- leadership ----

// lead takes the leader lock (a session-level advisory lock) and checks
// every LeaderRetry that it still holds it. The database releases the lock
// when the lock's session ends; the arbiter finds out at its next check, as
// a process finds out about an idle connection when it next looks at it
// (A-S6: the old leader may still act as leader meanwhile).
func (a *Arbiter) lead(p *sim.Proc) {
	if a.d.Has(NoLeaderLock) {
		a.becomeLeader(p)
		return
	}
	for {
		a.lockLost = false
		res, err := a.lock.Exec(p, db.TryAdvisoryLock(LeaderLockKey).Named("leader-lock"))
		switch {
		case err == nil && res.Locked:
			a.becomeLeader(p)
		case db.Unknown(err):
			a.lockLost = true
		}
		p.Sleep(a.d.LeaderRetry, "leader check")
		for a.leader {
			if a.lockLost || a.lock.Lost(p) {
				a.leader = false
				a.state(p, "follower", 0)
				break
			}
			p.Sleep(a.d.LeaderRetry, "leader check")
		}
	}
}

func (a *Arbiter) becomeLeader(p *sim.Proc) {
	a.leader = true
	a.needGrace = true
	// The probe's heartbeat counts from here: a follower runs no rounds
	// (found by the audit's sweep: a standby that took over 86 s into a
	// run reported its last round 1m55s ago).
	a.lastRound = p.Mono()
	a.state(p, "leader", 0)
	a.grace(p)
}

// ---- the database's reachability ----

// ping checks, in a process of its own, that the database answers on a pool
// connection (a pool reconnects by itself); when it does not, the database
// is unreachable and the arbiter answers 503 until a ping succeeds.
func (a *Arbiter) ping(p *sim.Proc) {
	if a.pinging {
		return
	}
	a.pinging = true
	p.Go("ping", func(p *sim.Proc) {
		c := a.pool.Get(p)
		_, err := c.Exec(p, db.SetLockTimeout(0).Named("ping"))
		a.pool.Put(c)
		a.pinging = false
		if err != nil {
			a.down(p)
			p.Sleep(a.d.BackoffBase, "ping backoff")
			a.ping(p)
			return
		}
		if !a.dbUp {
			a.dbUp = true
			a.needGrace = true
			a.state(p, "db-up", 0)
			a.grace(p)
		}
	})
}

// lost is called when a statement's connection broke: the database may be
// unreachable, which a ping finds out.
func (a *Arbiter) lost(p *sim.Proc) { a.ping(p) }

// down marks the database unreachable: hanging claims get 503.
func (a *Arbiter) down(p *sim.Proc) {
	if !a.dbUp {
		return
	}
	a.dbUp = false
	a.state(p, "db-down", 0)
	var busy []*waitClaim
	for _, w := range a.waiting {
		if w.busy {
			busy = append(busy, w)
			continue
		}
		w.answer.Put(claimAnswer{code: Code503, why: "database unreachable"})
	}
	a.waiting = busy
}

// abort ends a transaction that failed: a broken connection marks the
// database as possibly down (the session, and its transaction, are gone);
// any other error rolls back.
func (a *Arbiter) abort(p *sim.Proc, tx *db.Tx, err error) {
	if db.Unknown(err) {
		a.lost(p)
		return
	}
	tx.Rollback()
}

// ---- requests ----

// serve handles one HTTP request (or the monitor's probe datagram).
func (a *Arbiter) serve(p *sim.Proc, m network.Message) {
	r, ok := m.Body.(Request)
	if !ok {
		return
	}
	reply := func(rep Reply) {
		rep.No, rep.Op = r.No, r.Op
		if m.Conn != 0 {
			p.SendConn(m.Conn, rep)
			return
		}
		p.Send(m.From, rep)
	}
	if r.Op == OpProbe {
		reply(Reply{Code: Code200, Probe: a.probe(p)})
		return
	}
	if why := a.refusal(r.Op); why != "" {
		reply(Reply{Code: Code503, RequestID: r.RequestID, Sub: r.Sub, Token: r.Token, Why: why})
		return
	}
	switch r.Op {
	case OpClaim:
		a.holdClaim(p, r, reply)
	case OpHeartbeat:
		c := a.pool.Get(p)
		rep := a.heartbeat(p, c, r)
		a.pool.Put(c)
		reply(rep)
	case OpSubmit:
		c := a.pool.Get(p)
		rep := a.submit(p, c, r)
		a.pool.Put(c)
		reply(rep)
	}
}

// refusal is why the arbiter answers a request 503, or "": the database
// out of reach; a claim while it is not the leader ("抢到的才干活", 000
// scenario 6: only the lock's holder dispatches). By default a non-leader
// still serves heartbeats and submits, whose writes are fenced by the
// token (a *chosen* reading, docs/systems.md); under leader-only-serves,
// the source's words read strictly, it serves nothing.
func (a *Arbiter) refusal(op Op) string {
	switch {
	case !a.leader && a.d.Has(LeaderOnlyServes):
		return NotLeader
	case !a.dbUp:
		return "database unreachable"
	case op == OpClaim && !a.leader:
		return NotLeader
	}
	return ""
}

// heartbeat extends the lease (A.2 Heartbeat): 0 rows, the lease is gone.
func (a *Arbiter) heartbeat(p *sim.Proc, c *db.Conn, r Request) Reply {
	res, err := c.Exec(p, a.d.Extend(p.Now(), r.Sub, r.Token, r.Worker).Named("extend"))
	switch {
	case err != nil:
		if db.Unknown(err) {
			a.lost(p)
		}
		return Reply{Code: Code503, Sub: r.Sub, Token: r.Token, Why: db.Code(err)}
	case res.Affected == 1:
		return Reply{Code: Code200, Sub: r.Sub, Token: r.Token}
	}
	return Reply{Code: Code410, Sub: r.Sub, Token: r.Token, Why: "lease gone"}
}

// submit records a result (A.2 Submit, A-S4, A-S5). The judging-history row
// is the idempotency key of a result: inserted first under UNIQUE
// (submission_id, lease_token) with ON CONFLICT DO NOTHING; a conflict means
// this very lease already decided the result, and the answer is the first
// one's, 200. Then the verdict is written only if the lease is still
// current; 0 rows is a stale token: roll back, 410. A first AC credits the
// user once.
func (a *Arbiter) submit(p *sim.Proc, c *db.Conn, r Request) Reply {
	fail := func(tx *db.Tx, err error) Reply {
		a.abort(p, tx, err)
		return Reply{Code: Code503, Sub: r.Sub, Token: r.Token, Why: db.Code(err)}
	}
	now := p.Now()
	tx, _ := c.Begin(p)
	res, err := tx.Exec(RecordJudging(r.Sub, r.Token, r.Gen, r.Worker, r.Verdict, now).Named("record-judging"))
	if err != nil {
		return fail(tx, err)
	}
	if !res.Inserted {
		tx.Rollback()
		if a.d.Has(DuplicateIsError) {
			return Reply{Code: Code500, Sub: r.Sub, Token: r.Token, Why: "duplicate result"}
		}
		return Reply{Code: Code200, Sub: r.Sub, Token: r.Token, Why: "duplicate: already recorded"}
	}
	decide := a.d.Decide(r.Sub, r.Token, r.Worker, r.Verdict)
	if a.d.Has(MemoryFacts) && a.cache[r.Sub] == r.Token {
		decide = DecideIfCached(r.Sub, r.Verdict)
	}
	row, err := tx.QueryRow(decide.Named("decide"))
	if err != nil {
		return fail(tx, err)
	}
	if row == nil {
		tx.Rollback()
		return Reply{Code: Code410, Sub: r.Sub, Token: r.Token, Why: "stale token"}
	}
	if r.Verdict == "AC" {
		user, problem := row.Int("user_id"), row.Int("problem_id")
		first, err := tx.Exec(a.d.CreditFirstAC(user, problem, r.Sub, now).Named("credit-first-ac"))
		if err != nil {
			return fail(tx, err)
		}
		if first.Inserted {
			if _, err := tx.Exec(CreditXP(user).Named("credit-xp")); err != nil {
				return fail(tx, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(tx, err)
	}
	delete(a.cache, r.Sub)
	return Reply{Code: Code200, Sub: r.Sub, Token: r.Token}
}

// holdClaim keeps a claim until the dispatch loop pairs it or its hold
// expires (A.4 dispatch), then answers it. A retry with the same request_id
// takes the hanging claim over; a worker has at most one claim hanging.
func (a *Arbiter) holdClaim(p *sim.Proc, r Request, reply func(Reply)) {
	w := a.hang(p, r)
	for {
		ans, err := w.answer.Await(p, max(w.deadline.Sub(p.Mono()), time.Nanosecond), "claim hold")
		switch {
		case err == nil && ans.superseded:
			return
		case err == nil:
			reply(Reply{Code: ans.code, RequestID: r.RequestID, Leases: ans.leases, Why: ans.why})
			if ans.fresh {
				p.Point(PointAfterReply)
			}
			return
		case err == sim.ErrTimeout && w.busy:
			// A claim transaction is running for it; look again soon.
			w.deadline = p.Mono().Add(a.d.DispatchEvery)
		case err == sim.ErrTimeout:
			a.remove(w)
			a.leftAt[w.key()] = p.Mono() // it hangs another claim at once
			reply(Reply{Code: Code204, RequestID: r.RequestID})
			return
		default: // the worker hung up: a claim nobody can answer must not be paired
			if w.busy {
				w.gone = true // removed when its transaction ends
			} else {
				a.remove(w)
			}
			return
		}
	}
}

// probe reports the dispatch loop's liveness (A-S8). Unpaired is the
// source's "有可领的提交、有 worker 挂着请求在等,却超过 30 秒没配上对"
// (000, scenario 8: claimable work, a worker's request hanging, and no
// pairing) measured from the latest of: the oldest waiting worker's start,
// the first pick that found work, and the last pairing. Measured from the
// last pairing alone, a claim that arrived after a quiet half minute was
// "unpaired for 30 s" on arrival (found by an audit: moderate seed 205
// alerted 12 ms after the claim came, 80 ms before it was paired).
func (a *Arbiter) probe(p *sim.Proc) ProbeInfo { return a.probeAt(p.Mono()) }

// probeAt is probe at a time of the monotonic clock.
func (a *Arbiter) probeAt(now clock.Time) ProbeInfo {
	pr := ProbeInfo{Leader: a.leader, Waiting: len(a.waiting), Claimable: a.claimable, RoundAge: now.Sub(a.lastRound)}
	if !a.claimable || len(a.waiting) == 0 {
		return pr
	}
	since := a.claimableAt
	if a.lastPair > since {
		since = a.lastPair
	}
	oldest := now
	for _, w := range a.waiting {
		if t, ok := a.waitSince[w.key()]; ok && t < oldest {
			oldest = t
		}
	}
	if oldest > since {
		since = oldest
	}
	pr.Unpaired = now.Sub(since)
	return pr
}

// key names a claim's worker process.
func (w *waitClaim) key() string { return w.worker + "/" + w.proc }

// hang registers a claim (or the retry of one) with the dispatch loop.
func (a *Arbiter) hang(p *sim.Proc, r Request) *waitClaim {
	hold := p.Mono().Add(a.d.ClaimHold)
	for _, w := range a.waiting {
		if w.worker == r.Worker && w.proc == r.Proc && w.requestID == r.RequestID && !w.answered {
			w.answer.Put(claimAnswer{superseded: true})
			w.answer = &sim.Queue[claimAnswer]{}
			w.deadline = hold
			w.gone = false
			return w
		}
	}
	for i, w := range a.waiting {
		if w.worker == r.Worker && w.proc == r.Proc && !w.busy {
			w.answer.Put(claimAnswer{superseded: true})
			a.waiting = append(a.waiting[:i], a.waiting[i+1:]...)
			break
		}
	}
	w := &waitClaim{worker: r.Worker, proc: r.Proc, requestID: r.RequestID, home: r.Home, deadline: hold, answer: &sim.Queue[claimAnswer]{}}
	// The worker has waited since its first claim, if this one follows a
	// "no work" answer at once (a long poll hangs the next claim as soon
	// as the last one is answered); else from now.
	now := p.Mono()
	if left, ok := a.leftAt[w.key()]; !ok || now.Sub(left) > a.d.RequestTimeout {
		a.waitSince[w.key()] = now
	}
	delete(a.leftAt, w.key())
	a.waiting = append(a.waiting, w)
	a.dispatch()
	return w
}

func (a *Arbiter) remove(w *waitClaim) {
	for i, x := range a.waiting {
		if x == w {
			a.waiting = append(a.waiting[:i], a.waiting[i+1:]...)
			return
		}
	}
}

// ---- dispatch ----

// next picks the next waiting claim: home machines first, round-robin among
// them; then the others in arrival order.
func (a *Arbiter) next() *waitClaim {
	homes := 0
	for _, w := range a.waiting {
		if w.home && !w.busy {
			homes++
		}
	}
	if homes > 0 {
		a.rr++
		k := a.rr % homes
		for _, w := range a.waiting {
			if w.home && !w.busy {
				if k == 0 {
					return w
				}
				k--
			}
		}
	}
	for _, w := range a.waiting {
		if !w.busy {
			return w
		}
	}
	return nil
}

// dispatch asks for a dispatch round, unless one runs or none may run.
func (a *Arbiter) dispatch() {
	if a.round || !a.leader || !a.dbUp || a.stalled || a.needGrace {
		return
	}
	a.round = true
	a.kick.Put(struct{}{})
}

// dispatchLoop runs the dispatch rounds: look at the waiting claims, pair
// each with work, write the database. The probe's heartbeat (lastRound) is
// refreshed only when a round completes.
func (a *Arbiter) dispatchLoop(p *sim.Proc) {
	for {
		a.kick.Get(p, 0, "dispatch wait")
		for {
			w := a.next()
			if w == nil || !a.dbUp || a.stalled {
				break
			}
			w.busy = true
			paired, again := a.claim(p, w)
			w.busy = false
			if paired || w.gone || w.answered {
				a.remove(w)
			}
			if paired {
				a.lastPair = p.Mono()
				delete(a.waitSince, w.key())
			}
			if !again {
				break
			}
		}
		a.round = false
		a.lastRound = p.Mono()
	}
}

// claim runs the claim transaction for one waiting claim (A.2 Claim) and
// hands the leases to the claim's handler. It reports whether the claim got
// a lease, and whether the round should go on with the next waiting claim.
func (a *Arbiter) claim(p *sim.Proc, w *waitClaim) (paired, again bool) {
	d := a.d
	c := a.pool.Get(p)
	defer a.pool.Put(c)
	now := p.Now()
	tx, _ := c.Begin(p)
	// 1. The same request_id again: the same leases again (idempotent claim).
	if !d.Has(NoRequestID) {
		found, err := tx.Exec(d.FindClaim(w.worker, w.requestID).Named("find-claim"))
		if err != nil {
			a.abort(p, tx, err)
			return false, false
		}
		if len(found.Rows) > 0 {
			var ls []Lease
			for _, row := range found.Rows {
				ls = append(ls, leaseOf(row))
			}
			if !d.Has(ResendAsFound) {
				// Each lease again only while it is still the
				// submission's (the row stays locked to the COMMIT);
				// one taken back meanwhile: a new claim (204, a new
				// request_id), the others left to expire unheard of.
				for _, l := range ls {
					res, err := tx.Exec(d.Resend(p.Now(), l.Sub, l.Token).Named("resend"))
					if err != nil {
						a.abort(p, tx, err)
						return false, false
					}
					if res.Affected != 1 {
						tx.Rollback()
						w.answered = true
						a.hand(p, w, claimAnswer{code: Code204, why: "its lease was taken back"})
						return false, true
					}
				}
				// Its unconfirmed lease counts from the COMMIT, as a new
				// lease's does (StartLease): a COMMIT held up past it must
				// not send a lease the next sweep takes at once.
				for _, l := range ls {
					tx.Queue(d.Resend(p.Now(), l.Sub, l.Token).Named("resend"))
				}
				if err := tx.Commit(); err != nil {
					a.abort(p, tx, err)
					return false, false
				}
			} else {
				tx.Commit()
			}
			a.hand(p, w, claimAnswer{code: Code200, leases: ls})
			return true, true
		}
	}
	// 2. The oldest pending submissions nobody else is claiming (one, or
	// up to claim_batch).
	if d.LegacyRules {
		tx.Queue(GlobalLock().Named("global-lock"))
	}
	picked, err := tx.Exec(PickPending(d.ClaimBatch).Named("pick-pending"))
	if err != nil {
		a.abort(p, tx, err)
		return false, false
	}
	if len(picked.Rows) == 0 {
		a.claimable = false
		tx.Rollback()
		return false, false
	}
	if !a.claimable {
		a.claimable, a.claimableAt = true, p.Mono()
	}
	// 3. Make each a lease: a fresh fencing token, lease_gen + 1.
	var ls []Lease
	for _, row := range picked.Rows {
		a.tokens++
		token := TokenFor(row, fmt.Sprintf("%s.%d.%d", a.name, a.inc, a.tokens))
		id := row.Int("id")
		res, err := tx.Exec(d.Grant(now, id, w.worker, token).Named("grant"))
		if err != nil || res.Affected != 1 {
			a.abort(p, tx, err)
			return false, false
		}
		granted := res.Rows[0]
		ls = append(ls, Lease{Sub: id, Token: token, Gen: granted.Int("lease_gen"), User: granted.Int("user_id"), Problem: granted.Int("problem_id")})
	}
	// 4. Remember the request_id's leases, start them, and commit.
	if !d.Has(NoRequestID) {
		for i, l := range ls {
			tx.Queue(RecordClaim(w.worker, w.requestID, l, i).Named("record-claim"))
		}
	}
	if d.LegacyRules {
		tx.Queue(AdvanceRound(w.worker).Named("advance-round"))
	}
	p.Point(PointBeforeCommit)
	for _, l := range ls {
		tx.Queue(d.StartLease(p.Now(), l.Sub, l.Token).Named("start-lease"))
	}
	sent := p.Mono()
	if err := tx.Commit(); err != nil {
		a.abort(p, tx, err)
		return false, false
	}
	if late := p.Mono().Sub(sent); late > d.Away() && !d.Has(ResendAsFound) {
		// The COMMIT's answer came late (the database's link slow or
		// held): the unconfirmed leases count from the commit and may
		// have run out, and been swept, before the worker could hear of
		// them. Each is sent only while it is still the submission's,
		// restarted from now, as a lease found again is (found by the
		// baseline, fixed world, heavy faults, seed 5001582: a delay of
		// up to 13 s on the database's answers to the arbiter brought a
		// grant's answer 12 s after its commit, after the sweep had
		// taken the lease back, and the worker judged a dead lease: MA2).
		for _, l := range ls {
			res, err := c.Exec(p, d.Resend(p.Now(), l.Sub, l.Token).Named("resend"))
			if err != nil || res.Affected != 1 {
				w.answered = true
				a.hand(p, w, claimAnswer{code: Code204, why: "its lease was taken back"})
				return false, true
			}
		}
	}
	p.Point(PointAfterCommit)
	if d.Has(MemoryFacts) {
		for _, l := range ls {
			a.cache[l.Sub] = l.Token
		}
	}
	// 5. Answer the worker.
	a.hand(p, w, claimAnswer{code: Code200, leases: ls, fresh: true})
	return true, true
}

// hand gives a claim's answer to its handler, which replies before the
// round goes on (an unbuffered handoff).
func (a *Arbiter) hand(p *sim.Proc, w *waitClaim, ans claimAnswer) {
	w.answer.Put(ans)
	p.Yield("claim handoff")
}

func leaseOf(row db.Row) Lease {
	return Lease{Sub: row.Int("submission_id"), Token: row.Text("lease_token"), Gen: row.Int("lease_gen"),
		User: row.Int("user_id"), Problem: row.Int("problem_id")}
}

// ---- sweep and grace ----

// grace gives the leases in flight a grace period after a start or an
// outage (A-S2), in a process of its own; the sweep and dispatch wait for it
// (A-S7: on recovery, grace first, then sweep).
func (a *Arbiter) grace(p *sim.Proc) {
	if !a.needGrace || !a.leader || !a.dbUp {
		return
	}
	if a.d.Has(NoGrace) {
		a.needGrace = false
		a.sweep(p)
		a.dispatch()
		return
	}
	p.Go("grace", func(p *sim.Proc) {
		c := a.pool.Get(p)
		began := p.Mono()
		rs, err := c.Atomic(p, named(a.d.GiveGrace(p.Now()), "grace")...)
		a.pool.Put(c)
		if late := p.Mono().Sub(began); err == nil && late > a.d.Away() && !a.d.Has(BlindSweep) {
			// The grace's answer came late: the arbiter froze, or its
			// database or the link to it stalled, after the grace was
			// given, and the leases it renewed may have run out meanwhile
			// (the grace counts from the database's now() when it ran,
			// not from this answer). It is owed again before the sweep,
			// as after any absence (found by the baseline, claim_batch 4,
			// heavy faults, seed 5001118: the arbiter froze for 93 s right
			// after sending the grace of its previous freeze, and on
			// waking swept leases the grace had renewed to 60 s past its
			// commit).
			a.state(p, "late-grace", int(late/time.Millisecond))
			a.grace(p)
			return
		}
		if err != nil {
			if db.Unknown(err) {
				a.lost(p)
			}
			// Grace is owed before any sweep or dispatch: try again.
			p.Sleep(a.d.BackoffBase, "grace retry")
			a.grace(p)
			return
		}
		a.needGrace = false
		n := 0
		for _, r := range rs {
			n += r.Affected
		}
		a.state(p, "grace", n)
		a.sweep(p)
		a.dispatch()
	})
}

// sweep reclaims expired leases (A.2 Sweep) in a process of its own. The
// source's sweep is one statement pair sent every period: "no lease is
// reclaimed while the database is unreachable, since the statement cannot
// be sent" (000, scenario 7). But a statement can be sent and wait: in a
// paused database, on a stalled link, or in an arbiter that froze. Run
// later, it judges every lease whose heartbeats could not land by the
// clock after the absence. So the sweep first asks the database for its
// time, in the sweep's own transaction, which also fixes now() for the
// UPDATEs; when that answer came more than Away after the sweep began,
// the arbiter or its database was away: the sweep rolls back and the grace
// runs first (scenario 7: "grace first, then reclaim"). Under blind-sweep
// nothing is owed for an absence (away).
func (a *Arbiter) sweep(p *sim.Proc) {
	if !a.leader || !a.dbUp || a.stalled || a.needGrace {
		return
	}
	now, began := p.Now(), p.Mono()
	p.Go("sweep", func(p *sim.Proc) {
		c := a.pool.Get(p)
		tx, _ := c.Begin(p)
		_, err := tx.Exec(db.SelectNow().Named("sweep-now"))
		if late := p.Mono().Sub(began); err == nil && (late > a.d.Away() && a.away(p, "late-db", late) || a.needGrace) {
			tx.Rollback()
			a.pool.Put(c)
			return
		}
		var rs []db.Result
		if err == nil {
			rs, err = tx.CommitBatch(a.sweepStmts(now)...)
		}
		a.pool.Put(c)
		if err != nil {
			if db.Unknown(err) {
				a.lost(p)
			} else {
				tx.Rollback()
			}
			return
		}
		if n := rs[0].Affected + rs[1].Affected; n > 0 {
			a.state(p, "sweep", n)
			a.dispatch()
		}
	})
}

// sweepStmts returns the sweep's two statements. They read the arbiter's
// clock only under arbiter-clock; otherwise they are the same every time
// and built once (statements are never modified once built).
func (a *Arbiter) sweepStmts(now clock.Time) []db.Stmt {
	if a.sweepSQL != nil {
		return a.sweepSQL
	}
	s := []db.Stmt{a.d.SweepFail(now).Named("sweep-fail"), a.d.SweepRequeue(now).Named("sweep-requeue")}
	if !a.d.Has(ArbiterClock) {
		a.sweepSQL = s
	}
	return s
}

func named(stmts []db.Stmt, name string) []db.Stmt {
	for i := range stmts {
		stmts[i] = stmts[i].Named(name)
	}
	return stmts
}

// ---- operator commands ----

// command handles schedule commands: "rejudge <id>" (the operator's rejudge)
// and "stall <duration>" (A-S8: the dispatch loop hangs, e.g. a goroutine
// stuck on a slow query, while the process still answers everything else).
func (a *Arbiter) command(p *sim.Proc, cmd sim.Cmd) {
	switch cmd.Name {
	case "rejudge":
		var id int64
		if _, err := fmt.Sscan(cmd.Arg, &id); err != nil {
			panic(fmt.Sprintf("arbiter: rejudge needs a submission id, got %q", cmd.Arg))
		}
		a.rejudge(p, id)
	case "stall":
		d, err := time.ParseDuration(cmd.Arg)
		if err != nil {
			panic(fmt.Sprintf("arbiter: stall needs a duration, got %q", cmd.Arg))
		}
		a.stalled = true
		a.state(p, "stall", int(d/time.Second))
		p.Sleep(d, "stalled")
		a.stalled = false
		a.state(p, "unstall", 0)
		a.dispatch()
	default:
		panic(fmt.Sprintf("arbiter: unknown command %q", cmd.Name))
	}
}

// rejudge is the operator's rejudge (A.2 Rejudge): a terminal submission
// goes back to pending with a new generation.
func (a *Arbiter) rejudge(p *sim.Proc, id int64) {
	callID := fmt.Sprintf("%s#rejudge.%d.%d", a.name, id, p.Now())
	if a.rejudged[callID] {
		// Two rejudges of one submission at one instant: the second
		// operation gets an id of its own.
		callID = fmt.Sprintf("%s.%d", callID, len(a.rejudged))
	}
	if a.rejudged == nil {
		a.rejudged = map[string]bool{}
	}
	a.rejudged[callID] = true
	p.Note(hist.Call{ID: callID, Client: "operator", Op: "rejudge", Sub: id})
	c := a.pool.Get(p)
	res, err := a.rejudgeOn(p, c, id)
	a.pool.Put(c)
	code := Code200
	switch {
	case err != nil:
		if db.Unknown(err) {
			a.lost(p)
			return // outcome unknown: no return is recorded
		}
		code = Code503
	case res.Affected == 0:
		code = Code410 // not terminal: nothing to rejudge
	}
	p.Note(hist.Return{ID: callID, Code: code, Sub: id, Op: "rejudge"})
	a.dispatch()
}

// rejudgeOn runs a rejudge's statements: Rejudge alone, or, under
// rejudge-clears-history, in one transaction with ClearHistory.
func (a *Arbiter) rejudgeOn(p *sim.Proc, c *db.Conn, id int64) (db.Result, error) {
	if !a.d.Has(RejudgeClearsHistory) {
		return c.Exec(p, Rejudge(id).Named("rejudge"))
	}
	tx, _ := c.Begin(p)
	res, err := tx.Exec(Rejudge(id).Named("rejudge"))
	if err == nil && res.Affected == 1 {
		_, err = tx.Exec(ClearHistory(id).Named("clear-history"))
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil && !db.Unknown(err) {
		tx.Rollback()
	}
	return res, err
}
