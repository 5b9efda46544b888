package sim

import (
	"fmt"
	"strconv"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/traces"
)

// Config is what a world is made of, besides its nodes.
type Config struct {
	Entropy  Entropy
	Network  network.Policy // the base policy of every link
	Schedule Schedule
	Limits   Limits
	Recorder Recorder // nil: nothing is recorded
	// Filter, when set, records only the kinds of event it accepts; kinds it
	// refuses are not even formatted. It is asked once per kind (at New for
	// the kernel's kinds, at a note kind's first use), so it must answer the
	// same for a kind every time. Explorations record what the checkers
	// read and replay a failing run with everything.
	Filter func(kind string) bool
}

// World is one simulated run: nodes, network, clock, faults, in one goroutine.
type World struct {
	now       clock.Time
	seq       uint64
	queue     []event
	slots     []*slot
	byAddr    map[network.Addr]int32
	net       *network.Network
	base      network.Policy
	netRand   Rand
	ent       Entropy
	rec       Recorder
	headers   bool       // rec is a HeaderRecorder: messages recorded without their bodies
	immediate bool       // rec is an ImmediateRecorder: messages recorded with their bodies, unrendered
	hdr       traces.Msg // the message a HeaderRecorder (its header) or an ImmediateRecorder is handed
	filter    func(kind string) bool
	want      kindSet      // the kernel's kinds that are recorded (none without a recorder)
	notes     []noteKind   // the filter's answers for note kinds, asked once per kind
	text      []byte       // a buffer for rendering texts
	ev        traces.Event // the event being recorded
	recSeq    uint64       // the last event's number: refused events (Filter) take theirs too
	recAt     clock.Time   // the time of event recSeq
	side      []payload    // the side table of queued events
	freeSide  []uint32
	held      int          // inputs held for paused nodes
	msgs      []traces.Msg // a slab the message events' texts are rendered from
	bodyTypes []bodyType   // frozen's answers, per message body type
	maxPend   int          // the peak of pending (PeakPending)
	limits    Limits
	sched     Schedule
	events    uint64
	bursts    []burst
	burstSeq  uint64
	fates     []fateArm // armed message faults
	env       Env
	started   bool
	err       error
}

// New returns a world with no nodes. The schedule is validated when Run
// starts, against the nodes added by then.
func New(cfg Config) *World {
	if cfg.Entropy == nil {
		cfg.Entropy = NewPCG(0)
	}
	w := &World{
		byAddr:  map[network.Addr]int32{},
		net:     network.New(cfg.Network),
		base:    cfg.Network,
		ent:     cfg.Entropy,
		rec:     cfg.Recorder,
		filter:  cfg.Filter,
		limits:  cfg.Limits,
		sched:   cfg.Schedule.Sorted(),
		netRand: cfg.Entropy.Stream("network"),
	}
	_, w.headers = cfg.Recorder.(HeaderRecorder)
	_, w.immediate = cfg.Recorder.(ImmediateRecorder)
	if w.rec != nil {
		for k, name := range kernelKinds {
			if name != "" && (w.filter == nil || w.filter(name)) {
				w.want |= 1 << k
			}
		}
	}
	return w
}

// Names returns the node names in the order they were added.
func (w *World) Names() []string {
	out := make([]string, len(w.slots))
	for i, s := range w.slots {
		out[i] = s.name
	}
	return out
}

// Now returns the world's time.
func (w *World) Now() clock.Time { return w.now }

// Events returns how many events have run.
func (w *World) Events() uint64 { return w.events }

// Net returns the network, for tests that deliver by hand.
func (w *World) Net() *network.Network { return w.net }

// Node returns a node's current state machine (nil while crashed).
func (w *World) Node(name string) Node {
	if s := w.slot(name); s != nil && s.up {
		return s.node
	}
	return nil
}

// Disk returns a node's disk.
func (w *World) Disk(name string) *Disk { return w.slot(name).disk }

// Up reports whether a node is running (paused counts as up).
func (w *World) Up(name string) bool { s := w.slot(name); return s != nil && s.up }

// Paused reports whether a node is paused.
func (w *World) Paused(name string) bool { s := w.slot(name); return s != nil && s.paused }

// Clock returns a copy of a node's clock.
func (w *World) Clock(name string) clock.Clock { return w.slot(name).clock }

func (w *World) slot(name string) *slot {
	i, ok := w.byAddr[network.Addr(name)]
	if !ok {
		return nil
	}
	return w.slots[i]
}

func (w *World) begin() error {
	if w.started {
		return w.err
	}
	w.started = true
	if err := w.sched.Validate(w.Names()); err != nil {
		w.err = err
		return err
	}
	if err := w.base.Validate(); err != nil {
		w.err = fmt.Errorf("network policy: %w", err)
		return w.err
	}
	for i, a := range w.sched {
		if a.FromStart {
			w.fault(a) // armed before the nodes' start events run
			continue
		}
		w.push(event{at: a.At, kind: evFault, id: uint64(i)})
	}
	return nil
}

// Run runs until no event is left, MaxTime is passed, or the event budget is
// exhausted (ErrBudget).
func (w *World) Run() error {
	max := w.limits.MaxTime
	if max == 0 {
		max = clock.Never
	}
	return w.RunUntil(max)
}

// RunUntil runs every event up to and including time t, then sets the
// world's time to t.
func (w *World) RunUntil(t clock.Time) error {
	if err := w.begin(); err != nil {
		return err
	}
	for len(w.queue) > 0 && w.queue[0].at <= t {
		if w.limits.MaxTime > 0 && w.queue[0].at > w.limits.MaxTime {
			break
		}
		if err := w.step(); err != nil {
			return err
		}
	}
	if t > w.now && t != clock.Never {
		w.now = t
	}
	return nil
}

// Step runs the next event and reports whether there was one.
func (w *World) Step() (bool, error) {
	if err := w.begin(); err != nil {
		return false, err
	}
	if len(w.queue) == 0 {
		return false, nil
	}
	return true, w.step()
}

// Deliver delivers an in-flight message now, by hand, whatever its scheduled
// time (its scheduled delivery then finds it gone).
func (w *World) Deliver(id uint64) error {
	if err := w.begin(); err != nil {
		return err
	}
	w.deliver(id, 0, false)
	return nil
}

// pending counts what the kernel holds for later (Limits.MaxPending).
func (w *World) pending() int { return len(w.queue) + w.net.Flying() + w.held }

// PeakPending returns the largest number of pending items (queued events,
// messages in flight, held inputs) seen before an event so far: what
// Limits.MaxPending is compared with.
func (w *World) PeakPending() int { return w.maxPend }

func (w *World) step() error {
	if w.limits.MaxEvents > 0 && w.events >= w.limits.MaxEvents {
		return &LimitError{Limit: "events", Max: w.limits.MaxEvents, At: w.now, Events: w.events, Pending: w.pending()}
	}
	p := w.pending()
	w.maxPend = max(w.maxPend, p)
	if w.limits.MaxPending > 0 && p > w.limits.MaxPending {
		return &LimitError{Limit: "pending", Max: uint64(w.limits.MaxPending), At: w.now, Events: w.events, Pending: p}
	}
	ev := w.pop()
	w.now = ev.at
	w.events++
	switch ev.kind {
	case evStart:
		w.start(ev.node, "start")
	case evDeliver:
		w.deliver(ev.id, ev.aux, true)
	case evTimer:
		tag := w.take(ev.aux)
		s := w.slots[ev.node]
		if !s.up || s.inc != ev.inc || !s.timers.has(TimerID(ev.id)) {
			return nil
		}
		s.timers.del(TimerID(ev.id))
		w.input(ev.node, &Input{Kind: Timer, TimerID: TimerID(ev.id), Tag: tag.tag})
	case evConnBroken:
		p := w.take(ev.aux)
		s := w.slots[ev.node]
		if !s.up || s.inc != ev.inc {
			return nil
		}
		w.input(ev.node, &Input{Kind: ConnBroken, Conn: network.ConnID(ev.id), Peer: p.peer})
	case evHeld:
		p := w.take(ev.aux)
		s := w.slots[ev.node]
		if !s.up || s.inc != ev.inc {
			return nil
		}
		w.input(ev.node, p.tag.(*Input))
	case evFault:
		w.fault(w.sched[ev.id])
	case evBurstEnd:
		w.endBurst(ev.id)
	}
	return nil
}

// input hands an input to a node, or holds it while the node is paused.
func (w *World) input(idx int32, in *Input) {
	s := w.slots[idx]
	if s.paused {
		s.held = append(s.held, *in)
		w.held++
		return
	}
	w.stepNode(idx, in)
}

func (w *World) stepNode(idx int32, in *Input) {
	s := w.slots[idx]
	env := &w.env
	*env = Env{
		self: s.addr, now: s.clock.Wall(w.now), mono: s.clock.Mono(w.now), rnd: s.rnd, disk: s.disk,
		recording: w.rec != nil, checking: w.rec != nil && w.filter != nil,
		effects: env.effects[:0], nextTimer: &s.nextTimer, back: &s.back,
	}
	if w.rec != nil && in.Kind != Deliver {
		w.recordInput(s, in)
	}
	if s.machine && in.Kind != Start && w.yieldPoint(s, in.Kind.String()) {
		// A state machine's crash-yield: it crashes before the input.
		w.crash(idx, "crash point")
		return
	}
	s.node.Step(env, *in)
	crashed := env.crashed
	// The effects slice may be reused by a nested step; copy the header.
	effs := env.effects
	for i := range effs {
		w.apply(idx, &effs[i])
	}
	w.env.effects = effs[:0]
	if crashed {
		w.crash(idx, "crash point")
	}
}

func (w *World) apply(idx int32, e *Effect) {
	s := w.slots[idx]
	switch e.Kind {
	case EffSend:
		to := e.To
		if e.Conn != 0 {
			a, b, ok := w.net.Ends(e.Conn)
			if !ok {
				if w.wants(kDrop) {
					w.emit(s.name, kDrop, fmt.Sprintf("conn %d unknown: %v", e.Conn, e.Body))
				}
				return
			}
			to = a
			if a == s.addr {
				to = b
			}
		}
		msg, fate := w.net.Send(w.now, network.Message{From: s.addr, To: to, Conn: e.Conn, Body: e.Body}, w.netRand)
		if w.wants(kSend) {
			w.emitMsg(s.name, kSend, &msg)
		}
		if len(w.fates) > 0 {
			w.fate(&msg, &fate)
		}
		if fate.Dropped != "" && w.wants(kDrop) {
			w.emit(s.name, kDrop, idText(msg.ID, fate.Dropped))
		}
		if fate.N > 1 && w.wants(kDup) {
			w.emit(s.name, kDup, idText(msg.ID, "copied as #"+strconv.FormatUint(fate.Copy[1].ID, 10)))
		}
		if fate.Dropped == fateDropped && e.Conn != 0 && w.net.Open(e.Conn) {
			// A connection does not lose one message and carry the next:
			// the lost message breaks it (both ends are told), as a
			// partition's does.
			w.connBroken(e.Conn, -1)
		}
		if fate.Dropped == "" && e.Conn != 0 && !w.net.Open(e.Conn) {
			// The send broke the connection (a partition): tell both ends.
			w.connBroken(e.Conn, -1)
		}
		if fate.Dropped == "partition" && e.Conn != 0 {
			w.connBroken(e.Conn, -1)
		}
		for _, c := range fate.Copies() {
			w.push(event{at: c.At, kind: evDeliver, id: c.ID, aux: c.Slot})
		}
	case EffTimer:
		s.timers.add(e.TimerID)
		w.push(event{at: w.now.Add(s.clock.Elapse(e.After)), kind: evTimer, node: idx, inc: s.inc, id: uint64(e.TimerID), aux: w.put(payload{tag: e.Tag})})
	case EffCancel:
		s.timers.del(e.TimerID)
	case EffDial:
		if w.wants(kDial) {
			w.emit(s.name, kDial, connText("conn ", e.Conn, " to ", e.To))
		}
		if !w.net.Open(e.Conn) {
			w.connBroken(e.Conn, -1)
		}
	case EffClose:
		a, b, ok := w.net.Ends(e.Conn)
		if !ok {
			return
		}
		if last, open := w.net.Close(e.Conn, s.addr); open {
			if w.wants(kClose) {
				w.emit(s.name, kClose, connText("conn ", e.Conn, "", ""))
			}
			peer := a
			if a == s.addr {
				peer = b
			}
			// The peer sees the close after the data already in flight.
			if last < w.now {
				last = w.now
			}
			w.notifyBrokenAt(last, peer, s.addr, e.Conn)
		}
	case EffNote:
		kind := e.Note
		if kind == "" {
			kind = "note"
		}
		w.noteOf(s.name, kind, e.Text, e.Data, e.TextOfValue)
	}
}

// deliver delivers a message in flight; bySlot says the slot is known.
func (w *World) deliver(id uint64, slot uint32, bySlot bool) {
	var msg network.Message
	var why string
	to := int32(-1)
	if bySlot {
		msg, to, why = w.net.ArriveSlot(id, slot)
	} else {
		msg, why = w.net.Arrive(id)
	}
	if why == "not in flight" {
		return
	}
	// The network numbers the nodes as the world does (Add registers
	// them first); anything else is looked up.
	idx, ok := to, to >= 0 && int(to) < len(w.slots) && w.slots[to].addr == msg.To
	if !ok {
		idx, ok = w.byAddr[msg.To]
	}
	if why == "" && (!ok || !w.slots[idx].up) {
		why = "destination down"
	}
	if why != "" {
		if w.wants(kDrop) {
			w.emit(string(msg.To), kDrop, idText(msg.ID, why))
		}
		if (why == "destination down" || why == "destination crashed") && msg.Conn != 0 && w.net.Break(msg.Conn) {
			// Nobody listens there, or a new incarnation that never
			// accepted it: the connection is refused (a reset), and the
			// sender learns it at once.
			w.connBroken(msg.Conn, -1)
		}
		return
	}
	if w.wants(kDeliver) {
		w.emitMsg(string(msg.To), kDeliver, &msg)
	}
	w.input(idx, &Input{Kind: Deliver, Msg: msg})
}

// connBroken tells the live ends of a broken connection (except skip).
func (w *World) connBroken(id network.ConnID, skip int32) {
	a, b, ok := w.net.Ends(id)
	if !ok {
		return
	}
	if w.wants(kBreak) {
		w.emit("", kBreak, connText("conn ", id, " ", a)+"<->"+string(b))
	}
	if i, ok := w.byAddr[a]; ok && i != skip {
		w.notifyBroken(a, b, id)
	}
	if i, ok := w.byAddr[b]; ok && i != skip {
		w.notifyBroken(b, a, id)
	}
	w.net.Forget(id)
}

func (w *World) notifyBroken(at, peer network.Addr, id network.ConnID) {
	w.notifyBrokenAt(w.now, at, peer, id)
}

func (w *World) notifyBrokenAt(t clock.Time, at, peer network.Addr, id network.ConnID) {
	i, ok := w.byAddr[at]
	if !ok {
		return
	}
	s := w.slots[i]
	if !s.up {
		return
	}
	w.push(event{at: t, kind: evConnBroken, node: i, inc: s.inc, id: uint64(id), aux: w.put(payload{peer: peer})})
}
