package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/traces"
)

// Recorder sees every event of a run. It must not keep the pointer.
type Recorder interface {
	Record(e *traces.Event)
}

// Limits bound a run. MaxTime ends it normally (events after it are not
// run); MaxEvents turns a livelock into ErrBudget instead of a hang.
type Limits struct {
	MaxTime   clock.Time `json:"max_time"`
	MaxEvents uint64     `json:"max_events"`
}

// ErrBudget is returned when a run exceeds its event budget.
var ErrBudget = errors.New("event budget exhausted")

// Config is what a world is made of, besides its nodes.
type Config struct {
	Entropy  Entropy
	Network  network.Policy // the base policy of every link
	Schedule Schedule
	Limits   Limits
	Recorder Recorder // nil: nothing is recorded
	// Filter, when set, records only the kinds of event it accepts; kinds it
	// refuses are not even formatted. Explorations record what the checkers
	// read and replay a failing run with everything.
	Filter func(kind string) bool
}

type evKind uint8

const (
	evStart evKind = iota + 1
	evDeliver
	evTimer
	evConnBroken
	evFault
	evHeld // an input held while its node was paused
	evBurstEnd
)

type event struct {
	at   clock.Time
	seq  uint64
	kind evKind
	node int32
	inc  uint32
	id   uint64
	conn network.ConnID
	peer network.Addr
	tag  any
}

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
	timers    map[TimerID]bool
	nextTimer TimerID
	held      []Input
	armed     []Action // crash-at actions waiting for their point
	yields    []int    // crash-yield arms: blocking calls left before the crash
	passed    uint64   // blocking calls passed since the node started (for the trace)
}

type burst struct {
	id   uint64
	kind Kind
	from network.Addr
	to   network.Addr
	rate int64
	amt  int64
}

// World is one simulated run: nodes, network, clock, faults, in one goroutine.
type World struct {
	now      clock.Time
	seq      uint64
	queue    []event
	slots    []*slot
	byAddr   map[network.Addr]int32
	net      *network.Network
	base     network.Policy
	netRand  Rand
	ent      Entropy
	rec      Recorder
	filter   func(kind string) bool
	recSeq   uint64
	limits   Limits
	sched    Schedule
	events   uint64
	bursts   []burst
	burstSeq uint64
	env      Env
	started  bool
	err      error
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
	return w
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
		rnd: w.ent.Stream("node/" + name), timers: map[TimerID]bool{}}
	for _, o := range opts {
		o(s)
	}
	idx := int32(len(w.slots))
	w.slots = append(w.slots, s)
	w.byAddr[s.addr] = idx
	if s.up {
		s.up = false
		w.push(event{at: 0, kind: evStart, node: idx})
	}
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

// Inject adds a fault action while the world runs (or before). Its time must
// not be in the past.
func (w *World) Inject(a Action) error {
	if err := a.validate(w.known()); err != nil {
		return fmt.Errorf("fault %s: %w", a.Kind, err)
	}
	if a.At < w.now {
		return fmt.Errorf("fault %s at %v is in the past (now %v)", a.Kind, a.At, w.now)
	}
	w.sched = append(w.sched, a)
	w.push(event{at: a.At, kind: evFault, id: uint64(len(w.sched) - 1)})
	return nil
}

func (w *World) known() map[string]bool {
	m := make(map[string]bool, len(w.slots))
	for _, s := range w.slots {
		m[s.name] = true
	}
	return m
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
	w.deliver(id)
	return nil
}

func (w *World) step() error {
	if w.limits.MaxEvents > 0 && w.events >= w.limits.MaxEvents {
		return fmt.Errorf("%w: %d events by %v (a livelock, or raise Limits.MaxEvents)", ErrBudget, w.events, w.now)
	}
	ev := w.pop()
	w.now = ev.at
	w.events++
	switch ev.kind {
	case evStart:
		w.start(ev.node, "start")
	case evDeliver:
		w.deliver(ev.id)
	case evTimer:
		s := w.slots[ev.node]
		if !s.up || s.inc != ev.inc || !s.timers[TimerID(ev.id)] {
			return nil
		}
		delete(s.timers, TimerID(ev.id))
		w.input(ev.node, Input{Kind: Timer, TimerID: TimerID(ev.id), Tag: ev.tag})
	case evConnBroken:
		s := w.slots[ev.node]
		if !s.up || s.inc != ev.inc {
			return nil
		}
		w.input(ev.node, Input{Kind: ConnBroken, Conn: ev.conn, Peer: ev.peer})
	case evHeld:
		s := w.slots[ev.node]
		if !s.up || s.inc != ev.inc {
			return nil
		}
		w.input(ev.node, *ev.tag.(*Input))
	case evFault:
		w.fault(w.sched[ev.id])
	case evBurstEnd:
		w.endBurst(ev.id)
	}
	return nil
}

// input hands an input to a node, or holds it while the node is paused.
func (w *World) input(idx int32, in Input) {
	s := w.slots[idx]
	if s.paused {
		s.held = append(s.held, in)
		return
	}
	w.stepNode(idx, in)
}

func (w *World) stepNode(idx int32, in Input) {
	s := w.slots[idx]
	env := &w.env
	*env = Env{
		self: s.addr, now: s.clock.Wall(w.now), mono: s.clock.Mono(w.now), rnd: s.rnd, disk: s.disk,
		recording: w.rec != nil, effects: env.effects[:0], nextTimer: &s.nextTimer, world: w, slot: s,
	}
	if w.rec != nil && in.Kind != Deliver {
		w.recordInput(s, in)
	}
	s.node.Step(env, in)
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

func (w *World) recordInput(s *slot, in Input) {
	if !w.wants(inputKinds[in.Kind]) {
		return
	}
	switch in.Kind {
	case Timer:
		w.emit(s.name, "timer", fmt.Sprintf("timer %d %v", in.TimerID, in.Tag), nil)
	case ConnBroken:
		w.emit(s.name, "conn-broken", fmt.Sprintf("conn %d to %s", in.Conn, in.Peer), nil)
	case Command:
		w.emit(s.name, "command", strings.TrimSpace(in.Cmd.Name+" "+in.Cmd.Arg), nil)
	}
}

// inputKinds are the trace kinds of inputs that are recorded.
var inputKinds = [...]string{Timer: "timer", ConnBroken: "conn-broken", Command: "command", Start: "start", Deliver: "deliver"}

func (w *World) apply(idx int32, e *Effect) {
	s := w.slots[idx]
	switch e.Kind {
	case EffSend:
		to := e.To
		if e.Conn != 0 {
			a, b, ok := w.net.Ends(e.Conn)
			if !ok {
				w.emitf(s.name, "drop", "conn %d unknown: %v", e.Conn, e.Body)
				return
			}
			to = a
			if a == s.addr {
				to = b
			}
		}
		msg, fate := w.net.Send(w.now, network.Message{From: s.addr, To: to, Conn: e.Conn, Body: e.Body}, w.netRand)
		if w.wants("send") {
			w.emit(s.name, "send", describeMsg(msg), nil)
		}
		if fate.Dropped != "" && w.wants("drop") {
			w.emit(s.name, "drop", fmt.Sprintf("#%d %s", msg.ID, fate.Dropped), nil)
		}
		if fate.N > 1 && w.wants("dup") {
			w.emit(s.name, "dup", fmt.Sprintf("#%d copied as #%d", msg.ID, fate.Copy[1].ID), nil)
		}
		if fate.Dropped == "" && e.Conn != 0 && !w.net.Open(e.Conn) {
			// The send broke the connection (a partition): tell both ends.
			w.connBroken(e.Conn, -1)
		}
		if fate.Dropped == "partition" && e.Conn != 0 {
			w.connBroken(e.Conn, -1)
		}
		for _, c := range fate.Copies() {
			w.push(event{at: c.At, kind: evDeliver, id: c.ID})
		}
	case EffTimer:
		s.timers[e.TimerID] = true
		w.push(event{at: w.now.Add(s.clock.Elapse(e.After)), kind: evTimer, node: idx, inc: s.inc, id: uint64(e.TimerID), tag: e.Tag})
	case EffCancel:
		delete(s.timers, e.TimerID)
	case EffDial:
		if w.rec != nil {
			w.emitf(s.name, "dial", "conn %d to %s", e.Conn, e.To)
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
			if w.rec != nil {
				w.emitf(s.name, "close", "conn %d", e.Conn)
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
		w.emit(s.name, kind, e.Text, e.Data)
	}
}

func describeMsg(m network.Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s->%s", m.ID, m.From, m.To)
	if m.Conn != 0 {
		fmt.Fprintf(&b, " conn=%d", m.Conn)
	}
	fmt.Fprintf(&b, " %v", m.Body)
	return b.String()
}

func (w *World) deliver(id uint64) {
	msg, why := w.net.Arrive(id)
	if why == "not in flight" {
		return
	}
	idx, ok := w.byAddr[msg.To]
	if why == "" && (!ok || !w.slots[idx].up) {
		why = "destination down"
	}
	if why != "" {
		if w.rec != nil {
			w.emit(string(msg.To), "drop", fmt.Sprintf("#%d %s", msg.ID, why), nil)
		}
		if why == "destination down" && msg.Conn != 0 && w.net.Break(msg.Conn) {
			// Nobody listens there: the connection is refused (a reset),
			// and the sender learns it at once.
			w.connBroken(msg.Conn, -1)
		}
		return
	}
	if w.wants("deliver") {
		w.emit(string(msg.To), "deliver", describeMsg(msg), nil)
	}
	w.input(idx, Input{Kind: Deliver, Msg: msg})
}

// connBroken tells the live ends of a broken connection (except skip).
func (w *World) connBroken(id network.ConnID, skip int32) {
	a, b, ok := w.net.Ends(id)
	if !ok {
		return
	}
	if w.rec != nil {
		w.emitf("", "break", "conn %d %s<->%s", id, a, b)
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
	w.push(event{at: t, kind: evConnBroken, node: i, inc: s.inc, conn: id, peer: peer})
}

func (w *World) start(idx int32, why string) {
	s := w.slots[idx]
	if s.up {
		if w.rec != nil {
			w.emit(s.name, "fault", why+" ignored: node is up", nil)
		}
		return
	}
	s.up = true
	s.paused = false
	s.node = s.factory(s.name, s.disk)
	s.passed = 0
	if w.rec != nil {
		w.emit(s.name, why, fmt.Sprintf("incarnation %d", s.inc), nil)
	}
	w.stepNode(idx, Input{Kind: Start})
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
	s.timers = map[TimerID]bool{}
	s.held = nil
	s.disk.crash()
	if w.rec != nil {
		w.emit(s.name, "crash", why, nil)
	}
	for _, c := range w.net.NodeDown(s.addr) {
		w.connBroken(c, idx)
	}
}

func (w *World) crashPoint(s *slot, point string) bool {
	for i := range s.armed {
		a := &s.armed[i]
		if a.Point != point {
			continue
		}
		if a.Count > 1 {
			a.Count--
			return false
		}
		s.armed = append(s.armed[:i], s.armed[i+1:]...)
		if w.rec != nil {
			w.emit(s.name, "fault", "crash point "+point+" reached", nil)
		}
		return true
	}
	return false
}

// yieldPoint counts a blocking call of a process and reports whether an
// armed crash-yield fires at it.
func (w *World) yieldPoint(s *slot, label string) bool {
	s.passed++
	if len(s.yields) == 0 {
		return false
	}
	fire := false
	for i := range s.yields {
		s.yields[i]--
		if s.yields[i] == 0 {
			fire = true
		}
	}
	if !fire {
		return false
	}
	keep := s.yields[:0]
	for _, n := range s.yields {
		if n > 0 {
			keep = append(keep, n)
		}
	}
	s.yields = keep
	if w.rec != nil {
		w.emit(s.name, "fault", fmt.Sprintf("crash at blocking call %d: %s", s.passed, label), nil)
	}
	return true
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

func (w *World) fault(a Action) {
	if w.rec != nil {
		data, _ := json.Marshal(a)
		w.emit(a.Node, "fault", a.String(), json.RawMessage(data))
	}
	idx := w.byAddr[network.Addr(a.Node)]
	switch a.Kind {
	case Crash:
		w.crash(idx, "fault")
	case Restart:
		w.start(idx, "restart")
	case Pause:
		if s := w.slots[idx]; s.up {
			s.paused = true
		}
	case Resume:
		w.resume(idx)
	case Partition:
		groups := make([][]network.Addr, len(a.Groups))
		for i, g := range a.Groups {
			for _, n := range g {
				groups[i] = append(groups[i], network.Addr(n))
			}
		}
		for _, c := range w.net.Partition(groups) {
			w.connBroken(c, -1)
		}
	case Cut:
		for _, c := range w.net.Cut(network.Addr(a.Node), network.Addr(a.Peer)) {
			w.connBroken(c, -1)
		}
	case Heal:
		w.net.Heal()
	case Loss, Dup, Delay, Stall:
		w.burstSeq++
		b := burst{id: w.burstSeq, kind: a.Kind, from: network.Addr(a.Node), to: network.Addr(a.Peer), rate: a.Rate, amt: int64(a.Amount)}
		if a.Kind == Stall {
			b.amt = int64(a.At.Add(a.For).Add(a.Amount)) // release time
		}
		w.bursts = append(w.bursts, b)
		w.applyBursts()
		w.push(event{at: a.At.Add(a.For), kind: evBurstEnd, id: b.id})
	case Break:
		for _, c := range w.net.BreakBetween(network.Addr(a.Node), network.Addr(a.Peer)) {
			w.connBroken(c, -1)
		}
	case Jump:
		w.slots[idx].clock.Jump(a.Amount)
	case Drift:
		w.slots[idx].clock.SetDrift(w.now, clock.PPM(a.Rate))
	case CrashAt:
		if a.Count == 0 {
			a.Count = 1
		}
		w.slots[idx].armed = append(w.slots[idx].armed, a)
	case CrashYield:
		w.slots[idx].yields = append(w.slots[idx].yields, a.Count)
	case Do:
		if s := w.slots[idx]; s.up {
			w.input(idx, Input{Kind: Command, Cmd: Cmd{Name: a.Point, Arg: a.Arg}})
		}
	case HealAll:
		w.net.Heal()
		w.bursts = nil
		w.applyBursts()
		for i, s := range w.slots {
			s.armed = nil
			s.yields = nil
			if s.clock.Drift() != 0 {
				s.clock.SetDrift(w.now, 0)
			}
			if !s.up && s.node == nil && s.factory != nil && (s.inc > 0) {
				w.start(int32(i), "restart")
			}
			w.resume(int32(i))
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
	for i := range held {
		in := held[i]
		w.push(event{at: w.now, kind: evHeld, node: idx, inc: s.inc, tag: &in})
	}
}

func (w *World) endBurst(id uint64) {
	for i, b := range w.bursts {
		if b.id == id {
			w.bursts = append(w.bursts[:i], w.bursts[i+1:]...)
			w.applyBursts()
			if w.rec != nil {
				w.emitf("", "fault", "%s burst %d ended", b.kind, id)
			}
			return
		}
	}
}

// applyBursts recomputes link policies from the base policy and the bursts
// in force: the highest rate of each kind wins on a link.
func (w *World) applyBursts() {
	w.net.ClearLinks()
	def := w.base
	type key struct{ from, to network.Addr }
	links := map[key]network.Policy{}
	var order []key
	for _, b := range w.bursts {
		if b.from == "" && b.to == "" {
			def = combine(def, b)
			continue
		}
		// A burst on a named link, or on every link of a node.
		for _, from := range w.expand(b.from) {
			for _, to := range w.expand(b.to) {
				if from == to {
					continue
				}
				k := key{from, to}
				p, ok := links[k]
				if !ok {
					p = w.base
					order = append(order, k)
				}
				links[k] = combine(p, b)
			}
		}
	}
	// Global bursts apply on overridden links too.
	for _, b := range w.bursts {
		if b.from == "" && b.to == "" {
			for _, k := range order {
				links[k] = combine(links[k], b)
			}
		}
	}
	w.net.SetDefault(def)
	for _, k := range order {
		w.net.SetLink(k.from, k.to, links[k])
	}
}

func (w *World) expand(a network.Addr) []network.Addr {
	if a != "" {
		return []network.Addr{a}
	}
	out := make([]network.Addr, len(w.slots))
	for i, s := range w.slots {
		out[i] = s.addr
	}
	return out
}

func combine(p network.Policy, b burst) network.Policy {
	switch b.kind {
	case Loss:
		if uint32(b.rate) > p.Loss {
			p.Loss = uint32(b.rate)
		}
	case Dup:
		if uint32(b.rate) > p.Dup {
			p.Dup = uint32(b.rate)
		}
	case Delay:
		if extra := p.DelayMin + durationOf(b.amt); extra > p.DelayMax {
			p.DelayMax = extra
		}
	case Stall:
		if release := clock.Time(b.amt); release > p.HoldUntil {
			p.HoldUntil = release
		}
	}
	return p
}

// wants reports whether an event of a kind is recorded.
func (w *World) wants(kind string) bool {
	return w.rec != nil && (w.filter == nil || w.filter(kind))
}

func (w *World) emitf(node, kind, format string, args ...any) {
	if !w.wants(kind) {
		return
	}
	w.emit(node, kind, fmt.Sprintf(format, args...), nil)
}

func (w *World) emit(node, kind, text string, data any) {
	if !w.wants(kind) {
		return
	}
	w.recSeq++
	ev := traces.Event{Seq: w.recSeq, T: int64(w.now), Node: node, Kind: kind, Text: text}
	if data != nil {
		switch d := data.(type) {
		case json.RawMessage:
			ev.Data = d
		default:
			ev.Value = d
			b, err := json.Marshal(d)
			if err != nil {
				panic(fmt.Sprintf("sim: trace data of %s %s does not encode: %v", node, kind, err))
			}
			ev.Data = b
		}
	}
	w.rec.Record(&ev)
}

// Note records a trace event that belongs to no node (a harness's verdict).
func (w *World) Note(kind, text string, data any) { w.emit("", kind, text, data) }

// ---- the event queue: a binary heap ordered by (at, seq) ----

func (w *World) push(e event) {
	w.seq++
	e.seq = w.seq
	w.queue = append(w.queue, e)
	q := w.queue
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !less(&q[i], &q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (w *World) pop() event {
	q := w.queue
	top := q[0]
	n := len(q) - 1
	q[0] = q[n]
	q[n] = event{}
	q = q[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && less(&q[r], &q[l]) {
			m = r
		}
		if !less(&q[m], &q[i]) {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	w.queue = q
	return top
}

func less(a, b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// Pending returns the number of queued events.
func (w *World) Pending() int { return len(w.queue) }

func durationOf(ns int64) time.Duration { return time.Duration(ns) }
