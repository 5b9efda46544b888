package db

// The database node: sessions on connections, the request runner, waits
// and their timers, transactions' ends, durability. Statement execution is
// in exec.go.

import (
	"fmt"
	"github.com/fencesim/fencesim/traces/canon"
	"github.com/fencesim/fencesim/traces/hist"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
)

// Crash points of the database node (sim.CrashAt actions may arm them).
const (
	// PointCommit: a COMMIT (or COMMIT PREPARED, or an atomic batch's
	// commit) is durable on disk and noted, but not answered.
	PointCommit = "db/commit"
	// PointPrepare: a PREPARE TRANSACTION is durable, but not answered.
	PointPrepare = "db/prepare"
)

// Points lists the node's crash points, for sim.GenSpec.Points.
var Points = []string{PointCommit, PointPrepare}

// Node is a database server. Build it with New; it is a pure state machine
// driven by the kernel.
type Node struct {
	name     string
	text     []byte // noteStmt's buffer
	cfg      Config
	tables   []*table
	byName   map[string]*table
	disk     *sim.Disk
	env      *sim.Env // during Step only
	nextXid  uint64
	nextHxid uint64 // the last hxid given (see txn.hxid)
	csn      uint64
	active   []*txn // running and prepared transactions, by xid
	txnMem   slab[txn]
	respMem  slab[Response]
	resMem   []Result // results' arrays, carved (see results)
	prepared map[string]*txn
	sessions map[network.ConnID]*session
	advisory map[int64]*session
	ready    []*session
	log      []CommitRecord
	seeded   bool // the seed record was written by this incarnation
	stmts    uint64
	plans    map[string]*plan // by statement shape (plan.go)
	keyBuf   []byte           // scratch: a statement's shape
	vals     []Value          // scratch: an index key's values
}

var _ sim.Node = (*Node)(nil)

// session is one connection's server side.
type session struct {
	conn        network.ConnID
	peer        network.Addr
	alive       bool
	tx          *txn
	failed      bool // in a transaction block aborted by an error
	lockTimeout time.Duration
	adv         map[int64]int // advisory locks held, with their counts
	queue       []Request
	cur         *execution
	op          *op  // the statement in progress, while it waits
	waiting     *txn // the transaction it waits for
	waitSeq     uint64
	timers      []sim.TimerID
	stmtXid     uint64    // the transaction of the statement being run, for the trace
	opBuf       op        // the statement in progress (op points here), reused
	execBuf     execution // the request in progress (cur points here), reused
}

type execution struct {
	req     Request
	i       int
	results []Result
	atomic  bool
}

// waitTimer is the tag of a lock_timeout or deadlock_timeout timer.
type waitTimer struct {
	Conn     network.ConnID
	Seq      uint64
	Deadlock bool
}

func (w waitTimer) String() string {
	if w.Deadlock {
		return fmt.Sprintf("deadlock_timeout conn %d wait %d", w.Conn, w.Seq)
	}
	return fmt.Sprintf("lock_timeout conn %d wait %d", w.Conn, w.Seq)
}

// New returns the factory of a database node with the given tables. It
// panics on an invalid schema or seed (a bug in the caller). On an empty
// disk the node commits cfg.Seed as transaction 0; otherwise it recovers
// its committed rows and prepared transactions from the disk.
func New(schema Schema, cfg Config) sim.Factory {
	if cfg.DeadlockTimeout <= 0 {
		cfg.DeadlockTimeout = time.Second
	}
	seeded := make([]string, 0, len(cfg.Seed))
	for name := range cfg.Seed {
		seeded = append(seeded, name)
	}
	sort.Strings(seeded)
	for _, name := range seeded {
		found := false
		for _, t := range schema.Tables {
			found = found || t.Name == name
		}
		if !found {
			panic(fmt.Sprintf("db: seed rows for unknown table %q", name))
		}
	}
	return func(name string, disk *sim.Disk) sim.Node {
		n := &Node{name: name, cfg: cfg, byName: map[string]*table{}, disk: disk,
			prepared: map[string]*txn{}, sessions: map[network.ConnID]*session{}, advisory: map[int64]*session{}}
		for _, def := range schema.Tables {
			if _, dup := n.byName[def.Name]; dup {
				panic(fmt.Sprintf("db: table %q defined twice", def.Name))
			}
			t := newTable(def)
			n.tables = append(n.tables, t)
			n.byName[def.Name] = t
		}
		if len(disk.Keys(walPrefix)) == 0 && len(disk.Keys(prepPrefix)) == 0 {
			n.seed()
		}
		n.recover()
		for _, t := range n.active { // the recovered prepared transactions, in xid order
			n.assignHxid(t)
		}
		return n
	}
}

// seed writes cfg.Seed as the first commit record.
func (n *Node) seed() {
	rec := CommitRecord{Seq: 1, Tx: 0}
	for _, t := range n.tables {
		for _, r := range n.cfg.Seed[t.def.Name] {
			data, err := t.buildRow(r, 0, 0, nil)
			if err != nil {
				panic(fmt.Sprintf("db: seed row %v of %q: %v", r, t.def.Name, err))
			}
			rec.Changes = append(rec.Changes, Change{Table: t.def.Name, Op: OpInsert, Key: t.pkValues(data), After: t.toRow(data)})
		}
	}
	if len(rec.Changes) == 0 {
		return
	}
	// Check the seed against the unique indexes.
	for _, t := range n.tables {
		seen := make([]map[string]bool, len(t.uniq))
		for i := range seen {
			seen[i] = map[string]bool{}
		}
		for _, ch := range rec.Changes {
			if ch.Table != t.def.Name {
				continue
			}
			data := t.rowData(ch.After)
			for i, cols := range t.uniq {
				if k, ok := keyOf(data, cols); ok {
					if seen[i][k] {
						panic(fmt.Sprintf("db: seed rows of %q violate %s at %v", t.def.Name, t.uniqNames[i], ch.After))
					}
					seen[i][k] = true
				}
			}
		}
	}
	n.disk.Put(walKey(1), rec)
	n.disk.Sync()
	n.seeded = true
}

// Step implements sim.Node.
func (n *Node) Step(env *sim.Env, in sim.Input) {
	n.env = env
	defer func() {
		n.env = nil
		if r := recover(); r != nil {
			if _, ok := r.(halt); ok {
				return // crashed at a crash point: the kernel discards this node
			}
			panic(r)
		}
	}()
	switch in.Kind {
	case sim.Start:
		if n.seeded && env.Recording() && len(n.log) > 0 {
			env.Note("commit", n.log[0].String(), hist.CommitRecord(n.log[0]))
		}
		if env.Recording() {
			env.Note("db", fmt.Sprintf("recovered: %d commits, %d prepared", len(n.log), len(n.prepared)), nil)
		}
	case sim.Deliver:
		req, ok := RequestOf(in.Msg.Body)
		if !ok || in.Msg.Conn == 0 {
			if env.Recording() {
				env.Note("db", fmt.Sprintf("ignored message %v (requests travel on connections)", in.Msg.Body), nil)
			}
			return
		}
		s := n.sessions[in.Msg.Conn]
		if s == nil {
			s = &session{conn: in.Msg.Conn, peer: in.Msg.From, alive: true, lockTimeout: n.cfg.LockTimeout, adv: map[int64]int{}}
			n.sessions[in.Msg.Conn] = s
		}
		s.queue = append(s.queue, req)
		if s.cur == nil {
			n.run(s)
		}
	case sim.ConnBroken:
		if s := n.sessions[in.Conn]; s != nil {
			n.endSession(s)
		}
	case sim.Timer:
		if w, ok := in.Tag.(waitTimer); ok {
			n.waitTimeout(w)
		}
	}
	n.drain()
}

type halt struct{}

func (n *Node) crashPoint(p string) {
	if n.env.CrashPoint(p) {
		panic(halt{})
	}
}

// drain resumes the sessions whose waits ended, in the order they ended.
func (n *Node) drain() {
	for len(n.ready) > 0 {
		s := n.ready[0]
		n.ready = n.ready[1:]
		if s.alive {
			n.run(s)
		}
	}
}

// run executes the session's requests until one waits or none is left.
func (n *Node) run(s *session) {
	for s.alive {
		if s.cur == nil {
			if len(s.queue) == 0 {
				return
			}
			req := s.queue[0]
			// Shift rather than reslice, so that the queue's array is
			// reused (it rarely holds more than one request).
			copy(s.queue, s.queue[1:])
			s.queue[len(s.queue)-1] = Request{}
			s.queue = s.queue[:len(s.queue)-1]
			s.execBuf = execution{req: req, results: n.results(len(req.Stmts))}
			s.cur = &s.execBuf
			if req.Atomic {
				if s.tx != nil || s.failed {
					s.cur.results = []Result{{Err: errf(CodeActiveTx, "an atomic batch cannot run inside an open transaction block")}}
					s.cur.i = len(req.Stmts)
				} else {
					s.tx = n.begin(s)
					s.cur.atomic = true
				}
			}
		}
		e := s.cur
		failed := len(e.results) > 0 && e.results[len(e.results)-1].Err != nil
		for !failed && e.i < len(e.req.Stmts) {
			st := &e.req.Stmts[e.i]
			if s.op == nil {
				s.stmtXid = 0
				if s.tx != nil {
					s.stmtXid = s.tx.xid
				}
			}
			res, waits := n.exec(s, st)
			if waits {
				return
			}
			n.stmts++
			n.noteStmt(s, st, &res)
			e.results = append(e.results, res)
			e.i++
			failed = res.Err != nil
		}
		if e.atomic {
			switch {
			case s.tx != nil && failed:
				n.abort(s.tx)
				s.tx = nil
			case s.tx != nil:
				t := s.tx
				s.tx = nil
				n.commit(t)
			}
			s.failed = false
		}
		s.cur = nil
		resp := n.respMem.new()
		*resp = Response{ID: e.req.ID, Results: e.results}
		n.env.SendConn(s.conn, resp)
		s.execBuf = execution{} // keeps no reference to the answered request
		if len(s.queue) > 0 && len(n.ready) > 0 {
			// Sessions whose waits this request ended (a lock it released)
			// go first, as PostgreSQL's woken backends take their locks
			// while this one reads its next request: the next one waits
			// behind them in the ready list (TestConformanceTimedPostgres:
			// a session whose deadlock error ended its transaction, its
			// next UPDATE pipelined behind it, must not take the row its
			// waiting peer was granted).
			n.ready = append(n.ready, s)
			return
		}
	}
}

// results returns an empty results list of capacity n, carved from a
// chunk (capacity-limited: an append past n reallocates, never writes into
// another request's results).
func (n *Node) results(k int) []Result {
	if k > slabChunk {
		return make([]Result, 0, k)
	}
	if len(n.resMem) < k {
		n.resMem = make([]Result, 2*slabChunk)
	}
	out := n.resMem[:0:k]
	n.resMem = n.resMem[k:]
	return out
}

// begin starts a transaction; now() is the database clock at this moment.
func (n *Node) begin(s *session) *txn {
	n.nextXid++
	t := n.txnMem.new()
	t.xid, t.start, t.status, t.sess = n.nextXid, n.env.Now(), running, s
	n.active = append(n.active, t)
	return t
}

// takeSnapshot returns a snapshot for the transaction's next statement.
func (n *Node) takeSnapshot(t *txn) snap {
	return snap{tx: t, cid: t.cid, csn: n.csn, xmin: n.oldestActive()}
}

// oldestActive is the VACUUM horizon the running and prepared transactions
// hold: the oldest of their xids (hxid; a transaction that has not written
// or locked a row has none, as in PostgreSQL).
func (n *Node) oldestActive() uint64 {
	h := n.nextHxid + 1
	for _, t := range n.active {
		if t.hxid != 0 && t.hxid < h {
			h = t.hxid
		}
	}
	return h
}

// assignHxid gives t its hxid once it has written or locked a row, or is
// prepared (PREPARE TRANSACTION assigns one).
func (n *Node) assignHxid(t *txn) {
	if t.hxid == 0 && (len(t.touched) > 0 || t.status == prepared) {
		n.nextHxid++
		t.hxid = n.nextHxid
	}
}

// commit makes t's changes durable (the WAL record is on disk and synced
// before anything is answered), then visible, then releases its locks.
func (n *Node) commit(t *txn) {
	changes, _ := changesOf(t)
	if len(changes) > 0 {
		n.csn++
		rec := CommitRecord{Seq: n.csn, Tx: t.xid, At: n.env.Now(), GID: t.gid, Changes: changes}
		n.disk.Put(walKey(n.csn), rec)
		if t.gid != "" {
			n.disk.Delete(prepKey(t.gid))
		}
		n.disk.Sync()
		n.log = append(n.log, rec)
		if n.env.Recording() {
			n.env.Note("commit", rec.String(), hist.CommitRecord(rec))
		}
	} else if t.gid != "" {
		n.disk.Delete(prepKey(t.gid))
		n.disk.Sync()
	}
	if t.gid != "" {
		n.notePrepared(t, "commit")
	}
	n.crashPoint(PointCommit)
	t.csn = n.csn
	t.status = committed
	n.end(t)
}

// abort rolls t back: its versions become dead, its locks are released.
func (n *Node) abort(t *txn) {
	if t.status == prepared {
		n.disk.Delete(prepKey(t.gid))
		n.disk.Sync()
		n.notePrepared(t, "rollback")
	}
	t.status = aborted
	n.end(t)
}

// prepare turns t into a prepared transaction that outlives its session and
// the server: its record is durable before the answer.
func (n *Node) prepare(t *txn, gid string) {
	changes, locked := changesOf(t)
	t.gid = gid
	t.preparedAt = n.env.Now()
	t.status = prepared
	n.assignHxid(t)
	t.sess = nil
	n.disk.Put(prepKey(gid), preparedRecord{GID: gid, Xid: t.xid, Start: t.start, PreparedAt: t.preparedAt, Changes: changes, Locked: locked})
	n.disk.Sync()
	n.prepared[gid] = t
	n.notePrepared(t, "prepare")
	n.crashPoint(PointPrepare)
}

// end removes a finished transaction: releases its row locks and wakes its
// waiters, in the order they began to wait.
func (n *Node) end(t *txn) {
	if t.gid != "" {
		delete(n.prepared, t.gid)
	}
	for i, a := range n.active {
		if a == t {
			n.active = append(n.active[:i], n.active[i+1:]...)
			break
		}
	}
	for _, c := range t.touched {
		if c.locker == t {
			c.locker = nil
		}
	}
	t.touched = nil
	ws := t.waiters
	t.waiters = nil
	for _, w := range ws {
		if w.s.alive && w.s.waiting == t && w.s.waitSeq == w.seq {
			n.unblock(w.s)
			n.ready = append(n.ready, w.s)
		}
	}
}

// block makes the session's statement wait for t to end, arming
// lock_timeout and deadlock_timeout.
func (n *Node) block(s *session, t *txn) {
	s.waitSeq++
	s.waiting = t
	s.tx.waitingOn = t
	t.waiters = append(t.waiters, waiter{s: s, seq: s.waitSeq})
	if s.lockTimeout > 0 {
		s.timers = append(s.timers, n.env.After(s.lockTimeout, waitTimer{Conn: s.conn, Seq: s.waitSeq}))
	}
	s.timers = append(s.timers, n.env.After(n.cfg.DeadlockTimeout, waitTimer{Conn: s.conn, Seq: s.waitSeq, Deadlock: true}))
	if n.env.Records("db") {
		n.env.Note("db", fmt.Sprintf("c%d x%d waits for x%d: %s", s.conn, s.tx.xid, t.xid, s.op.st.SQL()),
			stmtNote{Conn: uint64(s.conn), Tx: s.tx.xid, SQL: s.op.st.SQL(), Wait: t.xid})
	} else {
		n.env.Skip("db") // the note's event number (sim.Env.Skip)
	}
}

// unblock ends a session's wait (the caller resumes or fails it).
func (n *Node) unblock(s *session) {
	t := s.waiting
	for i, w := range t.waiters {
		if w.s == s {
			t.waiters = append(t.waiters[:i], t.waiters[i+1:]...)
			break
		}
	}
	for _, id := range s.timers {
		n.env.Cancel(id)
	}
	s.timers = s.timers[:0]
	s.waiting = nil
	if s.tx != nil {
		s.tx.waitingOn = nil
	}
}

// waitTimeout handles a lock_timeout or deadlock_timeout timer.
func (n *Node) waitTimeout(w waitTimer) {
	s := n.sessions[w.Conn]
	if s == nil || s.waiting == nil || s.waitSeq != w.Seq {
		return
	}
	if !w.Deadlock {
		s.op.err = errf(CodeLockNotAvailable, "canceling statement due to lock timeout")
		n.unblock(s)
		n.ready = append(n.ready, s)
		return
	}
	// PostgreSQL's deadlock check: this waiter, after deadlock_timeout,
	// follows the waits-for edges; if they lead back to it, it is the victim.
	me := s.tx
	var path []string
	x := s.waiting
	for steps := 0; x != nil && steps <= len(n.active); steps++ {
		path = append(path, fmt.Sprintf("x%d", x.xid))
		if x == me {
			s.op.err = errf(CodeDeadlock, "deadlock detected: transaction %d waits for %s", me.xid, strings.Join(path, " -> "))
			n.unblock(s)
			n.ready = append(n.ready, s)
			return
		}
		x = x.waitingOn
	}
}

// endSession ends a session whose connection broke or closed: its open
// transaction rolls back, its advisory locks are released. Prepared
// transactions are not the session's and stay.
func (n *Node) endSession(s *session) {
	if s.waiting != nil {
		n.unblock(s)
	}
	s.alive = false
	if s.tx != nil {
		n.abort(s.tx)
		s.tx = nil
	}
	keys := make([]int64, 0, len(s.adv))
	for k := range s.adv {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		delete(n.advisory, k)
	}
	s.adv = nil
	delete(n.sessions, s.conn)
	if n.env.Records("db") {
		n.env.Note("db", fmt.Sprintf("c%d session ended (connection broke or closed); advisory locks released: %v", s.conn, keys), nil)
	} else {
		n.env.Skip("db")
	}
}

// PreparedNote is the data of a "prepared" trace event: a prepared
// transaction was prepared, committed or rolled back (durably: the event
// follows the disk write).
type PreparedNote struct {
	GID   string     `json:"gid"`
	Tx    uint64     `json:"tx"`
	Event string     `json:"event"` // "prepare", "commit" or "rollback"
	At    clock.Time `json:"at"`    // the database clock
	Since clock.Time `json:"since"` // when it was prepared
}

func (n *Node) notePrepared(t *txn, event string) {
	if !n.env.Recording() {
		return
	}
	d := PreparedNote{GID: t.gid, Tx: t.xid, Event: event, At: n.env.Now(), Since: t.preparedAt}
	n.env.Note("prepared", fmt.Sprintf("%s %s tx %d (prepared at %s)", event, quoteLit(t.gid), t.xid, t.preparedAt), d)
}

// stmtNote is the data of a "db" trace event: one statement and its result.
type stmtNote struct {
	Conn     uint64 `json:"conn"`
	Tx       uint64 `json:"tx,omitempty"`
	SQL      string `json:"sql"`
	Wait     uint64 `json:"wait,omitempty"` // the statement waits for this transaction
	Tag      string `json:"tag,omitempty"`
	Err      string `json:"err,omitempty"` // SQLSTATE
	Msg      string `json:"msg,omitempty"`
	Notice   string `json:"notice,omitempty"`
	Affected int    `json:"affected,omitempty"`
	Rows     []Row  `json:"rows,omitempty"`
}

// AppendJSON appends the note's JSON, json.Marshal's bytes (canon.Appender:
// a trace's line and hash are made of them; TestStmtNoteJSON compares).
func (d stmtNote) AppendJSON(b []byte) []byte {
	b = append(b, `{"conn":`...)
	b = canon.Uint(b, d.Conn)
	if d.Tx != 0 {
		b = append(b, `,"tx":`...)
		b = canon.Uint(b, d.Tx)
	}
	b = append(b, `,"sql":`...)
	b = canon.String(b, d.SQL)
	if d.Wait != 0 {
		b = append(b, `,"wait":`...)
		b = canon.Uint(b, d.Wait)
	}
	for _, f := range [...]struct{ name, v string }{{`,"tag":`, d.Tag}, {`,"err":`, d.Err}, {`,"msg":`, d.Msg}, {`,"notice":`, d.Notice}} {
		if f.v != "" {
			b = append(b, f.name...)
			b = canon.String(b, f.v)
		}
	}
	if d.Affected != 0 {
		b = append(b, `,"affected":`...)
		b = canon.Int(b, int64(d.Affected))
	}
	if len(d.Rows) > 0 {
		b = append(b, `,"rows":[`...)
		for i, r := range d.Rows {
			if i > 0 {
				b = append(b, ',')
			}
			b = canon.Map(b, r)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func (n *Node) noteStmt(s *session, st *Stmt, res *Result) {
	if !n.env.Records("db") {
		n.env.Skip("db")
		return
	}
	d := stmtNote{Conn: uint64(s.conn), Tx: s.stmtXid, Tag: res.Tag, Notice: res.Notice, Affected: res.Affected, Rows: res.Rows}
	if res.Err != nil {
		d.Err, d.Msg = res.Err.Code, res.Err.Msg
	}
	if n.env.ForCheckers() {
		// The checkers read a statement's outcome, never its SQL or the
		// note's text (checker/twopc's Statement: the lock timeouts):
		// neither is rendered for a record that is theirs alone.
		n.env.Note("db", "", d)
		return
	}
	// "c<conn> <sql> => <result>", built in one buffer
	b := append(n.text[:0], 'c')
	b = strconv.AppendUint(b, uint64(s.conn), 10)
	b = append(b, ' ')
	at := len(b)
	b = st.AppendSQL(b)
	d.SQL = string(b[at:])
	b = append(b, " => "...)
	b = res.appendString(b)
	n.text = b
	n.env.Note("db", string(b), d)
}

// ---- inspection, for tests and checkers ----

// CommitLog returns the committed transactions in commit order (the WAL,
// which survives crashes). The records are shared: do not modify them.
func (n *Node) CommitLog() []CommitRecord { return append([]CommitRecord(nil), n.log...) }

// Rows returns a table's committed rows (what a new transaction would see),
// ordered by primary key.
func (n *Node) Rows(table string) []Row {
	t := n.byName[table]
	if t == nil {
		return nil
	}
	var out []Row
	for _, d := range t.committedRows() {
		out = append(out, t.toRow(d))
	}
	return out
}

// Tables returns the table names in schema order.
func (n *Node) Tables() []string {
	out := make([]string, len(n.tables))
	for i, t := range n.tables {
		out[i] = t.def.Name
	}
	return out
}

// Prepared returns the gids of the prepared transactions, sorted.
func (n *Node) Prepared() []string {
	out := make([]string, 0, len(n.prepared))
	for g := range n.prepared {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// Statements returns how many statements this incarnation has finished.
func (n *Node) Statements() uint64 { return n.stmts }

// Sessions returns how many sessions are open.
func (n *Node) Sessions() int { return len(n.sessions) }

// Check verifies the node's own invariants and reports the first broken
// one: committed rows satisfy every unique index and NOT NULL; every row
// lock is held by a running transaction of a live session or by a prepared
// transaction; every running transaction belongs to a live session; every
// advisory lock belongs to a live session.
func (n *Node) Check() error {
	for _, t := range n.tables {
		seen := make([]map[string]bool, len(t.uniq))
		for i := range seen {
			seen[i] = map[string]bool{}
		}
		for _, d := range t.committedRows() {
			for i, cols := range t.uniq {
				if k, ok := keyOf(d, cols); ok {
					if seen[i][k] {
						return fmt.Errorf("table %s: committed rows violate %s at %v", t.def.Name, t.uniqNames[i], t.toRow(d))
					}
					seen[i][k] = true
				}
			}
			for i, c := range t.def.Columns {
				if (c.NotNull || t.isPK(i)) && d[i] == nil {
					return fmt.Errorf("table %s: committed row %v has NULL in NOT NULL column %s", t.def.Name, t.toRow(d), c.Name)
				}
			}
		}
		for _, c := range t.chains {
			if l := c.locker; l != nil {
				if !l.active() {
					return fmt.Errorf("table %s: row chain %d locked by %s transaction %d", t.def.Name, c.id, l.status, l.xid)
				}
				if l.status == running && (l.sess == nil || !l.sess.alive) {
					return fmt.Errorf("table %s: row chain %d locked by transaction %d of an ended session", t.def.Name, c.id, l.xid)
				}
			}
		}
	}
	for _, t := range n.active {
		if t.status == running && (t.sess == nil || !t.sess.alive || t.sess.tx != t) {
			return fmt.Errorf("running transaction %d has no live session", t.xid)
		}
		if t.status == prepared && n.prepared[t.gid] != t {
			return fmt.Errorf("prepared transaction %d (%q) is not registered", t.xid, t.gid)
		}
	}
	keys := make([]int64, 0, len(n.advisory))
	for k := range n.advisory {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		if s := n.advisory[k]; !s.alive || s.adv[k] == 0 {
			return fmt.Errorf("advisory lock %d held by an ended session", k)
		}
	}
	return nil
}

// Quiet reports what is still held when every client has gone: running
// transactions, row locks of transactions that are not prepared, advisory
// locks, waiting sessions. It returns nil when only prepared transactions
// hold anything.
func (n *Node) Quiet() error {
	if err := n.Check(); err != nil {
		return err
	}
	for _, t := range n.active {
		if t.status == running {
			return fmt.Errorf("transaction %d still running", t.xid)
		}
	}
	for _, t := range n.tables {
		for _, c := range t.chains {
			if c.locker != nil && c.locker.status != prepared {
				return fmt.Errorf("table %s: row chain %d still locked by transaction %d", t.def.Name, c.id, c.locker.xid)
			}
		}
	}
	if len(n.advisory) > 0 {
		return fmt.Errorf("%d advisory locks still held", len(n.advisory))
	}
	if len(n.sessions) > 0 {
		return fmt.Errorf("%d sessions still open", len(n.sessions))
	}
	return nil
}
