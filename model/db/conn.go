package db

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
)

// Conn is the blocking database client of a node written as processes: one
// connection (one session) to a database node. Several processes may use it
// at once: their requests are pipelined on the session and run in the order
// sent, and each gets its own answer.
//
//	c := &db.Conn{DB: "db"}
//	tx, err := c.Begin(p)
//	row, err := tx.QueryRow(PickPending(1))   // BEGIN goes with it
//	...
//	tx.Queue(RecordClaim(...))              // sent with the next round trip
//	err = tx.Commit()
//
// Every round trip is a blocking call of the process (a crash point labelled
// "db <statement names>"). When the connection breaks before the answer, or
// the answer takes longer than Timeout, the call returns an error with
// CodeConnectionFailure (08006): the outcome is unknown, the statements may
// or may not have run and committed; the session is gone (its open
// transaction rolled back, its advisory locks released) and the next call
// dials a new connection, a new session.
type Conn struct {
	DB      network.Addr  // the database node
	Timeout time.Duration // a round trip waits at most this long (0: until the connection breaks)
	conn    network.ConnID
	next    uint64
	spare   [][]Stmt // statement buffers of answered requests, for the next ones
	// reqs hands out the requests sent: a pointer in a message body is
	// not allocated again when boxed. Shared by copies of the Conn, so
	// that no two requests share memory.
	reqs *slab[Request]
}

// buffer returns an empty statement buffer of at least n places.
func (c *Conn) buffer(n int) []Stmt {
	if k := len(c.spare); k > 0 && cap(c.spare[k-1]) >= n {
		b := c.spare[k-1]
		c.spare = c.spare[:k-1]
		return b[:0]
	}
	return make([]Stmt, 0, max(n, 4))
}

// recycle keeps the buffer of a request the database has answered (it
// holds no reference to it then); a request whose fate is unknown may
// still be read, so its buffer is never recycled.
func (c *Conn) recycle(b []Stmt, err error) {
	if err != nil && Unknown(err) || len(c.spare) >= 4 {
		return
	}
	clear(b)
	c.spare = append(c.spare, b)
}

// Connected reports whether the client has a connection.
func (c *Conn) Connected() bool { return c.conn != 0 }

// Lost reports whether the session is gone: the connection broke (while
// idle, or in a call), or there never was one.
func (c *Conn) Lost(p *sim.Proc) bool { return c.conn == 0 || p.Broken(c.conn) }

// Close closes the connection; the database ends the session.
func (c *Conn) Close(p *sim.Proc) {
	if c.conn != 0 {
		p.Close(c.conn)
		c.conn = 0
	}
}

// Unknown reports whether err is a connection failure: the outcome of the
// statements is unknown.
func Unknown(err error) bool { return Code(err) == CodeConnectionFailure }

// Code returns the SQLSTATE of a database error, "" for nil or another error.
func Code(err error) string {
	if e, ok := err.(*Error); ok { // the common case, without errors.As's allocation
		return e.Code
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Exec runs one statement in autocommit (or in the session's open
// transaction, as PostgreSQL would).
func (c *Conn) Exec(p *sim.Proc, s Stmt) (Result, error) {
	send := append(c.buffer(1), s)
	rs, err := c.roundTrip(p, send, false)
	c.recycle(send, err)
	return last(rs), err
}

// Batch runs statements in order in one round trip, stopping at the first
// error; the error is returned with the results of the statements that ran.
func (c *Conn) Batch(p *sim.Proc, stmts ...Stmt) ([]Result, error) {
	return c.roundTrip(p, stmts, false)
}

// Atomic runs statements as one transaction in one round trip (BEGIN ...
// COMMIT around them; ROLLBACK at the first error).
func (c *Conn) Atomic(p *sim.Proc, stmts ...Stmt) ([]Result, error) {
	return c.roundTrip(p, stmts, true)
}

// Begin starts a transaction. Like drivers that defer BEGIN, nothing is sent
// until the transaction's first statement, which carries it.
func (c *Conn) Begin(p *sim.Proc) (*Tx, error) {
	return &Tx{c: c, p: p}, nil
}

// ErrCommitRolledBack: COMMIT found the transaction failed and rolled it
// back (PostgreSQL answers ROLLBACK).
var ErrCommitRolledBack = errors.New("commit: the transaction had failed and was rolled back")

// Tx is an open transaction of a Conn.
type Tx struct {
	c      *Conn
	p      *sim.Proc
	begun  bool           // BEGIN was sent
	conn   network.ConnID // the session BEGIN went on: the transaction lives and dies with it
	queued []Stmt
	done   bool
}

// errSessionLost is a transaction's statement after its session broke.
var errSessionLost = &Error{Code: CodeConnectionFailure, Msg: "the connection broke during the transaction: its session, and the transaction, are gone"}

// lost reports whether the transaction's session is gone: its connection
// broke (while the node was frozen, say) or was replaced. Nothing more of
// it may be sent: on a new session the rest would run outside the
// transaction, as statements of their own (found by explore, seed 5142: a
// claim frozen before COMMIT, its connection broken meanwhile, committed
// its claim row alone on a fresh connection, without the grant).
func (tx *Tx) lost() bool {
	return tx.begun && (tx.c.conn != tx.conn || tx.conn == 0 || tx.p.Broken(tx.conn))
}

// sent records the session after a round trip that carried BEGIN.
func (tx *Tx) sent(first bool, err error) {
	if first && (err == nil || !Unknown(err)) {
		tx.conn = tx.c.conn
	}
}

// Queue adds statements whose results the caller does not read one by one:
// they go with the next round trip (Exec, Batch, Commit), before its own
// statements, and an error in one of them is that round trip's error.
func (tx *Tx) Queue(stmts ...Stmt) { tx.queued = append(tx.queued, stmts...) }

// Exec runs one statement in the transaction.
func (tx *Tx) Exec(s Stmt) (Result, error) {
	rs, err := tx.Batch(s)
	return last(rs), err
}

// QueryRow runs a statement that returns at most one row and returns it
// (nil when there is none).
func (tx *Tx) QueryRow(s Stmt) (Row, error) {
	r, err := tx.Exec(s)
	if err != nil || len(r.Rows) == 0 {
		return nil, err
	}
	return r.Rows[0], nil
}

// Batch runs statements in the transaction in one round trip; it returns
// the results of these statements (not of queued ones).
func (tx *Tx) Batch(stmts ...Stmt) ([]Result, error) {
	if tx.done {
		panic("db: statement on a finished transaction")
	}
	if tx.lost() {
		tx.done = true
		return nil, errSessionLost
	}
	first := !tx.begun
	send := tx.pending(len(stmts))
	send = append(send, stmts...)
	rs, err := tx.c.roundTrip(tx.p, send, false)
	tx.sent(first, err)
	skip := len(send) - len(stmts)
	tx.c.recycle(send, err)
	if err != nil && Unknown(err) {
		tx.done = true
	}
	if len(rs) <= skip {
		return nil, err
	}
	return rs[skip:], err
}

// pending takes BEGIN (the first time) and the queued statements.
func (tx *Tx) pending(extra int) []Stmt {
	out := tx.c.buffer(1 + len(tx.queued) + extra)
	if !tx.begun {
		out = append(out, Begin())
		tx.begun = true
	}
	out = append(out, tx.queued...)
	tx.queued = nil
	return out
}

// Commit sends the queued statements and COMMIT in one round trip.
func (tx *Tx) Commit() error {
	_, err := tx.CommitBatch()
	return err
}

// CommitBatch sends the queued statements, stmts and COMMIT in one round
// trip, and returns the results of stmts. As in PostgreSQL, a statement
// that fails skips the rest of the batch, its COMMIT too, and leaves the
// session in an aborted transaction block: CommitBatch then ends it with a
// ROLLBACK, as a driver's deferred Rollback does, and returns the
// statement's error. (It used to leave the block open: the connection went
// back to its pool aborted, and every atomic batch on it failed with 25001
// from then on; an arbiter's grace retried on it forever: explore --faults
// heavy, seed 2464, PA8.)
func (tx *Tx) CommitBatch(stmts ...Stmt) ([]Result, error) {
	if tx.done {
		panic("db: commit of a finished transaction")
	}
	tx.done = true
	if !tx.begun && len(tx.queued) == 0 && len(stmts) == 0 {
		return nil, nil // nothing was ever sent
	}
	if tx.lost() {
		return nil, errSessionLost
	}
	first := !tx.begun
	send := append(tx.pending(len(stmts)+1), stmts...)
	skip := len(send) - len(stmts)
	send = append(send, Commit())
	rs, err := tx.c.roundTrip(tx.p, send, false)
	tx.sent(first, err)
	tx.c.recycle(send, err)
	var mine []Result
	if len(rs) > skip {
		mine = rs[skip:min(len(rs), skip+len(stmts))]
	}
	if err != nil {
		if !Unknown(err) && len(rs) < len(send) {
			tx.done = false
			tx.Rollback()
		}
		return mine, err
	}
	if last(rs).RolledBack {
		return mine, ErrCommitRolledBack
	}
	return mine, nil
}

// Rollback ends the transaction. Nothing is sent when BEGIN never was, nor
// after a connection failure (the session, and its transaction, are gone).
func (tx *Tx) Rollback() error {
	if tx.done {
		return nil
	}
	tx.done = true
	tx.queued = nil
	if !tx.begun || tx.lost() {
		return nil // never sent, or the session (and the transaction with it) is gone
	}
	send := append(tx.c.buffer(1), Rollback())
	_, err := tx.c.roundTrip(tx.p, send, false)
	tx.c.recycle(send, err)
	return err
}

func last(rs []Result) Result {
	if len(rs) == 0 {
		return Result{}
	}
	return rs[len(rs)-1]
}

// roundTrip sends one request and waits for its response.
func (c *Conn) roundTrip(p *sim.Proc, stmts []Stmt, atomic bool) ([]Result, error) {
	if c.conn != 0 && p.Broken(c.conn) {
		c.Close(p) // it broke while idle: the session is gone; a new one
	}
	if c.conn == 0 {
		c.conn = p.Dial(c.DB)
	}
	c.next++
	id := c.next
	conn := c.conn
	label := "db"
	if sim.Armed(p) || (c.Timeout > 0 && sim.RecordsTimers(p)) {
		label = Label(stmts) // only built when a fault or the trace can show it
	}
	if c.reqs == nil {
		c.reqs = &slab[Request]{}
	}
	req := c.reqs.new()
	*req = Request{ID: id, Stmts: stmts, Atomic: atomic}
	m, err := p.Call(conn, req, c.Timeout, label, id)
	if err != nil {
		why := "connection to the database broke: the outcome is unknown"
		if errors.Is(err, sim.ErrTimeout) {
			why = fmt.Sprintf("no answer within %v: the connection is closed, the outcome is unknown", c.Timeout)
		}
		if c.conn == conn {
			c.Close(p)
		}
		return nil, &Error{Code: CodeConnectionFailure, Msg: why}
	}
	resp, _ := ResponseOf(m.Body)
	if e := resp.Err(); e != nil {
		return resp.Results, e
	}
	return resp.Results, nil
}

// Label names a round trip as its crash point: "db " and the statements'
// names (Stmt.Name, else the command and table).
func Label(stmts []Stmt) string {
	var b strings.Builder
	b.WriteString("db ")
	for i, s := range stmts {
		if i > 0 {
			b.WriteByte('+')
		}
		b.WriteString(s.Label())
	}
	return b.String()
}

// Pool is a fixed set of connections shared by the processes of one node
// (database/sql's pool with MaxOpenConns = Size): Get takes a free one, the
// lowest first, or waits for one in arrival order; Put gives it back.
type Pool struct {
	free []*Conn
	all  []*Conn
	wait sim.Queue[*Conn]
}

// NewPool returns a pool of size connections to db.
func NewPool(db network.Addr, size int, timeout time.Duration) *Pool {
	p := &Pool{}
	for i := 0; i < size; i++ {
		c := &Conn{DB: db, Timeout: timeout}
		p.all = append(p.all, c)
		p.free = append(p.free, c)
	}
	return p
}

// Get takes a connection, waiting for one if every one is in use.
func (pl *Pool) Get(p *sim.Proc) *Conn {
	if len(pl.free) > 0 {
		c := pl.free[0]
		pl.free = pl.free[1:]
		return c
	}
	c, err := pl.wait.Get(p, 0, "db pool")
	if err != nil {
		panic("db: pool wait ended without a connection: " + err.Error())
	}
	return c
}

// Put gives a connection back: to the first waiting process, or to the free
// list.
func (pl *Pool) Put(c *Conn) {
	if pl.wait.Waiting() > 0 {
		pl.wait.Put(c)
		return
	}
	i := 0
	for i < len(pl.free) && pl.index(pl.free[i]) < pl.index(c) {
		i++
	}
	pl.free = append(pl.free, nil)
	copy(pl.free[i+1:], pl.free[i:])
	pl.free[i] = c
}

func (pl *Pool) index(c *Conn) int {
	for i, x := range pl.all {
		if x == c {
			return i
		}
	}
	panic("db: Put of a connection that is not the pool's")
}

// Int returns an integer column of a row (panics, as a scan into the wrong
// type would fail, when the column is missing or of another type).
func (r Row) Int(col string) int64 { return column[int64](r, col) }

// Text returns a text column of a row.
func (r Row) Text(col string) string { return column[string](r, col) }

// Bool returns a boolean column of a row.
func (r Row) Bool(col string) bool { return column[bool](r, col) }

// Time returns a timestamp column of a row.
func (r Row) Time(col string) clock.Time { return column[clock.Time](r, col) }

// Null reports whether a column is NULL.
func (r Row) Null(col string) bool { v, ok := r[col]; return ok && v == nil }

func column[T any](r Row, col string) T {
	v, ok := r[col]
	if !ok {
		panic(fmt.Sprintf("db: row has no column %q: %v", col, r))
	}
	t, ok := v.(T)
	if !ok {
		var zero T
		panic(fmt.Sprintf("db: column %q is %T (%v), not %T", col, v, v, zero))
	}
	return t
}
