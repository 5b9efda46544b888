package db

// Values, types, and compiled expressions: a statement is type-checked and
// compiled against its table once, before it touches a row, so evaluation
// itself cannot fail.

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fencesim/fencesim/clock"
)

// Internal types of expressions that are not column types.
const (
	tNull     ColType = 0   // the NULL literal: fits every column
	tInterval ColType = 100 // an interval (time.Duration); never stored
)

func typeName(t ColType) string {
	switch t {
	case Int:
		return "bigint"
	case Text:
		return "text"
	case Bool:
		return "boolean"
	case Timestamp:
		return "timestamptz"
	case tInterval:
		return "interval"
	case tNull:
		return "unknown"
	}
	return fmt.Sprintf("type(%d)", t)
}

// normalize converts a client value to a stored one (ints to int64).
func normalize(v Value) (Value, ColType, bool) {
	switch x := v.(type) {
	case nil:
		return nil, tNull, true
	case int64:
		return v, Int, true // v, not x: no new interface value
	case int:
		return int64(x), Int, true
	case int32:
		return int64(x), Int, true
	case int16:
		return int64(x), Int, true
	case int8:
		return int64(x), Int, true
	case uint32:
		return int64(x), Int, true
	case uint16:
		return int64(x), Int, true
	case uint8:
		return int64(x), Int, true
	case uint64:
		if x <= 1<<63-1 {
			return int64(x), Int, true
		}
	case uint:
		if uint64(x) <= 1<<63-1 {
			return int64(x), Int, true
		}
	case string:
		return v, Text, true
	case bool:
		return v, Bool, true
	case clock.Time:
		return v, Timestamp, true
	}
	return nil, tNull, false
}

// compare orders two non-NULL values of one type.
func compare(a, b Value) int {
	switch x := a.(type) {
	case int64:
		return cmp.Compare(x, b.(int64))
	case string:
		return strings.Compare(x, b.(string))
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case clock.Time:
		return cmp.Compare(x, b.(clock.Time))
	case time.Duration:
		return cmp.Compare(x, b.(time.Duration))
	}
	panic(fmt.Sprintf("db: compare of unsupported value %T(%v)", a, a))
}

// appendKey encodes a value into an index key, unambiguously.
func appendKey(b []byte, v Value) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, 'n', ';')
	case int64:
		b = append(b, 'i')
		b = strconv.AppendInt(b, x, 10)
		return append(b, ';')
	case string:
		b = append(b, 's')
		b = strconv.AppendInt(b, int64(len(x)), 10)
		b = append(b, ':')
		return append(b, x...)
	case bool:
		if x {
			return append(b, 't', ';')
		}
		return append(b, 'f', ';')
	case clock.Time:
		b = append(b, 'T')
		b = strconv.AppendInt(b, int64(x), 10)
		return append(b, ';')
	}
	panic(fmt.Sprintf("db: key of unsupported value %T(%v)", v, v))
}

// keyOf encodes the values of the given columns of a row; ok is false when
// one of them is NULL (NULLs never conflict in a unique index).
func keyOf(row []Value, cols []int) (string, bool) {
	var buf [64]byte
	b, ok := appendKeyOf(buf[:0], row, cols)
	if !ok {
		return "", false
	}
	return string(b), true
}

// appendKeyOf appends keyOf's encoding to b.
func appendKeyOf(b []byte, row []Value, cols []int) ([]byte, bool) {
	for _, c := range cols {
		if row[c] == nil {
			return b, false
		}
		b = appendKey(b, row[c])
	}
	return b, true
}

// ---- compiled expressions ----

// A compiled expression takes its constants from the statement's parameters
// (params, in the order paramsOf lists them), so that one compiled plan
// serves every statement of its shape (see plan.go).

type cexpr struct {
	kind  ExprKind
	param int   // EConst: the index of its value in params
	val   Value // EConst: the value it was compiled with (for error messages only)
	col   int
	dur   time.Duration
	args  []cexpr
	typ   ColType
}

// compiler assigns parameter indexes in the order paramsOf appends them.
type compiler struct {
	t     *table // nil: no row, column references are errors
	param int
}

// compileExpr type-checks e against c.t.
func (c *compiler) compileExpr(e Expr) (cexpr, *Error) {
	switch e.Kind {
	case EConst:
		if ex, ok := e.Val.(Expr); ok {
			return c.compileExpr(ex)
		}
		v, typ, ok := normalize(e.Val)
		if !ok {
			return cexpr{}, errf(CodeDatatypeMismatch, "unsupported value %v of Go type %T", e.Val, e.Val)
		}
		c.param++
		return cexpr{kind: EConst, param: c.param - 1, val: v, typ: typ}, nil
	case ECol:
		t := c.t
		if t == nil {
			return cexpr{}, errf(CodeUndefinedColumn, "column reference %q is not allowed here", e.Col)
		}
		i, ok := t.cols[e.Col]
		if !ok {
			return cexpr{}, errf(CodeUndefinedColumn, "column %q of relation %q does not exist", e.Col, t.def.Name)
		}
		return cexpr{kind: ECol, col: i, typ: t.def.Columns[i].Type}, nil
	case ENow:
		return cexpr{kind: ENow, typ: Timestamp}, nil
	case EStmtNow:
		return cexpr{kind: EStmtNow, typ: Timestamp}, nil
	case EInterval:
		return cexpr{kind: EInterval, dur: e.Dur, typ: tInterval}, nil
	case EAdd:
		if len(e.Args) != 2 {
			return cexpr{}, errf(CodeDatatypeMismatch, "+ needs two operands, got %d", len(e.Args))
		}
		a, err := c.compileExpr(e.Args[0])
		if err != nil {
			return cexpr{}, err
		}
		b, err := c.compileExpr(e.Args[1])
		if err != nil {
			return cexpr{}, err
		}
		var typ ColType
		switch {
		case a.typ == tNull || b.typ == tNull:
			typ = a.typ | b.typ // NULL + x is a NULL of x's type
		case a.typ == Int && b.typ == Int:
			typ = Int
		case a.typ == Timestamp && b.typ == tInterval, a.typ == tInterval && b.typ == Timestamp:
			typ = Timestamp
		case a.typ == tInterval && b.typ == tInterval:
			typ = tInterval
		default:
			return cexpr{}, errf(CodeDatatypeMismatch, "operator does not exist: %s + %s", typeName(a.typ), typeName(b.typ))
		}
		return cexpr{kind: EAdd, args: []cexpr{a, b}, typ: typ}, nil
	case EGreatest:
		if len(e.Args) == 0 {
			return cexpr{}, errf(CodeDatatypeMismatch, "greatest() needs at least one argument")
		}
		out := cexpr{kind: EGreatest, typ: tNull}
		for _, x := range e.Args {
			ce, err := c.compileExpr(x)
			if err != nil {
				return cexpr{}, err
			}
			if ce.typ != tNull {
				if out.typ != tNull && out.typ != ce.typ {
					return cexpr{}, errf(CodeDatatypeMismatch, "greatest() types %s and %s cannot be matched", typeName(out.typ), typeName(ce.typ))
				}
				out.typ = ce.typ
			}
			out.args = append(out.args, ce)
		}
		return out, nil
	}
	return cexpr{}, errf(CodeDatatypeMismatch, "unknown expression kind %d", e.Kind)
}

// evalCtx is what an expression reads besides the row: the statement's
// parameters and now() (the transaction's start).
type evalCtx struct {
	params []Value
	now    clock.Time
	stmt   clock.Time // statement_timestamp()
}

// eval computes the expression on a row.
func (e *cexpr) eval(row []Value, x *evalCtx) Value {
	switch e.kind {
	case EConst:
		return x.params[e.param]
	case ECol:
		return row[e.col]
	case ENow:
		return x.now
	case EStmtNow:
		return x.stmt
	case EInterval:
		return e.dur
	case EAdd:
		a, b := e.args[0].eval(row, x), e.args[1].eval(row, x)
		if a == nil || b == nil {
			return nil
		}
		switch x := a.(type) {
		case int64:
			return x + b.(int64)
		case clock.Time:
			return x.Add(b.(time.Duration))
		case time.Duration:
			if y, ok := b.(clock.Time); ok {
				return y.Add(x)
			}
			return x + b.(time.Duration)
		}
		panic(fmt.Sprintf("db: + on %T", a))
	case EGreatest:
		var best Value
		for i := range e.args {
			v := e.args[i].eval(row, x)
			if v != nil && (best == nil || compare(v, best) > 0) {
				best = v
			}
		}
		return best
	}
	panic(fmt.Sprintf("db: eval of expression kind %d", e.kind))
}

type ccond struct {
	col        int
	op         Op
	right      cexpr
	set0, setN int // In: the set is params[set0 : set0+setN]
}

func (c *compiler) compileCond(cd Cond) (ccond, *Error) {
	t := c.t
	i, ok := t.cols[cd.Col]
	if !ok {
		return ccond{}, errf(CodeUndefinedColumn, "column %q of relation %q does not exist", cd.Col, t.def.Name)
	}
	typ := t.def.Columns[i].Type
	out := ccond{col: i, op: cd.Op}
	switch cd.Op {
	case IsNull, IsNotNull:
		return out, nil
	case In:
		out.set0 = c.param
		for _, v := range cd.Set {
			_, vt, ok := normalize(v)
			if !ok || (vt != tNull && vt != typ) {
				return ccond{}, errf(CodeDatatypeMismatch, "IN value %v does not match column %q of type %s", v, cd.Col, typeName(typ))
			}
			c.param++
		}
		out.setN = len(cd.Set)
		return out, nil
	case Eq, Ne, Lt, Le, Gt, Ge:
		r, err := c.compileExpr(cd.Right)
		if err != nil {
			return ccond{}, err
		}
		if r.typ != tNull && r.typ != typ {
			if r.kind == EConst && r.typ == Text {
				return ccond{}, mismatch(cd.Col, typ, r)
			}
			return ccond{}, errf(CodeDatatypeMismatch, "operator does not exist: %s %s %s (column %q)", typeName(typ), cd.Op, typeName(r.typ), cd.Col)
		}
		out.right = r
		return out, nil
	}
	return ccond{}, errf(CodeDatatypeMismatch, "unknown operator %q", cd.Op)
}

func (c *ccond) match(row []Value, x *evalCtx) bool {
	l := row[c.col]
	switch c.op {
	case IsNull:
		return l == nil
	case IsNotNull:
		return l != nil
	case In:
		if l == nil {
			return false
		}
		for _, v := range x.params[c.set0 : c.set0+c.setN] {
			if v != nil && compare(l, v) == 0 {
				return true
			}
		}
		return false
	}
	r := c.right.eval(row, x)
	if l == nil || r == nil {
		return false
	}
	d := compare(l, r)
	switch c.op {
	case Eq:
		return d == 0
	case Ne:
		return d != 0
	case Lt:
		return d < 0
	case Le:
		return d <= 0
	case Gt:
		return d > 0
	case Ge:
		return d >= 0
	}
	return false
}

func matchAll(conds []ccond, row []Value, x *evalCtx) bool {
	for i := range conds {
		if !conds[i].match(row, x) {
			return false
		}
	}
	return true
}

// rowOf is a version's data as a client Row, made on first use and shared
// by every result and commit record that shows this version (Rows are
// never modified once made: results and records are read-only).
func (t *table) rowOf(v *version) Row {
	if v.row == nil {
		v.row = t.toRow(v.data)
	}
	return v.row
}

// toRow renders stored values as a client Row (a fresh map).
func (t *table) toRow(data []Value) Row {
	r := make(Row, len(data))
	for i, c := range t.def.Columns {
		r[c.Name] = data[i]
	}
	return r
}

// mismatch is the error of an expression of the wrong type for a column.
// A string constant is an untyped literal in the rendered SQL, which
// PostgreSQL tries to parse as the column's type: 22P02 (the model does not
// parse it, even when PostgreSQL could).
func mismatch(col string, want ColType, e cexpr) *Error {
	if e.kind == EConst && e.typ == Text {
		return errf(CodeInvalidText, "invalid input syntax for type %s: %q (column %q)", typeName(want), e.val, col)
	}
	return errf(CodeDatatypeMismatch, "column %q is of type %s but expression is of type %s", col, typeName(want), typeName(e.typ))
}

func errf(code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}
