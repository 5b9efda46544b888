package db_test

// The real-server side of the conformance tests: sessions on a PostgreSQL
// server (internal/pgtest), the outcome of a statement in a form both the
// model and the server produce, and their comparison.
//
// Time: a scenario's time 0 is a wall-clock instant t0 on the server's
// side. Timestamp literals are shifted so that the model's clock.Time(d)
// renders as t0 + d, and the server's timestamps are read back as
// clock.Time(ts - t0): both sides' timestamps are then comparable (within
// a tolerance: the server's clock is the wall clock).

import (
	"context"
	"fmt"
	"net"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/internal/pgexec"
	"github.com/fencesim/fencesim/internal/pgtest"
	"github.com/fencesim/fencesim/model/db"
)

// pgOut is what one statement did, as both sides report it.
type pgOut struct {
	Code       string   // SQLSTATE of the error; "" when none
	Constraint string   // the violated index of a 23505
	Tag        string   // command tag, when no error
	Notices    []string // warnings: "WARNING 25P01"; one without its own SQLSTATE (01000) is "WARNING"
	Rows       []db.Row
	Vacuum     *db.VacuumStats // VACUUM VERBOSE's tuples figures
	Lost       bool            // the connection broke: the outcome is unknown (08006)
	Note       string          // the server's error message or the model's, for reports only
}

func (o pgOut) String() string {
	if o.Lost {
		return "connection lost (08006)"
	}
	var s string
	if o.Code != "" {
		s = "ERROR " + o.Code
		if o.Constraint != "" {
			s += " on " + o.Constraint
		}
		if o.Note != "" {
			s += " (" + o.Note + ")"
		}
	} else {
		s = o.Tag
	}
	for _, n := range o.Notices {
		s += " [" + n + "]"
	}
	if o.Vacuum != nil {
		s += fmt.Sprintf(" removed=%d remain=%d dead_not_removable=%d", o.Vacuum.Removed, o.Vacuum.Remain, o.Vacuum.DeadNotRemovable)
	}
	for _, r := range o.Rows {
		s += " " + r.String()
	}
	return s
}

var constraintRe = regexp.MustCompile(`constraint "([^"]+)"`)

// modelOut converts the model's result of st.
func modelOut(st db.Stmt, res db.Result) pgOut {
	if res.Err != nil {
		o := pgOut{Code: res.Err.Code, Note: res.Err.Msg, Lost: res.Err.Code == db.CodeConnectionFailure}
		if m := constraintRe.FindStringSubmatch(res.Err.Msg); m != nil && o.Code == db.CodeUniqueViolation {
			o.Constraint = m[1]
		}
		return o
	}
	o := pgOut{Tag: res.Tag}
	if res.Notice != "" {
		// "WARNING 25P01: there is no transaction in progress", or "WARNING: ..."
		head, _, _ := strings.Cut(res.Notice, ":")
		o.Notices = []string{head}
	}
	switch st.Kind {
	case db.STryAdvisoryLock:
		o.Rows = []db.Row{{"pg_try_advisory_lock": res.Locked}}
	case db.SAdvisoryUnlock:
		o.Rows = []db.Row{{"pg_advisory_unlock": res.Locked}}
	case db.SVacuum:
		v := res.Vacuum
		o.Vacuum = &v
	default:
		for _, r := range res.Rows {
			c := db.Row{}
			for k, v := range r {
				c[k] = v
			}
			if st.Kind == db.SPreparedXacts {
				delete(c, "transaction") // xids differ
			}
			o.Rows = append(o.Rows, c)
		}
	}
	return o
}

// pgSess is one server session: a pgexec.Session, the live runs' own, so
// that the conformance tests hold the code that serves model/db's protocol
// from a real server, not a copy of it.
type pgSess struct {
	sess *pgexec.Session
	conn *pgx.Conn
	nc   net.Conn
}

// pgDial opens a session with search_path set to schema and the given
// lock_timeout and deadlock_timeout (0: the server's default) as the
// session's defaults, as db.Config sets them for the model's sessions.
func pgDial(ctx context.Context, name, schema string, lockTimeout, deadlockTimeout time.Duration) (*pgSess, error) {
	sess, err := pgexec.Dial(ctx, pgtest.URL(), pgexec.Options{App: name, Schema: schema, LockTimeout: lockTimeout, DeadlockTimeout: deadlockTimeout})
	if err != nil {
		return nil, err
	}
	return &pgSess{sess: sess, conn: sess.Conn(), nc: sess.Conn().PgConn().Conn()}, nil
}

func (s *pgSess) close() { s.sess.Close() }

// inTx reports whether the session is in a transaction block (open or
// failed).
func (s *pgSess) inTx() bool { return s.conn.PgConn().TxStatus() != 'I' }

// exec runs one statement. shift is added to every timestamp literal (see
// the file comment); t0 is the instant model time 0 stands for.
func (s *pgSess) exec(ctx context.Context, st db.Stmt, shift time.Duration, t0 time.Time) pgOut {
	return serverOut(st, s.sess.Exec(ctx, shiftStmt(st, shift), t0))
}

// serverOut converts the server's outcome of st: its db.Result as the
// model's is converted, with every warning the server sent.
func serverOut(st db.Stmt, o pgexec.Outcome) pgOut {
	out := modelOut(st, o.Result)
	if !out.Lost {
		out.Notices = o.Notices
	}
	return out
}

// shiftStmt adds d to every timestamp literal of st.
func shiftStmt(st db.Stmt, d time.Duration) db.Stmt {
	if d == 0 {
		return st
	}
	shiftVal := func(v db.Value) db.Value {
		switch x := v.(type) {
		case clock.Time:
			return x.Add(d)
		case db.Expr:
			return shiftExpr(x, d)
		}
		return v
	}
	if st.Values != nil {
		vals := db.Row{}
		for k, v := range st.Values {
			vals[k] = shiftVal(v)
		}
		st.Values = vals
	}
	if st.Where != nil {
		w := make(db.Where, len(st.Where))
		for i, c := range st.Where {
			c.Right = shiftExpr(c.Right, d)
			set := make([]db.Value, len(c.Set))
			for j, v := range c.Set {
				set[j] = shiftVal(v)
			}
			if c.Set != nil {
				c.Set = set
			}
			w[i] = c
		}
		st.Where = w
	}
	if st.Assigns != nil {
		as := make([]db.Assign, len(st.Assigns))
		for i, a := range st.Assigns {
			a.Expr = shiftExpr(a.Expr, d)
			as[i] = a
		}
		st.Assigns = as
	}
	return st
}

func shiftExpr(e db.Expr, d time.Duration) db.Expr {
	if t, ok := e.Val.(clock.Time); ok {
		e.Val = t.Add(d)
	}
	if len(e.Args) > 0 {
		args := make([]db.Expr, len(e.Args))
		for i, a := range e.Args {
			args[i] = shiftExpr(a, d)
		}
		e.Args = args
	}
	return e
}

// ---- comparison ----

// cmpOpts says how strictly outcomes are compared.
type cmpOpts struct {
	// timeTol is the tolerance for timestamps (and pg_prepared_xacts' age);
	// negative: timestamps are not compared.
	timeTol time.Duration
}

// ordered reports whether a statement's rows come in a defined order.
func ordered(st db.Stmt) bool {
	return st.Kind == db.SPreparedXacts || (st.Kind == db.SSelect && len(st.OrderBy) > 0)
}

// diffOut compares the server's outcome with the model's: "" when they
// agree. A model result 08006 (outcome unknown) agrees with anything.
func diffOut(st db.Stmt, server, model pgOut, o cmpOpts) string {
	if model.Lost {
		return ""
	}
	if server.Lost {
		return "the server's connection broke: " + server.Note
	}
	if server.Code != model.Code || server.Constraint != model.Constraint {
		return "error differs"
	}
	if server.Tag != model.Tag {
		return "command tag differs"
	}
	if fmt.Sprint(server.Notices) != fmt.Sprint(model.Notices) {
		return "warnings differ"
	}
	if (server.Vacuum == nil) != (model.Vacuum == nil) || (server.Vacuum != nil && *server.Vacuum != *model.Vacuum) {
		return "VACUUM figures differ"
	}
	return diffRows(server.Rows, model.Rows, ordered(st), o)
}

// diffRows compares row lists (as multisets when !inOrder).
func diffRows(server, model []db.Row, inOrder bool, o cmpOpts) string {
	if len(server) != len(model) {
		return fmt.Sprintf("%d rows, the model has %d", len(server), len(model))
	}
	if !inOrder {
		server, model = sortedRows(server), sortedRows(model)
	}
	for i := range server {
		if d := diffRow(server[i], model[i], o); d != "" {
			return fmt.Sprintf("row %d: %s", i, d)
		}
	}
	return ""
}

func rowKey(r db.Row) string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		if _, ok := r[k].(clock.Time); ok || k == "age" {
			continue
		}
		fmt.Fprintf(&b, "%s=%v;", k, r[k])
	}
	return b.String()
}

func sortedRows(rows []db.Row) []db.Row {
	out := append([]db.Row(nil), rows...)
	sort.SliceStable(out, func(i, j int) bool { return rowKey(out[i]) < rowKey(out[j]) })
	return out
}

func diffRow(s, m db.Row, o cmpOpts) string {
	if len(s) != len(m) {
		return fmt.Sprintf("columns differ: %v vs %v", s, m)
	}
	for k, sv := range s {
		mv, ok := m[k]
		if !ok {
			return fmt.Sprintf("column %s missing in the model", k)
		}
		st, sIsT := sv.(clock.Time)
		mt, mIsT := mv.(clock.Time)
		if sIsT && mIsT {
			if o.timeTol >= 0 && absDur(st.Sub(mt)) > o.timeTol {
				return fmt.Sprintf("%s: %v vs %v", k, time.Duration(st), time.Duration(mt))
			}
			continue
		}
		if k == "age" {
			sa, _ := sv.(int64)
			ma, _ := mv.(int64)
			if o.timeTol >= 0 && absDur(time.Duration(sa-ma)) > o.timeTol {
				return fmt.Sprintf("age: %v vs %v", time.Duration(sa), time.Duration(ma))
			}
			continue
		}
		if !reflect.DeepEqual(sv, mv) {
			return fmt.Sprintf("%s: %v (%T) vs %v (%T)", k, sv, sv, mv, mv)
		}
	}
	return ""
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// ---- schema setup ----

// setupSQL is the DDL and seed of a schema on the server (pgexec's, the
// live runs' own): each table with autovacuum (and autoanalyze) off, so
// that only the tests' VACUUMs remove row versions; the seed rows, their
// timestamps shifted by shift; serial sequences moved past the seeded
// values, as the model does.
func setupSQL(tables []db.Table, seed map[string][]db.Row, shift time.Duration) []string {
	s := db.Schema{Tables: tables}
	shifted := map[string][]db.Row{}
	for name, rows := range seed {
		for _, row := range rows {
			shifted[name] = append(shifted[name], shiftStmt(db.Insert(name, row), shift).Values)
		}
	}
	return append(pgexec.DDL(s), pgexec.SeedSQL(s, shifted)...)
}

// serverRows reads a table's rows ordered by primary key.
func serverRows(ctx context.Context, s *pgSess, tb db.Table, t0 time.Time) ([]db.Row, error) {
	order := make([]db.Order, len(tb.PrimaryKey))
	for i, c := range tb.PrimaryKey {
		order[i] = db.Order{Col: c}
	}
	o := s.exec(ctx, db.Select(tb.Name).OrderedBy(order...), 0, t0)
	if o.Code != "" || o.Lost {
		return nil, fmt.Errorf("read %s: %s", tb.Name, o)
	}
	return o.Rows, nil
}

// serverPrepared lists the gids of the database's prepared transactions.
func serverPrepared(ctx context.Context, s *pgSess) ([]string, error) {
	rows, err := s.conn.Query(ctx, `SELECT gid FROM pg_prepared_xacts WHERE database = current_database() ORDER BY gid`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// serverMaxPrepared is the server's max_prepared_transactions.
func serverMaxPrepared(ctx context.Context, s *pgSess) (int, error) {
	var v string
	if err := s.conn.QueryRow(ctx, "SHOW max_prepared_transactions").Scan(&v); err != nil {
		return 0, err
	}
	return strconv.Atoi(v)
}

// withMaxPrepared runs the test with the server's max_prepared_transactions
// set to n (ALTER SYSTEM and a restart; put back by the cleanup, with
// another restart). PostgreSQL reads the setting only at start.
func withMaxPrepared(t testing.TB, n int) {
	t.Helper()
	ctx := t.Context()
	admin := pgtest.Connect(t, ctx)
	pgtest.MustExec(t, ctx, admin, fmt.Sprintf("ALTER SYSTEM SET max_prepared_transactions = %d", n))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := pgDial(ctx, "pgconf-reset", "", 0, 0)
		if err != nil {
			t.Errorf("reset max_prepared_transactions: %v", err)
			return
		}
		_, err = s.conn.Exec(ctx, "ALTER SYSTEM RESET max_prepared_transactions")
		s.close()
		if err != nil {
			t.Errorf("reset max_prepared_transactions: %v", err)
			return
		}
		pgtest.Restart(t, false)
	})
	pgtest.Restart(t, false)
}

var leftoverOnce sync.Once

// resetLeftoverConfig undoes an ALTER SYSTEM of max_prepared_transactions
// that a killed run of withMaxPrepared left behind.
func resetLeftoverConfig(t testing.TB) {
	t.Helper()
	leftoverOnce.Do(func() {
		ctx := t.Context()
		admin := pgtest.Connect(t, ctx)
		var src, file string
		err := admin.QueryRow(ctx, `SELECT source, coalesce(sourcefile, '') FROM pg_settings WHERE name = 'max_prepared_transactions'`).Scan(&src, &file)
		if err != nil {
			t.Fatalf("pg_settings: %v", err)
		}
		if strings.HasSuffix(file, "postgresql.auto.conf") {
			t.Logf("undoing a leftover ALTER SYSTEM SET max_prepared_transactions")
			pgtest.MustExec(t, ctx, admin, "ALTER SYSTEM RESET max_prepared_transactions")
			pgtest.Restart(t, false)
		}
	})
}
