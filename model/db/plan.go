package db

// Statement plans: a data statement is compiled against its table once per
// shape and node, then reused. A statement's shape is everything compile
// looks at except its constants' values: the kind, the table, the WHERE's
// columns, operators and expression trees (with each constant's type), the
// SET list and the ORDER BY. Its constants are the statement's parameters,
// listed in one fixed order (paramsOf); a compiled expression reads them by
// index. Two statements with the same shape therefore get the same plan, and
// type checking, which depends only on types, gives the same answer. A
// statement that fails to compile is not cached: its error message quotes
// its own values. The cache belongs to the Node (a plan points at the node's
// tables): a crash throws it away with the rest of the node's memory, and
// runs in parallel goroutines share nothing.

import (
	"encoding/binary"
	"fmt"
)

// plan is a data statement compiled against its table.
type plan struct {
	t     *table
	where []ccond
	sets  []cset
	order []corder
	// The rows to visit: through the unique index lookup, or else through
	// the secondary index index, whose key the WHERE fixes (keyParams: the
	// parameters giving the key's columns, in the index's order); a full
	// scan when both are -1.
	lookup    int
	index     int
	keyParams []int
	nparams   int
}

type cset struct {
	col int
	e   cexpr
}

type corder struct {
	col  int
	desc bool
}

func (n *Node) table(name string) (*table, *Error) {
	t := n.byName[name]
	if t == nil {
		return nil, errf(CodeUndefinedTable, "relation %q does not exist", name)
	}
	return t, nil
}

// planFor returns the plan of a data statement other than INSERT, and
// appends its parameters to params.
func (n *Node) planFor(st *Stmt, params []Value) (*plan, []Value, *Error) {
	key, params, ok := shapeOf(n.keyBuf[:0], st, params)
	n.keyBuf = key
	if ok {
		if p := n.plans[string(key)]; p != nil {
			return p, params, nil
		}
	}
	p, err := compile(n, st, len(params))
	if err != nil {
		return nil, params, err
	}
	if ok {
		if n.plans == nil {
			n.plans = map[string]*plan{}
		}
		n.plans[string(key)] = p
	}
	return p, params, nil
}

// compile compiles a statement with nparams parameters (as paramsOf lists
// them).
func compile(n *Node, st *Stmt, nparams int) (*plan, *Error) {
	t, err := n.table(st.Table)
	if err != nil {
		return nil, err
	}
	c := &compiler{t: t}
	p := &plan{t: t, lookup: -1, index: -1, nparams: nparams}
	for _, cd := range st.Where {
		cc, err := c.compileCond(cd)
		if err != nil {
			return nil, err
		}
		p.where = append(p.where, cc)
	}
	for _, a := range st.Assigns {
		i, ok := t.cols[a.Col]
		if !ok {
			return nil, errf(CodeUndefinedColumn, "column %q of relation %q does not exist", a.Col, t.def.Name)
		}
		e, err := c.compileExpr(a.Expr)
		if err != nil {
			return nil, err
		}
		if e.typ != tNull && e.typ != t.def.Columns[i].Type {
			return nil, mismatch(a.Col, t.def.Columns[i].Type, e)
		}
		p.sets = append(p.sets, cset{col: i, e: e})
	}
	for _, o := range st.OrderBy {
		i, ok := t.cols[o.Col]
		if !ok {
			return nil, errf(CodeUndefinedColumn, "column %q does not exist", o.Col)
		}
		p.order = append(p.order, corder{col: i, desc: o.Desc})
	}
	if c.param != nparams {
		panic(fmt.Sprintf("db: statement %s: compile found %d parameters, paramsOf %d", st.SQL(), c.param, nparams))
	}
	// An index lookup when the WHERE fixes every column of a unique index;
	// else a secondary index scan when it fixes every column of one.
	for i, cols := range t.uniq {
		if ks, ok := p.fixes(cols); ok {
			p.lookup, p.keyParams = i, ks
			return p, nil
		}
	}
	for i, ix := range t.sidx {
		if ks, ok := p.fixes(ix.cols); ok {
			p.index, p.keyParams = i, ks
			return p, nil
		}
	}
	return p, nil
}

// fixes reports whether the WHERE has "col = constant" (not NULL) for each
// of cols, and returns those constants' parameters.
func (p *plan) fixes(cols []int) ([]int, bool) {
	var ks []int
	for _, col := range cols {
		found := false
		for _, c := range p.where {
			if c.col == col && c.op == Eq && c.right.kind == EConst && c.right.typ != tNull {
				ks = append(ks, c.right.param)
				found = true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return ks, true
}

// key encodes the index key the statement's parameters give (lookup or
// index).
func (p *plan) key(buf []byte, params []Value) []byte {
	for _, k := range p.keyParams {
		buf = appendKey(buf, params[k])
	}
	return buf
}

// shapeOf appends the statement's shape to key and its parameters to
// params. ok is false when a constant has a type no column can hold (the
// statement will not compile; it is not cached).
func shapeOf(key []byte, st *Stmt, params []Value) ([]byte, []Value, bool) {
	ok := true
	key = append(key, byte(st.Kind))
	key = appendStr(key, st.Table)
	for i := range st.Where {
		c := &st.Where[i]
		key = append(key, 'w')
		key = appendStr(key, c.Col)
		key = appendStr(key, string(c.Op))
		switch c.Op {
		case IsNull, IsNotNull:
		case In:
			key = binary.AppendUvarint(key, uint64(len(c.Set)))
			for _, v := range c.Set {
				nv, typ, good := normalize(v)
				if !good {
					ok = false
					nv = v
				}
				key = append(key, byte(typ))
				params = append(params, nv)
			}
		default:
			var good bool
			key, params, good = exprShape(key, c.Right, params)
			ok = ok && good
		}
	}
	for i := range st.Assigns {
		a := &st.Assigns[i]
		key = append(key, 'a')
		key = appendStr(key, a.Col)
		var good bool
		key, params, good = exprShape(key, a.Expr, params)
		ok = ok && good
	}
	for _, o := range st.OrderBy {
		key = append(key, 'o')
		key = appendStr(key, o.Col)
		if o.Desc {
			key = append(key, 1)
		} else {
			key = append(key, 0)
		}
	}
	return key, params, ok
}

// exprShape appends an expression's shape to key and its constants to
// params, in compileExpr's order.
func exprShape(key []byte, e Expr, params []Value) ([]byte, []Value, bool) {
	if e.Kind == EConst {
		if ex, isExpr := e.Val.(Expr); isExpr {
			return exprShape(key, ex, params) // compileExpr unwraps it too
		}
	}
	key = append(key, byte(e.Kind))
	ok := true
	switch e.Kind {
	case EConst:
		v, typ, good := normalize(e.Val)
		if !good {
			ok = false
			v = e.Val
		}
		key = append(key, byte(typ))
		params = append(params, v)
	case ECol:
		key = appendStr(key, e.Col)
	case EInterval:
		key = binary.AppendVarint(key, int64(e.Dur))
	case EAdd, EGreatest, ECase:
		key = binary.AppendUvarint(key, uint64(len(e.Args)))
		for _, a := range e.Args {
			var good bool
			key, params, good = exprShape(key, a, params)
			ok = ok && good
		}
	}
	return key, params, ok
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}
