package db

// Rendering: every statement as real PostgreSQL SQL with literals (the same
// text can be sent to a server), and canonical String forms of the messages
// for traces.

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fencesim/fencesim/clock"
)

// Epoch is the wall-clock instant that simulated time 0 stands for when a
// timestamp is rendered as SQL (PostgreSQL's own epoch). Timestamps render
// with microsecond precision, PostgreSQL's.
var Epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// SQL renders the statement as PostgreSQL SQL with literal values. Columns
// of an INSERT appear in name order. Timestamps are rendered relative to
// Epoch; pg_prepared_xacts' age is rendered as bigint nanoseconds, the
// model's representation.
func (s Stmt) SQL() string {
	var b strings.Builder
	switch s.Kind {
	case SBegin:
		return "BEGIN"
	case SCommit:
		return "COMMIT"
	case SRollback:
		return "ROLLBACK"
	case SInsert:
		fmt.Fprintf(&b, "INSERT INTO %s", ident(s.Table))
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
				vals[i] = literal(s.Values[c])
				cols[i] = ident(c)
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
		fmt.Fprintf(&b, "UPDATE %s SET ", ident(s.Table))
		for i, a := range s.Assigns {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s = %s", ident(a.Col), a.Expr.SQL())
		}
		b.WriteString(s.Where.SQL())
		if s.Returning {
			b.WriteString(" RETURNING *")
		}
	case SDelete:
		fmt.Fprintf(&b, "DELETE FROM %s%s", ident(s.Table), s.Where.SQL())
		if s.Returning {
			b.WriteString(" RETURNING *")
		}
	case SSelect:
		fmt.Fprintf(&b, "SELECT * FROM %s%s", ident(s.Table), s.Where.SQL())
		if len(s.OrderBy) > 0 {
			parts := make([]string, len(s.OrderBy))
			for i, o := range s.OrderBy {
				parts[i] = ident(o.Col)
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
		return "PREPARE TRANSACTION " + quoteLit(s.GID)
	case SCommitPrepared:
		return "COMMIT PREPARED " + quoteLit(s.GID)
	case SRollbackPrepared:
		return "ROLLBACK PREPARED " + quoteLit(s.GID)
	case SPreparedXacts:
		return "SELECT transaction::text::bigint AS transaction, gid, prepared, " +
			"(extract(epoch FROM now() - prepared) * 1000000000)::bigint AS age FROM pg_prepared_xacts ORDER BY prepared, gid"
	case SSelectNow:
		return "SELECT now() AS now"
	case SVacuum:
		if s.Table == "" {
			return "VACUUM (VERBOSE)"
		}
		return "VACUUM (VERBOSE) " + ident(s.Table)
	default:
		return fmt.Sprintf("/* unknown statement kind %d */", s.Kind)
	}
	return b.String()
}

// String renders the statement as SQL.
func (s Stmt) String() string { return s.SQL() }

// SQL renders the WHERE clause (with a leading space), or "" when empty.
func (w Where) SQL() string {
	if len(w) == 0 {
		return ""
	}
	parts := make([]string, len(w))
	for i, c := range w {
		parts[i] = c.SQL()
	}
	return " WHERE " + strings.Join(parts, " AND ")
}

// SQL renders one condition.
func (c Cond) SQL() string {
	switch c.Op {
	case IsNull, IsNotNull:
		return ident(c.Col) + " " + string(c.Op)
	case In:
		if len(c.Set) == 0 {
			return "FALSE"
		}
		vals := make([]string, len(c.Set))
		for i, v := range c.Set {
			vals[i] = literal(v)
		}
		return fmt.Sprintf("%s IN (%s)", ident(c.Col), strings.Join(vals, ", "))
	}
	return fmt.Sprintf("%s %s %s", ident(c.Col), c.Op, c.Right.SQL())
}

// SQL renders an expression.
func (e Expr) SQL() string {
	switch e.Kind {
	case EConst:
		return literal(e.Val)
	case ECol:
		return ident(e.Col)
	case ENow:
		return "now()"
	case EStmtNow:
		return "statement_timestamp()"
	case EInterval:
		return intervalLit(e.Dur)
	case EAdd:
		if len(e.Args) == 2 {
			return fmt.Sprintf("(%s + %s)", e.Args[0].SQL(), e.Args[1].SQL())
		}
	case EGreatest:
		parts := make([]string, len(e.Args))
		for i, a := range e.Args {
			parts[i] = a.SQL()
		}
		return "greatest(" + strings.Join(parts, ", ") + ")"
	case ECase:
		if len(e.Args) == 3 {
			return "CASE WHEN " + e.Args[0].SQL() + " THEN " + e.Args[1].SQL() + " ELSE " + e.Args[2].SQL() + " END"
		}
	}
	return fmt.Sprintf("/* bad expression kind %d */ NULL", e.Kind)
}

// literal renders a value as an SQL literal.
func literal(v Value) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return quoteLit(x)
	case bool:
		if x {
			return "true"
		}
		return "false"
	case clock.Time:
		return "timestamptz '" + Epoch.Add(time.Duration(x)).Format("2006-01-02 15:04:05.999999") + "+00'"
	case time.Duration:
		return intervalLit(x)
	case Expr:
		return x.SQL()
	}
	if n, _, ok := normalize(v); ok {
		return strconv.FormatInt(n.(int64), 10)
	}
	return fmt.Sprintf("/* unsupported %T */ NULL", v)
}

func intervalLit(d time.Duration) string {
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
func quoteLit(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

var reserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric both case cast check collate
		column constraint create current_catalog current_date current_role current_time current_timestamp
		current_user default deferrable desc distinct do else end except false fetch for foreign from grant
		group having in initially intersect into lateral leading limit localtime localtimestamp not null
		offset on only or order placing primary references returning select session_user some symmetric
		table then to trailing true union unique user using variadic when where window with`) {
		reserved[w] = true
	}
}

// ident renders an identifier, quoted when it is not a plain lower-case name
// or is a reserved word.
func ident(s string) string {
	plain := s != "" && !reserved[s]
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
func (r Row) String() string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + literal(r[k])
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// String renders a request for traces: "req 3 atomic: BEGIN; ...".
func (r Request) String() string {
	parts := make([]string, len(r.Stmts))
	for i, s := range r.Stmts {
		parts[i] = s.SQL()
	}
	kind := ""
	if r.Atomic {
		kind = " atomic"
	}
	return fmt.Sprintf("req %d%s: %s", r.ID, kind, strings.Join(parts, "; "))
}

// String renders a result: its tag or error, with small row sets inline.
func (r Result) String() string {
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
			parts[i] = row.String()
		}
		s += " " + strings.Join(parts, " ")
	}
	if r.Notice != "" {
		s += " (" + r.Notice + ")"
	}
	return s
}

// String renders a response for traces: "resp 3: BEGIN; UPDATE 1; COMMIT".
func (r Response) String() string {
	parts := make([]string, len(r.Results))
	for i, res := range r.Results {
		parts[i] = res.String()
	}
	return fmt.Sprintf("resp %d: %s", r.ID, strings.Join(parts, "; "))
}

// SQL renders the table's definition as PostgreSQL DDL: serial columns are
// bigserial, Int is bigint, Timestamp is timestamptz.
func (t Table) SQL() string {
	var parts []string
	for _, c := range t.Columns {
		typ := map[ColType]string{Int: "bigint", Text: "text", Bool: "boolean", Timestamp: "timestamptz"}[c.Type]
		if c.Serial {
			typ = "bigserial"
		}
		col := ident(c.Name) + " " + typ
		if c.NotNull {
			col += " NOT NULL"
		}
		if c.Default != nil {
			col += " DEFAULT " + literal(c.Default)
		}
		parts = append(parts, col)
	}
	cols := func(names []string) string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = ident(n)
		}
		return strings.Join(out, ", ")
	}
	parts = append(parts, "PRIMARY KEY ("+cols(t.PrimaryKey)+")")
	for _, u := range t.Unique {
		parts = append(parts, "UNIQUE ("+cols(u)+")")
	}
	return fmt.Sprintf("CREATE TABLE %s (%s)", ident(t.Name), strings.Join(parts, ", "))
}
