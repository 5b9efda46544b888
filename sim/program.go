package sim

import (
	"fmt"
	"iter"
	"sync"

	"github.com/fencesim/fencesim/network"
)

// This file runs a Program's processes: the host that spawns, resumes,
// wakes and unwinds them, and the connections they dialed.

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

// coro is a coroutine that runs processes, one after another: a process
// that ends parks it on its node's idle list, and the next spawn reuses it
// (and the stack it has grown). A process unwound (its node crashed) and a
// node abandoned hand their coroutines to the pool of parked coroutines,
// where the next world's spawns find them, stacks grown.
type coro struct {
	h     *host
	next  func() (struct{}, bool)
	stop  func()
	yield func(struct{}) bool
	p     *Proc
	fn    func(p *Proc)
	busy  bool // inside a process's function (it has run and not returned)
	ended bool // its loop returned (stopped, or a process's real panic): never parked again
}

// run runs one process's function; it reports false when the process was
// unwound (the node crashed).
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

// loop is a coroutine's body: it runs the processes it is given, parking
// between them on its node's idle list or, once its node is done with it,
// in the pool.
func (c *coro) loop(yield func(struct{}) bool) {
	defer func() { c.ended = true }()
	c.yield = yield
	for {
		c.busy = true
		ok := c.run()
		c.busy = false
		h, p := c.h, c.p
		c.p, c.fn = nil, nil
		if ok && !h.dead {
			p.done = true
			h.idle = append(h.idle, c)
		} else {
			// Whoever resumed it parks it (in the pool) once it has
			// yielded: a coroutine in the pool is suspended.
			p.unwound = true
			c.h = nil
		}
		if !yield(struct{}{}) {
			return
		}
	}
}

// coros is the pool of parked coroutines, shared by the worlds of a
// process (explore's workers run one after another on it): a coroutine in
// it holds nothing of the world it last ran in (no host, process or
// function), only its goroutine's stack, which a new one would grow again
// call by call. What a world computes does not depend on which coroutine
// runs its processes, so the pool changes no run's outcome. A coroutine
// keeps what its first creator's goroutine gave it (pprof labels); a
// goroutine that drives worlds must not lock its OS thread
// (runtime.LockOSThread), since a pooled coroutine may move between
// goroutines.
var coros coroPool

// maxParked bounds the pool: coroutines beyond it end.
const maxParked = 512

type coroPool struct {
	mu     sync.Mutex
	parked []*coro
}

func (cp *coroPool) get() *coro {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	n := len(cp.parked)
	if n == 0 {
		return nil
	}
	c := cp.parked[n-1]
	cp.parked[n-1] = nil
	cp.parked = cp.parked[:n-1]
	return c
}

// park puts c, suspended at its loop's yield or not started, and done
// with its world, in the pool; when the pool is full, it ends. An ended
// coroutine (a process's panic went through it) is dropped.
func park(c *coro) {
	if c.ended {
		return
	}
	coros.mu.Lock()
	full := len(coros.parked) >= maxParked
	if !full {
		coros.parked = append(coros.parked, c)
	}
	coros.mu.Unlock()
	if full {
		c.stop()
	}
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
		t, ok := in.Tag.(waitTimer)
		p := t.p
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
		if h.env.noting("note") {
			h.env.note("note", "no handler for "+fmt.Sprint(m.Body), nil)
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
	} else if c = coros.get(); c == nil {
		c = &coro{}
		c.next, c.stop = iter.Pull(c.loop)
	}
	c.h, c.p, c.fn = h, p, fn
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
	if _, alive := p.co.next(); !alive || p.done || p.unwound {
		h.remove(p)
		if p.unwound {
			park(p.co)
			p.co = nil
		} else if p.done && !h.dead && !p.waiting {
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
	// A process inside its function is resumed to unwind (it finds its
	// node dead at its yield); one not started yet never runs. Code that
	// runs while a process unwinds (its deferred calls) may spawn: the
	// processes it adds are parked in turn.
	for len(h.procs) > 0 || len(h.idle) > 0 {
		procs, idle := h.procs, h.idle
		h.procs, h.idle = nil, nil
		for _, p := range procs {
			c := p.co
			if c.busy && !c.ended {
				c.next()
			}
			c.h, c.p, c.fn = nil, nil, nil
			park(c)
		}
		for _, c := range idle {
			c.h = nil
			park(c)
		}
	}
	h.env = nil
}

// discardEnv is the environment of code that runs while a process unwinds:
// whatever it asks for is thrown away.
func discardEnv() *Env {
	var timer TimerID
	return &Env{nextTimer: &timer, back: quiet{}, crashed: true}
}
