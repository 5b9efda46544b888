package db

// Statement execution: transaction control, data statements (with their
// waits and READ COMMITTED re-checks), advisory locks, prepared
// transactions, VACUUM.

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/sim"
)

// op is a data statement in progress; it survives waits.
// A session's statements use its one op in turn (a session runs one
// statement at a time), reusing its buffers.
type op struct {
	st       *Stmt
	p        *plan
	implicit bool // runs in its own (autocommit) transaction
	snap     snap
	x        evalCtx // the statement's parameters and now()
	cands    []cand  // rows the snapshot saw matching, in processing order
	// rest: with ORDER BY and LIMIT, the candidates not yet in cands, a
	// binary heap in processing order: cands grows from it as the
	// statement needs rows (see more), so a LIMIT 1 orders one row.
	rest []cand
	i    int
	ins  []Value // SInsert: the row to insert
	res  Result
	done bool
	err  *Error // set by a lock_timeout or deadlock check
	// written: the version PostgreSQL has already put in the heap while
	// the statement waits on a unique index (chain nil: a new row).
	written *written
}

// cand is a candidate row: its chain and the version to act on.
type cand struct {
	c *chain
	v *version
}

type written struct {
	c    *chain
	data []Value
}

// failWritten adds the version PostgreSQL writes to the heap before it
// checks the unique indexes (an INSERT without ON CONFLICT, an UPDATE that
// changes an indexed key): when the statement then fails, its transaction
// aborts and the version is dead, for VACUUM to remove.
func (o *op) failWritten(me *txn, c *chain, data []Value) {
	v := o.p.t.newVersion(data, me, me.cid)
	if c == nil {
		o.p.t.newChain(v)
	} else {
		o.p.t.addVersion(c, v)
	}
	o.written = nil
}

// buildRow makes a row to insert: values given, serial columns from their
// sequence (nextval is not transactional), defaults, NOT NULL checks.
func (t *table) buildRow(vals Row, now, stmt clock.Time, disk *sim.Disk) ([]Value, *Error) {
	given := 0
	for _, col := range t.def.Columns {
		if _, ok := vals[col.Name]; ok {
			given++
		}
	}
	if given < len(vals) {
		var unknown []string
		for k := range vals {
			if _, ok := t.cols[k]; !ok {
				unknown = append(unknown, k)
			}
		}
		sort.Strings(unknown)
		return nil, errf(CodeUndefinedColumn, "column %q of relation %q does not exist", unknown[0], t.def.Name)
	}
	data := make([]Value, len(t.def.Columns))
	for i, col := range t.def.Columns {
		v, given := vals[col.Name]
		if !given {
			if col.Serial {
				t.seq[i]++
				data[i] = t.seq[i]
				if disk != nil {
					disk.Put(seqKey(t.def.Name, col.Name), t.seq[i])
				}
				continue
			}
			v = col.Default
		}
		var ce cexpr
		if _, isExpr := v.(Expr); !isExpr {
			// A plain value, the common case: no expression to compile.
			nv, typ, ok := normalize(v)
			if !ok {
				return nil, errf(CodeDatatypeMismatch, "unsupported value %v of Go type %T", v, v)
			}
			ce = cexpr{kind: EConst, val: nv, typ: typ}
			data[i] = nv
		} else {
			var err *Error
			c := compiler{}
			if ce, err = c.compileExpr(Const(v)); err != nil {
				return nil, err
			}
			_, params, _ := exprShape(nil, Const(v), nil)
			data[i] = ce.eval(nil, &evalCtx{params: params, now: now, stmt: stmt})
		}
		if ce.typ != tNull && ce.typ != col.Type {
			return nil, mismatch(col.Name, col.Type, ce)
		}
		if data[i] == nil && (col.NotNull || t.isPK(i)) {
			return nil, errf(CodeNotNullViolation, "null value in column %q of relation %q violates not-null constraint", col.Name, t.def.Name)
		}
	}
	return data, nil
}

// exec runs (or resumes) one statement of a session. It reports waits=true
// when the statement waits for a lock; the session is resumed later.
func (n *Node) exec(s *session, st *Stmt) (res Result, waits bool) {
	if s.op != nil {
		return n.resume(s)
	}
	const noTx = "WARNING 25P01: there is no transaction in progress"
	switch st.Kind {
	case SCommit:
		switch {
		case s.failed:
			s.failed = false
			return Result{Tag: "ROLLBACK", RolledBack: true}, false
		case s.tx == nil:
			return Result{Tag: "COMMIT", Notice: noTx}, false
		}
		t := s.tx
		s.tx = nil
		n.commit(t)
		return Result{Tag: "COMMIT"}, false
	case SRollback:
		switch {
		case s.failed:
			s.failed = false
		case s.tx == nil:
			return Result{Tag: "ROLLBACK", Notice: noTx}, false
		default:
			t := s.tx
			s.tx = nil
			n.abort(t)
		}
		return Result{Tag: "ROLLBACK"}, false
	case SPrepare:
		return n.execPrepare(s, st.GID), false
	}
	if s.failed {
		return Result{Err: errf(CodeInFailedTx, "current transaction is aborted, commands ignored until end of transaction block")}, false
	}
	switch st.Kind {
	case SBegin:
		if s.tx != nil {
			return Result{Tag: "BEGIN", Notice: "WARNING 25001: there is already a transaction in progress"}, false
		}
		s.tx = n.begin(s)
		s.stmtXid = s.tx.xid
		return Result{Tag: "BEGIN"}, false
	case SCommitPrepared, SRollbackPrepared, SVacuum:
		if s.tx != nil {
			n.failStmt(s, false)
			what := map[StmtKind]string{SCommitPrepared: "COMMIT PREPARED", SRollbackPrepared: "ROLLBACK PREPARED", SVacuum: "VACUUM"}[st.Kind]
			return Result{Err: errf(CodeActiveTx, "%s cannot run inside a transaction block", what)}, false
		}
		switch st.Kind {
		case SCommitPrepared, SRollbackPrepared:
			t := n.prepared[st.GID]
			if t == nil {
				return Result{Err: errf(CodeUndefinedObject, "prepared transaction with identifier %s does not exist", quoteLit(st.GID))}, false
			}
			s.stmtXid = t.xid
			if st.Kind == SCommitPrepared {
				n.commit(t)
				return Result{Tag: "COMMIT PREPARED"}, false
			}
			n.abort(t)
			return Result{Tag: "ROLLBACK PREPARED"}, false
		}
		return n.execVacuum(st.Table)
	case SSetLockTimeout:
		if st.Dur < 0 {
			return Result{Err: errf("22023", "%v is outside the valid range for parameter \"lock_timeout\"", st.Dur)}, false
		}
		s.lockTimeout = st.Dur
		return Result{Tag: "SET"}, false
	case STryAdvisoryLock:
		if h := n.advisory[st.Key]; h != nil && h != s {
			return Result{Tag: "SELECT 1", Affected: 1, Locked: false}, false
		}
		n.advisory[st.Key] = s
		s.adv[st.Key]++
		return Result{Tag: "SELECT 1", Affected: 1, Locked: true}, false
	case SAdvisoryUnlock:
		if s.adv[st.Key] == 0 {
			return Result{Tag: "SELECT 1", Affected: 1, Notice: "WARNING: you don't own a lock of type ExclusiveLock"}, false
		}
		s.adv[st.Key]--
		if s.adv[st.Key] == 0 {
			delete(s.adv, st.Key)
			delete(n.advisory, st.Key)
		}
		return Result{Tag: "SELECT 1", Affected: 1, Locked: true}, false
	case SSelectNow:
		now := n.env.Now()
		if s.tx != nil {
			now = s.tx.start
		}
		return Result{Tag: "SELECT 1", Rows: []Row{{"now": now}}, Affected: 1}, false
	case SPreparedXacts:
		now := n.env.Now()
		if s.tx != nil {
			now = s.tx.start
		}
		gids := n.Prepared()
		sort.SliceStable(gids, func(i, j int) bool { return n.prepared[gids[i]].preparedAt < n.prepared[gids[j]].preparedAt })
		var rows []Row
		for _, g := range gids {
			t := n.prepared[g]
			rows = append(rows, Row{"transaction": int64(t.xid), "gid": g, "prepared": t.preparedAt, "age": int64(now.Sub(t.preparedAt))})
		}
		return Result{Tag: fmt.Sprintf("SELECT %d", len(rows)), Rows: rows, Affected: len(rows)}, false
	case SInsert, SUpdate, SDelete, SSelect:
		implicit := s.tx == nil
		if implicit {
			s.tx = n.begin(s)
			s.stmtXid = s.tx.xid
		}
		s.tx.cid++
		o, err := n.newOp(s, st)
		if err != nil {
			n.failStmt(s, implicit)
			return Result{Err: err}, false
		}
		o.implicit = implicit
		s.op = o
		return n.resume(s)
	}
	return Result{Err: errf("0A000", "statement kind %d is not supported", st.Kind)}, false
}

// failStmt ends the session's transaction after an error: an autocommit
// statement's transaction rolls back; a transaction block is aborted at
// once (locks released) and stays failed until ROLLBACK or COMMIT.
func (n *Node) failStmt(s *session, implicit bool) {
	t := s.tx
	s.tx = nil
	n.abort(t)
	if !implicit {
		s.failed = true
	}
}

func (n *Node) resume(s *session) (Result, bool) {
	o := s.op
	wait, err := n.advance(s.tx, o)
	n.assignHxid(s.tx)
	if wait != nil {
		n.block(s, wait)
		return Result{}, true
	}
	s.op = nil
	if err != nil {
		n.failStmt(s, o.implicit)
		return Result{Err: err}, false
	}
	if o.implicit {
		t := s.tx
		s.tx = nil
		n.commit(t)
	}
	return o.res, false
}

// execPrepare runs PREPARE TRANSACTION. If it fails, the transaction rolls
// back and the session leaves the transaction block, as in PostgreSQL.
func (n *Node) execPrepare(s *session, gid string) Result {
	switch {
	case s.failed:
		s.failed = false
		return Result{Tag: "ROLLBACK", RolledBack: true}
	case s.tx == nil:
		return Result{Tag: "ROLLBACK", Notice: "WARNING 25P01: there is no transaction in progress"}
	}
	t := s.tx
	var err *Error
	switch {
	case n.cfg.MaxPreparedTransactions <= 0:
		err = errf(CodeObjectNotInState, "prepared transactions are disabled (set max_prepared_transactions to a nonzero value)")
	case n.prepared[gid] != nil:
		err = errf(CodeDuplicateObject, "transaction identifier %s is already in use", quoteLit(gid))
	case len(n.prepared) >= n.cfg.MaxPreparedTransactions:
		err = errf(CodeTooManyPrepared, "maximum number of prepared transactions reached (increase max_prepared_transactions, currently %d)", n.cfg.MaxPreparedTransactions)
	}
	s.tx = nil
	if err != nil {
		n.abort(t)
		return Result{Err: err}
	}
	n.prepare(t, gid)
	return Result{Tag: "PREPARE TRANSACTION"}
}

// execVacuum runs VACUUM on one table ("" = every table).
func (n *Node) execVacuum(name string) (Result, bool) {
	tables := n.tables
	if name != "" {
		t, err := n.table(name)
		if err != nil {
			return Result{Err: err}, false
		}
		tables = []*table{t}
	}
	horizon := n.oldestActive()
	for _, s := range n.sessions {
		if s.op != nil && s.op.snap.xmin < horizon {
			horizon = s.op.snap.xmin
		}
	}
	var st VacuumStats
	for _, t := range tables {
		v := t.vacuum(horizon)
		st.Removed += v.Removed
		st.Remain += v.Remain
		st.DeadNotRemovable += v.DeadNotRemovable
	}
	return Result{Tag: "VACUUM", Vacuum: st}, false
}

// newOp compiles a data statement (or finds its plan), takes its snapshot
// and finds its candidate rows. The op is the session's, reused.
func (n *Node) newOp(s *session, st *Stmt) (*op, *Error) {
	o := &s.opBuf
	*o = op{st: st, cands: o.cands[:0], rest: o.rest[:0], x: evalCtx{params: o.x.params[:0]}}
	if st.Kind == SInsert && (len(st.Where) > 0 || len(st.Assigns) > 0 || len(st.OrderBy) > 0) {
		// What compile finds wrong comes first.
		if _, _, err := n.planFor(st, o.x.params); err != nil {
			return nil, err
		}
		if len(st.Where) > 0 || len(st.Assigns) > 0 {
			return nil, errf("42601", "INSERT takes Values, not Where or Assigns")
		}
	}
	me := s.tx
	now := me.start
	o.x.now = now
	o.x.stmt = n.env.Now()
	if st.Kind == SInsert {
		t, err := n.table(st.Table)
		if err != nil {
			return nil, err
		}
		o.p = t.insert
		o.snap = n.takeSnapshot(me)
		o.ins, err = t.buildRow(st.Values, now, o.x.stmt, n.disk)
		return o, err
	}
	p, params, err := n.planFor(st, o.x.params)
	o.x.params = params
	if err != nil {
		return nil, err
	}
	o.p = p
	o.snap = n.takeSnapshot(me)
	t := p.t
	var rows []*chain
	switch {
	case p.lookup >= 0:
		t.kbuf = p.key(t.kbuf[:0], params)
		rows = t.lookup(p.lookup, t.kbuf)
	case p.index >= 0:
		t.kbuf = p.key(t.kbuf[:0], params)
		vals := n.vals[:0]
		for _, k := range p.keyParams {
			vals = append(vals, params[k])
		}
		n.vals = vals
		rows = t.scanIndex(p.index, t.kbuf, vals)
	default:
		rows = t.chains
	}
	for _, c := range rows {
		if v := o.snap.visible(c); v != nil && matchAll(p.where, v.data, &o.x) {
			o.cands = append(o.cands, cand{c, v})
		}
	}
	if st.Kind == SSelect && len(p.order) > 0 && len(o.cands) > 1 {
		// Rows that tie stay in heap order (the order they were found in,
		// which is chain id order): a stable sort, or, with a LIMIT, a heap
		// with the same total order that yields rows as they are needed.
		if st.Limit > 0 {
			o.cands, o.rest = o.rest, o.cands
			o.heapify()
		} else {
			slices.SortStableFunc(o.cands, func(a, b cand) int { return p.compare(a.v.data, b.v.data) })
		}
	}
	if st.Kind == SSelect && st.Lock == NoLock {
		k := len(o.cands) + len(o.rest)
		if st.Limit > 0 && st.Limit < k {
			k = st.Limit
		}
		if k > 0 {
			o.res.Rows = make([]Row, 0, k)
		}
		for i := 0; i < k && (i < len(o.cands) || o.more()); i++ {
			o.res.Rows = append(o.res.Rows, t.rowOf(o.cands[i].v))
		}
		o.finish()
	}
	return o, nil
}

// before is the processing order of ORDER BY: its keys, then heap order.
func (o *op) before(a, b *cand) bool {
	if d := o.p.compare(a.v.data, b.v.data); d != 0 {
		return d < 0
	}
	return a.c.id < b.c.id
}

func (o *op) heapify() {
	for i := len(o.rest)/2 - 1; i >= 0; i-- {
		o.down(i)
	}
}

func (o *op) down(i int) {
	h := o.rest
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && o.before(&h[r], &h[l]) {
			m = r
		}
		if !o.before(&h[m], &h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// more moves the next candidate in processing order from rest to cands; it
// reports false when there is none.
func (o *op) more() bool {
	h := o.rest
	if len(h) == 0 {
		return false
	}
	o.cands = append(o.cands, h[0])
	last := len(h) - 1
	h[0] = h[last]
	h[last] = cand{}
	o.rest = h[:last]
	o.down(0)
	return true
}

// less orders rows by ORDER BY; NULLs sort last ascending and first
// descending, as in PostgreSQL.
func (p *plan) compare(a, b []Value) int {
	for _, o := range p.order {
		x, y := a[o.col], b[o.col]
		var d int
		switch {
		case x == nil && y == nil:
			d = 0
		case x == nil:
			d = 1
		case y == nil:
			d = -1
		default:
			d = compare(x, y)
		}
		if o.desc {
			d = -d
		}
		if d != 0 {
			return d
		}
	}
	return 0
}

func (o *op) finish() {
	o.done = true
	switch o.st.Kind {
	case SSelect:
		o.res.Affected = len(o.res.Rows)
		o.res.Tag = tag(&selectTags, "SELECT ", len(o.res.Rows))
	case SInsert:
		o.res.Tag = tag(&insertTags, "INSERT 0 ", o.res.Affected)
	case SUpdate:
		o.res.Tag = tag(&updateTags, "UPDATE ", o.res.Affected)
	case SDelete:
		o.res.Tag = tag(&deleteTags, "DELETE ", o.res.Affected)
	}
}

// The command tags of small counts, made once.
var selectTags, insertTags, updateTags, deleteTags [16]string

func init() {
	for i := range 16 {
		selectTags[i] = "SELECT " + strconv.Itoa(i)
		insertTags[i] = "INSERT 0 " + strconv.Itoa(i)
		updateTags[i] = "UPDATE " + strconv.Itoa(i)
		deleteTags[i] = "DELETE " + strconv.Itoa(i)
	}
}

func tag(small *[16]string, prefix string, n int) string {
	if n >= 0 && n < len(small) {
		return small[n]
	}
	return prefix + strconv.Itoa(n)
}

// advance runs a data statement as far as it can: to its end, to an error,
// or to a row lock (or unique-index outcome) it must wait for.
func (n *Node) advance(me *txn, o *op) (wait *txn, err *Error) {
	if o.err != nil {
		if w := o.written; w != nil {
			o.failWritten(me, w.c, w.data)
		}
		return nil, o.err
	}
	if o.done {
		return nil, nil
	}
	t := o.p.t
	if o.st.Kind == SInsert {
		return n.advanceInsert(me, o)
	}
	for ; o.i < len(o.cands) || o.more(); o.i++ {
		if o.st.Kind == SSelect && o.st.Limit > 0 && len(o.res.Rows) >= o.st.Limit {
			break
		}
		c := o.cands[o.i].c
		if l := c.locker; l != nil && l != me && l.active() {
			if o.st.Kind == SSelect {
				switch o.st.Lock {
				case ForUpdateNoWait:
					return nil, errf(CodeLockNotAvailable, "could not obtain lock on row in relation %q", t.def.Name)
				case ForUpdateSkipLocked:
					continue
				}
			}
			return l, nil
		}
		latest := c.latest()
		if latest == nil || c.gone {
			continue
		}
		if latest.xmax != nil && (latest.xmax == me || latest.xmax.status == committed) {
			continue // deleted (by a committed transaction, or by this one)
		}
		target := o.cands[o.i].v
		if latest != target {
			// Updated by a transaction that committed after our snapshot:
			// lock the newest version and re-check the WHERE on it
			// (EvalPlanQual). A row that no longer matches is skipped, but
			// stays locked, as in PostgreSQL.
			if !matchAll(o.p.where, latest.data, &o.x) {
				lockRow(c, me)
				continue
			}
			target = latest
			o.cands[o.i].v = latest
		}
		lockRow(c, me)
		switch o.st.Kind {
		case SSelect:
			o.res.Rows = append(o.res.Rows, t.rowOf(target))
		case SDelete:
			target.xmax, target.cmax = me, me.cid
			o.res.Affected++
			if o.st.Returning {
				o.res.Rows = append(o.res.Rows, t.rowOf(target))
			}
		case SUpdate:
			data := append([]Value(nil), target.data...)
			for _, a := range o.p.sets {
				data[a.col] = a.e.eval(target.data, &o.x)
			}
			for i, col := range t.def.Columns {
				if data[i] == nil && (col.NotNull || t.isPK(i)) {
					return nil, errf(CodeNotNullViolation, "null value in column %q of relation %q violates not-null constraint", col.Name, t.def.Name)
				}
			}
			var waitFor *txn
			for i, cols := range t.uniq {
				k1, _ := keyOf(target.data, cols)
				k2, ok := keyOf(data, cols)
				if !ok || k1 == k2 {
					continue
				}
				conflict, w := t.uniqueCheck(i, data, c, me)
				if conflict {
					o.failWritten(me, c, data)
					return nil, uniqueErr(t, i, data)
				}
				if w != nil {
					waitFor = w // the indexes are checked in order: wait before checking the next
					break
				}
			}
			if waitFor != nil {
				o.written = &written{c: c, data: data}
				return waitFor, nil
			}
			o.written = nil
			target.xmax, target.cmax = me, me.cid
			nv := t.newVersion(data, me, me.cid)
			t.addVersion(c, nv)
			o.res.Affected++
			if o.st.Returning {
				o.res.Rows = append(o.res.Rows, t.rowOf(nv))
			}
		}
	}
	o.finish()
	return nil, nil
}

func (n *Node) advanceInsert(me *txn, o *op) (*txn, *Error) {
	t := o.p.t
	var waitFor *txn
	for i := range t.uniq {
		conflict, w := t.uniqueCheck(i, o.ins, nil, me)
		if conflict {
			if o.st.OnConflictDoNothing {
				o.finish()
				return nil, nil
			}
			o.failWritten(me, nil, o.ins)
			return nil, uniqueErr(t, i, o.ins)
		}
		if w != nil {
			waitFor = w // PostgreSQL checks the indexes in order and waits before checking the next
			break
		}
	}
	if waitFor != nil {
		if !o.st.OnConflictDoNothing { // ON CONFLICT checks before it writes
			o.written = &written{data: o.ins}
		}
		return waitFor, nil
	}
	nv := t.newVersion(o.ins, me, me.cid)
	c := t.newChain(nv)
	lockRow(c, me)
	o.res.Affected = 1
	o.res.Inserted = true
	if o.st.Returning {
		o.res.Rows = append(o.res.Rows, t.rowOf(nv))
	}
	o.finish()
	return nil, nil
}

func uniqueErr(t *table, i int, data []Value) *Error {
	names := make([]string, len(t.uniq[i]))
	vals := make([]string, len(t.uniq[i]))
	for j, c := range t.uniq[i] {
		names[j] = t.def.Columns[c].Name
		vals[j] = literal(data[c])
	}
	return errf(CodeUniqueViolation, "duplicate key value violates unique constraint %q: Key (%s)=(%s) already exists.",
		t.uniqNames[i], strings.Join(names, ", "), strings.Join(vals, ", "))
}
