package db_test

// Conformance: the same statements, rendered by Stmt.SQL and Table.SQL, run
// on a real PostgreSQL server (internal/pgtest; skipped without one) and on
// the model; the error codes, command tags, returned rows and advisory lock
// results must agree.

import (
	"testing"
	"time"

	"github.com/fencesim/fencesim/internal/pgtest"
	"github.com/fencesim/fencesim/model/db"
)

func TestConformanceWithPostgres(t *testing.T) {
	pgtest.Require(t)
	kv := db.Table{
		Name: "kv",
		Columns: []db.Column{
			{Name: "k", Type: db.Int},
			{Name: "v", Type: db.Int, NotNull: true, Default: int64(0)},
			{Name: "u", Type: db.Text},
			{Name: "ok", Type: db.Bool},
			{Name: "at", Type: db.Timestamp, Default: db.Now()},
		},
		PrimaryKey: []string{"k"},
		Unique:     [][]string{{"u"}},
	}
	pair := db.Table{
		Name: "pair",
		Columns: []db.Column{
			{Name: "seq", Type: db.Int, Serial: true},
			{Name: "a", Type: db.Int, NotNull: true},
			{Name: "b", Type: db.Text, NotNull: true},
		},
		PrimaryKey: []string{"seq"},
		Unique:     [][]string{{"a", "b"}},
	}
	inc := db.Set("v", db.Plus(db.Col("v"), db.Const(int64(1))))
	stmts := []db.Stmt{
		db.Insert("kv", db.Row{"k": 1, "v": 10, "u": "x", "ok": true}),
		db.Insert("kv", db.Row{"k": 1, "v": 11}),
		db.InsertOrNothing("kv", db.Row{"k": 1}),
		db.Insert("kv", db.Row{"k": 2, "u": "x"}),
		db.Insert("kv", db.Row{"k": 2, "v": nil}),
		db.Insert("kv", db.Row{"k": 3, "v": 3, "u": "it's"}).WithReturning(),
		db.Insert("kv", db.Row{"k": 4}).WithReturning(),
		db.Update("kv", []db.Assign{inc}, db.W("k", db.Eq, 1)),
		db.Update("kv", []db.Assign{db.Set("v", db.Greatest(db.Col("v"), db.Const(int64(5)), db.Const(nil)))}, db.W("k", db.Ge, 2)).WithReturning(),
		db.Update("kv", []db.Assign{db.Set("at", db.Greatest(db.Col("at"), db.NowPlus(90*time.Second)))}, db.W("at", db.Lt, db.NowPlus(time.Hour))),
		db.Update("kv", []db.Assign{db.Set("u", "x")}, db.W("k", db.Eq, 3)),
		db.Select("kv", db.W("v", db.Gt, 4)).OrderedBy(db.Order{Col: "k", Desc: true}).Limited(2),
		db.Select("kv", db.W("u", db.IsNull, nil)).OrderedBy(db.Order{Col: "k"}),
		db.Select("kv", db.W("u", db.IsNotNull, nil), db.W("ok", db.Eq, true)),
		db.Select("kv", db.Cond{Col: "k", Op: db.In, Set: []db.Value{1, 3, 9}}).OrderedBy(db.Order{Col: "u", Desc: true}),
		db.Select("kv", db.Cond{Col: "k", Op: db.In}),
		db.Select("kv", db.W("at", db.Gt, at(0))).OrderedBy(db.Order{Col: "k"}).Limited(1),
		db.Delete("kv", db.W("k", db.Eq, 4)).WithReturning(),
		db.Delete("kv", db.W("k", db.Eq, 4)),
		db.Insert("pair", db.Row{"a": 1, "b": "p"}).WithReturning(),
		db.Insert("pair", db.Row{"a": 1, "b": "p"}),
		db.Insert("pair", db.Row{"a": 1, "b": "q"}).WithReturning(),
		db.Begin(),
		db.Begin(),
		db.Update("kv", []db.Assign{inc}, db.W("k", db.Eq, 1)),
		db.Select("kv", db.W("k", db.Eq, 1)).Locking(db.ForUpdateNoWait),
		db.Select("kv").OrderedBy(db.Order{Col: "k"}).Limited(1).Locking(db.ForUpdateSkipLocked),
		db.SetLockTimeout(250 * time.Millisecond),
		db.TryAdvisoryLock(5),
		db.TryAdvisoryLock(5),
		db.AdvisoryUnlock(5),
		db.AdvisoryUnlock(5),
		db.AdvisoryUnlock(5),
		db.Prepare("conf-g1"),
		db.PreparedXacts(),
		db.CommitPrepared("conf-g1"),
		db.CommitPrepared("conf-g1"),
		db.Begin(),
		db.Insert("kv", db.Row{"k": 1}),
		db.Select("kv"),
		db.Commit(),
		db.Rollback(),
		db.Commit(),
		db.Prepare("conf-none"),
		db.Begin(),
		db.RollbackPrepared("nope"),
		db.Rollback(),
		db.Begin(),
		db.Delete("kv", db.W("k", db.Eq, 3)),
		db.Prepare("conf-g2"),
		db.Select("kv").OrderedBy(db.Order{Col: "k"}),
		db.RollbackPrepared("conf-g2"),
		db.Select("kv").OrderedBy(db.Order{Col: "k"}),
		db.Vacuum("kv"),
		db.SetLockTimeout(0),
		db.Update("kv", []db.Assign{db.Set("v", "text")}),
		db.Select("nosuch"),
		db.Select("kv", db.W("nosuch", db.Eq, 1)),
	}

	var seq []sstmt
	for _, st := range stmts {
		seq = append(seq, sstmt{session: 0, stmt: st})
	}
	conform(t, []db.Table{kv, pair}, nil, seq)
}

// Two sessions, one statement at a time (no statement is still waiting
// when the next starts): SKIP LOCKED, NOWAIT, lock_timeout on a row lock
// and on a prepared transaction's locks and unique keys, advisory locks
// between sessions, the 25P02 state.
func TestConformanceTwoSessions(t *testing.T) {
	pgtest.Require(t)
	kv := db.Table{
		Name:       "kv",
		Columns:    []db.Column{{Name: "k", Type: db.Int}, {Name: "v", Type: db.Int, NotNull: true, Default: int64(0)}},
		PrimaryKey: []string{"k"},
	}
	seed := map[string][]db.Row{"kv": {{"k": 1, "v": 1}, {"k": 2, "v": 2}, {"k": 3, "v": 3}}}
	inc := func(k int) db.Stmt {
		return db.Update("kv", []db.Assign{db.Set("v", db.Plus(db.Col("v"), db.Const(int64(1))))}, db.W("k", db.Eq, k))
	}
	A, B := 0, 1
	conform(t, []db.Table{kv}, seed, []sstmt{
		{session: A, stmt: db.Begin()},
		{session: A, stmt: inc(1)},
		{session: B, stmt: db.Select("kv").OrderedBy(db.Order{Col: "k"}).Limited(1).Locking(db.ForUpdateSkipLocked)},
		{session: B, stmt: db.Select("kv", db.W("k", db.Eq, 1)).Locking(db.ForUpdateNoWait)},
		{session: B, stmt: db.SetLockTimeout(200 * time.Millisecond)},
		{session: B, stmt: inc(1)},
		{session: B, stmt: inc(2)},
		{session: B, stmt: db.Select("kv", db.W("k", db.Eq, 1))},
		{session: A, stmt: db.Select("kv").OrderedBy(db.Order{Col: "v", Desc: true}, db.Order{Col: "k", Desc: true}).Limited(1).Locking(db.ForUpdate)},
		{session: A, stmt: db.Prepare("conf-two")},
		{session: B, stmt: db.PreparedXacts()},
		{session: B, stmt: inc(1)},
		{session: B, stmt: inc(3)},
		{session: B, stmt: db.Insert("kv", db.Row{"k": 1})},
		{session: B, stmt: db.InsertOrNothing("kv", db.Row{"k": 1})},
		{session: B, stmt: db.Begin()},
		{session: B, stmt: inc(1)},
		{session: B, stmt: db.Select("kv")},
		{session: B, stmt: db.Rollback()},
		{session: A, stmt: db.TryAdvisoryLock(77)},
		{session: B, stmt: db.TryAdvisoryLock(77)},
		{session: B, stmt: db.AdvisoryUnlock(77)},
		{session: A, stmt: db.AdvisoryUnlock(77)},
		{session: B, stmt: db.TryAdvisoryLock(77)},
		{session: A, stmt: db.CommitPrepared("conf-two")},
		{session: B, stmt: inc(1)},
		{session: B, stmt: db.AdvisoryUnlock(77)},
		{session: A, stmt: db.Select("kv").OrderedBy(db.Order{Col: "k"})},
	})
}
