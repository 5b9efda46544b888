package judge

// Every write of system A is here, one function each, with the condition
// docs/systems.md gives it (A.0 principle 2: every write is conditional). A knob
// changes a condition at the one place it lives; there is no copied code
// path.

import (
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
)

// nowPlus is "now() + d": the database's clock, or the arbiter's own clock
// under the arbiter-clock knob (lease expiry judged by the arbiter).
func (d Design) nowPlus(arbiterNow clock.Time, dur time.Duration) db.Expr {
	if d.Has(ArbiterClock) {
		return db.Const(arbiterNow.Add(dur))
	}
	return db.NowPlus(dur)
}

// FindClaim looks up an earlier claim of (worker, request_id): the idempotent
// claim (A.2); one row per lease it granted. Under no-request-id the claim
// is never looked up; under claim-by-request-id-only it is looked up by
// request_id alone, so a request id another worker used finds that
// worker's lease.
func (d Design) FindClaim(worker, requestID string) db.Stmt {
	if d.Has(ClaimByRequestIDOnly) {
		return db.Select(TClaims, db.W("request_id", db.Eq, requestID)).OrderedBy(db.Order{Col: "submission_id"})
	}
	return db.Select(TClaims, db.W("worker_id", db.Eq, worker), db.W("request_id", db.Eq, requestID)).OrderedBy(db.Order{Col: "submission_id"})
}

// Resend renews a lease a retried claim found by its request_id, as it is
// sent again (A-S1: "领过就把同一张租约再发一遍", the same lease sent
// again): only while it is still the submission's (status judging, this
// token), and with its unconfirmed lease counted again from this send,
// the first its worker can hear of it; greatest() keeps a longer expiry (a
// lease already confirmed, or given the grace). The claim runs it once as
// its check, which locks the row, and again with its COMMIT, as a new
// lease's StartLease goes, so the unconfirmed lease counts from the
// COMMIT. No row: the sweep took the lease back (its unconfirmed lease ran
// out while the retry waited) and the claim must not hand it out. Under
// resend-as-found the claim sends what it found, as found, and never asks.
func (d Design) Resend(arbiterNow clock.Time, id int64, token string) db.Stmt {
	return db.Update(TSubmissions, []db.Assign{db.Set("lease_expires_at", db.Greatest(db.Col("lease_expires_at"), d.grantExpiry(arbiterNow, d.firstLease())))},
		db.W("id", db.Eq, id), db.W("status", db.Eq, StatusJudging), db.W("lease_token", db.Eq, token))
}

// GlobalLock takes the old scheme's global lock: the shared round row, FOR
// UPDATE (A-S9: the arbiter follows the old rules while legacy workers run).
func GlobalLock() db.Stmt {
	return db.Select(TDispatch, db.W("id", db.Eq, int64(1))).Locking(db.ForUpdate)
}

// AdvanceRound moves the shared round row on.
func AdvanceRound(worker string) db.Stmt {
	return db.Update(TDispatch, []db.Assign{db.Set("round", db.Plus(db.Col("round"), db.Const(int64(1)))), db.Set("last_worker", worker)},
		db.W("id", db.Eq, int64(1)))
}

// PickPending picks the n oldest pending submissions nobody else is
// claiming: FOR UPDATE SKIP LOCKED (n is claim_batch; the source's claim
// takes one).
func PickPending(n int) db.Stmt {
	return db.Select(TSubmissions, db.W("status", db.Eq, StatusPending)).
		OrderedBy(db.Order{Col: "id"}).Limited(n).Locking(db.ForUpdateSkipLocked)
}

// TokenFor returns the lease token a claim gives a picked row: a new one,
// unless the row still carries one. In the correct design a pending row never
// carries a token (the sweep and rejudge void it), so every claim makes a new
// token; under reclaim-keeps-token the swept row keeps its token and the next
// owner gets the old owner's token.
func TokenFor(row db.Row, fresh string) string {
	if t, ok := row["lease_token"].(string); ok && t != "" {
		return t
	}
	return fresh
}

// Grant turns a picked pending row into a lease: status judging, the token,
// lease_gen + 1, judge_attempts + 1, and the unconfirmed lease (A.2: 10 s;
// under long-first-lease the full lease). Conditional on the row still being
// pending.
func (d Design) Grant(arbiterNow clock.Time, id int64, worker, token string) db.Stmt {
	first := d.firstLease()
	return db.Update(TSubmissions, []db.Assign{
		db.Set("status", StatusJudging),
		db.Set("worker_id", worker),
		db.Set("lease_token", token),
		db.Set("lease_gen", db.Plus(db.Col("lease_gen"), db.Const(int64(1)))),
		db.Set("judge_attempts", d.attemptAtGrant()),
		db.Set("lease_expires_at", d.grantExpiry(arbiterNow, first)),
		db.Set("lease_confirmed", false),
	}, db.W("id", db.Eq, id), db.W("status", db.Eq, StatusPending)).WithReturning()
}

func (d Design) firstLease() time.Duration {
	if d.Has(LongFirstLease) {
		return d.Lease
	}
	return d.UnconfirmedLease
}

// StartLease sets a new lease's expiry again as its claim commits (it goes
// with the COMMIT): the unconfirmed lease counts from the commit, when the
// lease can first be heard of. A claim transaction held up between its
// grant and its COMMIT (the arbiter frozen there) would otherwise commit a
// lease already expired, which a retried claim then hands out dead: its
// worker starts judging and is refused at its first heartbeat (MA2,
// explore seed 1479).
func (d Design) StartLease(arbiterNow clock.Time, id int64, token string) db.Stmt {
	return db.Update(TSubmissions, []db.Assign{db.Set("lease_expires_at", d.grantExpiry(arbiterNow, d.firstLease()))},
		db.W("id", db.Eq, id), db.W("lease_token", db.Eq, token))
}

// attemptAtGrant and attemptAtConfirm are where judge_attempts counts: an
// attempt is a lease its worker confirmed (its first heartbeat), "先确认、再算数"
// (confirm first, then count): a lease nobody heard of (its claim's reply
// lost, its transaction held up past the unconfirmed lease, its worker gone
// before the reply) is reclaimed after the unconfirmed lease without
// spending one of max_attempts, so that only genuine worker failures lead to
// system_error (MA3). Under attempts-at-grant every grant counts.
func (d Design) attemptAtGrant() db.Expr {
	if d.Has(AttemptsAtGrant) {
		return db.Plus(db.Col("judge_attempts"), db.Const(int64(1)))
	}
	return db.Col("judge_attempts")
}

func (d Design) attemptAtConfirm() db.Expr {
	if d.Has(AttemptsAtGrant) {
		return db.Col("judge_attempts")
	}
	return db.Case(db.Col("lease_confirmed"), db.Col("judge_attempts"), db.Plus(db.Col("judge_attempts"), db.Const(int64(1))))
}

// grantExpiry is a new lease's expiry: statement_timestamp() + d, the
// grant's own statement's time. The claim transaction can be held up
// between its BEGIN and the grant (its pick waits on a lock, the arbiter
// stalls, the network holds its statements); PostgreSQL's now() is the
// transaction's start, so "now() + 10 s" would grant a lease already
// expired, reclaimed at once with nobody judging it: the submission waits a
// sweep period more for nothing (and, were attempts counted at the grant,
// one of them spent).
func (d Design) grantExpiry(arbiterNow clock.Time, dur time.Duration) db.Expr {
	if d.Has(ArbiterClock) {
		return db.Const(arbiterNow.Add(dur))
	}
	return db.StatementNowPlus(dur)
}

// RecordClaim records (worker, request_id) -> lease, so a retried claim gets
// the same lease.
func RecordClaim(worker, requestID string, l Lease, slot int) db.Stmt {
	return db.Insert(TClaims, db.Row{"worker_id": worker, "request_id": requestID, "submission_id": l.Sub, "lease_token": l.Token,
		"lease_gen": l.Gen, "user_id": l.User, "problem_id": l.Problem, "slot": int64(slot)})
}

// leaseHolder is the condition that a write comes from the lease's current
// holder: status judging and this token (A.0 principle 2). The knobs change
// it here: fence-by-worker-id checks the worker instead of the token;
// unconditional-writes drops it.
func (d Design) leaseHolder(id int64, token, worker string) db.Where {
	switch {
	case d.Has(UnconditionalWrites):
		return db.Where{db.W("id", db.Eq, id)}
	case d.Has(FenceByWorkerID):
		return db.Where{db.W("id", db.Eq, id), db.W("status", db.Eq, StatusJudging), db.W("worker_id", db.Eq, worker)}
	}
	return db.Where{db.W("id", db.Eq, id), db.W("status", db.Eq, StatusJudging), db.W("lease_token", db.Eq, token)}
}

// Extend is the heartbeat: it extends a lease to the full lease: the first heartbeat confirms an
// unconfirmed lease. 0 rows: the lease is gone (410). Under
// heartbeat-by-worker-id it renews whatever lease the worker_id holds, so
// an old process of that id keeps its stale lease alive (and another
// process's).
func (d Design) Extend(arbiterNow clock.Time, id int64, token, worker string) db.Stmt {
	s := db.Update(TSubmissions, []db.Assign{db.Set("lease_expires_at", d.nowPlus(arbiterNow, d.Lease)),
		db.Set("judge_attempts", d.attemptAtConfirm()), db.Set("lease_confirmed", true)})
	s.Where = d.leaseHolder(id, token, worker)
	if d.Has(HeartbeatByWorkerID) {
		s.Where = db.Where{db.W("id", db.Eq, id), db.W("status", db.Eq, StatusJudging), db.W("worker_id", db.Eq, worker)}
	}
	return s
}

// RecordJudging appends the judging-history row that says which lease decided
// the result. With UNIQUE (submission_id, lease_token) and ON CONFLICT DO
// NOTHING it is the idempotency key of a result: a duplicate submit inserts
// nothing and is answered as the first was (A-S4, the same rule as system B's
// idempotency keys).
// A legacy worker (no lease) records a NULL token: NULLs are distinct under
// the unique index, so each of its decisions gets its own row.
func RecordJudging(id int64, token string, gen int64, worker, verdict string, at clock.Time) db.Stmt {
	var tok db.Value = token
	if token == "" {
		tok = nil
	}
	return db.InsertOrNothing(TJudgings, db.Row{"submission_id": id, "lease_token": tok, "lease_gen": gen, "worker_id": worker, "verdict": verdict, "at": at})
}

// Decide sets the verdict, only if the writer still holds the lease. 0 rows:
// a stale token (410).
func (d Design) Decide(id int64, token, worker, verdict string) db.Stmt {
	s := db.Update(TSubmissions, []db.Assign{db.Set("status", verdict), db.Set("lease_expires_at", nil)})
	s.Where = d.leaseHolder(id, token, worker)
	return s.WithReturning()
}

// DecideIfCached is the write of the memory-facts knob: the arbiter trusted
// its in-memory cache of the leases it granted, so it writes with no
// condition on the database's state.
func DecideIfCached(id int64, verdict string) db.Stmt {
	return db.Update(TSubmissions, []db.Assign{db.Set("status", verdict), db.Set("lease_expires_at", nil)}, db.W("id", db.Eq, id)).WithReturning()
}

// CreditFirstAC records a user's first pass of a problem: ON CONFLICT DO
// NOTHING over UNIQUE (user_id, problem_id), so it counts once however many
// times results are submitted or rejudged. Under credit-without-on-conflict it
// is a plain insert into a table without that constraint.
func (d Design) CreditFirstAC(user, problem, id int64, at clock.Time) db.Stmt {
	row := db.Row{"user_id": user, "problem_id": problem, "submission_id": id, "at": at}
	if d.Has(CreditWithoutOnConflict) {
		return db.Insert(TFirstAC, row)
	}
	return db.InsertOrNothing(TFirstAC, row)
}

// CreditXP adds the experience of a first AC; run only when CreditFirstAC
// inserted a row.
func CreditXP(user int64) db.Stmt {
	return db.Update(TUsers, []db.Assign{db.Set("xp", db.Plus(db.Col("xp"), db.Const(int64(XPPerFirstAC))))}, db.W("id", db.Eq, user))
}

// expired is the sweep's condition: the lease ran out by the database's
// now() (A.2: never the arbiter's clock, except under arbiter-clock). Under
// the old rules (A-S9) only leases the arbiter granted are swept: rows claimed
// by legacy workers carry no token.
func (d Design) expired(arbiterNow clock.Time) db.Where {
	w := db.Where{db.W("status", db.Eq, StatusJudging)}
	if d.Has(ArbiterClock) {
		w = append(w, db.W("lease_expires_at", db.Lt, arbiterNow))
	} else {
		w = append(w, db.W("lease_expires_at", db.Lt, db.Now()))
	}
	return w
}

// SweepFail turns expired leases that used their last attempt into
// system_error.
func (d Design) SweepFail(arbiterNow clock.Time) db.Stmt {
	s := db.Update(TSubmissions, []db.Assign{db.Set("status", StatusSystemError), db.Set("lease_token", nil), db.Set("lease_expires_at", nil)})
	s.Where = append(d.expired(arbiterNow), db.W("judge_attempts", db.Ge, int64(d.MaxAttempts)))
	return s.WithReturning()
}

// SweepRequeue puts the other expired leases back to pending and voids their
// token, so the next claim makes a new one. Under reclaim-keeps-token the
// token is left in the row.
func (d Design) SweepRequeue(arbiterNow clock.Time) db.Stmt {
	set := []db.Assign{db.Set("status", StatusPending), db.Set("worker_id", nil), db.Set("lease_expires_at", nil)}
	if !d.Has(ReclaimKeepsToken) {
		set = append(set, db.Set("lease_token", nil))
	}
	s := db.Update(TSubmissions, set)
	s.Where = d.expired(arbiterNow)
	return s.WithReturning()
}

// GiveGrace gives every lease in flight a full lease from now (A-S2): the
// time the arbiter was away is not the workers' fault. By default the
// source's statement, as is:
//
//	UPDATE submissions SET lease_expires_at = greatest(lease_expires_at, now() + interval '60 seconds')
//	WHERE status = 'judging'
//
// Under confirm_aware_grace an unconfirmed lease gets only the unconfirmed
// lease again (a second statement). Rows without a lease (a direct-mode
// worker's) are left alone unless grace-all-judging (graceWhere).
func (d Design) GiveGrace(arbiterNow clock.Time) []db.Stmt {
	grace := func(dur time.Duration, extra ...db.Cond) db.Stmt {
		return db.Update(TSubmissions, []db.Assign{db.Set("lease_expires_at", db.Greatest(db.Col("lease_expires_at"), d.nowPlus(arbiterNow, dur)))},
			append(d.graceWhere(), extra...)...)
	}
	if !d.ConfirmAwareGrace {
		return []db.Stmt{grace(d.Grace)}
	}
	return []db.Stmt{grace(d.Grace, db.W("lease_confirmed", db.Eq, true)), grace(d.UnconfirmedLease, db.W("lease_confirmed", db.Eq, false))}
}

func (d Design) graceWhere() db.Where {
	w := db.Where{db.W("status", db.Eq, StatusJudging)}
	if !d.Has(GraceAllJudging) {
		// A-S9: rows claimed by a direct-mode worker have no lease;
		// greatest() ignores NULL, so the source's statement would hand
		// them one and the sweep would later reclaim a job that worker
		// still judges. Not only under the old rules (step 2): a worker
		// switched back to direct after step 3 or 4 claims such rows too
		// (the source: "任何一步出问题,把 worker 的配置改回「直连数据库」
		// 就退回去了", 000 line 95).
		w = append(w, db.W("lease_expires_at", db.IsNotNull, nil))
	}
	return w
}

// Rejudge is the only way out of a terminal state: back to pending with
// lease_gen + 1, so every older token is void.
func Rejudge(id int64) db.Stmt {
	return db.Update(TSubmissions, []db.Assign{
		db.Set("status", StatusPending), db.Set("worker_id", nil), db.Set("lease_token", nil), db.Set("lease_expires_at", nil),
		db.Set("lease_gen", db.Plus(db.Col("lease_gen"), db.Const(int64(1)))), db.Set("judge_attempts", int64(0)),
	}, db.W("id", db.Eq, id), db.W("status", db.Ne, StatusPending), db.W("status", db.Ne, StatusJudging)).WithReturning()
}

// ClearHistory is what a rejudge adds under rejudge-clears-history: the
// submission's judging history deleted, a fresh start. The source keeps
// the history append-only ("评测历史只追加、不修改", 000 scenario 5), so
// that each generation's result and who decided it can be read back.
func ClearHistory(id int64) db.Stmt {
	return db.Delete(TJudgings, db.W("submission_id", db.Eq, id))
}

// ReadStatus reads a submission (a user looking at the result page).
func ReadStatus(id int64) db.Stmt {
	return db.Select(TSubmissions, db.W("id", db.Eq, id))
}

// ---- the old scheme (A-S9): workers that claim directly from the database ----

// LegacyClaim is the old workers' claim: under the global lock (see
// GlobalLock) the picked row becomes judging and belongs to the worker. Old
// workers ignore the lease columns: no token, no new generation, no expiry.
func LegacyClaim(id int64, worker string) db.Stmt {
	return db.Update(TSubmissions, []db.Assign{db.Set("status", StatusJudging), db.Set("worker_id", worker),
		db.Set("judge_attempts", db.Plus(db.Col("judge_attempts"), db.Const(int64(1))))},
		db.W("id", db.Eq, id), db.W("status", db.Eq, StatusPending)).WithReturning()
}

// LegacyDecide is the old workers' result write: conditional on the row
// still being judging and theirs (the old scheme fenced by worker_id).
func LegacyDecide(id int64, worker, verdict string) db.Stmt {
	return db.Update(TSubmissions, []db.Assign{db.Set("status", verdict)},
		db.W("id", db.Eq, id), db.W("status", db.Eq, StatusJudging), db.W("worker_id", db.Eq, worker), db.W("lease_token", db.IsNull, nil)).WithReturning()
}
