package db_test

// One test per semantic, run through a real sim.World with scripted client
// nodes over the network (one-way delay: hop = 1 ms). Expected values are
// PostgreSQL's documented behaviour; each test cites the manual's section.

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/sim"
)

var (
	pending = db.W("status", db.Eq, "pending")
	claim   = db.Select("jobs", pending).OrderedBy(db.Order{Col: "id"}).Limited(1)
)

func take(id int64, owner string) db.Stmt {
	return db.Update("jobs", []db.Assign{db.Set("status", "running"), db.Set("owner", owner)}, db.W("id", db.Eq, id))
}

func decr(id int64) db.Stmt {
	return db.Update("stock", []db.Assign{db.Set("n", db.Plus(db.Col("n"), db.Const(int64(-1))))}, db.W("id", db.Eq, id))
}

func stock(n int) []db.Row {
	var rows []db.Row
	for i := 1; i <= n; i++ {
		rows = append(rows, db.Row{"id": int64(i), "n": int64(100)})
	}
	return rows
}

// SQL Commands, SELECT, "The Locking Clause": "With SKIP LOCKED, any
// selected rows that cannot be immediately locked are skipped."
func TestSkipLockedTwoClaimers(t *testing.T) {
	skip := claim.Locking(db.ForUpdateSkipLocked)
	r := runBoth(t, schema, db.Config{Seed: map[string][]db.Row{"jobs": jobs(3)}}, nil, 5*sec,
		cl("a", send(0, db.Begin(), skip), send(100*ms, take(1, "a"), db.Commit())),
		cl("b", send(10*ms, db.Begin(), skip), send(200*ms, take(2, "b"), db.Commit())),
		cl("c", send(300*ms, skip)),
	)
	a, b, c := r.ans("a", 0), r.ans("b", 0), r.ans("c", 0)
	assert.Equal(t, []any{int64(1)}, rowsOf(a.last(), "id"), "the first claimer locks the first pending job")
	assert.Equal(t, []any{int64(2)}, rowsOf(b.last(), "id"), "the second claimer skips the locked job 1 and gets job 2")
	assert.Equal(t, 2*hop, b.at.Sub(b.sent), "SKIP LOCKED never waits: one round trip")
	assert.Equal(t, []any{int64(3)}, rowsOf(c.last(), "id"), "after both committed, job 3 is the only pending one")
	rows := r.node().Rows("jobs")
	require.Len(t, rows, 3)
	assert.Equal(t, []any{"a", "b", nil}, []any{rows[0]["owner"], rows[1]["owner"], rows[2]["owner"]}, "each job has at most one owner")
}

// SQL Commands, SELECT, "The Locking Clause": without SKIP LOCKED a locking
// SELECT waits; the row is re-checked after the wait (13.2.1) and one that no
// longer matches is not returned, the next one is.
func TestForUpdateWaitsAndRechecks(t *testing.T) {
	lock := claim.Locking(db.ForUpdate)
	r := runBoth(t, schema, db.Config{Seed: map[string][]db.Row{"jobs": jobs(2)}}, nil, 5*sec,
		cl("a", send(0, db.Begin(), lock), send(1*sec, take(1, "a"), db.Commit())),
		cl("b", send(10*ms, db.Begin(), lock), send(2*sec, db.Commit())),
	)
	b := r.ans("b", 0)
	assert.Equal(t, []any{int64(2)}, rowsOf(b.last(), "id"), "after a's commit job 1 is no longer pending: b gets job 2")
	assert.Equal(t, at(sec+2*hop), b.at, "b waits until a commits at 1.001s")
}

// 20.11 Client Connection Defaults, lock_timeout: "Abort any statement that
// waits longer than the specified amount of time while attempting to
// acquire a lock"; the error is 55P03 lock_not_available. In a transaction
// block the error aborts the transaction (25P02 until ROLLBACK; COMMIT rolls
// back).
func TestLockTimeout(t *testing.T) {
	r := runBoth(t, schema, db.Config{Seed: map[string][]db.Row{"stock": stock(2)}}, nil, 10*sec,
		cl("a", send(0, db.Begin(), decr(1)), send(5*sec, db.Commit())),
		cl("b", send(100*ms, db.SetLockTimeout(500*ms), decr(1)), send(800*ms, decr(2))),
		cl("c", send(100*ms, db.Begin(), db.SetLockTimeout(300*ms), decr(1)),
			send(1*sec, db.Select("stock")), send(1100*ms, db.Commit())),
	)
	b0, b1 := r.ans("b", 0), r.ans("b", 1)
	assert.Equal(t, db.CodeLockNotAvailable, b0.err(), "the update of the locked row fails with lock_not_available")
	assert.Equal(t, 500*ms+2*hop, b0.at.Sub(b0.sent), "it fails after exactly lock_timeout of waiting")
	assert.Equal(t, "", b1.err(), "another row updates at once")
	assert.Equal(t, 2*hop, b1.at.Sub(b1.sent), "another row updates without waiting")
	assert.Equal(t, db.CodeLockNotAvailable, r.ans("c", 0).err())
	assert.Equal(t, db.CodeInFailedTx, r.ans("c", 1).err(), "after an error the transaction block ignores commands")
	assert.True(t, r.ans("c", 2).last().RolledBack, "COMMIT of a failed transaction rolls back")
	assert.Equal(t, "ROLLBACK", r.ans("c", 2).last().Tag)
	rows := r.node().Rows("stock")
	assert.Equal(t, int64(99), rows[0]["n"], "a's decrement committed")
	assert.Equal(t, int64(99), rows[1]["n"], "b's decrement of row 2 committed")
}

// SQL Commands, SELECT, "The Locking Clause": "With NOWAIT, the statement
// reports an error, rather than waiting, if a selected row cannot be locked
// immediately" (55P03).
func TestNoWait(t *testing.T) {
	nowait := func(id int64) db.Stmt {
		return db.Select("stock", db.W("id", db.Eq, id)).Locking(db.ForUpdateNoWait)
	}
	r := runBoth(t, schema, db.Config{Seed: map[string][]db.Row{"stock": stock(2)}}, nil, 5*sec,
		cl("a", send(0, db.Begin(), nowait(1)), send(3*sec, db.Commit())),
		cl("b", send(100*ms, nowait(1)), send(200*ms, nowait(2)), send(4*sec, nowait(1))),
	)
	b0 := r.ans("b", 0)
	assert.Equal(t, db.CodeLockNotAvailable, b0.err(), "NOWAIT on a locked row fails")
	assert.Equal(t, 2*hop, b0.at.Sub(b0.sent), "NOWAIT fails at once")
	assert.Equal(t, "", r.ans("b", 1).err(), "NOWAIT on a free row succeeds")
	assert.Len(t, r.ans("b", 1).last().Rows, 1)
	assert.Equal(t, "", r.ans("b", 2).err(), "after a commits the row is free again")
}

// 13.2.1 Read Committed Isolation Level: an UPDATE or DELETE that finds its
// target row updated by a concurrent transaction waits for it; if it
// committed, the WHERE is re-evaluated on the updated version; if it rolled
// back, the original version is used. The manual's example: with hits 9 and
// 10, "BEGIN; UPDATE website SET hits = hits + 1;" concurrently with
// "DELETE FROM website WHERE hits = 10;" deletes nothing.
func TestReadCommittedRecheck(t *testing.T) {
	hits := []db.Row{{"id": int64(1), "hits": int64(9)}, {"id": int64(2), "hits": int64(10)}}
	inc := db.Update("jobs", []db.Assign{db.Set("hits", db.Plus(db.Col("hits"), db.Const(int64(1))))})
	del := db.Delete("jobs", db.W("hits", db.Eq, 10))
	t.Run("committed: the row no longer matches", func(t *testing.T) {
		r := runBoth(t, schema, db.Config{Seed: map[string][]db.Row{"jobs": hits}}, nil, 5*sec,
			cl("a", send(0, db.Begin(), inc), send(1*sec, db.Commit())),
			cl("b", send(100*ms, del)),
		)
		b := r.ans("b", 0)
		assert.Equal(t, "DELETE 0", b.last().Tag, "the DELETE has no effect although a hits=10 row exists before and after")
		assert.Equal(t, at(sec+2*hop), b.at, "the DELETE waited for the UPDATE's commit")
		assert.Len(t, r.node().Rows("jobs"), 2)
	})
	t.Run("rolled back: the original version is used", func(t *testing.T) {
		r := runBoth(t, schema, db.Config{Seed: map[string][]db.Row{"jobs": hits}}, nil, 5*sec,
			cl("a", send(0, db.Begin(), inc), send(1*sec, db.Rollback())),
			cl("b", send(100*ms, del)),
		)
		assert.Equal(t, "DELETE 1", r.ans("b", 0).last().Tag, "the holder rolled back: the hits=10 row is deleted")
		rows := r.node().Rows("jobs")
		require.Len(t, rows, 1)
		assert.Equal(t, int64(9), rows[0]["hits"])
	})
	t.Run("rows committed after the statement began are not seen", func(t *testing.T) {
		r := runBoth(t, schema, db.Config{Seed: map[string][]db.Row{"jobs": jobs(2)}}, nil, 5*sec,
			cl("a", send(0, db.Begin(), inc), send(1*sec, db.Commit())),
			cl("b", send(100*ms, db.Update("jobs", []db.Assign{db.Set("owner", "b")}, pending))),
			cl("c", send(200*ms, db.Insert("jobs", db.Row{"id": 3, "status": "pending"}))),
		)
		assert.Equal(t, "UPDATE 2", r.ans("b", 0).last().Tag, "the waiting UPDATE changes only the rows its snapshot saw")
		assert.Equal(t, "INSERT 0 1", r.ans("c", 0).last().Tag)
		rows := r.node().Rows("jobs")
		require.Len(t, rows, 3)
		assert.Equal(t, []any{"b", "b", nil}, []any{rows[0]["owner"], rows[1]["owner"], rows[2]["owner"]})
	})
}

// 9.27.10 Advisory Lock Functions: a session-level advisory lock "is held
// until explicitly released or the session ends"; pg_try_advisory_lock
// returns false instead of waiting. The server ends the session when its
// connection breaks (and rolls back its open transaction).
func TestAdvisoryLockReleasedOnBrokenConnection(t *testing.T) {
	sched := sim.Schedule{{At: at(1 * sec), Kind: sim.Break, Node: "a", Peer: "db"}}
	r := runBoth(t, schema, db.Config{Seed: map[string][]db.Row{"stock": stock(1)}}, sched, 5*sec,
		cl("a", send(0, db.TryAdvisoryLock(42)), send(10*ms, db.TryAdvisoryLock(42)),
			send(500*ms, db.Begin(), decr(1)), send(sec-hop/2, db.Select("stock")),
			send(3*sec, db.TryAdvisoryLock(42))),
		cl("b", send(100*ms, db.TryAdvisoryLock(42)), send(2*sec, db.TryAdvisoryLock(42)),
			send(2100*ms, db.SetLockTimeout(100*ms), decr(1)), send(2200*ms, db.AdvisoryUnlock(7))),
	)
	assert.True(t, r.ans("a", 0).last().Locked, "a takes the lock")
	assert.True(t, r.ans("a", 1).last().Locked, "a session may take its own lock again")
	assert.False(t, r.ans("b", 0).last().Locked, "b cannot take a's lock")
	a3 := r.ans("a", 3)
	assert.Equal(t, db.CodeConnectionFailure, a3.err(), "a request in flight when the connection breaks has an unknown outcome")
	assert.Equal(t, at(sec), a3.at, "the client learns of the break at once")
	assert.True(t, r.ans("b", 1).last().Locked, "after a's connection broke, the server released its lock")
	assert.Equal(t, "", r.ans("b", 2).err(), "a's open transaction was rolled back: its row lock is free")
	assert.False(t, r.ans("b", 3).last().Locked, "unlocking a lock not held returns false")
	assert.NotEmpty(t, r.ans("b", 3).last().Notice, "with a warning")
	assert.False(t, r.ans("a", 4).last().Locked, "a's new session cannot take b's lock")
	assert.Equal(t, int64(99), r.node().Rows("stock")[0]["n"], "only b's decrement committed")
}

// PREPARE TRANSACTION: "the transaction is no longer associated with the
// current session; instead, its state is fully stored on disk, and there is
// a very high probability that it can be committed successfully, even if a
// database crash occurs before the commit is requested." Its locks are
// kept. COMMIT PREPARED can be run from any session. pg_prepared_xacts
// lists it.
func TestPreparedSurvivesCrash(t *testing.T) {
	sched := sim.Schedule{{At: at(1 * sec), Kind: sim.Crash, Node: "db"}, {At: at(2 * sec), Kind: sim.Restart, Node: "db"}}
	one := db.Select("stock", db.W("id", db.Eq, 1))
	r := runBoth(t, schema, db.Config{MaxPreparedTransactions: 2, Seed: map[string][]db.Row{"stock": stock(2)}}, sched, 10*sec,
		cl("a", send(0, db.Begin(), decr(1), db.Prepare("g1")), send(10*ms, one), send(20*ms, db.Begin())),
		cl("b", send(3*sec, db.PreparedXacts()),
			send(3100*ms, db.SetLockTimeout(sec), decr(1)),
			send(5*sec, decr(2)),
			send(6*sec, db.CommitPrepared("g1")),
			send(6100*ms, one),
			send(6200*ms, db.CommitPrepared("g1"))),
	)
	a0 := r.ans("a", 0)
	assert.Equal(t, "PREPARE TRANSACTION", a0.last().Tag)
	assert.Equal(t, int64(100), r.ans("a", 1).last().Rows[0]["n"], "a prepared change is not visible")
	assert.Equal(t, "BEGIN", r.ans("a", 2).last().Tag, "after PREPARE the session has no transaction open")
	b0 := r.ans("b", 0).last()
	require.Len(t, b0.Rows, 1, "the prepared transaction survived the crash")
	assert.Equal(t, "g1", b0.Rows[0]["gid"])
	assert.Equal(t, at(hop), b0.Rows[0]["prepared"], "prepared when a's request arrived")
	assert.Equal(t, int64(3*sec), b0.Rows[0]["age"], "its age grows: now() - prepared")
	b1 := r.ans("b", 1)
	assert.Equal(t, db.CodeLockNotAvailable, b1.err(), "the prepared transaction still holds its row lock after the crash")
	assert.Equal(t, sec+2*hop, b1.at.Sub(b1.sent))
	assert.Equal(t, 2*hop, r.ans("b", 2).at.Sub(r.ans("b", 2).sent), "another row updates at once")
	assert.Equal(t, "COMMIT PREPARED", r.ans("b", 3).last().Tag, "any session can commit it")
	assert.Equal(t, int64(99), r.ans("b", 4).last().Rows[0]["n"], "the prepared change is visible after COMMIT PREPARED")
	assert.Equal(t, db.CodeUndefinedObject, r.ans("b", 5).err(), "a finished gid is unknown")
	log := r.node().CommitLog()
	require.NotEmpty(t, log)
	last := log[len(log)-1]
	assert.Equal(t, "g1", last.GID, "the commit log records the gid")
}

// PREPARE TRANSACTION and 20.4.1 max_prepared_transactions: 0 disables
// prepared transactions ("prepared transactions are disabled", 55000); a
// full table fails with 53200; a gid in use fails with 42710; an unknown gid
// with 42704. "If the PREPARE TRANSACTION command fails for any reason, it
// becomes a ROLLBACK." COMMIT PREPARED cannot run inside a transaction block
// (25001).
func TestPreparedErrors(t *testing.T) {
	t.Run("disabled", func(t *testing.T) {
		r := runBoth(t, schema, db.Config{Seed: map[string][]db.Row{"stock": stock(1)}}, nil, 5*sec,
			cl("a", send(0, db.Begin(), decr(1), db.Prepare("g")), send(10*ms, db.Select("stock"))))
		assert.Equal(t, db.CodeObjectNotInState, r.ans("a", 0).err())
		assert.Contains(t, r.ans("a", 0).resp.Err().Msg, "prepared transactions are disabled")
		assert.Equal(t, "", r.ans("a", 1).err(), "the failed PREPARE rolled back and left the block")
		assert.Equal(t, int64(100), r.ans("a", 1).last().Rows[0]["n"], "its change is gone")
	})
	t.Run("full, in use, unknown", func(t *testing.T) {
		r := runBoth(t, schema, db.Config{MaxPreparedTransactions: 1, Seed: map[string][]db.Row{"stock": stock(3)}}, nil, 5*sec,
			cl("a", send(0, db.Begin(), decr(1), db.Prepare("g")),
				send(10*ms, db.Begin(), decr(2), db.Prepare("g")),
				send(20*ms, db.Begin(), decr(3), db.Prepare("h")),
				send(30*ms, db.RollbackPrepared("nope")),
				send(40*ms, db.Begin(), db.CommitPrepared("g")),
				send(50*ms, db.Rollback(), db.RollbackPrepared("g"), db.PreparedXacts())))
		assert.Equal(t, "", r.ans("a", 0).err())
		assert.Equal(t, db.CodeDuplicateObject, r.ans("a", 1).err())
		assert.Equal(t, db.CodeTooManyPrepared, r.ans("a", 2).err())
		assert.Equal(t, db.CodeUndefinedObject, r.ans("a", 3).err())
		assert.Equal(t, db.CodeActiveTx, r.ans("a", 4).err())
		a5 := r.ans("a", 5)
		assert.Equal(t, "", a5.err())
		assert.Empty(t, a5.last().Rows, "no prepared transaction is left")
		for _, row := range r.node().Rows("stock") {
			assert.Equal(t, int64(100), row["n"], "nothing was committed")
		}
	})
}

// 13.3.4 Deadlocks and 20.12 Lock Management, deadlock_timeout: a waiter
// checks for a deadlock after deadlock_timeout; the one whose check finds
// the cycle is aborted with 40P01 and the other proceeds.
func TestDeadlock(t *testing.T) {
	r := runBoth(t, schema, db.Config{Seed: map[string][]db.Row{"stock": stock(2)}}, nil, 5*sec,
		cl("a", send(0, db.Begin(), decr(1)), send(1*sec, decr(2)), send(3*sec, db.Commit())),
		cl("b", send(500*ms, db.Begin(), decr(2)), send(1500*ms, decr(1)), send(3*sec, db.Commit())),
	)
	a1, b1 := r.ans("a", 1), r.ans("b", 1)
	assert.Equal(t, db.CodeDeadlock, a1.err(), "a waited first, so its check (at 1.001s + 1s) finds the cycle")
	assert.Equal(t, at(2*sec+2*hop), a1.at)
	assert.Equal(t, "UPDATE 1", b1.last().Tag, "b proceeds once the victim's locks are gone")
	assert.Equal(t, at(2*sec+2*hop), b1.at)
	assert.True(t, r.ans("a", 2).last().RolledBack, "the victim's transaction is aborted")
	assert.Equal(t, "COMMIT", r.ans("b", 2).last().Tag)
	rows := r.node().Rows("stock")
	assert.Equal(t, []any{int64(99), int64(99)}, []any{rows[0]["n"], rows[1]["n"]}, "only b's decrements committed")
}

// 11.6 Unique Indexes and INSERT, "ON CONFLICT Clause": a second insert of
// a key inserted by a concurrent transaction waits for it; if it commits,
// the second fails with 23505 unique_violation (or, with ON CONFLICT DO
// NOTHING, inserts nothing); if it rolls back, the second succeeds.
func TestConcurrentUniqueInsert(t *testing.T) {
	row := func(sub int64, tok string) db.Row { return db.Row{"submission_id": sub, "lease_token": tok} }
	r := runBoth(t, schema, db.Config{}, nil, 5*sec,
		cl("a", send(0, db.Begin(), db.Insert("judgings", row(101, "A"))), send(1*sec, db.Commit())),
		cl("b", send(100*ms, db.Insert("judgings", row(101, "A")))),
		cl("c", send(200*ms, db.InsertOrNothing("judgings", row(101, "A")))),
		cl("d", send(0, db.Begin(), db.Insert("judgings", row(102, "B"))), send(1*sec, db.Rollback())),
		cl("e", send(100*ms, db.Insert("judgings", row(102, "B")).WithReturning())),
	)
	b, c, e := r.ans("b", 0), r.ans("c", 0), r.ans("e", 0)
	assert.Equal(t, db.CodeUniqueViolation, b.err(), "the second insert of (101, A) violates the unique index")
	assert.Contains(t, b.resp.Err().Msg, "judgings_submission_id_lease_token_key")
	assert.Equal(t, at(sec+2*hop), b.at, "it waited for the first inserter to commit")
	assert.Equal(t, "", c.err(), "ON CONFLICT DO NOTHING does not fail")
	assert.False(t, c.last().Inserted, "and inserts nothing")
	assert.Equal(t, "INSERT 0 0", c.last().Tag)
	assert.True(t, e.last().Inserted, "the first inserter of (102, B) rolled back: the second inserts")
	assert.Equal(t, int64(4), e.last().Rows[0]["seq"], "serial values are not reused after a rollback")
	assert.Len(t, r.node().Rows("judgings"), 2)
}

// 9.9.5 Current Date/Time: "now() ... returns the start time of the
// current transaction, so [its] value does not change during the
// transaction."
func TestNowConstantInTransaction(t *testing.T) {
	setAt := func(e db.Expr) db.Stmt {
		return db.Update("jobs", []db.Assign{db.Set("at", e)}, db.W("id", db.Eq, 1)).WithReturning()
	}
	r := runBoth(t, schema, db.Config{Seed: map[string][]db.Row{"jobs": jobs(1)}}, nil, 10*sec,
		cl("a", send(1*sec, db.Begin()),
			send(3*sec, setAt(db.Now())),
			send(5*sec, db.Insert("jobs", db.Row{"at": db.Now()}).WithReturning()),
			send(6*sec, db.Commit()),
			send(7*sec, setAt(db.NowPlus(10*sec)))),
	)
	start := at(sec + hop)
	assert.Equal(t, start, r.ans("a", 1).last().Rows[0]["at"], "now() is the transaction's start, not the statement's")
	assert.Equal(t, start, r.ans("a", 2).last().Rows[0]["at"], "and stays constant within the transaction")
	assert.Equal(t, int64(2), r.ans("a", 2).last().Rows[0]["id"], "the serial column continues after the seeded ids")
	assert.Equal(t, at(7*sec+hop+10*sec), r.ans("a", 4).last().Rows[0]["at"], "an autocommit statement's now() is its own start")
}

// Durability (PostgreSQL's WAL): committed transactions survive a crash;
// open ones do not, and their clients see the connection break.
func TestCrashKeepsCommittedOnly(t *testing.T) {
	sched := sim.Schedule{{At: at(1 * sec), Kind: sim.Crash, Node: "db"}, {At: at(2 * sec), Kind: sim.Restart, Node: "db"}}
	r := runBoth(t, schema, db.Config{}, sched, 5*sec,
		cl("a", atomic(0, db.Insert("stock", db.Row{"id": 1, "n": 5}), db.Insert("stock", db.Row{"id": 2, "n": 5})),
			send(100*ms, db.Begin(), decr(1)), send(sec-hop/2, decr(2)),
			send(3*sec, db.Select("stock").OrderedBy(db.Order{Col: "id"}))),
	)
	assert.Equal(t, "INSERT 0 1", r.ans("a", 0).last().Tag)
	assert.Equal(t, db.CodeConnectionFailure, r.ans("a", 2).err(), "the client sees the break")
	assert.Equal(t, []any{int64(5), int64(5)}, rowsOf(r.ans("a", 3).last(), "n"), "the committed rows survived, the open transaction did not")
	log := r.node().CommitLog()
	require.Len(t, log, 1, "one transaction committed")
	assert.Len(t, log[0].Changes, 2)
}

// An atomic batch is one transaction: an error rolls all of it back.
func TestAtomicBatch(t *testing.T) {
	r := runBoth(t, schema, db.Config{}, nil, 5*sec,
		cl("a", atomic(0, db.Insert("stock", db.Row{"id": 1, "n": 5}), db.Insert("stock", db.Row{"id": 1, "n": 6})),
			atomic(10*ms, db.Insert("stock", db.Row{"id": 2, "n": 5})),
			send(20*ms, db.Begin()), atomic(30*ms, db.Select("stock")), send(40*ms, db.Rollback())),
	)
	a0 := r.ans("a", 0)
	require.Len(t, a0.resp.Results, 2, "execution stops at the first error")
	assert.Equal(t, db.CodeUniqueViolation, a0.err())
	assert.Equal(t, db.CodeActiveTx, r.ans("a", 3).err(), "an atomic batch is refused inside an open transaction")
	rows := r.node().Rows("stock")
	require.Len(t, rows, 1, "the failed batch left nothing")
	assert.Equal(t, int64(2), rows[0]["id"])
}

// The commit log's JSON shape, as the checkers read it from the trace.
func TestCommitLogShape(t *testing.T) {
	r := runBoth(t, schema, db.Config{Seed: map[string][]db.Row{"stock": stock(1)}}, nil, 5*sec,
		cl("a", atomic(0, decr(1), db.Insert("stock", db.Row{"id": 2, "n": 1}), db.Delete("stock", db.W("id", db.Eq, 2)))),
	)
	var commits []string
	for _, e := range r.mem.Events {
		if e.Kind == "commit" {
			commits = append(commits, string(e.DataJSON()))
		}
	}
	require.Len(t, commits, 2, "the seed and one transaction")
	assert.JSONEq(t, `{"seq":1,"tx":0,"at":0,"changes":[{"table":"stock","op":"insert","key":[1],"after":{"id":1,"n":100}}]}`, commits[0])
	assert.JSONEq(t, `{"seq":2,"tx":1,"at":1000000,"changes":[{"table":"stock","op":"update","key":[1],"before":{"id":1,"n":100},"after":{"id":1,"n":99}}]}`, commits[1],
		"an insert then delete in one transaction is no change")
	b, err := json.Marshal(r.node().CommitLog()[1])
	require.NoError(t, err)
	assert.JSONEq(t, commits[1], string(b), "the node's log and the trace agree")
}

// Durability of a key handed on within one transaction: the transaction
// deletes row 3 and gives key 3 to a row it inserted, and recovery from
// the log rebuilds what it committed, as PostgreSQL's does. Its log record
// lists the insert of key 3 before the delete of the old row 3 (changes are
// net per row, in no particular order); TestPropertyInvariants found a
// replay that applied them in that order losing the new row, in a history
// where the new row's chain came first among key 3's (this short history
// does not build that order: it checks the outcome, here and on the server).
func TestCrashKeepsAHandedOnKey(t *testing.T) {
	sched := sim.Schedule{{At: at(1 * sec), Kind: sim.Crash, Node: "db"}, {At: at(2 * sec), Kind: sim.Restart, Node: "db"}}
	seed := map[string][]db.Row{"stock": {{"id": int64(1), "n": int64(1)}, {"id": int64(3), "n": int64(9)}}}
	r := runBoth(t, schema, db.Config{Seed: seed}, sched, 5*sec,
		cl("a", atomic(0, db.Insert("stock", db.Row{"id": 2, "n": 7}), db.Delete("stock", db.W("id", db.Eq, 3)),
			db.Update("stock", []db.Assign{db.Set("id", int64(3))}, db.W("id", db.Eq, 2))),
			send(3*sec, db.Select("stock").OrderedBy(db.Order{Col: "id"}))),
	)
	assert.Equal(t, []any{int64(1), int64(3)}, rowsOf(r.ans("a", 1).last(), "id"), "rows 1 and 3 after the recovery")
	assert.Equal(t, []any{int64(1), int64(7)}, rowsOf(r.ans("a", 1).last(), "n"), "row 3 is the inserted one")
}
