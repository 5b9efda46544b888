package sim

import (
	"fmt"
	"strconv"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
)

// This file is a node's lifecycle: its slot, start, crash, pause and resume,
// and the crash points (crash-at, pause-at, crash-yield) that end or freeze it.

// timerSet is the set of a node's pending timers: a bitmap indexed by
// TimerID from base (timer IDs grow by one per timer, so it stays a few
// words; a timer pending for long only keeps the words since it).
type timerSet struct {
	base  TimerID
	words []uint64
}

func (t *timerSet) add(id TimerID) {
	if len(t.words) == 0 {
		t.base = id &^ 63
	}
	for id < t.base { // an ID below the window: grow it downward
		t.words = append([]uint64{0}, t.words...)
		t.base -= 64
	}
	i := uint64(id - t.base)
	for uint64(len(t.words)) <= i/64 {
		t.words = append(t.words, 0)
	}
	t.words[i/64] |= 1 << (i % 64)
}

func (t *timerSet) has(id TimerID) bool {
	if id < t.base {
		return false
	}
	i := uint64(id - t.base)
	return i/64 < uint64(len(t.words)) && t.words[i/64]&(1<<(i%64)) != 0
}

func (t *timerSet) del(id TimerID) {
	if !t.has(id) {
		return
	}
	i := uint64(id - t.base)
	t.words[i/64] &^= 1 << (i % 64)
	if t.words[0] != 0 {
		return
	}
	// Drop the empty words in front, keeping the array (no allocation).
	z := 1
	for z < len(t.words) && t.words[z] == 0 {
		z++
	}
	n := copy(t.words, t.words[z:])
	t.words = t.words[:n]
	t.base += TimerID(64 * z)
}

func (t *timerSet) reset() { t.words = t.words[:0] }

type slot struct {
	name      string
	addr      network.Addr
	factory   Factory
	node      Node
	disk      *Disk
	clock     clock.Clock
	rnd       Rand
	up        bool
	paused    bool
	inc       uint32
	timers    timerSet
	nextTimer TimerID
	held      []Input
	armed     []Action   // crash-at actions waiting for their point
	yields    []yieldArm // crash-yield arms: blocking calls left before the crash
	passed    uint64     // blocking calls (a state machine's inputs) passed since the node started
	machine   bool       // the node is a plain state machine (not a Program): each input is a yield
	back      kernel     // the backend of the node's Envs
}

// kernel is the backend of the Envs of a world's node: dials open
// connections on the world's network, crash points meet the faults armed
// on the node's slot, notes are recorded as the run's Filter says.
type kernel struct {
	w *World
	s *slot
}

func (k *kernel) dial(self, to network.Addr) network.ConnID { return k.w.net.Dial(self, to) }
func (k *kernel) records(kind string) bool                  { return k.w.wantsNote(kind) }
func (k *kernel) skips(kind string) bool                    { return !k.w.wantsNote(kind) }
func (k *kernel) armed() bool                               { return len(k.s.armed) > 0 || len(k.s.yields) > 0 }

func (k *kernel) crashAt(point string, pause bool) bool {
	if len(k.s.armed) == 0 {
		return false
	}
	if pause {
		k.w.pausePoint(k.s, point)
	}
	return k.w.crashPoint(k.s, point)
}

func (k *kernel) point(e *Env, label string) (crash bool, frozen time.Duration) {
	if len(k.s.armed) > 0 {
		frozen = k.w.pausePoint(k.s, label)
	}
	if e.crashPoint(label, false) || k.w.yieldPoint(k.s, label) {
		return true, 0
	}
	return false, frozen
}

func (k *kernel) die(label string, restart time.Duration) { k.w.die(k.s, label, restart) }

// yieldArm is an armed crash-yield: left blocking calls to the crash, and
// the downtime after which the node restarts (0: it stays down).
type yieldArm struct {
	left  int
	down  time.Duration
	pause bool // a pause-yield: the node freezes for down instead of crashing
}

// NodeOption changes how a node is added.
type NodeOption func(*slot)

// Down adds a node that is not started until a restart action starts it
// (a second arbiter that a rolling deploy brings up).
func Down() NodeOption { return func(s *slot) { s.up = false } }

// WithDisk gives the node a disk prepared by the caller.
func WithDisk(d *Disk) NodeOption { return func(s *slot) { s.disk = d } }

// Add adds a node, started at time 0 unless Down is given. Names are unique.
func (w *World) Add(name string, f Factory, opts ...NodeOption) {
	if _, dup := w.byAddr[network.Addr(name)]; dup {
		panic(fmt.Sprintf("sim: node %q added twice", name))
	}
	if w.started {
		panic(fmt.Sprintf("sim: node %q added after the run started", name))
	}
	s := &slot{name: name, addr: network.Addr(name), factory: f, disk: NewDisk(), up: true,
		rnd: w.ent.Stream("node/" + name)}
	s.back = kernel{w: w, s: s}
	for _, o := range opts {
		o(s)
	}
	idx := int32(len(w.slots))
	w.slots = append(w.slots, s)
	w.byAddr[s.addr] = idx
	w.net.Index(s.addr)
	if s.up {
		s.up = false
		w.push(event{at: 0, kind: evStart, node: idx})
	}
}

func (w *World) start(idx int32, why string) {
	s := w.slots[idx]
	if s.up {
		if w.wants(kFault) {
			w.emit(s.name, kFault, why+" ignored: node is up")
		}
		return
	}
	s.up = true
	s.paused = false
	if why == "restart" {
		w.net.NodeUp(s.addr)
	}
	s.node = s.factory(s.name, s.disk)
	_, program := s.node.(*host)
	s.machine = !program
	s.passed = 0
	k := kStart
	if why == "restart" {
		k = kRestart
	}
	if w.wants(k) {
		w.emit(s.name, k, "incarnation "+strconv.FormatUint(uint64(s.inc), 10))
	}
	w.stepNode(idx, &Input{Kind: Start})
}

func (w *World) crash(idx int32, why string) {
	s := w.slots[idx]
	if !s.up {
		return
	}
	s.up = false
	s.paused = false
	abandon(s.node)
	s.node = nil
	s.inc++
	s.timers.reset()
	w.held -= len(s.held)
	s.held = nil
	s.disk.crash()
	if w.wants(kCrash) {
		w.emit(s.name, kCrash, why)
	}
	for _, c := range w.net.NodeDown(s.addr) {
		w.connBroken(c, idx)
	}
}

func (w *World) crashPoint(s *slot, point string) bool {
	for i := range s.armed {
		a := &s.armed[i]
		if a.Point != point || a.Kind == PauseAt {
			continue
		}
		if a.Count > 1 {
			a.Count--
			return false
		}
		s.armed = append(s.armed[:i], s.armed[i+1:]...)
		if w.wants(kFault) {
			w.emit(s.name, kFault, "crash point "+point+" reached")
		}
		return true
	}
	return false
}

// pausePoint counts a passage of a crash point for the pause-at arms on
// it: the first one due freezes the node once this step is over, for its
// For (actions of the schedule from now on, as a pause-yield's), and
// pausePoint returns how long (0: no freeze).
func (w *World) pausePoint(s *slot, point string) time.Duration {
	for i := range s.armed {
		a := &s.armed[i]
		if a.Point != point || a.Kind != PauseAt {
			continue
		}
		if a.Count > 1 {
			a.Count--
			return 0
		}
		d := a.For
		s.armed = append(s.armed[:i], s.armed[i+1:]...)
		if w.want.has(kFault) {
			w.emit(s.name, kFault, fmt.Sprintf("freeze at crash point %s for %v", point, d))
		}
		if a.Peer != "" {
			// The far side ends the frozen node's idlest connection to
			// Peer (an idle session's timeout, an operator's
			// pg_terminate_backend): a stalled leader's lock session
			// ends while its open transaction's stays.
			if c, ok := w.net.Idlest(s.addr, network.Addr(a.Peer)); ok && w.net.Break(c) {
				w.connBroken(c, -1)
			}
		}
		w.sched = append(w.sched, Action{At: w.now, Kind: Pause, Node: s.name}, Action{At: w.now.Add(d), Kind: Resume, Node: s.name})
		w.push(event{at: w.now, kind: evFault, id: uint64(len(w.sched) - 2)})
		w.push(event{at: w.now.Add(d), kind: evFault, id: uint64(len(w.sched) - 1)})
		return d
	}
	return 0
}

// yieldPoint counts a blocking call of a process and reports whether an
// armed crash-yield fires at it.
func (w *World) yieldPoint(s *slot, label string) bool {
	s.passed++
	if len(s.yields) == 0 {
		return false
	}
	fire, freeze := false, time.Duration(0)
	var down time.Duration
	for i := range s.yields {
		s.yields[i].left--
		if s.yields[i].left == 0 {
			if s.yields[i].pause {
				freeze = max(freeze, s.yields[i].down)
				continue
			}
			fire = true
			down = max(down, s.yields[i].down)
		}
	}
	if !fire && freeze == 0 {
		return false
	}
	keep := s.yields[:0]
	for _, y := range s.yields {
		if y.left > 0 {
			keep = append(keep, y)
		}
	}
	s.yields = keep
	if !fire {
		// A pause-yield: the node freezes once this step is over, and
		// thaws freeze later (actions of the schedule from now on).
		if w.wants(kFault) {
			w.emit(s.name, kFault, fmt.Sprintf("freeze at blocking call %d for %v: %s", s.passed, freeze, label))
		}
		w.sched = append(w.sched, Action{At: w.now, Kind: Pause, Node: s.name}, Action{At: w.now.Add(freeze), Kind: Resume, Node: s.name})
		w.push(event{at: w.now, kind: evFault, id: uint64(len(w.sched) - 2)})
		w.push(event{at: w.now.Add(freeze), kind: evFault, id: uint64(len(w.sched) - 1)})
		return false
	}
	if w.wants(kFault) {
		w.emit(s.name, kFault, fmt.Sprintf("crash at blocking call %d: %s", s.passed, label))
	}
	if down > 0 {
		// The restart is an action of the schedule from now on, recorded
		// as any other when it happens.
		w.sched = append(w.sched, Action{At: w.now.Add(down), Kind: Restart, Node: s.name})
		w.push(event{at: w.now.Add(down), kind: evFault, id: uint64(len(w.sched) - 1)})
	}
	return true
}

// die records a node's own crash (Proc.Die) and schedules its restart.
func (w *World) die(s *slot, label string, restart time.Duration) {
	if w.wants(kFault) {
		w.emit(s.name, kFault, "died: "+label)
	}
	if restart > 0 {
		w.sched = append(w.sched, Action{At: w.now.Add(restart), Kind: Restart, Node: s.name})
		w.push(event{at: w.now.Add(restart), kind: evFault, id: uint64(len(w.sched) - 1)})
	}
}

// Yields returns how many blocking calls (for a plain state machine: inputs
// other than its start) a node has passed since it last started: the
// largest count a crash-yield armed from its start (FromStart) can hit so
// far.
func (w *World) Yields(name string) uint64 {
	if s := w.slot(name); s != nil {
		return s.passed
	}
	return 0
}

// abandon unwinds the processes of a Program node.
func abandon(n Node) {
	if h, ok := n.(*host); ok {
		h.abandon()
	}
}

// Close ends the world: the processes of every node are unwound, so that
// nothing of the run stays in memory. A closed world must not run again.
func (w *World) Close() {
	for _, s := range w.slots {
		if s.node != nil {
			abandon(s.node)
		}
	}
}

func (w *World) resume(idx int32) {
	s := w.slots[idx]
	if !s.up || !s.paused {
		return
	}
	s.paused = false
	held := s.held
	s.held = nil
	w.held -= len(held)
	for i := range held {
		in := held[i]
		w.push(event{at: w.now, kind: evHeld, node: idx, inc: s.inc, aux: w.put(payload{tag: &in})})
	}
}
