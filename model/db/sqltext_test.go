package db

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fencesim/fencesim/clock"
)

// The renderings as fmt made them before the append-based ones in sql.go:
// the reference those must match byte for byte (traces show and hash
// these texts). TestSQLAsFmt compares them on random statements.

func fmtStmt(s Stmt) string {
	var b strings.Builder
	switch s.Kind {
	case SBegin:
		return "BEGIN"
	case SCommit:
		return "COMMIT"
	case SRollback:
		return "ROLLBACK"
	case SInsert:
		fmt.Fprintf(&b, "INSERT INTO %s", fmtIdent(s.Table))
		if len(s.Values) == 0 {
			b.WriteString(" DEFAULT VALUES")
		} else {
			cols := make([]string, 0, len(s.Values))
			for c := range s.Values {
				cols = append(cols, c)
			}
			sort.Strings(cols)
			vals := make([]string, len(cols))
			for i, c := range cols {
				vals[i] = fmtLiteral(s.Values[c])
				cols[i] = fmtIdent(c)
			}
			fmt.Fprintf(&b, " (%s) VALUES (%s)", strings.Join(cols, ", "), strings.Join(vals, ", "))
		}
		if s.OnConflictDoNothing {
			b.WriteString(" ON CONFLICT DO NOTHING")
		}
		if s.Returning {
			b.WriteString(" RETURNING *")
		}
	case SUpdate:
		fmt.Fprintf(&b, "UPDATE %s SET ", fmtIdent(s.Table))
		for i, a := range s.Assigns {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s = %s", fmtIdent(a.Col), fmtExpr(a.Expr))
		}
		b.WriteString(fmtWhere(s.Where))
		if s.Returning {
			b.WriteString(" RETURNING *")
		}
	case SDelete:
		fmt.Fprintf(&b, "DELETE FROM %s%s", fmtIdent(s.Table), fmtWhere(s.Where))
		if s.Returning {
			b.WriteString(" RETURNING *")
		}
	case SSelect:
		fmt.Fprintf(&b, "SELECT * FROM %s%s", fmtIdent(s.Table), fmtWhere(s.Where))
		if len(s.OrderBy) > 0 {
			parts := make([]string, len(s.OrderBy))
			for i, o := range s.OrderBy {
				parts[i] = fmtIdent(o.Col)
				if o.Desc {
					parts[i] += " DESC"
				}
			}
			fmt.Fprintf(&b, " ORDER BY %s", strings.Join(parts, ", "))
		}
		if s.Limit > 0 {
			fmt.Fprintf(&b, " LIMIT %d", s.Limit)
		}
		switch s.Lock {
		case ForUpdate:
			b.WriteString(" FOR UPDATE")
		case ForUpdateSkipLocked:
			b.WriteString(" FOR UPDATE SKIP LOCKED")
		case ForUpdateNoWait:
			b.WriteString(" FOR UPDATE NOWAIT")
		}
	case SSetLockTimeout:
		switch {
		case s.Dur == 0:
			return "SET lock_timeout = 0"
		case s.Dur%time.Millisecond == 0:
			return fmt.Sprintf("SET lock_timeout = '%dms'", s.Dur/time.Millisecond)
		default:
			return fmt.Sprintf("SET lock_timeout = '%dus'", s.Dur/time.Microsecond)
		}
	case STryAdvisoryLock:
		return fmt.Sprintf("SELECT pg_try_advisory_lock(%d)", s.Key)
	case SAdvisoryUnlock:
		return fmt.Sprintf("SELECT pg_advisory_unlock(%d)", s.Key)
	case SPrepare:
		return "PREPARE TRANSACTION " + fmtQuote(s.GID)
	case SCommitPrepared:
		return "COMMIT PREPARED " + fmtQuote(s.GID)
	case SRollbackPrepared:
		return "ROLLBACK PREPARED " + fmtQuote(s.GID)
	case SPreparedXacts:
		return "SELECT transaction::text::bigint AS transaction, gid, prepared, " +
			"(extract(epoch FROM now() - prepared) * 1000000000)::bigint AS age FROM pg_prepared_xacts ORDER BY prepared, gid"
	case SSelectNow:
		return "SELECT now() AS now"
	case SVacuum:
		if s.Table == "" {
			return "VACUUM (VERBOSE)"
		}
		return "VACUUM (VERBOSE) " + fmtIdent(s.Table)
	default:
		return fmt.Sprintf("/* unknown statement kind %d */", s.Kind)
	}
	return b.String()
}

// SQL renders the WHERE clause (with a leading space), or "" when empty.
func fmtWhere(w Where) string {
	if len(w) == 0 {
		return ""
	}
	parts := make([]string, len(w))
	for i, c := range w {
		parts[i] = fmtCond(c)
	}
	return " WHERE " + strings.Join(parts, " AND ")
}

// SQL renders one condition.
func fmtCond(c Cond) string {
	switch c.Op {
	case IsNull, IsNotNull:
		return fmtIdent(c.Col) + " " + string(c.Op)
	case In:
		if len(c.Set) == 0 {
			return "FALSE"
		}
		vals := make([]string, len(c.Set))
		for i, v := range c.Set {
			vals[i] = fmtLiteral(v)
		}
		return fmt.Sprintf("%s IN (%s)", fmtIdent(c.Col), strings.Join(vals, ", "))
	}
	return fmt.Sprintf("%s %s %s", fmtIdent(c.Col), c.Op, fmtExpr(c.Right))
}

// SQL renders an expression.
func fmtExpr(e Expr) string {
	switch e.Kind {
	case EConst:
		return fmtLiteral(e.Val)
	case ECol:
		return fmtIdent(e.Col)
	case ENow:
		return "now()"
	case EStmtNow:
		return "statement_timestamp()"
	case EInterval:
		return fmtInterval(e.Dur)
	case EAdd:
		if len(e.Args) == 2 {
			return fmt.Sprintf("(%s + %s)", fmtExpr(e.Args[0]), fmtExpr(e.Args[1]))
		}
	case EGreatest:
		parts := make([]string, len(e.Args))
		for i, a := range e.Args {
			parts[i] = fmtExpr(a)
		}
		return "greatest(" + strings.Join(parts, ", ") + ")"
	case ECase:
		if len(e.Args) == 3 {
			return "CASE WHEN " + fmtExpr(e.Args[0]) + " THEN " + fmtExpr(e.Args[1]) + " ELSE " + fmtExpr(e.Args[2]) + " END"
		}
	}
	return fmt.Sprintf("/* bad expression kind %d */ NULL", e.Kind)
}

// literal renders a value as an SQL literal.
func fmtLiteral(v Value) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return fmtQuote(x)
	case bool:
		if x {
			return "true"
		}
		return "false"
	case clock.Time:
		return "timestamptz '" + Epoch.Add(time.Duration(x)).Format("2006-01-02 15:04:05.999999") + "+00'"
	case time.Duration:
		return fmtInterval(x)
	case Expr:
		return fmtExpr(x)
	}
	if n, _, ok := normalize(v); ok {
		return strconv.FormatInt(n.(int64), 10)
	}
	return fmt.Sprintf("/* unsupported %T */ NULL", v)
}

func fmtInterval(d time.Duration) string {
	switch {
	case d%time.Second == 0:
		return fmt.Sprintf("interval '%d seconds'", d/time.Second)
	case d%time.Millisecond == 0:
		return fmt.Sprintf("interval '%d milliseconds'", d/time.Millisecond)
	default:
		return fmt.Sprintf("interval '%d microseconds'", d/time.Microsecond)
	}
}

// quoteLit quotes a string literal, doubling single quotes.
func fmtQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// pgReserved is PostgreSQL's reserved key words (its documentation's
// appendix "SQL Key Words", the column "reserved"), as the renderer had
// them in a map: reserved, its switch, must agree.
var pgReserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric both case cast check collate
		column constraint create current_catalog current_date current_role current_time current_timestamp
		current_user default deferrable desc distinct do else end except false fetch for foreign from grant
		group having in initially intersect into lateral leading limit localtime localtimestamp not null
		offset on only or order placing primary references returning select session_user some symmetric
		table then to trailing true union unique user using variadic when where window with`) {
		pgReserved[w] = true
	}
}

// TestReservedWords: the switch says exactly the list's words are reserved
// (and not their prefixes, extensions or upper-case forms).
func TestReservedWords(t *testing.T) {
	for w := range pgReserved {
		if !reserved(w) {
			t.Errorf("%q is reserved; reserved says not", w)
		}
		for _, n := range []string{w[:len(w)-1], w + "s", "x" + w, strings.ToUpper(w)} {
			if reserved(n) != pgReserved[n] {
				t.Errorf("reserved(%q) = %v, want %v", n, reserved(n), pgReserved[n])
			}
		}
	}
	for _, n := range []string{"", "id", "status", "lease_token", "worker_id", "submissions"} {
		if reserved(n) {
			t.Errorf("reserved(%q) is true", n)
		}
	}
}

// ident renders an identifier, quoted when it is not a plain lower-case name
// or is a reserved word.
func fmtIdent(s string) string {
	plain := s != "" && !pgReserved[s]
	for i, r := range s {
		if !(r == '_' || (r >= 'a' && r <= 'z') || (i > 0 && r >= '0' && r <= '9')) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// String renders a row with its columns in name order: {id=1 status='pending'}.
func fmtRow(r Row) string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + fmtLiteral(r[k])
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// String renders a request for traces: "req 3 atomic: BEGIN; ...".
func fmtRequest(r Request) string {
	parts := make([]string, len(r.Stmts))
	for i, s := range r.Stmts {
		parts[i] = fmtStmt(s)
	}
	kind := ""
	if r.Atomic {
		kind = " atomic"
	}
	return fmt.Sprintf("req %d%s: %s", r.ID, kind, strings.Join(parts, "; "))
}

// String renders a result: its tag or error, with small row sets inline.
func fmtResult(r Result) string {
	if r.Err != nil {
		return r.Err.Error()
	}
	s := r.Tag
	switch {
	case strings.HasPrefix(s, "VACUUM"):
		s += fmt.Sprintf(" removed=%d remain=%d dead_not_removable=%d", r.Vacuum.Removed, r.Vacuum.Remain, r.Vacuum.DeadNotRemovable)
	case r.Locked:
		s += " true"
	}
	if len(r.Rows) > 0 && len(r.Rows) <= 3 {
		parts := make([]string, len(r.Rows))
		for i, row := range r.Rows {
			parts[i] = fmtRow(row)
		}
		s += " " + strings.Join(parts, " ")
	}
	if r.Notice != "" {
		s += " (" + r.Notice + ")"
	}
	return s
}

// String renders a response for traces: "resp 3: BEGIN; UPDATE 1; COMMIT".
func fmtResponse(r Response) string {
	parts := make([]string, len(r.Results))
	for i, res := range r.Results {
		parts[i] = fmtResult(res)
	}
	return fmt.Sprintf("resp %d: %s", r.ID, strings.Join(parts, "; "))
}

func sqlName(r *rand.Rand) string {
	names := []string{"id", "status", "lease_token", "order", "user", "Mixed", "a\"b", "x1", "1x", "", "select", "_p", "ok_2", "é"}
	return names[r.IntN(len(names))]
}

func sqlValue(r *rand.Rand, depth int) Value {
	switch r.IntN(14) {
	case 0:
		return nil
	case 1:
		return []string{"", "it's", "plain", "a''b", "\x00\xff"}[r.IntN(5)]
	case 2:
		return r.IntN(2) == 0
	case 3:
		return clock.Time(r.Int64N(1 << 50))
	case 4:
		return []time.Duration{3 * time.Second, 1500 * time.Millisecond, 1234567, 0, -2 * time.Second}[r.IntN(5)]
	case 5:
		if depth < 2 {
			return sqlExpr(r, depth+1)
		}
		return int64(7)
	case 6:
		return r.IntN(1000) - 500
	case 7:
		return int32(r.IntN(100))
	case 8:
		return uint8(r.IntN(100))
	case 9:
		return 3.5
	case 10:
		return r.Int64()
	case 11:
		return r.Uint64()
	case 12:
		return clock.Time(-r.Int64N(1e12))
	default:
		return []byte("x")
	}
}

func sqlExpr(r *rand.Rand, depth int) Expr {
	e := Expr{Kind: ExprKind(r.IntN(10)), Val: sqlValue(r, depth+1), Col: sqlName(r),
		Dur: []time.Duration{time.Second, 20 * time.Millisecond, 7 * time.Microsecond, 1500 * time.Microsecond, -3 * time.Second}[r.IntN(5)]}
	if depth < 3 {
		for range r.IntN(4) {
			e.Args = append(e.Args, sqlExpr(r, depth+1))
		}
	}
	return e
}

func sqlStmt(r *rand.Rand) Stmt {
	s := Stmt{Kind: StmtKind(r.IntN(18)), Table: sqlName(r), Limit: r.IntN(3) * r.IntN(20), Lock: Lock(r.IntN(5)),
		OnConflictDoNothing: r.IntN(2) == 0, Returning: r.IntN(2) == 0, Key: r.Int64N(1<<40) - 1<<39, GID: []string{"g1", "it's", ""}[r.IntN(3)],
		Dur: []time.Duration{0, 3 * time.Second, 1500 * time.Microsecond, 2 * time.Millisecond, 7, -time.Second}[r.IntN(6)]}
	if r.IntN(3) > 0 {
		s.Values = Row{}
		for range r.IntN(4) {
			s.Values[sqlName(r)] = sqlValue(r, 0)
		}
	}
	for range r.IntN(3) {
		s.Assigns = append(s.Assigns, Assign{Col: sqlName(r), Expr: sqlExpr(r, 0)})
	}
	for range r.IntN(4) {
		c := Cond{Col: sqlName(r), Op: []Op{Eq, Ne, Lt, Le, Gt, Ge, IsNull, IsNotNull, In}[r.IntN(9)], Right: sqlExpr(r, 1)}
		for range r.IntN(3) {
			c.Set = append(c.Set, sqlValue(r, 0))
		}
		s.Where = append(s.Where, c)
	}
	for range r.IntN(3) {
		s.OrderBy = append(s.OrderBy, Order{Col: sqlName(r), Desc: r.IntN(2) == 0})
	}
	return s
}

func sqlResult(r *rand.Rand) Result {
	res := Result{Tag: []string{"INSERT 0 1", "UPDATE 2", "VACUUM", "SELECT 1", "", "COMMIT"}[r.IntN(6)], Locked: r.IntN(3) == 0,
		Notice: []string{"", "WARNING 25P01: there is no transaction in progress"}[r.IntN(2)],
		Vacuum: VacuumStats{Removed: r.IntN(5), Remain: r.IntN(9), DeadNotRemovable: r.IntN(3)}}
	if r.IntN(5) == 0 {
		res.Err = &Error{Code: "23505", Msg: "duplicate key it's"}
	}
	for range r.IntN(5) {
		row := Row{}
		for range r.IntN(3) {
			row[sqlName(r)] = sqlValue(r, 0)
		}
		res.Rows = append(res.Rows, row)
	}
	return res
}

// TestSQLAsFmt: statements, expressions, literals, identifiers, requests
// and responses render as fmt rendered them, on 20,000 random values of
// every kind (unknown kinds, bad expressions and unsupported values
// included).
func TestSQLAsFmt(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		st := sqlStmt(r)
		if got, want := st.SQL(), fmtStmt(st); got != want {
			t.Fatalf("#%d statement:\n got %q\nwant %q", i, got, want)
		}
		e := sqlExpr(r, 0)
		if got, want := e.SQL(), fmtExpr(e); got != want {
			t.Fatalf("#%d expression:\n got %q\nwant %q", i, got, want)
		}
		v := sqlValue(r, 0)
		if got, want := literal(v), fmtLiteral(v); got != want {
			t.Fatalf("#%d literal of %#v:\n got %q\nwant %q", i, v, got, want)
		}
		if n := sqlName(r); ident(n) != fmtIdent(n) {
			t.Fatalf("#%d identifier %q: got %q, want %q", i, n, ident(n), fmtIdent(n))
		}
		req := Request{ID: r.Uint64N(1000), Atomic: r.IntN(2) == 0}
		for range r.IntN(4) {
			req.Stmts = append(req.Stmts, sqlStmt(r))
		}
		if got, want := req.String(), fmtRequest(req); got != want {
			t.Fatalf("#%d request:\n got %q\nwant %q", i, got, want)
		}
		resp := Response{ID: r.Uint64N(1000)}
		for range r.IntN(4) {
			resp.Results = append(resp.Results, sqlResult(r))
		}
		if got, want := resp.String(), fmtResponse(resp); got != want {
			t.Fatalf("#%d response:\n got %q\nwant %q", i, got, want)
		}
	}
}

// TestTimestampAsFormat: appendTimestamp renders as time's AppendFormat with
// the literal's layout: fractions with trailing zeros (trimmed, or no point
// at all), before the epoch, and years time renders differently (past
// 9999, before 0).
func TestTimestampAsFormat(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const layout = "2006-01-02 15:04:05.999999"
	check := func(tm time.Time) {
		if got, want := string(appendTimestamp(nil, tm)), tm.Format(layout); got != want {
			t.Fatalf("%v: got %q, want %q", tm, got, want)
		}
	}
	for _, d := range []time.Duration{0, 1, 999, 1000, 100 * time.Microsecond, 120 * time.Millisecond, time.Second, -1, -time.Microsecond, -time.Hour} {
		check(Epoch.Add(d))
	}
	for range 20000 {
		d := time.Duration(r.Int64())
		switch r.IntN(4) {
		case 0:
			d = d.Truncate(time.Millisecond * time.Duration(1+r.IntN(100)))
		case 1:
			d %= 24 * time.Hour
		}
		check(Epoch.Add(d))
	}
	for _, y := range []int{-1, 0, 9, 99, 999, 9999, 10000, 123456} {
		check(time.Date(y, 3, 4, 5, 6, 7, 8000, time.UTC))
	}
}
