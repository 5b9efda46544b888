package sim

import (
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
)

// This file is the process layer: a node written as ordinary sequential Go.
//
// A Program is a Node whose logic runs in processes. Each process is a
// coroutine (iter.Pull) that only the kernel resumes, one at a time, inside
// the node's Step: nothing runs concurrently, no goroutine is scheduled by
// the Go runtime, and the order in which processes run is the order of the
// events that wake them (then FIFO within one step). A blocking call (Sleep,
// Recv, Queue.Get, Call over the database client, ...) asks the kernel for
// its input and yields; it returns when the input arrives. Every blocking
// call is a labelled crash point: a crash-at fault whose Point is the label,
// or a crash-yield fault counting blocking calls, crashes the node there.
//
// A crash abandons every process of the node: each is unwound from the
// blocking call it waits in (a panic the process wrapper recovers), so no
// code after its yield runs; deferred functions do run, and whatever they
// ask of the world is discarded. A restart runs the factory again with the
// node's disk.

// Errors of blocking calls.
var (
	// ErrTimeout: the call's timeout passed before its input arrived.
	ErrTimeout = errors.New("timeout")
	// ErrBroken: the connection broke (reset, partition, peer crashed or
	// closed it).
	ErrBroken = errors.New("connection broken")
	// ErrCanceled: the connection of the request this process serves broke
	// (the client hung up), as an HTTP server cancels a request's context.
	ErrCanceled = errors.New("request canceled: the client hung up")
)

// unwind is the panic value that abandons a process.
type unwind struct{}

// Handler serves one inbound message (a datagram, or a message on a
// connection another node dialed) in a process of its own.
type Handler func(p *Proc, m network.Message)

// CommandHandler serves one schedule command in a process of its own.
type CommandHandler func(p *Proc, c Cmd)

// Program returns a node whose main process is main. The main process starts
// when the node starts; it registers the node's handlers (Handle,
// OnCommand) and spawns its other processes (Go) before its first blocking
// call, and may return when it has nothing more to do.
func Program(main func(p *Proc)) Node {
	return &host{main: main, conns: map[network.ConnID]*pconn{}}
}

// ProgramOf is Program for a node whose struct harnesses and tests inspect
// (the Sender that says it finished): State returns it.
func ProgramOf(state any, main func(p *Proc)) Node {
	return &host{main: main, state: state, conns: map[network.ConnID]*pconn{}}
}

// State returns the struct given to ProgramOf, or the node itself for any
// other node; nil for nil (a crashed node).
func State(n Node) any {
	if h, ok := n.(*host); ok {
		return h.state
	}
	return n
}

// host is a Program's state: its processes and the connections they dialed.
type host struct {
	main    func(p *Proc)
	state   any
	serve   Handler
	command CommandHandler
	env     *Env
	procs   []*Proc       // live processes, in spawn order
	idle    []*coro       // coroutines free for the next spawn
	free    []*Proc       // finished processes, reused by the next spawns
	ready   []*Proc       // processes woken in this step, in wake order
	serveFn func(p *Proc) // serveOne as a func value, made once
	conns   map[network.ConnID]*pconn
	nextID  uint64
	crashed bool
	dead    bool
}

var _ Node = (*host)(nil)

// pconn is a connection a process dialed: its unread messages and its waiter.
type pconn struct {
	inbox   []network.Message
	waiters []*Proc // in the order they began to wait
	broken  bool
	closed  bool
}

// take gives a message to the first waiter that accepts it.
func (pc *pconn) take(h *host, m network.Message) bool {
	for _, p := range pc.waiters {
		if !p.keyed || replyKey(m) == p.key {
			h.wake(p, nil, m, nil)
			return true
		}
	}
	return false
}

// fail wakes every waiter with err.
func (pc *pconn) fail(h *host, err error) {
	ws := append([]*Proc(nil), pc.waiters...)
	for _, p := range ws {
		h.wake(p, nil, network.Message{}, err)
	}
}

func (pc *pconn) drop(p *Proc) {
	for i, w := range pc.waiters {
		if w == p {
			pc.waiters = append(pc.waiters[:i], pc.waiters[i+1:]...)
			return
		}
	}
}

// Note is what a process notes in the trace (Proc.Note): a value that names
// its event kind and renders its canonical text, and is the event's data
// (JSON-encodable; the checkers read it). The traces/hist types are notes.
type Note interface {
	Kind() string
	String() string
}

// Proc is one process of a node: its window on the world. Its methods may be
// called only from the process itself, while it runs.
type Proc struct {
	h     *host
	id    uint64
	name  string
	co    *coro
	done  bool            // its function returned
	label string          // what it waits for (its timer's text)
	in    network.Message // the message a serving process was started for
	// reqConn is the inbound connection of the request the process serves
	// (0 for other processes): its break cancels the process's waits.
	reqConn network.ConnID

	// the current wait
	waiting    bool
	timer      TimerID
	timed      bool
	list       waitList
	conn       *pconn
	keyed      bool // a Call: it takes only the reply with its key
	key        uint64
	cancel     bool // a hangup of the request's client ends the wait (Queue.Await)
	wantCancel bool
	// what woke it
	val any
	msg network.Message
	err error
}

type waitList interface{ drop(p *Proc) }

// String is the text of a process's timeout timer in the trace: the
// process and the blocking call it waits in. (The timer's tag is the
// process itself; the timer ID tells which wait it belongs to.)
func (p *Proc) String() string { return p.name + ": " + p.label }

// coro is a coroutine that runs processes, one after another: a process
// that ends parks it on its node's idle list, and the next spawn reuses it
// (and the stack it has grown).
type coro struct {
	h     *host
	next  func() (struct{}, bool)
	stop  func()
	yield func(struct{}) bool
	p     *Proc
	fn    func(p *Proc)
}

// run runs one process's function; it reports false when the process was
// unwound (the node crashed), which ends the coroutine.
func (c *coro) run() (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, unwound := r.(unwind); !unwound {
				panic(r)
			}
			ok = false
		}
	}()
	c.fn(c.p)
	return true
}

// Step implements Node.
func (h *host) Step(env *Env, in Input) {
	if h.dead {
		return
	}
	h.env = env
	h.crashed = false
	switch in.Kind {
	case Start:
		h.spawn("main", 0, h.main)
	case Timer:
		p, ok := in.Tag.(*Proc)
		if !ok || p.h != h || !p.waiting || !p.timed || p.timer != in.TimerID {
			break
		}
		p.timed = false
		h.wake(p, nil, network.Message{}, ErrTimeout)
	case Deliver:
		h.deliver(in.Msg)
	case ConnBroken:
		h.broken(in.Conn)
	case Command:
		if h.command == nil {
			panic(fmt.Sprintf("sim: %s got command %q but its program has no command handler", env.Self(), in.Cmd.Name))
		}
		cmd := in.Cmd
		h.spawn("command "+cmd.Name, 0, func(p *Proc) { h.command(p, cmd) })
	}
	// The ready list is run in place (a process woken while it runs is
	// appended behind), then emptied: its array serves the next steps.
	for i := 0; i < len(h.ready) && !h.crashed; i++ {
		p := h.ready[i]
		h.ready[i] = nil
		h.resume(p)
	}
	if h.crashed {
		env.crashed = true
		h.ready = nil
	} else {
		h.ready = h.ready[:0]
	}
	h.env = nil
}

func (h *host) deliver(m network.Message) {
	if m.Conn != 0 {
		if pc, ok := h.conns[m.Conn]; ok {
			if pc.closed || pc.broken {
				return // an answer on a connection the process gave up
			}
			if !pc.take(h, m) {
				pc.inbox = append(pc.inbox, m)
			}
			return
		}
	}
	if h.serve == nil {
		if h.env.Records("note") {
			h.env.Note("note", "no handler for "+fmt.Sprint(m.Body), nil)
		} else {
			h.env.Skip("note")
		}
		return
	}
	if h.serveFn == nil {
		h.serveFn = h.serveOne
	}
	p := h.spawn("serve", m.Conn, h.serveFn)
	p.in = m
}

func (h *host) broken(c network.ConnID) {
	if pc, ok := h.conns[c]; ok {
		if pc.closed || pc.broken {
			return
		}
		pc.broken = true
		pc.fail(h, ErrBroken)
		return
	}
	// An inbound connection: cancel the cancelable waits of the processes
	// serving it.
	for _, p := range h.procs {
		if p.reqConn == c && p.waiting && p.cancel {
			h.wake(p, nil, network.Message{}, ErrCanceled)
		}
	}
}

// spawn starts a process; it runs when the current process yields (at once
// when no process runs).
func (h *host) spawn(name string, reqConn network.ConnID, fn func(p *Proc)) *Proc {
	h.nextID++
	var p *Proc
	if n := len(h.free); n > 0 {
		// A finished process's struct: nothing refers to it any more (see
		// resume), so it starts over as a new process.
		p = h.free[n-1]
		h.free[n-1] = nil
		h.free = h.free[:n-1]
		*p = Proc{h: h, id: h.nextID, name: name, reqConn: reqConn}
	} else {
		p = &Proc{h: h, id: h.nextID, name: name, reqConn: reqConn}
	}
	var c *coro
	if n := len(h.idle); n > 0 {
		c = h.idle[n-1]
		h.idle = h.idle[:n-1]
	} else {
		c = &coro{h: h}
		c.next, c.stop = iter.Pull(func(yield func(struct{}) bool) {
			c.yield = yield
			for c.run() && !h.dead {
				c.p.done = true
				c.p, c.fn = nil, nil
				h.idle = append(h.idle, c)
				if !yield(struct{}{}) || h.dead {
					return
				}
			}
		})
	}
	c.p, c.fn = p, fn
	p.co = c
	h.procs = append(h.procs, p)
	h.ready = append(h.ready, p)
	return p
}

// serveOne runs the handler on the message that started the process.
func (h *host) serveOne(p *Proc) {
	m := p.in
	p.in = network.Message{}
	h.serve(p, m)
}

// resume runs a ready process until it blocks or ends. A process whose
// function returned goes to the free list: it waits for nothing (its last
// wait woke it, which took it off its queue's or connection's waiters and
// cancelled its timer, so no timer tag of it can still fire: the kernel
// drops cancelled timers before they reach the node, and a timer is taken
// only by the process waiting with its ID), it is in no ready list (it ran
// last) and no longer among the host's processes. Only the process's own
// code held it; a Proc must not be kept past its function's return.
func (h *host) resume(p *Proc) {
	if _, alive := p.co.next(); !alive || p.done {
		h.remove(p)
		if p.done && !h.dead && !p.waiting {
			p.co, p.val, p.msg, p.err, p.in = nil, nil, network.Message{}, nil, network.Message{}
			h.free = append(h.free, p)
		}
	}
}

func (h *host) remove(p *Proc) {
	for i, q := range h.procs {
		if q == p {
			h.procs = append(h.procs[:i], h.procs[i+1:]...)
			return
		}
	}
}

// wake makes a waiting process ready with what woke it.
func (h *host) wake(p *Proc, val any, m network.Message, err error) {
	if !p.waiting {
		return
	}
	p.waiting = false
	p.cancel = false
	if p.timed {
		h.env.Cancel(p.timer)
		p.timed = false
	}
	if p.list != nil {
		p.list.drop(p)
		p.list = nil
	}
	if p.conn != nil {
		p.conn.drop(p)
		p.conn = nil
		p.keyed = false
	}
	p.val, p.msg, p.err = val, m, err
	h.ready = append(h.ready, p)
}

// abandon unwinds every process (the node crashed, or the world closed).
func (h *host) abandon() {
	if h.dead {
		return
	}
	h.dead = true
	h.crashed = true
	h.ready = nil
	h.env = discardEnv()
	procs, idle := h.procs, h.idle
	h.procs, h.idle = nil, nil
	for _, p := range procs {
		p.co.stop()
	}
	for _, c := range idle {
		c.stop()
	}
	h.env = nil
}

// discardEnv is the environment of code that runs while a process unwinds:
// whatever it asks for is thrown away.
func discardEnv() *Env {
	var timer TimerID
	return &Env{nextTimer: &timer, dial: func(network.Addr) network.ConnID { return 0 }, crashed: true}
}

// ---- the process API ----

// Name returns the process's name ("main", "serve", "command rejudge", or
// the name given to Go).
func (p *Proc) Name() string { return p.name }

// Self returns the node's address.
func (p *Proc) Self() network.Addr { return p.h.env.Self() }

// Now returns the node's wall-clock reading. Time does not pass while a
// process runs; it passes only across blocking calls.
func (p *Proc) Now() clock.Time { return p.h.env.Now() }

// Mono returns the node's monotonic clock reading.
func (p *Proc) Mono() clock.Time { return p.h.env.Mono() }

// Rand returns the node's entropy stream.
func (p *Proc) Rand() Rand { return p.h.env.Rand() }

// Disk returns the node's disk.
func (p *Proc) Disk() *Disk { return p.h.env.Disk() }

// Sync makes the disk's pending writes durable (an fsync). It is a crash
// point: a crash there loses the writes.
func (p *Proc) Sync(label string) {
	p.Point("sync " + label)
	p.h.env.Disk().Sync()
}

// Recording reports whether notes are recorded.
func (p *Proc) Recording() bool { return p.h.env.Recording() }

// Records reports whether notes of a kind are recorded.
func (p *Proc) Records(kind string) bool { return p.h.env.Records(kind) }

// Skip stands for a note the caller did not make (see Env.Skip).
func (p *Proc) Skip(kind string) { p.h.env.Skip(kind) }

// Note records a trace event of n's kind whose text is n.String() and whose
// data is n itself (see Env.Note). The text is built only when the note is
// recorded; a note the run's filter refuses still takes its event number
// (Env.Skip).
func (p *Proc) Note(n Note) {
	e := p.h.env
	kind := n.Kind()
	if !e.Records(kind) {
		e.Skip(kind)
		return
	}
	e.Note(kind, n.String(), n)
}

// Send sends a datagram.
func (p *Proc) Send(to network.Addr, body any) { p.h.env.Send(to, body) }

// SendConn sends a message on a connection (one the process dialed, or the
// inbound connection of the request it serves).
func (p *Proc) SendConn(c network.ConnID, body any) { p.h.env.SendConn(c, body) }

// Conn returns the inbound connection of the request the process serves, 0
// for a datagram or a process that serves no request.
func (p *Proc) Conn() network.ConnID { return p.reqConn }

// Dial opens a connection to another node. It returns at once; a refused
// connection is seen by the next Recv as ErrBroken.
func (p *Proc) Dial(to network.Addr) network.ConnID {
	p.Point("dial " + string(to))
	c := p.h.env.Dial(to)
	p.h.conns[c] = &pconn{}
	return c
}

// Close closes a connection the process dialed; the peer sees it broken
// after the data already in flight. Unread messages are discarded, and the
// node's other processes waiting on it get ErrBroken.
func (p *Proc) Close(c network.ConnID) {
	pc, ok := p.h.conns[c]
	if !ok || pc.closed {
		return
	}
	pc.closed = true
	pc.inbox = nil
	if !pc.broken {
		p.h.env.Close(c)
	}
	pc.fail(p.h, ErrBroken)
	// The entry stays: a late answer on the closed connection is dropped,
	// not taken for a new inbound request.
}

// Broken reports whether a connection the process dialed has broken (what
// a read on an idle socket would tell: the peer reset it, or it was cut).
func (p *Proc) Broken(c network.ConnID) bool {
	pc, ok := p.h.conns[c]
	return !ok || pc.broken || pc.closed
}

// Recv waits for the next message on a connection the process dialed, at
// most timeout (0: no timeout). It returns ErrBroken once the connection
// broke, ErrTimeout when the timeout passed first.
func (p *Proc) Recv(c network.ConnID, timeout time.Duration, label string) (network.Message, error) {
	p.Point(label)
	pc, ok := p.h.conns[c]
	if !ok || pc.closed {
		return network.Message{}, ErrBroken
	}
	if len(pc.inbox) > 0 {
		m := pc.inbox[0]
		pc.inbox = pc.inbox[1:]
		return m, nil
	}
	if pc.broken {
		return network.Message{}, ErrBroken
	}
	pc.waiters = append(pc.waiters, p)
	p.conn = pc
	p.wait(timeout, label)
	return p.msg, p.err
}

// Keyed is a reply that names the request it answers (an HTTP-like reply's
// request number, a database response's request ID).
type Keyed interface{ ReplyKey() uint64 }

// replyKey returns a message's reply key, 0 for a message that has none.
func replyKey(m network.Message) uint64 {
	if k, ok := m.Body.(Keyed); ok {
		return k.ReplyKey()
	}
	return 0
}

// Call sends body on a connection the process dialed and waits, at most
// timeout (0: no timeout), for the reply whose ReplyKey is key: several
// processes may have calls out on one connection (a pipelined keep-alive
// connection), each gets its own reply. Messages no call takes stay for
// Recv. Errors as Recv's.
func (p *Proc) Call(c network.ConnID, body any, timeout time.Duration, label string, key uint64) (network.Message, error) {
	pc, ok := p.h.conns[c]
	if !ok || pc.closed {
		p.Point(label)
		return network.Message{}, ErrBroken
	}
	p.h.env.SendConn(c, body)
	p.Point(label)
	for i, m := range pc.inbox {
		if replyKey(m) == key {
			pc.inbox = append(pc.inbox[:i], pc.inbox[i+1:]...)
			return m, nil
		}
	}
	if pc.broken {
		return network.Message{}, ErrBroken
	}
	pc.waiters = append(pc.waiters, p)
	p.conn = pc
	p.keyed, p.key = true, key
	p.wait(timeout, label)
	return p.msg, p.err
}

// Sleep waits for d of the node's monotonic time.
func (p *Proc) Sleep(d time.Duration, label string) {
	p.Point(label)
	p.wait(d, label)
}

// Yield lets the node's other processes that are ready run first, then goes
// on in the same instant (runtime.Gosched): after handing something to
// another process, the handoff is finished before this one goes on.
func (p *Proc) Yield(label string) {
	p.Point(label)
	p.h.ready = append(p.h.ready, p)
	if !p.co.yield(struct{}{}) || p.h.dead {
		panic(unwind{})
	}
}

// Go spawns a process; it first runs when the calling process blocks.
func (p *Proc) Go(name string, fn func(p *Proc)) {
	p.h.spawn(name, 0, fn)
}

// Handle sets the handler of inbound messages: each runs in a new process.
func (p *Proc) Handle(h Handler) { p.h.serve = h }

// OnCommand sets the handler of schedule commands: each runs in a new
// process.
func (p *Proc) OnCommand(h CommandHandler) { p.h.command = h }

// Armed reports whether a crash-at or crash-yield fault is armed on the
// node: callers that build labels from data (the database client's
// statement names) can skip it when nothing listens.
func (p *Proc) Armed() bool {
	e := p.h.env
	if e.outside != nil {
		return e.outside.Point != nil
	}
	return e.world != nil && (len(e.slot.armed) > 0 || len(e.slot.yields) > 0)
}

// Point is a named crash point: a crash-at fault armed for the label crashes
// the node here (the process is unwound; what it asked for before is carried
// out, nothing after). Every blocking call is such a point, and counts
// toward crash-yield faults.
//
// A pause-at fault armed for the label freezes the node, and this process
// stays at the point until the node thaws: what it would do next (a
// claim's reply after its COMMIT) waits for the thaw, while the node's
// other processes finish the step they are in.
func (p *Proc) Point(label string) {
	e := p.h.env
	if e.world == nil {
		if e.outside != nil && e.outside.Point != nil {
			e.outside.Point(e, label)
		}
		return
	}
	var frozen time.Duration
	if len(e.slot.armed) > 0 {
		frozen = e.world.pausePoint(e.slot, label)
	}
	if e.crashPoint(label) || e.world.yieldPoint(e.slot, label) {
		p.h.crashed = true
		// What was asked for so far is carried out; what deferred calls
		// ask for while the process unwinds is not.
		p.h.env = discardEnv()
		panic(unwind{})
	}
	if frozen > 0 {
		// The node is paused from this instant (pausePoint's action comes
		// first): the rest of this process waits for an input due now,
		// which the paused node holds until it thaws, by its resume or by
		// a heal-all, whichever comes first (waiting for the freeze's
		// length instead kept this one process frozen after a heal-all
		// had thawed its node: explore seed 679, an arbiter's claim reply
		// held 2 min after the arbiter ran again).
		p.wait(0, "frozen at "+label)
	}
}

// Die crashes the node here, of its own doing (a process that dies on its
// input: a sandbox that takes the worker down with it): the process is
// unwound as at a crash point, and when restart is positive a supervisor
// starts the node again that long after (the restart is an action of the
// schedule from then on). Stepped alone (no kernel), the node just ends.
func (p *Proc) Die(label string, restart time.Duration) {
	e := p.h.env
	if e.world != nil {
		e.world.die(e.slot, label, restart)
	} else if e.outside != nil && e.outside.Die != nil {
		e.outside.Die(label, restart)
	}
	p.h.crashed = true
	p.h.env = discardEnv()
	panic(unwind{})
}

// wait blocks the process until something wakes it, or the timeout (0: none)
// passes.
func (p *Proc) wait(timeout time.Duration, label string) {
	p.waiting = true
	p.cancel = p.wantCancel
	p.wantCancel = false
	p.err, p.val, p.msg = nil, nil, network.Message{}
	if timeout > 0 || (p.conn == nil && p.list == nil) {
		p.timed = true
		p.label = label
		p.timer = p.h.env.After(timeout, p)
	}
	if !p.co.yield(struct{}{}) || p.h.dead {
		panic(unwind{})
	}
}

// Queue is a FIFO between the processes of one node (a buffered channel
// that only the kernel schedules). The zero value is an empty queue.
type Queue[T any] struct {
	items   []T
	waiters []*Proc
}

// Put adds an item; it never blocks. The first waiting process gets it.
func (q *Queue[T]) Put(v T) {
	for len(q.waiters) > 0 {
		w := q.waiters[0]
		// Shift rather than reslice: the array keeps its capacity for the
		// next waiters (the list is short).
		n := copy(q.waiters, q.waiters[1:])
		q.waiters[n] = nil
		q.waiters = q.waiters[:n]
		if w.waiting && !w.h.dead {
			if w.h.env == nil {
				panic("sim: a Queue is shared between nodes; it belongs to the processes of one node")
			}
			w.list = nil
			w.h.wake(w, v, network.Message{}, nil)
			return
		}
	}
	q.items = append(q.items, v)
}

// Waiting returns how many processes wait for an item.
func (q *Queue[T]) Waiting() int { return len(q.waiters) }

// Len returns how many items wait to be taken.
func (q *Queue[T]) Len() int { return len(q.items) }

// Get takes the next item, waiting at most timeout (0: no timeout) for one.
// It returns ErrTimeout when the timeout passed first.
func (q *Queue[T]) Get(p *Proc, timeout time.Duration, label string) (T, error) {
	return q.get(p, timeout, label, false)
}

// Await is Get for a process that serves a request: it also returns
// ErrCanceled when the request's client hangs up (its connection breaks),
// as a select on an HTTP request's ctx.Done() would.
func (q *Queue[T]) Await(p *Proc, timeout time.Duration, label string) (T, error) {
	return q.get(p, timeout, label, p.reqConn != 0)
}

func (q *Queue[T]) get(p *Proc, timeout time.Duration, label string, cancel bool) (T, error) {
	p.Point(label)
	var zero T
	if len(q.items) > 0 {
		v := q.items[0]
		q.items = q.items[1:]
		return v, nil
	}
	q.waiters = append(q.waiters, p)
	p.list = q
	p.wantCancel = cancel
	p.wait(timeout, label)
	if p.err != nil {
		return zero, p.err
	}
	return p.val.(T), nil
}

func (q *Queue[T]) drop(p *Proc) {
	for i, w := range q.waiters {
		if w == p {
			q.waiters = append(q.waiters[:i], q.waiters[i+1:]...)
			return
		}
	}
}
