package pgexec_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/internal/pgexec"
	"github.com/fencesim/fencesim/internal/pgtest"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/model/judge"
)

func at(d time.Duration) clock.Time { return clock.Time(d) }

func judgeSeed() map[string][]db.Row {
	return map[string][]db.Row{
		judge.TSubmissions: {
			{"id": int64(1), "user_id": int64(7), "problem_id": int64(3)},
			{"id": int64(2), "user_id": int64(7), "problem_id": int64(4)},
			{"id": int64(3), "user_id": int64(8), "problem_id": int64(3)},
		},
		judge.TUsers:    {{"id": int64(7)}, {"id": int64(8)}},
		judge.TDispatch: {{"id": int64(1)}},
	}
}

// The arbiter's statements (model/judge/sql.go), in the shapes its
// transactions send them, answered by the server as by the model: rows,
// tags, Affected, Inserted, Locked, RolledBack, notices, error codes
// (23505 in an atomic batch, 25001, 25P02, 42P01), prepared transactions.
func TestRunArbiterStatementsAsTheModel(t *testing.T) {
	pgtest.Require(t)
	d := judge.Default()
	schema := judge.Schema(d)
	lease := judge.Lease{Sub: 1, Token: "t1", Gen: 1, User: 7, Problem: 3}
	now := at(0) // the arbiter-clock knob is off: its clock is not used
	const gap = 300 * time.Millisecond
	seq := []step{
		on(0, db.Begin(), judge.PickPending(2)),
		on(0, d.Grant(now, 1, "w1", "t1"), judge.RecordClaim("w1", "r1", lease, 0), db.Commit()),
		on(0, d.FindClaim("w1", "r1")),
		atomicOn(1, judge.RecordClaim("w1", "r1", lease, 0)), // 23505 on the claim's unique index
		on(0, d.Extend(now, 1, "t1", "w1")),                  // the first heartbeat
		on(0, d.Extend(now, 1, "stale", "w1")),               // 0 rows: 410
		atomicOn(0, judge.RecordJudging(1, "t1", 1, "w1", "AC", at(2*time.Second)), d.Decide(1, "t1", "w1", "AC"),
			d.CreditFirstAC(7, 3, 1, at(2*time.Second)), judge.CreditXP(7)),
		atomicOn(1, judge.RecordJudging(1, "t1", 1, "w1", "AC", at(2*time.Second))), // ON CONFLICT DO NOTHING: not inserted
		on(1, d.Decide(1, "t1", "w1", "AC")),                                        // stale: 0 rows
		on(0, db.Begin(), judge.PickPending(1)),
		on(0, d.Grant(now, 2, "w2", "t2"), db.Commit()),
		on(1, d.GiveGrace(now)...),
		on(1, d.SweepFail(now), d.SweepRequeue(now)),
		on(0, judge.Rejudge(1), judge.ReadStatus(1)),
		on(0, db.Begin(), judge.ClearHistory(1), db.Commit()), // rejudge-clears-history: DELETE 1
		on(0, db.Begin(), judge.GlobalLock(), judge.AdvanceRound("w2"), db.Commit()),
		on(0, db.TryAdvisoryLock(judge.LeaderLockKey)),
		on(1, db.TryAdvisoryLock(judge.LeaderLockKey)), // held by s0: false
		on(1, db.AdvisoryUnlock(judge.LeaderLockKey)),  // not held: false, a warning
		on(0, db.AdvisoryUnlock(judge.LeaderLockKey), db.AdvisoryUnlock(judge.LeaderLockKey)),
		on(0, db.Commit()), // no transaction: a warning
		on(0, db.Begin(), db.Begin(), db.Select("nosuch")),
		on(0, judge.ReadStatus(2)),       // 25P02
		atomicOn(0, judge.ReadStatus(2)), // 25001: the session's transaction is open (failed)
		on(0, db.Commit()),               // ROLLBACK: RolledBack
		on(1, db.Begin(), judge.CreditXP(8), db.Prepare("g1")),
		on(0, db.PreparedXacts()),
		on(0, db.CommitPrepared("g1"), db.CommitPrepared("g1")), // 42704 the second time
		atomicOn(1, judge.CreditXP(8), db.Prepare("g2")),        // no COMMIT after a final PREPARE
		on(1, db.RollbackPrepared("g2"), db.Select(judge.TUsers).OrderedBy(db.Order{Col: "id"})),
	}
	cfg := db.Config{MaxPreparedTransactions: 20, Seed: judgeSeed()}
	srv := newServer(t, schema, cfg.Seed, false, pgexec.Options{})
	server := srv.run(seq, gap)
	model, _ := modelRun(t, schema, cfg, seq, gap)
	compare(t, seq, model, server)
}

// Two sessions: a unique violation, lock_timeout (55P03) on a row another
// session's transaction holds, NOWAIT, SKIP LOCKED, advisory locks held
// and released when a session ends.
func TestRunTwoSessionsAsTheModel(t *testing.T) {
	pgtest.Require(t)
	kv := db.Table{Name: "kv", Columns: []db.Column{{Name: "k", Type: db.Int}, {Name: "v", Type: db.Int, NotNull: true, Default: int64(0)}}, PrimaryKey: []string{"k"}}
	schema := db.Schema{Tables: []db.Table{kv}}
	inc := db.Update("kv", []db.Assign{db.Set("v", db.Plus(db.Col("v"), db.Const(int64(1))))}, db.W("k", db.Eq, 1))
	const gap = 400 * time.Millisecond
	seq := []step{
		on(0, db.Insert("kv", db.Row{"k": 1})),
		on(1, db.Insert("kv", db.Row{"k": 1})), // 23505
		on(1, db.InsertOrNothing("kv", db.Row{"k": 1})),
		on(0, db.Begin(), inc, db.TryAdvisoryLock(9)),
		on(1, db.SetLockTimeout(150*time.Millisecond), inc),                           // waits 150 ms: 55P03
		on(1, db.Select("kv", db.W("k", db.Eq, 1)).Locking(db.ForUpdateNoWait)),       // 55P03 at once
		on(1, db.Select("kv").Locking(db.ForUpdateSkipLocked), db.TryAdvisoryLock(9)), // no rows; false
		on(0, db.Commit(), db.Select("kv")),
		on(1, inc, db.TryAdvisoryLock(9)), // the advisory lock is still s0's: false
	}
	srv := newServer(t, schema, nil, false, pgexec.Options{})
	server := srv.run(seq, gap)
	model, _ := modelRun(t, schema, db.Config{}, seq, gap)
	compare(t, seq, model, server)
	assert.Equal(t, db.CodeLockNotAvailable, server[4].Err().Code, "lock_timeout on the server")
	assert.False(t, server[8].Results[1].Locked, "s0 still holds advisory lock 9")

	// s0 ends: its advisory lock is released.
	srv.sess[0].Close()
	waitGone(t, srv, 0)
	r := srv.session(1).Run(t.Context(), db.Request{Stmts: []db.Stmt{db.TryAdvisoryLock(9)}})
	require.Nil(t, r.Err())
	assert.True(t, r.Results[0].Locked, "the closed session's advisory lock is free")
}

// waitGone waits until the backends of every closed session have exited.
func waitGone(t *testing.T, srv *server, _ int) {
	t.Helper()
	for i := 0; i < 500; i++ {
		var n int
		require.NoError(t, srv.admin.QueryRow(t.Context(),
			`SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE $1 || '/s0'`, t.Name()).Scan(&n))
		if n == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("session s0's backend still there after 5 s")
}

// A session whose backend is terminated (pg_terminate_backend) in an open
// transaction answers with the model's client's 08006, is dead, and its
// transaction is rolled back; a closed session answers 08006 at once.
func TestKilledSessionIsLost(t *testing.T) {
	pgtest.Require(t)
	kv := db.Table{Name: "kv", Columns: []db.Column{{Name: "k", Type: db.Int}, {Name: "v", Type: db.Int}}, PrimaryKey: []string{"k"}}
	schema := db.Schema{Tables: []db.Table{kv}}
	srv := newServer(t, schema, map[string][]db.Row{"kv": {{"k": 1, "v": 0}}}, false, pgexec.Options{})
	s := srv.session(0)
	ctx := t.Context()
	r := s.Run(ctx, db.Request{ID: 1, Stmts: []db.Stmt{db.Begin(), db.Update("kv", []db.Assign{db.Set("v", 5)}, db.W("k", db.Eq, 1))}})
	require.Nil(t, r.Err(), "begin and update")
	require.False(t, s.Dead())

	pid := s.Conn().PgConn().PID()
	pgtest.MustExec(t, ctx, srv.admin, "SELECT pg_terminate_backend($1, 5000)", pid)
	r = s.Run(ctx, db.Request{ID: 2, Stmts: []db.Stmt{db.Select("kv"), db.Commit()}})
	require.Len(t, r.Results, 1, "a lost request has one result, as the model's client gives it: %s", r)
	assert.Equal(t, uint64(2), r.ID)
	assert.Equal(t, db.CodeConnectionFailure, r.Err().Code, "the outcome is unknown: %s", r)
	assert.True(t, s.Dead(), "the session is dead")
	r = s.Run(ctx, db.Request{ID: 3, Stmts: []db.Stmt{db.Select("kv")}})
	assert.Equal(t, db.CodeConnectionFailure, r.Err().Code, "a dead session answers 08006: %s", r)

	fresh := srv.session(1)
	r = fresh.Run(ctx, db.Request{Stmts: []db.Stmt{db.Select("kv")}})
	require.Nil(t, r.Err())
	assert.Equal(t, []db.Row{{"k": int64(1), "v": int64(0)}}, r.Results[0].Rows, "the killed session's update rolled back")

	fresh.Close()
	assert.True(t, fresh.Dead(), "a closed session is dead")
	r = fresh.Run(ctx, db.Request{Stmts: []db.Stmt{db.Select("kv")}})
	assert.Equal(t, db.CodeConnectionFailure, r.Err().Code, "a closed session answers 08006: %s", r)
}

// A request abandoned while it waits for a lock (its ctx ends) has an
// unknown outcome: 08006, and the session is dead (pgx closes the
// connection), so the waiting statement's transaction cannot commit later.
func TestCancelledWaitIsLost(t *testing.T) {
	pgtest.Require(t)
	kv := db.Table{Name: "kv", Columns: []db.Column{{Name: "k", Type: db.Int}, {Name: "v", Type: db.Int}}, PrimaryKey: []string{"k"}}
	schema := db.Schema{Tables: []db.Table{kv}}
	srv := newServer(t, schema, map[string][]db.Row{"kv": {{"k": 1, "v": 0}}}, false, pgexec.Options{})
	a, b := srv.session(0), srv.session(1)
	upd := db.Update("kv", []db.Assign{db.Set("v", 1)}, db.W("k", db.Eq, 1))
	require.Nil(t, a.Run(t.Context(), db.Request{Stmts: []db.Stmt{db.Begin(), upd}}).Err())
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	r := b.Run(ctx, db.Request{Stmts: []db.Stmt{upd}})
	assert.Equal(t, db.CodeConnectionFailure, r.Err().Code, "%s", r)
	assert.True(t, b.Dead())
	require.Nil(t, a.Run(t.Context(), db.Request{Stmts: []db.Stmt{db.Rollback()}}).Err())
}
