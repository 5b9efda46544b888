package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/traces"
)

// Recorder sees every event of a run. It must not keep the pointer (the
// event may be copied). An event may have lazy parts (traces.Event.Msg,
// Value): read it with Desc and DataJSON, or Fill a copy.
type Recorder interface {
	Record(e *traces.Event)
}

// Limits bound a run. MaxTime ends it normally (events after it are not
// run). The others are budgets: a run that exceeds one ends with a
// *LimitError (errors.Is(err, ErrBudget) holds) instead of a hang or an
// exhausted machine. Zero means no bound.
type Limits struct {
	MaxTime clock.Time `json:"max_time"`
	// MaxEvents bounds the events run (a livelock: a timer re-armed at the
	// same instant forever).
	MaxEvents uint64 `json:"max_events"`
	// MaxPending bounds what the kernel holds for later: queued events,
	// messages in flight and inputs held for paused nodes (a flood that
	// would exhaust memory). It counts kernel data, never the machine's
	// memory, so it fires at the same event on every machine.
	MaxPending int `json:"max_pending,omitempty"`
}

// DefaultMaxPending is the pending bound the systems' runs use. Healthy
// runs peak far below it: over 300 seeds of each system's default design
// under no, moderate and heavy faults the peak was 205 (arbiter), 145
// (outbox) and 20 (2PC); the arbiter's scenario families peak at 114. A
// flood ends at it within some tens of megabytes.
const DefaultMaxPending = 100_000

// ErrBudget is what every budget error is (errors.Is): a run exceeded a
// limit of its Limits.
var ErrBudget = errors.New("run budget exhausted")

// LimitError is the error of a run that exceeded a budget of its Limits.
// Its message starts with "limit hit: " and names the limit and how to
// raise it.
type LimitError struct {
	Limit   string     // "events" (Limits.MaxEvents) or "pending" (Limits.MaxPending)
	Max     uint64     // the bound
	At      clock.Time // the world's time when it fired
	Events  uint64     // events run by then
	Pending int        // pending items then
}

func (e *LimitError) Error() string {
	b := make([]byte, 0, 160)
	b = append(b, "limit hit: "...)
	b = append(b, e.Limit...)
	switch e.Limit {
	case "events":
		b = fmt.Appendf(b, ": %d events run by %v, %d pending (a livelock? raise Limits.MaxEvents)", e.Events, e.At, e.Pending)
	case "pending":
		b = fmt.Appendf(b, ": %d queued events, messages in flight and held inputs at %v after %d events, bound %d (a flood? raise Limits.MaxPending)", e.Pending, e.At, e.Events, e.Max)
	default:
		b = fmt.Appendf(b, ": bound %d at %v after %d events", e.Max, e.At, e.Events)
	}
	return string(b)
}

// Is makes every LimitError an ErrBudget.
func (e *LimitError) Is(target error) bool { return target == ErrBudget }

// IsLimit returns the LimitError in err's chain, if any.
func IsLimit(err error) (*LimitError, bool) {
	var le *LimitError
	ok := errors.As(err, &le)
	return le, ok
}

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

// event is one entry of the queue. It holds no pointer, so that the GC never
// scans the queue: what a few kinds carry besides numbers (a timer's tag, a
// broken connection's peer, a held input) sits in the side table at aux.
type event struct {
	at   clock.Time
	seq  uint64
	id   uint64 // deliver: message; timer: timer; conn-broken: connection; fault: schedule index; burst-end: burst
	node int32
	inc  uint32
	aux  uint32 // deliver: the flight slot; timer, conn-broken, held: the side-table index
	kind evKind
}

// payload is a side-table entry: what an event carries that has pointers.
type payload struct {
	tag  any
	peer network.Addr
}

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
}

// yieldArm is an armed crash-yield: left blocking calls to the crash, and
// the downtime after which the node restarts (0: it stays down).
type yieldArm struct {
	left  int
	down  time.Duration
	pause bool // a pause-yield: the node freezes for down instead of crashing
}

// fateArm is an armed message fault: the left-th message from -> to gets
// the fate of action a.
type fateArm struct {
	from, to network.Addr
	left     int
	a        Action
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
	filter    func(kind string) bool
	want      kindSet         // the kernel's kinds that are recorded (none without a recorder)
	notes     map[string]bool // the filter's answers for note kinds, asked once per kind
	text      []byte          // a buffer for rendering texts
	ev        traces.Event    // the event being recorded
	recSeq    uint64          // the last event's number: refused events (Filter) take theirs too
	side      []payload       // the side table of queued events
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
	if w.rec != nil {
		for k, name := range kernelKinds {
			if name != "" && (w.filter == nil || w.filter(name)) {
				w.want |= 1 << k
			}
		}
	}
	return w
}

// kind is one of the kernel's own trace kinds, a bit of a kindSet.
type kind uint8

const (
	kDeliver kind = iota
	kSend
	kDrop
	kDup
	kTimer
	kConnBroken
	kCommand
	kCrash
	kRestart
	kStart
	kFault
	kDial
	kClose
	kBreak
	kNote
)

// kernelKinds are the trace kinds of the kernel's own events, by bit.
var kernelKinds = [...]string{kDeliver: "deliver", kSend: "send", kDrop: "drop", kDup: "dup", kTimer: "timer",
	kConnBroken: "conn-broken", kCommand: "command", kCrash: "crash", kRestart: "restart", kStart: "start",
	kFault: "fault", kDial: "dial", kClose: "close", kBreak: "break", kNote: "note"}

// kindSet is a set of kernel kinds: the filter asked once per kind, at New.
type kindSet uint32

func (s kindSet) has(k kind) bool { return s&(1<<k) != 0 }

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
		recording: w.rec != nil, effects: env.effects[:0], nextTimer: &s.nextTimer, world: w, slot: s,
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

func (w *World) recordInput(s *slot, in *Input) {
	switch in.Kind {
	case Timer:
		if w.wants(kTimer) {
			// Rendered now: a tag's text may change (a process's label).
			b := append(w.text[:0], "timer "...)
			b = strconv.AppendUint(b, uint64(in.TimerID), 10)
			b = append(b, ' ')
			b = traces.AppendValue(b, in.Tag)
			w.text = b
			w.emit(s.name, kTimer, string(b))
		}
	case ConnBroken:
		if w.wants(kConnBroken) {
			w.emit(s.name, kConnBroken, connText("conn ", in.Conn, " to ", in.Peer))
		}
	case Command:
		if w.wants(kCommand) {
			w.emit(s.name, kCommand, strings.TrimSpace(in.Cmd.Name+" "+in.Cmd.Arg))
		}
	}
}

// connText renders "<a><conn><b><peer>" ("conn 3 to db").
func connText(a string, c network.ConnID, b string, peer network.Addr) string {
	buf := make([]byte, 0, len(a)+len(b)+len(peer)+8)
	buf = append(buf, a...)
	buf = strconv.AppendUint(buf, uint64(c), 10)
	buf = append(buf, b...)
	buf = append(buf, peer...)
	return string(buf)
}

// idText renders "#<id> <why>".
func idText(id uint64, why string) string {
	buf := make([]byte, 0, len(why)+12)
	buf = append(buf, '#')
	buf = strconv.AppendUint(buf, id, 10)
	buf = append(buf, ' ')
	buf = append(buf, why...)
	return string(buf)
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
		w.note(s.name, kind, e.Text, e.Data)
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
		if why == "destination down" && msg.Conn != 0 && w.net.Break(msg.Conn) {
			// Nobody listens there: the connection is refused (a reset),
			// and the sender learns it at once.
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
// fateDropped is why a message fault's drop lost a message.
const fateDropped = "message fault"

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

// fate applies an armed message fault to a message just sent, if one is
// due: the fate overrides what the network decided. It reports the fate
// applied ("" for none).
func (w *World) fate(msg *network.Message, f *network.Fate) string {
	hit := -1
	for i := range w.fates {
		a := &w.fates[i]
		if a.from != msg.From || a.to != msg.To {
			continue
		}
		a.left--
		if a.left == 0 && hit < 0 {
			hit = i
		}
	}
	if hit < 0 {
		return ""
	}
	a := w.fates[hit].a
	w.fates = append(w.fates[:hit], w.fates[hit+1:]...)
	if f.Dropped == "" {
		switch a.Arg {
		case FateDrop:
			for _, c := range f.Copies() {
				w.net.Discard(c.ID, c.Slot)
			}
			f.N = 0
			f.Dropped = fateDropped
		case FateDup:
			// A connection (TCP) delivers each message once: only a
			// datagram can arrive twice.
			if f.N == 1 && msg.Conn == 0 {
				f.Copy[1] = w.net.Duplicate(f.Copy[0].Slot, f.Copy[0].At)
				f.N = 2
			}
		case FateDelay:
			for i := range f.Copies() {
				f.Copy[i].At = f.Copy[i].At.Add(a.Amount)
			}
			if msg.Conn != 0 {
				w.net.After(msg.Conn, f.Copy[0].At)
			}
		}
	}
	if w.wants(kFault) {
		// A fault event of its own kind, so that checkers see when the
		// message was hit (the arming is a "message" fault at its time).
		fired := Action{At: w.now, Kind: "message-fate", Node: string(msg.From), Peer: string(msg.To), Arg: a.Arg, Amount: a.Amount}
		data, _ := json.Marshal(fired)
		w.record(traces.Event{Node: fired.Node, Kind: "fault", Text: "message #" + strconv.FormatUint(msg.ID, 10) + " to " + fired.Peer + ": " + a.Arg, Data: data})
	}
	return a.Arg
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
	if w.wants(kFault) {
		data, _ := json.Marshal(a)
		w.record(traces.Event{Node: a.Node, Kind: "fault", Text: a.String(), Data: data})
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
	case CrashAt, PauseAt:
		if a.Count == 0 {
			a.Count = 1
		}
		w.slots[idx].armed = append(w.slots[idx].armed, a)
	case CrashYield:
		w.slots[idx].yields = append(w.slots[idx].yields, yieldArm{left: a.Count, down: a.For})
	case PauseYield:
		w.slots[idx].yields = append(w.slots[idx].yields, yieldArm{left: a.Count, down: a.For, pause: true})
	case Message:
		w.fates = append(w.fates, fateArm{from: network.Addr(a.Node), to: network.Addr(a.Peer), left: a.Count, a: a})
	case Do:
		if s := w.slots[idx]; s.up {
			w.input(idx, &Input{Kind: Command, Cmd: Cmd{Name: a.Point, Arg: a.Arg}})
		}
	case HealAll:
		w.net.Heal()
		w.bursts = nil
		w.fates = nil
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
	w.held -= len(held)
	for i := range held {
		in := held[i]
		w.push(event{at: w.now, kind: evHeld, node: idx, inc: s.inc, aux: w.put(payload{tag: &in})})
	}
}

func (w *World) endBurst(id uint64) {
	for i, b := range w.bursts {
		if b.id == id {
			w.bursts = append(w.bursts[:i], w.bursts[i+1:]...)
			w.applyBursts()
			if w.wants(kFault) {
				w.emit("", kFault, string(b.kind)+" burst "+strconv.FormatUint(id, 10)+" ended")
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

// wantsNote reports whether notes of a kind are recorded. The filter is
// asked once per kind.
func (w *World) wantsNote(kind string) bool {
	if w.rec == nil {
		return false
	}
	if w.filter == nil {
		return true
	}
	ok, seen := w.notes[kind]
	if !seen {
		ok = w.filter(kind)
		if w.notes == nil {
			w.notes = map[string]bool{}
		}
		w.notes[kind] = ok
	}
	return ok
}

// wants reports whether a kernel event of kind k is recorded. An event the
// filter refuses still takes its number, so that a run recorded through a
// Filter numbers its events as the full record of the same run does: the
// events a checker names are the lines of the trace file written from a
// full run (fencesim explore prints the checker's numbers, its artifacts
// are full runs).
func (w *World) wants(k kind) bool {
	if w.want.has(k) {
		return true
	}
	if w.rec != nil {
		w.recSeq++
	}
	return false
}

// skipNote numbers a note the filter refused before it was made (Env.Note,
// Env.Skip): see wants.
func (w *World) skipNote() {
	if w.rec != nil {
		w.recSeq++
	}
}

// emit records a kernel event whose kind the caller checked (w.wants).
func (w *World) emit(node string, k kind, text string) {
	w.record(traces.Event{Node: node, Kind: kernelKinds[k], Text: text})
}

// emitMsg records a send or deliver. When the body cannot change (frozen),
// its text is rendered from the message only when someone reads it
// (traces.Event.Msg); otherwise now, as the body is now.
func (w *World) emitMsg(node string, k kind, m *network.Message) {
	tm := traces.Msg{ID: m.ID, From: string(m.From), To: string(m.To), Conn: uint64(m.Conn), Body: m.Body}
	if !w.frozen(m.Body) {
		w.record(traces.Event{Node: node, Kind: kernelKinds[k], Text: tm.Text()})
		return
	}
	if len(w.msgs) == cap(w.msgs) {
		w.msgs = make([]traces.Msg, 0, 256)
	}
	w.msgs = append(w.msgs, tm)
	w.record(traces.Event{Node: node, Kind: kernelKinds[k], Msg: &w.msgs[len(w.msgs)-1]})
}

// frozen reports whether a message body's text may be rendered later: its
// type holds no pointer, slice, map, interface, channel or function, so the
// value the message holds (a copy) cannot change after the send. A body
// that shares memory with its sender (a reused statement buffer) is
// rendered at once, as it reads at the time of the event.
func (w *World) frozen(body any) bool {
	t := reflect.TypeOf(body)
	if t == nil {
		return true
	}
	// A world sends a handful of body types: a short list beats a map.
	for i := range w.bodyTypes {
		if w.bodyTypes[i].t == t {
			return w.bodyTypes[i].frozen
		}
	}
	f := plainType(t, 0)
	w.bodyTypes = append(w.bodyTypes, bodyType{t, f})
	return f
}

// bodyType is frozen's answer for one type.
type bodyType struct {
	t      reflect.Type
	frozen bool
}

// plainType reports whether values of t hold only numbers, booleans and
// strings (in structs and arrays).
func plainType(t reflect.Type, depth int) bool {
	if depth > 8 {
		return false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		return true
	case reflect.Array:
		return plainType(t.Elem(), depth+1)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if !plainType(t.Field(i).Type, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// note records a note of any kind. Typed data is kept as the event's Value
// and encoded only when the trace is written, hashed, or its Data is read
// (traces.Event.DataJSON); JSON is kept as is.
func (w *World) note(node, kind, text string, data any) {
	if !w.wantsNote(kind) {
		w.skipNote()
		return
	}
	ev := traces.Event{Node: node, Kind: kind, Text: text}
	switch d := data.(type) {
	case nil:
	case json.RawMessage:
		ev.Data = d
	default:
		ev.Value = d
	}
	w.record(ev)
}

// record hands an event to the recorder. The event passes through a field
// of the world, so that it does not escape to the heap (a recorder must not
// keep the pointer).
func (w *World) record(ev traces.Event) {
	w.recSeq++
	ev.Seq, ev.T = w.recSeq, int64(w.now)
	w.ev = ev
	w.rec.Record(&w.ev)
	w.ev = traces.Event{}
}

// Note records a trace event that belongs to no node (a harness's verdict).
func (w *World) Note(kind, text string, data any) { w.note("", kind, text, data) }

// put stores an event's payload in the side table and returns its index.
func (w *World) put(p payload) uint32 {
	if n := len(w.freeSide); n > 0 {
		i := w.freeSide[n-1]
		w.freeSide = w.freeSide[:n-1]
		w.side[i] = p
		return i
	}
	w.side = append(w.side, p)
	return uint32(len(w.side) - 1)
}

// take returns an event's payload and frees its entry.
func (w *World) take(i uint32) payload {
	p := w.side[i]
	w.side[i] = payload{}
	w.freeSide = append(w.freeSide, i)
	return p
}

// ---- the event queue: a binary heap ordered by (at, seq) ----

func (w *World) push(e event) {
	w.seq++
	e.seq = w.seq
	w.queue = append(w.queue, e)
	q := w.queue
	// Sift up, moving parents down into the hole instead of swapping.
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !less(&e, &q[p]) {
			break
		}
		q[i] = q[p]
		i = p
	}
	q[i] = e
}

func (w *World) pop() event {
	q := w.queue
	top := q[0]
	n := len(q) - 1
	last := q[n]
	q = q[:n]
	w.queue = q
	if n == 0 {
		return top
	}
	// Sift the last event down from the root, moving children up.
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
		if !less(&q[m], &last) {
			break
		}
		q[i] = q[m]
		i = m
	}
	q[i] = last
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
