package db

// Rendering: every statement as real PostgreSQL SQL with literals (the same
// text can be sent to a server), and canonical String forms of the messages
// for traces.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/traces/canon"
)

// Epoch is the wall-clock instant that simulated time 0 stands for when a
// timestamp is rendered as SQL (PostgreSQL's own epoch). Timestamps render
// with microsecond precision, PostgreSQL's.
var Epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// SQL renders the statement as PostgreSQL SQL with literal values. Columns
// of an INSERT appear in name order. Timestamps are rendered relative to
// Epoch; pg_prepared_xacts' age is rendered as bigint nanoseconds, the
// model's representation.
func (s Stmt) SQL() string { return string(s.AppendSQL(make([]byte, 0, 96))) }

// AppendSQL appends the statement's SQL to b: SQL, without the
// intermediate strings (a trace renders every statement it sends).
func (s Stmt) AppendSQL(b []byte) []byte {
	switch s.Kind {
	case SBegin:
		return append(b, "BEGIN"...)
	case SCommit:
		return append(b, "COMMIT"...)
	case SRollback:
		return append(b, "ROLLBACK"...)
	case SInsert:
		b = append(b, "INSERT INTO "...)
		b = appendIdent(b, s.Table)
		if len(s.Values) == 0 {
			b = append(b, " DEFAULT VALUES"...)
		} else {
			var buf [8]string
			cols := buf[:0]
			for c := range s.Values {
				cols = append(cols, c)
			}
			canon.SortKeys(cols)
			b = append(b, " ("...)
			for i, c := range cols {
				if i > 0 {
					b = append(b, ", "...)
				}
				b = appendIdent(b, c)
			}
			b = append(b, ") VALUES ("...)
			for i, c := range cols {
				if i > 0 {
					b = append(b, ", "...)
				}
				b = appendLiteral(b, s.Values[c])
			}
			b = append(b, ')')
		}
		if s.OnConflictDoNothing {
			b = append(b, " ON CONFLICT DO NOTHING"...)
		}
		if s.Returning {
			b = append(b, " RETURNING *"...)
		}
	case SUpdate:
		b = append(b, "UPDATE "...)
		b = appendIdent(b, s.Table)
		b = append(b, " SET "...)
		for i, a := range s.Assigns {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendIdent(b, a.Col)
			b = append(b, " = "...)
			b = a.Expr.AppendSQL(b)
		}
		b = s.Where.AppendSQL(b)
		if s.Returning {
			b = append(b, " RETURNING *"...)
		}
	case SDelete:
		b = append(b, "DELETE FROM "...)
		b = appendIdent(b, s.Table)
		b = s.Where.AppendSQL(b)
		if s.Returning {
			b = append(b, " RETURNING *"...)
		}
	case SSelect:
		b = append(b, "SELECT * FROM "...)
		b = appendIdent(b, s.Table)
		b = s.Where.AppendSQL(b)
		for i, o := range s.OrderBy {
			if i == 0 {
				b = append(b, " ORDER BY "...)
			} else {
				b = append(b, ", "...)
			}
			b = appendIdent(b, o.Col)
			if o.Desc {
				b = append(b, " DESC"...)
			}
		}
		if s.Limit > 0 {
			b = append(b, " LIMIT "...)
			b = strconv.AppendInt(b, int64(s.Limit), 10)
		}
		switch s.Lock {
		case ForUpdate:
			b = append(b, " FOR UPDATE"...)
		case ForUpdateSkipLocked:
			b = append(b, " FOR UPDATE SKIP LOCKED"...)
		case ForUpdateNoWait:
			b = append(b, " FOR UPDATE NOWAIT"...)
		}
	case SSetLockTimeout:
		switch {
		case s.Dur == 0:
			return append(b, "SET lock_timeout = 0"...)
		case s.Dur%time.Millisecond == 0:
			return fmt.Appendf(b, "SET lock_timeout = '%dms'", s.Dur/time.Millisecond)
		default:
			return fmt.Appendf(b, "SET lock_timeout = '%dus'", s.Dur/time.Microsecond)
		}
	case STryAdvisoryLock:
		return fmt.Appendf(b, "SELECT pg_try_advisory_lock(%d)", s.Key)
	case SAdvisoryUnlock:
		return fmt.Appendf(b, "SELECT pg_advisory_unlock(%d)", s.Key)
	case SPrepare:
		return appendQuoted(append(b, "PREPARE TRANSACTION "...), s.GID)
	case SCommitPrepared:
		return appendQuoted(append(b, "COMMIT PREPARED "...), s.GID)
	case SRollbackPrepared:
		return appendQuoted(append(b, "ROLLBACK PREPARED "...), s.GID)
	case SPreparedXacts:
		return append(b, "SELECT transaction::text::bigint AS transaction, gid, prepared, "+
			"(extract(epoch FROM now() - prepared) * 1000000000)::bigint AS age FROM pg_prepared_xacts ORDER BY prepared, gid"...)
	case SSelectNow:
		return append(b, "SELECT now() AS now"...)
	case SVacuum:
		if s.Table == "" {
			return append(b, "VACUUM (VERBOSE)"...)
		}
		return appendIdent(append(b, "VACUUM (VERBOSE) "...), s.Table)
	default:
		return fmt.Appendf(b, "/* unknown statement kind %d */", s.Kind)
	}
	return b
}

// String renders the statement as SQL.
func (s Stmt) String() string { return s.SQL() }

// SQL renders the WHERE clause (with a leading space), or "" when empty.
func (w Where) SQL() string { return string(w.AppendSQL(nil)) }

// AppendSQL appends the WHERE clause to b (SQL).
func (w Where) AppendSQL(b []byte) []byte {
	for i, c := range w {
		if i == 0 {
			b = append(b, " WHERE "...)
		} else {
			b = append(b, " AND "...)
		}
		b = c.AppendSQL(b)
	}
	return b
}

// SQL renders one condition.
func (c Cond) SQL() string { return string(c.AppendSQL(nil)) }

// AppendSQL appends the condition to b (SQL).
func (c Cond) AppendSQL(b []byte) []byte {
	switch c.Op {
	case IsNull, IsNotNull:
		b = appendIdent(b, c.Col)
		b = append(b, ' ')
		return append(b, c.Op...)
	case In:
		if len(c.Set) == 0 {
			return append(b, "FALSE"...)
		}
		b = appendIdent(b, c.Col)
		b = append(b, " IN ("...)
		for i, v := range c.Set {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendLiteral(b, v)
		}
		return append(b, ')')
	}
	b = appendIdent(b, c.Col)
	b = append(b, ' ')
	b = append(b, c.Op...)
	b = append(b, ' ')
	return c.Right.AppendSQL(b)
}

// SQL renders an expression.
func (e Expr) SQL() string { return string(e.AppendSQL(nil)) }

// AppendSQL appends the expression to b (SQL).
func (e Expr) AppendSQL(b []byte) []byte {
	switch e.Kind {
	case EConst:
		return appendLiteral(b, e.Val)
	case ECol:
		return appendIdent(b, e.Col)
	case ENow:
		return append(b, "now()"...)
	case EStmtNow:
		return append(b, "statement_timestamp()"...)
	case EInterval:
		return appendInterval(b, e.Dur)
	case EAdd:
		if len(e.Args) == 2 {
			b = append(b, '(')
			b = e.Args[0].AppendSQL(b)
			b = append(b, " + "...)
			b = e.Args[1].AppendSQL(b)
			return append(b, ')')
		}
	case EGreatest:
		b = append(b, "greatest("...)
		for i, a := range e.Args {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = a.AppendSQL(b)
		}
		return append(b, ')')
	case ECase:
		if len(e.Args) == 3 {
			b = append(b, "CASE WHEN "...)
			b = e.Args[0].AppendSQL(b)
			b = append(b, " THEN "...)
			b = e.Args[1].AppendSQL(b)
			b = append(b, " ELSE "...)
			b = e.Args[2].AppendSQL(b)
			return append(b, " END"...)
		}
	}
	return fmt.Appendf(b, "/* bad expression kind %d */ NULL", e.Kind)
}

// literal renders a value as an SQL literal.
func literal(v Value) string { return string(appendLiteral(nil, v)) }

// appendLiteral appends a value as an SQL literal to b.
func appendLiteral(b []byte, v Value) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "NULL"...)
	case string:
		return appendQuoted(b, x)
	case bool:
		if x {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case clock.Time:
		b = append(b, "timestamptz '"...)
		b = appendTimestamp(b, Epoch.Add(time.Duration(x)))
		return append(b, "+00'"...)
	case time.Duration:
		return appendInterval(b, x)
	case Expr:
		return x.AppendSQL(b)
	case int64:
		return strconv.AppendInt(b, x, 10)
	}
	if n, _, ok := normalize(v); ok {
		return strconv.AppendInt(b, n.(int64), 10)
	}
	return fmt.Appendf(b, "/* unsupported %T */ NULL", v)
}

// appendTimestamp appends t as t.AppendFormat(b, "2006-01-02 15:04:05.999999")
// does, without parsing the layout at every statement a trace renders.
func appendTimestamp(b []byte, t time.Time) []byte {
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, "2006-01-02 15:04:05.999999")
	}
	hour, min, sec := t.Clock()
	b = append(b, byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-')
	b = append(b, byte('0'+int(month)/10), byte('0'+int(month)%10), '-', byte('0'+day/10), byte('0'+day%10), ' ')
	b = append(b, byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+min/10), byte('0'+min%10), ':', byte('0'+sec/10), byte('0'+sec%10))
	us := t.Nanosecond() / 1000
	if us == 0 {
		return b
	}
	var frac [7]byte
	frac[0] = '.'
	for i := 6; i >= 1; i-- {
		frac[i] = byte('0' + us%10)
		us /= 10
	}
	n := 7
	for frac[n-1] == '0' {
		n--
	}
	return append(b, frac[:n]...)
}

func appendInterval(b []byte, d time.Duration) []byte {
	switch {
	case d%time.Second == 0:
		b = append(b, "interval '"...)
		b = strconv.AppendInt(b, int64(d/time.Second), 10)
		return append(b, " seconds'"...)
	case d%time.Millisecond == 0:
		b = append(b, "interval '"...)
		b = strconv.AppendInt(b, int64(d/time.Millisecond), 10)
		return append(b, " milliseconds'"...)
	default:
		b = append(b, "interval '"...)
		b = strconv.AppendInt(b, int64(d/time.Microsecond), 10)
		return append(b, " microseconds'"...)
	}
}

// quoteLit quotes a string literal, doubling single quotes.
func quoteLit(s string) string { return string(appendQuoted(nil, s)) }

// appendQuoted appends s as a string literal, its single quotes doubled.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '\'')
	for {
		i := strings.IndexByte(s, '\'')
		if i < 0 {
			break
		}
		b = append(b, s[:i+1]...)
		b = append(b, '\'')
		s = s[i+1:]
	}
	b = append(b, s...)
	return append(b, '\'')
}

// reserved reports whether a lower-case name is one of PostgreSQL's reserved
// key words (which an identifier must quote): a switch, which Go compiles to
// a search by length and content, costs a fraction of a map's hashing at
// every identifier of every statement a trace renders.
func reserved(s string) bool {
	switch s {
	case "all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric", "both", "case", "cast",
		"check", "collate", "column", "constraint", "create", "current_catalog", "current_date", "current_role",
		"current_time", "current_timestamp", "current_user", "default", "deferrable", "desc", "distinct", "do",
		"else", "end", "except", "false", "fetch", "for", "foreign", "from", "grant", "group", "having", "in",
		"initially", "intersect", "into", "lateral", "leading", "limit", "localtime", "localtimestamp", "not",
		"null", "offset", "on", "only", "or", "order", "placing", "primary", "references", "returning", "select",
		"session_user", "some", "symmetric", "table", "then", "to", "trailing", "true", "union", "unique", "user",
		"using", "variadic", "when", "where", "window", "with":
		return true
	}
	return false
}

// ident renders an identifier, quoted when it is not a plain lower-case name
// or is a reserved word.
func ident(s string) string { return string(appendIdent(nil, s)) }

// appendIdent appends an identifier to b (ident).
func appendIdent(b []byte, s string) []byte {
	plain := s != ""
	for i := 0; i < len(s); i++ {
		r := s[i]
		if !(r == '_' || (r >= 'a' && r <= 'z') || (i > 0 && r >= '0' && r <= '9')) {
			plain = false
			break
		}
	}
	if plain && !reserved(s) {
		return append(b, s...)
	}
	b = append(b, '"')
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		b = append(b, s[:i+1]...)
		b = append(b, '"')
		s = s[i+1:]
	}
	b = append(b, s...)
	return append(b, '"')
}

// String renders a row with its columns in name order: {id=1 status='pending'}.
func (r Row) String() string { return string(r.appendString(nil)) }

func (r Row) appendString(b []byte) []byte {
	var buf [8]string
	keys := buf[:0]
	for k := range r {
		keys = append(keys, k)
	}
	canon.SortKeys(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, k...)
		b = append(b, '=')
		b = appendLiteral(b, r[k])
	}
	return append(b, '}')
}

// String renders a request for traces: "req 3 atomic: BEGIN; ...".
func (r Request) String() string { return string(r.AppendString(nil)) }

// AppendString appends the request's String to b: a trace renders every
// request sent (traces.AppendValue), without the intermediate strings.
func (r Request) AppendString(b []byte) []byte {
	b = append(b, "req "...)
	b = strconv.AppendUint(b, r.ID, 10)
	if r.Atomic {
		b = append(b, " atomic"...)
	}
	b = append(b, ": "...)
	for i := range r.Stmts {
		if i > 0 {
			b = append(b, "; "...)
		}
		b = r.Stmts[i].AppendSQL(b)
	}
	return b
}

// String renders a result: its tag or error, with small row sets inline.
func (r Result) String() string { return string(r.appendString(nil)) }

func (r Result) appendString(b []byte) []byte {
	if r.Err != nil {
		return append(b, r.Err.Error()...)
	}
	b = append(b, r.Tag...)
	switch {
	case strings.HasPrefix(r.Tag, "VACUUM"):
		b = fmt.Appendf(b, " removed=%d remain=%d dead_not_removable=%d", r.Vacuum.Removed, r.Vacuum.Remain, r.Vacuum.DeadNotRemovable)
	case r.Locked:
		b = append(b, " true"...)
	}
	if len(r.Rows) > 0 && len(r.Rows) <= 3 {
		for _, row := range r.Rows {
			b = append(b, ' ')
			b = row.appendString(b)
		}
	}
	if r.Notice != "" {
		b = append(b, " ("...)
		b = append(b, r.Notice...)
		b = append(b, ')')
	}
	return b
}

// String renders a response for traces: "resp 3: BEGIN; UPDATE 1; COMMIT".
func (r Response) String() string { return string(r.AppendString(nil)) }

// AppendString appends the response's String to b (as Request's).
func (r Response) AppendString(b []byte) []byte {
	b = append(b, "resp "...)
	b = strconv.AppendUint(b, r.ID, 10)
	b = append(b, ": "...)
	for i := range r.Results {
		if i > 0 {
			b = append(b, "; "...)
		}
		b = r.Results[i].appendString(b)
	}
	return b
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
