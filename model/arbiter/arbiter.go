package arbiter

import (
	"fmt"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// Config configures one arbiter.
type Config struct {
	Design Design
	DB     network.Addr
}

// Crash points (A-S1).
const (
	PointBeforeCommit = "claim-before-commit"
	PointAfterCommit  = "claim-after-commit"
	PointAfterReply   = "claim-after-reply"
)

// Timer tags.
type (
	tickDispatch struct{}
	tickSweep    struct{}
	tickLeader   struct{}
	tickPing     struct{}
	holdExpired  struct {
		worker, requestID string
	}
	unstall    struct{}
	graceRetry struct{}
)

func (tickDispatch) String() string  { return "dispatch" }
func (tickSweep) String() string     { return "sweep" }
func (tickLeader) String() string    { return "leader-check" }
func (tickPing) String() string      { return "db-ping" }
func (h holdExpired) String() string { return "claim-hold " + h.requestID }
func (unstall) String() string       { return "unstall" }
func (graceRetry) String() string    { return "grace-retry" }

type cont func(env *sim.Env, d db.Done)

type conn struct {
	cl   db.Client
	busy bool
	k    cont
}

type task struct {
	name string
	run  func(env *sim.Env, c int) // starts the task on pool connection c
}

type waitClaim struct {
	worker    string
	requestID string
	from      network.Addr
	conn      network.ConnID
	no        uint64
	home      bool
	since     clock.Time
	deadline  clock.Time // when the hold expires: answered 204 if still unpaired
	busy      bool       // a claim transaction is running for it
	gone      bool       // its client hung up while the transaction ran
}

// Arbiter is one arbiter process.
type Arbiter struct {
	d    Design
	name string
	inc  int64

	lock     db.Client
	lockK    cont
	leader   bool
	lockLost bool

	pool  []*conn
	queue []task

	dbUp      bool
	pinging   bool
	needGrace bool

	waiting   []*waitClaim
	rr        int
	round     bool
	lastRound clock.Time
	lastPair  clock.Time
	claimable bool
	stalled   bool

	tokens int
	cache  map[int64]string // memory-facts: leases this process granted
}

var _ sim.Node = (*Arbiter)(nil)

// New returns the arbiter's factory.
func New(cfg Config) sim.Factory {
	return func(name string, disk *sim.Disk) sim.Node {
		a := &Arbiter{d: cfg.Design, name: name, cache: map[int64]string{}}
		if v, ok := disk.Get("incarnation"); ok {
			a.inc = v.(int64)
		}
		a.lock.DB = cfg.DB
		for i := 0; i < cfg.Design.Pool; i++ {
			a.pool = append(a.pool, &conn{cl: db.Client{DB: cfg.DB}})
		}
		return a
	}
}

// Step implements sim.Node.
func (a *Arbiter) Step(env *sim.Env, in sim.Input) {
	switch in.Kind {
	case sim.Start:
		a.inc++
		env.Disk().Put("incarnation", a.inc)
		a.ping(env)
		if a.d.Has(NoLeaderLock) {
			a.becomeLeader(env)
		} else {
			a.tryLock(env)
		}
		env.After(a.d.DispatchEvery, tickDispatch{})
		env.After(a.d.SweepEvery, tickSweep{})
	case sim.Timer:
		a.timer(env, in.Tag)
	case sim.Command:
		a.command(env, in.Cmd)
	case sim.Deliver, sim.ConnBroken:
		if r, ok := in.Msg.Body.(Request); ok && in.Kind == sim.Deliver {
			a.request(env, in.Msg.From, in.Msg.Conn, r)
			return
		}
		if done, ok := a.lock.Handle(in); ok {
			if in.Kind == sim.ConnBroken {
				// The lock's session is gone and the database released the
				// lock; the arbiter finds out at its next leader check, as a
				// process finds out about an idle connection when it next
				// uses it (A-S6: the old leader may still act as leader).
				a.lockLost = true
			}
			for _, d := range done {
				if k := a.lockK; k != nil {
					a.lockK = nil
					k(env, d)
				}
			}
			return
		}
		for _, c := range a.pool {
			if done, ok := c.cl.Handle(in); ok {
				for _, d := range done {
					if k := c.k; k != nil {
						c.k = nil
						k(env, d)
					}
				}
				return
			}
		}
		if in.Kind == sim.ConnBroken {
			a.hangup(in.Conn)
		}
	}
}

// hangup cancels the hanging claims of a client that went away (its HTTP
// connection closed or broke), as an HTTP server cancels the request: a
// claim nobody can answer must not be paired.
func (a *Arbiter) hangup(c network.ConnID) {
	var keep []*waitClaim
	for _, w := range a.waiting {
		switch {
		case w.conn != c:
			keep = append(keep, w)
		case w.busy:
			w.gone = true // removed when its transaction ends
			keep = append(keep, w)
		}
	}
	a.waiting = keep
}

func (a *Arbiter) timer(env *sim.Env, tag any) {
	switch t := tag.(type) {
	case tickDispatch:
		a.dispatch(env)
		env.After(a.d.DispatchEvery, tickDispatch{})
	case tickSweep:
		a.sweep(env)
		env.After(a.d.SweepEvery, tickSweep{})
	case tickLeader:
		if a.d.Has(NoLeaderLock) {
			return
		}
		if a.leader && a.lockLost {
			a.leader = false
			a.state(env, "follower", 0)
		}
		if !a.leader {
			a.tryLock(env)
		} else {
			env.After(a.d.LeaderRetry, tickLeader{})
		}
	case tickPing:
		a.ping(env)
	case holdExpired:
		for i, w := range a.waiting {
			if w.worker != t.worker || w.requestID != t.requestID || env.Mono() < w.deadline {
				continue
			}
			if w.busy {
				// A claim transaction is running for it; look again soon.
				w.deadline = env.Mono().Add(a.d.DispatchEvery)
				env.After(a.d.DispatchEvery, t)
				return
			}
			a.waiting = append(a.waiting[:i], a.waiting[i+1:]...)
			answer(env, w.from, w.conn, Reply{No: w.no, Op: OpClaim, Code: Code204, RequestID: w.requestID})
			return
		}
	case graceRetry:
		a.grace(env)
	case unstall:
		a.stalled = false
		a.state(env, "unstall", 0)
		a.dispatch(env)
	}
}

func (a *Arbiter) state(env *sim.Env, what string, n int) {
	if env.Recording() {
		env.Note(hist.KindState, fmt.Sprintf("%s %d", what, n), hist.State{What: what, Count: n})
	}
}

// ---- leadership ----

func (a *Arbiter) tryLock(env *sim.Env) {
	a.lockLost = false
	a.lock.Exec(env, nil, db.TryAdvisoryLock(LeaderLockKey))
	a.lockK = func(env *sim.Env, d db.Done) {
		if d.Err() == nil && len(d.Resp.Results) == 1 && d.Resp.Results[0].Locked {
			a.becomeLeader(env)
			env.After(a.d.LeaderRetry, tickLeader{})
			return
		}
		if d.Unknown() {
			a.lockLost = true
		}
		env.After(a.d.LeaderRetry, tickLeader{})
	}
}

func (a *Arbiter) becomeLeader(env *sim.Env) {
	a.leader = true
	a.needGrace = true
	a.state(env, "leader", 0)
	a.grace(env)
}

// ---- the database's reachability ----

// ping checks that the database answers on a pool connection (a pool
// reconnects by itself); when it does not, the database is unreachable and
// the arbiter answers 503 until a ping succeeds.
func (a *Arbiter) ping(env *sim.Env) {
	if a.pinging {
		return
	}
	a.pinging = true
	a.submitTask(env, task{name: "ping", run: func(env *sim.Env, c int) {
		a.exec(env, c, false, []db.Stmt{db.SetLockTimeout(0)}, func(env *sim.Env, d db.Done) {
			a.pinging = false
			a.release(env, c)
			if d.Err() != nil {
				a.down(env)
				env.After(a.d.BackoffBase, tickPing{})
				return
			}
			if !a.dbUp {
				a.dbUp = true
				a.needGrace = true
				a.state(env, "db-up", 0)
				a.grace(env)
			}
		})
	}})
}

// lost is called when a request's connection broke: the database may be
// unreachable, which a ping finds out.
func (a *Arbiter) lost(env *sim.Env) { a.ping(env) }

// down marks the database unreachable: hanging claims get 503.
func (a *Arbiter) down(env *sim.Env) {
	if !a.dbUp {
		return
	}
	a.dbUp = false
	a.state(env, "db-down", 0)
	for _, w := range a.waiting {
		if !w.busy {
			answer(env, w.from, w.conn, Reply{No: w.no, Op: OpClaim, Code: Code503, RequestID: w.requestID, Why: "database unreachable"})
		}
	}
	a.waiting = keepBusy(a.waiting)
}

func keepBusy(ws []*waitClaim) []*waitClaim {
	var out []*waitClaim
	for _, w := range ws {
		if w.busy {
			out = append(out, w)
		}
	}
	return out
}

// ---- the connection pool ----

func (a *Arbiter) submitTask(env *sim.Env, t task) {
	for i, c := range a.pool {
		if !c.busy {
			c.busy = true
			t.run(env, i)
			return
		}
	}
	a.queue = append(a.queue, t)
}

func (a *Arbiter) release(env *sim.Env, c int) {
	a.pool[c].busy = false
	a.pool[c].k = nil
	if len(a.queue) > 0 {
		t := a.queue[0]
		a.queue = a.queue[1:]
		a.pool[c].busy = true
		t.run(env, c)
	}
}

func (a *Arbiter) exec(env *sim.Env, c int, atomic bool, stmts []db.Stmt, k cont) {
	p := a.pool[c]
	p.k = k
	if atomic {
		p.cl.ExecAtomic(env, nil, stmts...)
	} else {
		p.cl.Exec(env, nil, stmts...)
	}
}

// finish ends a task: it rolls back whatever may be open, then releases the
// connection. A broken connection marks the database as possibly down.
func (a *Arbiter) finish(env *sim.Env, c int, d db.Done, then func()) {
	if d.Unknown() {
		a.release(env, c)
		a.lost(env)
		then()
		return
	}
	a.exec(env, c, false, []db.Stmt{db.Rollback()}, func(env *sim.Env, _ db.Done) {
		a.release(env, c)
		then()
	})
}

// ---- requests ----

// answer sends a reply on the connection the request came on (or as a
// datagram, for the monitor's probes).
func answer(env *sim.Env, to network.Addr, c network.ConnID, rep Reply) {
	if c != 0 {
		env.SendConn(c, rep)
		return
	}
	env.Send(to, rep)
}

func (a *Arbiter) request(env *sim.Env, from network.Addr, conn network.ConnID, r Request) {
	reply := func(rep Reply) {
		rep.No, rep.Op = r.No, r.Op
		answer(env, from, conn, rep)
	}
	if r.Op == OpProbe {
		reply(Reply{Code: Code200, Probe: ProbeInfo{Leader: a.leader, Waiting: len(a.waiting), Claimable: a.claimable, LastRound: a.lastRound, LastPair: a.lastPair}})
		return
	}
	if !a.dbUp {
		reply(Reply{Code: Code503, RequestID: r.RequestID, Sub: r.Sub, Token: r.Token, Why: "database unreachable"})
		return
	}
	switch r.Op {
	case OpClaim:
		if !a.leader {
			reply(Reply{Code: Code503, RequestID: r.RequestID, Why: "not the leader"})
			return
		}
		a.hang(env, from, conn, r)
	case OpHeartbeat:
		a.submitTask(env, task{name: "heartbeat", run: func(env *sim.Env, c int) {
			a.exec(env, c, false, []db.Stmt{a.d.Extend(env.Now(), r.Sub, r.Token, r.Worker)}, func(env *sim.Env, d db.Done) {
				a.release(env, c)
				switch {
				case d.Err() != nil:
					if d.Unknown() {
						a.lost(env)
					}
					reply(Reply{Code: Code503, Sub: r.Sub, Token: r.Token, Why: d.Err().Code})
				case d.Resp.Results[0].Affected == 1:
					reply(Reply{Code: Code200, Sub: r.Sub, Token: r.Token})
				default:
					reply(Reply{Code: Code410, Sub: r.Sub, Token: r.Token, Why: "lease gone"})
				}
			})
		}})
	case OpSubmit:
		a.submitTask(env, task{name: "submit", run: func(env *sim.Env, c int) { a.submit(env, c, r, reply) }})
	}
}

// submit records a result (A.2, A-S4, A-S5). The judging-history row is the
// idempotency key of a result: inserted first under UNIQUE (submission_id,
// lease_token) with ON CONFLICT DO NOTHING; a conflict means this very lease
// already decided the result, and the answer is the first one's, 200. Then
// the verdict is written only if the lease is still current; 0 rows is a
// stale token: roll back, 410.
func (a *Arbiter) submit(env *sim.Env, c int, r Request, reply func(Reply)) {
	fail := func(d db.Done) {
		a.finish(env, c, d, func() { reply(Reply{Code: Code503, Sub: r.Sub, Token: r.Token, Why: d.Err().Code}) })
	}
	now := env.Now()
	a.exec(env, c, false, []db.Stmt{db.Begin(), RecordJudging(r.Sub, r.Token, r.Gen, r.Worker, r.Verdict, now)}, func(env *sim.Env, d db.Done) {
		if d.Err() != nil {
			fail(d)
			return
		}
		if !d.Resp.Results[1].Inserted {
			a.finish(env, c, d, func() {
				if a.d.Has(DuplicateIsError) {
					reply(Reply{Code: Code500, Sub: r.Sub, Token: r.Token, Why: "duplicate result"})
					return
				}
				reply(Reply{Code: Code200, Sub: r.Sub, Token: r.Token, Why: "duplicate: already recorded"})
			})
			return
		}
		decide := a.d.Decide(r.Sub, r.Token, r.Worker, r.Verdict)
		if a.d.Has(MemoryFacts) && a.cache[r.Sub] == r.Token {
			decide = DecideIfCached(r.Sub, r.Verdict)
		}
		a.exec(env, c, false, []db.Stmt{decide}, func(env *sim.Env, d db.Done) {
			if d.Err() != nil {
				fail(d)
				return
			}
			if d.Resp.Results[0].Affected == 0 {
				a.finish(env, c, d, func() { reply(Reply{Code: Code410, Sub: r.Sub, Token: r.Token, Why: "stale token"}) })
				return
			}
			row := d.Resp.Results[0].Rows[0]
			commit := func() {
				a.exec(env, c, false, []db.Stmt{db.Commit()}, func(env *sim.Env, d db.Done) {
					if d.Err() != nil {
						fail(d)
						return
					}
					a.release(env, c)
					delete(a.cache, r.Sub)
					reply(Reply{Code: Code200, Sub: r.Sub, Token: r.Token})
				})
			}
			if r.Verdict != "AC" {
				commit()
				return
			}
			user, problem := row["user_id"].(int64), row["problem_id"].(int64)
			a.exec(env, c, false, []db.Stmt{a.d.CreditFirstAC(user, problem, r.Sub, now)}, func(env *sim.Env, d db.Done) {
				if d.Err() != nil {
					fail(d)
					return
				}
				if !d.Resp.Results[0].Inserted {
					commit()
					return
				}
				a.exec(env, c, false, []db.Stmt{CreditXP(user)}, func(env *sim.Env, d db.Done) {
					if d.Err() != nil {
						fail(d)
						return
					}
					commit()
				})
			})
		})
	})
}

// hang keeps a claim until it is paired or the hold expires (A.4 dispatch).
// A retry with the same request_id replaces the hanging one.
func (a *Arbiter) hang(env *sim.Env, from network.Addr, conn network.ConnID, r Request) {
	for _, w := range a.waiting {
		if w.worker == r.Worker && w.requestID == r.RequestID {
			w.from, w.conn, w.no = from, conn, r.No
			w.deadline = env.Mono().Add(a.d.ClaimHold)
			env.After(a.d.ClaimHold, holdExpired{r.Worker, r.RequestID})
			return
		}
	}
	// A worker has at most one claim hanging: a newer request replaces an
	// older one nobody is working on.
	for i, w := range a.waiting {
		if w.worker == r.Worker && !w.busy {
			a.waiting = append(a.waiting[:i], a.waiting[i+1:]...)
			break
		}
	}
	a.waiting = append(a.waiting, &waitClaim{worker: r.Worker, requestID: r.RequestID, from: from, conn: conn, no: r.No, home: r.Home, since: env.Now(),
		deadline: env.Mono().Add(a.d.ClaimHold)})
	env.After(a.d.ClaimHold, holdExpired{r.Worker, r.RequestID})
	a.dispatch(env)
}

// ---- dispatch ----

// next picks the next waiting claim: home machines first, round-robin among
// them; then the others in arrival order.
func (a *Arbiter) next() *waitClaim {
	var homes []*waitClaim
	for _, w := range a.waiting {
		if w.home && !w.busy {
			homes = append(homes, w)
		}
	}
	if len(homes) > 0 {
		a.rr++
		return homes[a.rr%len(homes)]
	}
	for _, w := range a.waiting {
		if !w.busy {
			return w
		}
	}
	return nil
}

// dispatch runs one round: look at the queue, pair, write the database. The
// probe's heartbeat (lastRound) is refreshed only when a round completes.
func (a *Arbiter) dispatch(env *sim.Env) {
	if a.round || !a.leader || !a.dbUp || a.stalled || a.needGrace {
		return
	}
	a.round = true
	a.pairNext(env)
}

func (a *Arbiter) endRound(env *sim.Env) {
	a.round = false
	a.lastRound = env.Now()
}

func (a *Arbiter) pairNext(env *sim.Env) {
	w := a.next()
	if w == nil || !a.dbUp || a.stalled {
		a.endRound(env)
		return
	}
	w.busy = true
	a.submitTask(env, task{name: "claim", run: func(env *sim.Env, c int) {
		a.claim(env, c, w, func(paired, again bool) {
			w.busy = false
			if paired || w.gone {
				a.remove(w)
			}
			if paired {
				a.lastPair = env.Now()
			}
			if again {
				a.pairNext(env)
				return
			}
			a.endRound(env)
		})
	}})
}

func (a *Arbiter) remove(w *waitClaim) {
	for i, x := range a.waiting {
		if x == w {
			a.waiting = append(a.waiting[:i], a.waiting[i+1:]...)
			return
		}
	}
}

// claim runs the claim transaction for one waiting claim (A.2 Claim). done
// reports whether the claim was answered with a lease, and whether the round
// should go on with the next waiting claim.
func (a *Arbiter) claim(env *sim.Env, c int, w *waitClaim, done func(paired, again bool)) {
	d := a.d
	now := env.Now()
	fail := func(x db.Done) { a.finish(env, c, x, func() { done(false, false) }) }
	send := func(l Lease) {
		answer(env, w.from, w.conn, Reply{No: w.no, Op: OpClaim, Code: Code200, RequestID: w.requestID, Lease: l})
	}
	stmts := []db.Stmt{db.Begin()}
	if !d.Has(NoRequestID) {
		stmts = append(stmts, FindClaim(w.worker, w.requestID))
	}
	a.exec(env, c, false, stmts, func(env *sim.Env, x db.Done) {
		if x.Err() != nil {
			fail(x)
			return
		}
		if !d.Has(NoRequestID) && len(x.Resp.Results[1].Rows) > 0 {
			// Already claimed with this request_id: the same lease again.
			row := x.Resp.Results[1].Rows[0]
			l := Lease{Sub: row["submission_id"].(int64), Token: row["lease_token"].(string), Gen: row["lease_gen"].(int64),
				User: row["user_id"].(int64), Problem: row["problem_id"].(int64)}
			a.exec(env, c, false, []db.Stmt{db.Commit()}, func(env *sim.Env, x db.Done) {
				a.release(env, c)
				send(l)
				done(true, true)
			})
			return
		}
		var pick []db.Stmt
		if d.LegacyRules {
			pick = append(pick, GlobalLock())
		}
		pick = append(pick, PickPending())
		a.exec(env, c, false, pick, func(env *sim.Env, x db.Done) {
			if x.Err() != nil {
				fail(x)
				return
			}
			rows := x.Resp.Results[len(x.Resp.Results)-1].Rows
			if len(rows) == 0 {
				a.claimable = false
				a.finish(env, c, x, func() { done(false, false) })
				return
			}
			a.claimable = true
			a.tokens++
			token := TokenFor(rows[0], fmt.Sprintf("%s.%d.%d", a.name, a.inc, a.tokens))
			id := rows[0]["id"].(int64)
			grant := []db.Stmt{d.Grant(now, id, w.worker, token)}
			a.exec(env, c, false, grant, func(env *sim.Env, x db.Done) {
				if x.Err() != nil || x.Resp.Results[0].Affected != 1 {
					fail(x)
					return
				}
				row := x.Resp.Results[0].Rows[0]
				l := Lease{Sub: id, Token: token, Gen: row["lease_gen"].(int64), User: row["user_id"].(int64), Problem: row["problem_id"].(int64)}
				var rec []db.Stmt
				if !d.Has(NoRequestID) {
					rec = append(rec, RecordClaim(w.worker, w.requestID, l))
				}
				if d.LegacyRules {
					rec = append(rec, AdvanceRound(w.worker))
				}
				if env.CrashPoint(PointBeforeCommit) {
					return
				}
				a.exec(env, c, false, append(rec, db.Commit()), func(env *sim.Env, x db.Done) {
					if x.Err() != nil {
						fail(x)
						return
					}
					a.release(env, c)
					if env.CrashPoint(PointAfterCommit) {
						return
					}
					if d.Has(MemoryFacts) {
						a.cache[id] = token
					}
					send(l)
					if env.CrashPoint(PointAfterReply) {
						return
					}
					done(true, true)
				})
			})
		})
	})
}

// ---- sweep and grace ----

func (a *Arbiter) grace(env *sim.Env) {
	if !a.needGrace || !a.leader || !a.dbUp {
		return
	}
	if a.d.Has(NoGrace) {
		a.needGrace = false
		a.sweep(env) // A-S7: on recovery, grace first, then sweep
		a.dispatch(env)
		return
	}
	a.submitTask(env, task{name: "grace", run: func(env *sim.Env, c int) {
		a.exec(env, c, true, a.d.GiveGrace(env.Now()), func(env *sim.Env, x db.Done) {
			a.release(env, c)
			if x.Err() != nil {
				if x.Unknown() {
					a.lost(env)
				}
				// Grace is owed before any sweep or dispatch: try again.
				env.After(a.d.BackoffBase, graceRetry{})
				return
			}
			a.needGrace = false
			n := 0
			for _, r := range x.Resp.Results {
				n += r.Affected
			}
			a.state(env, "grace", n)
			a.sweep(env) // A-S7: on recovery, grace first, then sweep
			a.dispatch(env)
		})
	}})
}

// sweep reclaims expired leases (A.2 Sweep): grace first, then sweep.
func (a *Arbiter) sweep(env *sim.Env) {
	if !a.leader || !a.dbUp || a.stalled || a.needGrace {
		return
	}
	now := env.Now()
	a.submitTask(env, task{name: "sweep", run: func(env *sim.Env, c int) {
		a.exec(env, c, true, []db.Stmt{a.d.SweepFail(now), a.d.SweepRequeue(now)}, func(env *sim.Env, x db.Done) {
			a.release(env, c)
			if x.Err() != nil {
				if x.Unknown() {
					a.lost(env)
				}
				return
			}
			if n := x.Resp.Results[0].Affected + x.Resp.Results[1].Affected; n > 0 {
				a.state(env, "sweep", n)
				a.dispatch(env)
			}
		})
	}})
}

// ---- operator commands ----

// command handles schedule commands: "rejudge <id>" (the operator's rejudge)
// and "stall <duration>" (A-S8: the dispatch loop hangs, e.g. a goroutine
// stuck on a slow query, while the process still answers everything else).
func (a *Arbiter) command(env *sim.Env, cmd sim.Cmd) {
	switch cmd.Name {
	case "rejudge":
		var id int64
		if _, err := fmt.Sscan(cmd.Arg, &id); err != nil {
			panic(fmt.Sprintf("arbiter: rejudge needs a submission id, got %q", cmd.Arg))
		}
		callID := fmt.Sprintf("%s#rejudge.%d.%d", a.name, id, env.Now())
		if env.Recording() {
			env.Note(hist.KindCall, "rejudge "+cmd.Arg, hist.Call{ID: callID, Client: "operator", Op: "rejudge", Sub: id})
		}
		a.submitTask(env, task{name: "rejudge", run: func(env *sim.Env, c int) {
			a.exec(env, c, false, []db.Stmt{Rejudge(id)}, func(env *sim.Env, x db.Done) {
				a.release(env, c)
				code := Code200
				switch {
				case x.Err() != nil:
					if x.Unknown() {
						a.lost(env)
						return // outcome unknown: no return is recorded
					}
					code = Code503
				case x.Resp.Results[0].Affected == 0:
					code = Code410 // not terminal: nothing to rejudge
				}
				if env.Recording() {
					env.Note(hist.KindReturn, fmt.Sprintf("rejudge %d -> %d", id, code), hist.Return{ID: callID, Code: code, Sub: id})
				}
				a.dispatch(env)
			})
		}})
	case "stall":
		d, err := time.ParseDuration(cmd.Arg)
		if err != nil {
			panic(fmt.Sprintf("arbiter: stall needs a duration, got %q", cmd.Arg))
		}
		a.stalled = true
		a.state(env, "stall", int(d/time.Second))
		env.After(d, unstall{})
	default:
		panic(fmt.Sprintf("arbiter: unknown command %q", cmd.Name))
	}
}
