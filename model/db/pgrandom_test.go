package db_test

// Randomized conformance: rapid generates statement sequences over a small
// schema on three sessions (interleaved transactions, conflicting updates,
// SKIP LOCKED / NOWAIT claims, unique conflicts, ON CONFLICT, prepared
// transactions, advisory locks, VACUUM, sessions that end), runs each on
// the model and on PostgreSQL, and compares every statement's outcome:
// SQLSTATE (and the violated index), command tag (the affected count),
// returned rows (in order when ordered), warnings, advisory lock results,
// pg_prepared_xacts' gids, VACUUM's figures. A divergence shrinks to a
// minimal sequence.
//
// Blocking: every session has lock_timeout = 20 ms on both sides, and the
// statements run one at a time, so a statement that would wait fails with
// 55P03 on both sides after 20 ms (the model's statements are 100 ms apart,
// deadlock_timeout is 1 s). Waits that end otherwise are the scripted
// tests' business.

import (
	"context"
	"flag"
	"fmt"
	"strings"
	syncatomic "sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/internal/pgtest"
	"github.com/fencesim/fencesim/model/db"
)

// randChecks is how many sequences the randomized conformance runs unless
// -rapid.checks is given.
const randChecks = 500

const randLockTimeout = 20 * time.Millisecond

// Totals over the process, for TestMain's summary.
var randSequences, randStatements syncatomic.Int64

var randTables = []db.Table{
	{
		Name: "kv",
		Columns: []db.Column{
			{Name: "k", Type: db.Int},
			{Name: "v", Type: db.Int, NotNull: true, Default: int64(0)},
			{Name: "u", Type: db.Text},
		},
		PrimaryKey: []string{"k"},
		Unique:     [][]string{{"u"}},
	},
	{
		Name: "pair",
		Columns: []db.Column{
			{Name: "id", Type: db.Int, Serial: true},
			{Name: "a", Type: db.Int, NotNull: true},
			{Name: "b", Type: db.Text, NotNull: true},
		},
		PrimaryKey: []string{"id"},
		Unique:     [][]string{{"a", "b"}},
	},
}

var randSeed = map[string][]db.Row{"kv": {{"k": int64(1), "v": int64(0)}, {"k": int64(2), "v": int64(5), "u": "x"}}}

// genSStmt draws one step of a sequence.
func genSStmt(rt *rapid.T) sstmt {
	s := rapid.IntRange(0, 2).Draw(rt, "session")
	k := func() int64 { return int64(rapid.IntRange(1, 4).Draw(rt, "k")) }
	v := func() int64 { return int64(rapid.IntRange(0, 9).Draw(rt, "v")) }
	u := func() db.Value { return rapid.SampledFrom([]db.Value{nil, "x", "y"}).Draw(rt, "u") }
	gid := func() string { return rapid.SampledFrom([]string{"g1", "g2", "g3"}).Draw(rt, "gid") }
	ret := func(st db.Stmt) db.Stmt {
		if rapid.Bool().Draw(rt, "returning") {
			return st.WithReturning()
		}
		return st
	}
	lock := func() db.Lock {
		return rapid.SampledFrom([]db.Lock{db.NoLock, db.ForUpdate, db.ForUpdateSkipLocked, db.ForUpdateNoWait}).Draw(rt, "lock")
	}
	inc := db.Set("v", db.Plus(db.Col("v"), db.Const(int64(1))))
	var st db.Stmt
	switch rapid.IntRange(0, 29).Draw(rt, "kind") {
	case 0, 1, 2:
		st = db.Begin()
	case 3, 4:
		st = db.Commit()
	case 5:
		st = db.Rollback()
	case 6, 7:
		st = db.Prepare(gid())
	case 8:
		st = db.CommitPrepared(gid())
	case 9:
		st = db.RollbackPrepared(gid())
	case 10, 11:
		vals := db.Row{"k": k(), "u": u()}
		if rapid.IntRange(0, 9).Draw(rt, "null-v") == 0 {
			vals["v"] = nil
		} else {
			vals["v"] = v()
		}
		st = ret(db.Insert("kv", vals))
	case 12:
		st = ret(db.InsertOrNothing("kv", db.Row{"k": k(), "u": u()}))
	case 13:
		row := db.Row{"a": int64(rapid.IntRange(0, 1).Draw(rt, "a")), "b": rapid.SampledFrom([]string{"p", "q"}).Draw(rt, "b")}
		if rapid.Bool().Draw(rt, "or-nothing") {
			st = db.InsertOrNothing("pair", row).WithReturning()
		} else {
			st = db.Insert("pair", row).WithReturning()
		}
	case 14, 15:
		st = ret(db.Update("kv", []db.Assign{inc}, db.W("k", db.Eq, k())))
	case 16:
		st = db.Update("kv", []db.Assign{db.Set("u", u())}, db.W("k", db.Eq, k()))
	case 17:
		st = db.Update("kv", []db.Assign{db.Set("k", k())}, db.W("k", db.Eq, k()))
	case 18:
		// Several rows: only a column without an index, never NULL (which
		// error a statement meets first depends on the row order).
		st = ret(db.Update("kv", []db.Assign{db.Set("v", v())}, db.W("v", db.Ge, v())))
	case 19:
		st = ret(db.Delete("kv", db.W("k", db.Eq, k())))
	case 20:
		st = db.Delete("kv", db.W("v", db.Ge, v()))
	case 21:
		st = db.Delete("pair", db.W("a", db.Eq, int64(rapid.IntRange(0, 1).Draw(rt, "a"))))
	case 22, 23:
		st = db.Select("kv", db.W("v", db.Le, v())).OrderedBy(db.Order{Col: "k"}).Limited(rapid.IntRange(0, 2).Draw(rt, "limit")).Locking(lock())
	case 24:
		st = db.Select("kv").Locking(lock())
	case 25:
		st = db.Select("pair").OrderedBy(db.Order{Col: "id"}).Locking(lock())
	case 26:
		key := int64(rapid.IntRange(0, 1).Draw(rt, "key"))
		if rapid.Bool().Draw(rt, "unlock") {
			st = db.AdvisoryUnlock(key)
		} else {
			st = db.TryAdvisoryLock(key)
		}
	case 27:
		st = db.PreparedXacts()
	case 28:
		st = db.Vacuum(rapid.SampledFrom([]string{"kv", "pair"}).Draw(rt, "table"))
	default:
		return sstmt{session: s, close: true}
	}
	return sstmt{session: s, stmt: st}
}

// withChecks sets -rapid.checks to n for the test unless it was given.
func withChecks(t *testing.T, n int) {
	f := flag.Lookup("rapid.checks")
	if f == nil {
		return
	}
	set := false
	flag.Visit(func(g *flag.Flag) { set = set || g.Name == "rapid.checks" })
	if set {
		return
	}
	old := f.Value.String()
	if err := f.Value.Set(fmt.Sprint(n)); err != nil {
		t.Fatalf("set rapid.checks: %v", err)
	}
	t.Cleanup(func() { f.Value.Set(old) })
}

// reset brings the server back to the seeded start: the sessions' open
// transactions rolled back and advisory locks released, the prepared
// transactions rolled back, the tables truncated (sequences restarted) and
// seeded.
func (p *pgPool) reset(ctx context.Context, tables []db.Table, seed map[string][]db.Row) error {
	for _, s := range p.sess {
		if s != nil {
			if _, err := s.conn.Exec(ctx, "ROLLBACK; SELECT pg_advisory_unlock_all()"); err != nil {
				return fmt.Errorf("reset session: %w", err)
			}
		}
	}
	rows, err := p.admin.Query(ctx, `SELECT gid FROM pg_prepared_xacts WHERE database = current_database()`)
	if err != nil {
		return err
	}
	var gids []string
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			return err
		}
		gids = append(gids, g)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var sqls []string
	for _, g := range gids {
		sqls = append(sqls, db.RollbackPrepared(g).SQL())
	}
	var names []string
	for _, tb := range tables {
		names = append(names, tb.Name)
	}
	sqls = append(sqls, "TRUNCATE "+strings.Join(names, ", ")+" RESTART IDENTITY")
	for _, tb := range tables {
		for _, r := range seed[tb.Name] {
			sqls = append(sqls, db.Insert(tb.Name, r).SQL())
		}
	}
	for _, q := range sqls { // one at a time: ROLLBACK PREPARED cannot run in a multi-statement string
		if _, err := p.admin.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

func TestConformanceRandomPostgres(t *testing.T) {
	pgtest.Require(t)
	resetLeftoverConfig(t)
	ctx := t.Context()
	admin := pgtest.Connect(t, ctx)
	schema := pgtest.Fresh(t, admin, setupSQL(randTables, randSeed, 0)...)
	pgtest.MustExec(t, ctx, admin, "SET lock_timeout = '10s'")
	probe, err := pgDial(ctx, "pgconf-probe", "", 0, 0)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	maxPrepared, err := serverMaxPrepared(ctx, probe)
	probe.close()
	if err != nil {
		t.Fatalf("max_prepared_transactions: %v", err)
	}
	cfg := db.Config{MaxPreparedTransactions: maxPrepared, LockTimeout: randLockTimeout, Seed: randSeed}
	p := &pgPool{name: t.Name(), schema: schema, lockTimeout: randLockTimeout, admin: admin}
	defer p.closeAll()

	withChecks(t, randChecks)
	start := time.Now()
	sequences, statements := 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		seq := rapid.SliceOfN(rapid.Custom(genSStmt), 3, 30).Draw(rt, "seq")
		model, err := modelSeq(randTables, cfg, seq, 100*ms)
		if err != nil {
			rt.Fatalf("model: %v", err)
		}
		if err := p.reset(ctx, randTables, randSeed); err != nil {
			rt.Fatalf("reset the server: %v", err)
		}
		server, err := serverSeq(ctx, p, seq)
		if err != nil {
			rt.Fatalf("server: %v", err)
		}
		if bad, transcript := compareSeq(seq, server, model, cmpOpts{timeTol: -1}); bad > 0 {
			rt.Fatalf("PostgreSQL and the model diverge on %d of %d statements:\n%s", bad, len(seq), transcript)
		}
		sequences++
		statements += len(seq)
	})
	randSequences.Add(int64(sequences))
	randStatements.Add(int64(statements))
	t.Logf("random conformance with PostgreSQL: %d sequences, %d statements, no divergence, in %v",
		sequences, statements, time.Since(start).Round(time.Millisecond))
}
