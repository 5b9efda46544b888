package sim

import (
	"errors"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
)

// This file, program.go (the host that runs the processes) and queue.go are
// the process layer: a node written as ordinary sequential Go.
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

// Proc is one process of a node: its window on the world. Its methods may be
// called only from the process itself, while it runs.
type Proc struct {
	h       *host
	id      uint64
	name    string
	co      *coro
	done    bool            // its function returned
	unwound bool            // its function was unwound (its node crashed)
	label   string          // what it waits for (its timer's text)
	in      network.Message // the message a serving process was started for
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

// waitTimer is the tag of a process's timeout timer: the process (the timer
// ID tells which wait it belongs to). Its String is the timer's text in
// the trace: the process and the blocking call it waits in.
type waitTimer struct{ p *Proc }

func (t waitTimer) String() string { return t.p.name + ": " + t.p.label }

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

// Note is what a process notes in the trace (Proc.Note): a value that names
// its event kind and renders its canonical text, and is the event's data
// (JSON-encodable; the checkers read it). The traces/hist types are notes.
type Note interface {
	Kind() string
	String() string
}

// Note records a trace event of n's kind whose text is n.String() and whose
// data is n itself. It is guarded by the kernel (Env.noting): a note of a
// kind the run does not record costs a field test, or a look-up of its kind
// under a Filter, and its text is never built; a refused note still takes
// its event number. In a record that is the checkers' alone (ForCheckers)
// its text is left for whoever reads it (traces.Event.TextOfValue: Desc
// renders it). A caller needs no guard of its own.
func (p *Proc) Note(n Note) {
	e := p.h.env
	kind := n.Kind()
	switch {
	case !e.noting(kind):
	case e.checking:
		// The checkers read the value: its text is rendered only if
		// someone asks (traces.Event.TextOfValue).
		e.effects = append(e.effects, Effect{Kind: EffNote, Note: kind, Data: n, TextOfValue: true})
	default:
		e.note(kind, n.String(), n)
	}
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
	if p.h.dead || !p.co.yield(struct{}{}) || p.h.dead {
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

// Recording reports whether the run records notes: code that builds
// something only a trace shows (the database client's statement labels,
// which name a call's timeout timer) can skip it when it is false. A note
// needs no such guard (Proc.Note has it).
func Recording(p *Proc) bool { return p.h.env.Recording() }

// RecordsTimers reports whether the run records its timers, whose texts
// name what a process waits for (its label): callers that build a wait's
// label from data can skip it when neither this nor Armed holds.
func RecordsTimers(p *Proc) bool { return p.h.env.Records("timer") }

// Armed reports whether a crash-at or crash-yield fault is armed on a
// process's node: callers that build crash-point labels from data (the
// database client's statement names) can skip them when nothing listens.
func Armed(p *Proc) bool { return p.h.env.back.armed() }

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
	crash, frozen := e.back.point(e, label)
	if crash {
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
	p.h.env.back.die(label, restart)
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
		p.timer = p.h.env.After(timeout, waitTimer{p})
	}
	// A process unwinding (its node dead) never blocks again: its
	// coroutine goes back to the pool once it yields.
	if p.h.dead || !p.co.yield(struct{}{}) || p.h.dead {
		panic(unwind{})
	}
}
