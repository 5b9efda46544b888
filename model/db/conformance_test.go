package db_test

// Conformance: the same statements, rendered by Stmt.SQL and Table.SQL, run
// on a real PostgreSQL server (internal/pgtest; skipped without one) and on
// the model; the error codes, command tags, returned rows and advisory lock
// results must agree.

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/internal/pgtest"
	"github.com/fencesim/fencesim/model/db"
)

// outcome is what a statement did, in a form both sides produce.
type outcome struct {
	Code string
	Tag  string
	Rows string // canonical rows, timestamps left out
}

func canonRows(rows []map[string]any) string {
	var out []string
	for _, r := range rows {
		keys := make([]string, 0, len(r))
		for k := range r {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			switch v := r[k].(type) {
			case time.Time, clock.Time:
				continue
			default:
				parts = append(parts, fmt.Sprintf("%s=%v", k, v))
			}
		}
		out = append(out, "{"+strings.Join(parts, " ")+"}")
	}
	return strings.Join(out, " ")
}

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
		seq = append(seq, sstmt{0, st})
	}
	conform(t, []db.Table{kv, pair}, nil, seq)
}

// sstmt is a statement of one of several sessions.
type sstmt struct {
	session int
	stmt    db.Stmt
}

// conform runs the statements one after another, each on its session, on
// the model and on the server, and compares their outcomes. Statements are
// 500 ms apart in the model (longer than any lock_timeout they set), so
// none overlaps another.
func conform(t *testing.T, tables []db.Table, seed map[string][]db.Row, seq []sstmt) {
	t.Helper()
	sessions := 0
	for _, s := range seq {
		sessions = max(sessions, s.session+1)
	}
	steps := make([][]step, sessions)
	index := make([]int, len(seq)) // the statement's step number in its session
	for i, s := range seq {
		index[i] = len(steps[s.session])
		steps[s.session] = append(steps[s.session], send(time.Duration(i)*500*ms, s.stmt))
	}
	var clients []client
	for i := range steps {
		clients = append(clients, cl(fmt.Sprintf("s%d", i), steps[i]...))
	}
	r := runWorld(t, db.Schema{Tables: tables}, db.Config{MaxPreparedTransactions: 4, Seed: seed}, nil, time.Duration(len(seq)+2)*500*ms, clients...)
	model := make([]outcome, len(seq))
	for i, ss := range seq {
		s := ss.stmt
		res := r.ans(fmt.Sprintf("s%d", ss.session), index[i]).last()
		o := outcome{Tag: res.Tag}
		if res.Err != nil {
			o = outcome{Code: res.Err.Code}
		}
		var rows []map[string]any
		for _, row := range res.Rows {
			rows = append(rows, row)
		}
		switch s.Kind {
		case db.STryAdvisoryLock:
			rows = []map[string]any{{"pg_try_advisory_lock": res.Locked}}
		case db.SAdvisoryUnlock:
			rows = []map[string]any{{"pg_advisory_unlock": res.Locked}}
		case db.SPreparedXacts:
			for _, row := range rows {
				delete(row, "age")
				delete(row, "transaction")
			}
		}
		o.Rows = canonRows(rows)
		model[i] = o
	}

	ctx := t.Context()
	first := pgtest.Connect(t, ctx)
	var ddl []string
	for _, tb := range tables {
		ddl = append(ddl, tb.SQL())
	}
	for _, tb := range tables {
		for _, row := range seed[tb.Name] {
			ddl = append(ddl, db.Insert(tb.Name, row).SQL())
		}
	}
	schema := pgtest.Fresh(t, first, ddl...)
	conns := []*pgx.Conn{first}
	for len(conns) < sessions {
		conns = append(conns, pgtest.ConnectSchema(t, ctx, schema))
	}
	for i, ss := range seq {
		s := ss.stmt
		rows, err := conns[ss.session].Query(ctx, s.SQL(), pgx.QueryExecModeSimpleProtocol)
		var got []map[string]any
		if err == nil {
			for rows.Next() {
				vals, verr := rows.Values()
				require.NoError(t, verr)
				m := map[string]any{}
				for j, f := range rows.FieldDescriptions() {
					if s.Kind == db.SPreparedXacts && (f.Name == "age" || f.Name == "transaction") {
						continue
					}
					m[f.Name] = vals[j]
				}
				got = append(got, m)
			}
			rows.Close()
			err = rows.Err()
		}
		o := outcome{Rows: canonRows(got)}
		if err != nil {
			o = outcome{Code: pgtest.Code(err)}
			require.NotEmpty(t, o.Code, "statement %d %q failed without a SQLSTATE: %v", i, s.SQL(), err)
		} else {
			o.Tag = rows.CommandTag().String()
		}
		assert.Equal(t, o, model[i], "statement %d (session %d): %s\n(expected: PostgreSQL's outcome; actual: the model's)", i, ss.session, s.SQL())
	}
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
		{A, db.Begin()},
		{A, inc(1)},
		{B, db.Select("kv").OrderedBy(db.Order{Col: "k"}).Limited(1).Locking(db.ForUpdateSkipLocked)},
		{B, db.Select("kv", db.W("k", db.Eq, 1)).Locking(db.ForUpdateNoWait)},
		{B, db.SetLockTimeout(200 * time.Millisecond)},
		{B, inc(1)},
		{B, inc(2)},
		{B, db.Select("kv", db.W("k", db.Eq, 1))},
		{A, db.Select("kv").OrderedBy(db.Order{Col: "v", Desc: true}, db.Order{Col: "k", Desc: true}).Limited(1).Locking(db.ForUpdate)},
		{A, db.Prepare("conf-two")},
		{B, db.PreparedXacts()},
		{B, inc(1)},
		{B, inc(3)},
		{B, db.Insert("kv", db.Row{"k": 1})},
		{B, db.InsertOrNothing("kv", db.Row{"k": 1})},
		{B, db.Begin()},
		{B, inc(1)},
		{B, db.Select("kv")},
		{B, db.Rollback()},
		{A, db.TryAdvisoryLock(77)},
		{B, db.TryAdvisoryLock(77)},
		{B, db.AdvisoryUnlock(77)},
		{A, db.AdvisoryUnlock(77)},
		{B, db.TryAdvisoryLock(77)},
		{A, db.CommitPrepared("conf-two")},
		{B, inc(1)},
		{B, db.AdvisoryUnlock(77)},
		{A, db.Select("kv").OrderedBy(db.Order{Col: "k"})},
	})
}
