package sim

import (
	"fmt"
	"sort"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
)

// Node is a pure state machine. Step reacts to one input at the node's local
// time and acts only through env: sends, timers, connection opens and closes,
// disk writes, trace notes. It must not keep env after Step returns.
type Node interface {
	Step(env *Env, in Input)
}

// Factory builds a node, at first start and at every restart, from its name
// and its disk (what survived the crash).
type Factory func(name string, disk *Disk) Node

// InputKind says what an Input carries.
type InputKind uint8

// The inputs a node can receive.
const (
	Start      InputKind = iota + 1 // the node (re)started
	Deliver                         // a message arrived: Msg
	Timer                           // a timer fired: TimerID, Tag
	ConnBroken                      // a connection broke: Conn, Peer
	Command                         // a schedule action addressed to the node: Command
)

var inputNames = [...]string{"?", "start", "deliver", "timer", "conn-broken", "command"}

func (k InputKind) String() string {
	if int(k) < len(inputNames) {
		return inputNames[k]
	}
	return fmt.Sprintf("input(%d)", k)
}

// TimerID identifies a timer of one node incarnation.
type TimerID uint64

// Input is one thing that happens to a node.
type Input struct {
	Kind    InputKind
	Msg     network.Message
	TimerID TimerID
	Tag     any // the tag given to After
	Conn    network.ConnID
	Peer    network.Addr
	Cmd     Cmd
}

// Cmd is a system-specific action from a fault schedule ("rejudge 101").
type Cmd struct {
	Name string `json:"name"`
	Arg  string `json:"arg,omitempty"`
}

// EffectKind says what an Effect asks for.
type EffectKind uint8

// The effects a node can ask for.
const (
	EffSend EffectKind = iota + 1
	EffTimer
	EffCancel
	EffDial
	EffClose
	EffNote
)

// Effect is one request from a node to the kernel.
type Effect struct {
	Kind    EffectKind
	To      network.Addr
	Conn    network.ConnID
	Body    any
	After   time.Duration
	TimerID TimerID
	Tag     any
	Note    string // EffNote: the kind of trace event ("note" if empty)
	Text    string
	Data    any
	// TextOfValue (EffNote): the text is Data's String, not rendered (a
	// Proc.Note in a record that is the checkers' alone: ForCheckers).
	TextOfValue bool
}

// Env is a node's window on the world during one Step. The kernel builds one
// per step; a unit test builds one with NewEnv and inspects Effects after.
type Env struct {
	self      network.Addr
	now, mono clock.Time
	rnd       Rand
	disk      *Disk
	recording bool
	checking  bool // the record is the checkers' alone (a Filter): see ForCheckers
	effects   []Effect
	nextTimer *TimerID
	back      backend // the world the node is stepped in, chosen when the Env is made
	crashed   bool
}

// backend is what an Env asks of the world its node is stepped in, with
// one implementation per world: the kernel's (kernel: a node of a World),
// a driver's outside the kernel (*Outside: the live world), and none (alone:
// a node stepped by a unit test; quiet: code that runs while a crashed
// node's processes unwind).
type backend interface {
	// dial numbers a new connection from self to to.
	dial(self, to network.Addr) network.ConnID
	// records reports whether notes of a kind are recorded; it is asked
	// only while the run records (Env.recording).
	records(kind string) bool
	// skips reports whether a note of a kind that is not recorded still
	// takes its event number (Env.Skip).
	skips(kind string) bool
	// armed reports whether a crash or pause fault waits for the node's
	// crash points (Armed).
	armed() bool
	// crashAt passes a crash point of a state machine (Env.CrashPoint) or
	// of a process (pause false: Proc.Point froze the node already), and
	// reports whether a crash-at fault fires there.
	crashAt(point string, pause bool) bool
	// point passes a process's crash point (Proc.Point): crash says the
	// node crashes there, frozen how long a pause-at fault freezes it.
	point(e *Env, label string) (crash bool, frozen time.Duration)
	// die is the node's own crash (Proc.Die) and its supervisor's restart.
	die(label string, restart time.Duration)
}

// NewEnv returns an environment for stepping a node alone: its wall and
// monotonic clocks read now, draws come from r, and dials get IDs 1, 2, ...
func NewEnv(self network.Addr, now clock.Time, r Rand, disk *Disk) *Env {
	var timer TimerID
	return &Env{self: self, now: now, mono: now, rnd: r, disk: disk, recording: true, nextTimer: &timer,
		back: &alone{}}
}

// alone is the backend of a node stepped alone (NewEnv): dials are numbered
// 1, 2, ..., every note is recorded, no fault is ever armed.
type alone struct {
	quiet
	conns network.ConnID
}

func (a *alone) dial(_, _ network.Addr) network.ConnID { a.conns++; return a.conns }

// quiet is the backend where no fault is armed and a note is recorded when
// the Env records at all: of code that runs while a crashed node's
// processes unwind (discardEnv, whose dials get ID 0), and the base of
// alone.
type quiet struct{}

func (quiet) dial(_, _ network.Addr) network.ConnID                 { return 0 }
func (quiet) records(string) bool                                   { return true }
func (quiet) skips(string) bool                                     { return false }
func (quiet) armed() bool                                           { return false }
func (quiet) crashAt(string, bool) bool                             { return false }
func (quiet) point(*Env, string) (crash bool, frozen time.Duration) { return false, 0 }
func (quiet) die(string, time.Duration)                             {}

// Self returns the node's address.
func (e *Env) Self() network.Addr { return e.self }

// Now returns the node's wall-clock reading (offset, drift and jumps applied).
func (e *Env) Now() clock.Time { return e.now }

// Mono returns the node's monotonic reading (drift only).
func (e *Env) Mono() clock.Time { return e.mono }

// Rand returns the node's own entropy stream.
func (e *Env) Rand() Rand { return e.rnd }

// Disk returns the node's durable disk.
func (e *Env) Disk() *Disk { return e.disk }

// Effects returns the effects asked for so far, in order.
func (e *Env) Effects() []Effect { return e.effects }

// Recording reports whether notes are recorded; callers can skip building
// expensive note texts when it is false.
func (e *Env) Recording() bool { return e.recording }

// ForCheckers reports whether the run records through a Filter: its record
// is read by the checkers and nothing else (explore's checked runs; a trace
// file, a hash, a report and a replay come from full runs, which record
// every event unfiltered). A note whose text and parts no checker reads
// may leave them out there (model/db's statement notes: their SQL), and a
// Proc.Note's text is left for whoever asks (traces.Event.TextOfValue).
func (e *Env) ForCheckers() bool { return e.checking }

// Records reports whether notes of a kind are recorded (the run's filter
// may refuse some kinds even while recording).
func (e *Env) Records(kind string) bool { return e.recording && e.back.records(kind) }

// Send sends a datagram.
func (e *Env) Send(to network.Addr, body any) {
	e.effects = append(e.effects, Effect{Kind: EffSend, To: to, Body: body})
}

// SendConn sends on a connection.
func (e *Env) SendConn(c network.ConnID, body any) {
	e.effects = append(e.effects, Effect{Kind: EffSend, Conn: c, Body: body})
}

// Dial opens a connection to another node and returns its ID at once.
func (e *Env) Dial(to network.Addr) network.ConnID {
	id := e.back.dial(e.self, to)
	e.effects = append(e.effects, Effect{Kind: EffDial, To: to, Conn: id})
	return id
}

// Close closes a connection; the other end sees ConnBroken.
func (e *Env) Close(c network.ConnID) {
	e.effects = append(e.effects, Effect{Kind: EffClose, Conn: c})
}

// After asks for a timer that fires after d of the node's monotonic time.
func (e *Env) After(d time.Duration, tag any) TimerID {
	*e.nextTimer++
	id := *e.nextTimer
	e.effects = append(e.effects, Effect{Kind: EffTimer, After: d, TimerID: id, Tag: tag})
	return id
}

// Cancel cancels a timer; cancelling a fired or unknown timer does nothing.
func (e *Env) Cancel(id TimerID) {
	e.effects = append(e.effects, Effect{Kind: EffCancel, TimerID: id})
}

// Note records a trace event of the given kind with a canonical text and
// optional structured data (JSON-encodable; the checkers read it). The data
// is kept as is (the checkers take the typed value) and encoded only when
// the trace is written or hashed: it must not change after the call.
//
// Note is the one guard of notes (noting): without a recorder it returns
// after a field test; a kind the run's Filter refuses is not recorded but
// still takes its event number (Skip).
func (e *Env) Note(kind, text string, data any) {
	if e.noting(kind) {
		e.note(kind, text, data)
	}
}

// noting reports whether a note of a kind is recorded in this step; when
// it is not, the note is accounted for (Skip) and the caller just does not
// make it. Every note the kernel's API makes goes through it first.
func (e *Env) noting(kind string) bool {
	if !e.recording {
		return false
	}
	if e.back.records(kind) {
		return true
	}
	e.Skip(kind)
	return false
}

// note makes a note that noting let through.
func (e *Env) note(kind, text string, data any) {
	e.effects = append(e.effects, Effect{Kind: EffNote, Note: kind, Text: text, Data: data})
}

// Skip stands for a note of a kind the run's filter refuses, which its
// caller did not make (it asked Records first, to save building the text):
// the note still takes its event number, so that the events after it are
// numbered as in the full record of the same run (the trace file). Without
// a recorder, or for a kind that is recorded, it does nothing.
func (e *Env) Skip(kind string) {
	if e.recording && e.back.skips(kind) {
		e.effects = append(e.effects, Effect{Kind: EffNote, Note: kind})
	}
}

// CrashPoint marks a named place in the node's code where a crash can be
// injected (a crash-at fault). When it returns true the node has crashed: it
// must return from Step at once; the effects asked for before the point are
// carried out, nothing after.
//
// A pause-at fault armed for the point freezes the node once this step is
// over (a node written as processes freezes the process at the point
// itself: Proc.Point).
func (e *Env) CrashPoint(point string) bool {
	return e.crashPoint(point, true)
}

// crashPoint is CrashPoint, with its pause-at faults or (pause false)
// without them.
func (e *Env) crashPoint(point string, pause bool) bool {
	if e.crashed {
		return true
	}
	if e.back.crashAt(point, pause) {
		e.crashed = true
	}
	return e.crashed
}

// Disk is a node's durable storage, kept by the kernel across crashes. Put
// writes to a page cache that reads see at once; Sync makes pending writes
// durable. A crash loses what was not synced. Values must be treated as
// immutable once written.
type Disk struct {
	durable map[string]any
	pending map[string]any
	deleted map[string]bool
	version uint64 // changes to durable
	// AutoSync makes every write durable at once (an fsync per write).
	AutoSync bool
}

// NewDisk returns an empty disk with AutoSync on.
func NewDisk() *Disk {
	return &Disk{durable: map[string]any{}, pending: map[string]any{}, deleted: map[string]bool{}, AutoSync: true}
}

// Put writes a value.
func (d *Disk) Put(key string, v any) {
	if d.AutoSync {
		d.durable[key] = v
		d.version++
		return
	}
	delete(d.deleted, key)
	d.pending[key] = v
}

// Delete removes a key.
func (d *Disk) Delete(key string) {
	if d.AutoSync {
		delete(d.durable, key)
		d.version++
		return
	}
	delete(d.pending, key)
	d.deleted[key] = true
}

// Get reads a value (pending writes included).
func (d *Disk) Get(key string) (any, bool) {
	if d.deleted[key] {
		return nil, false
	}
	if v, ok := d.pending[key]; ok {
		return v, true
	}
	v, ok := d.durable[key]
	return v, ok
}

// Keys returns the keys with the given prefix, sorted.
func (d *Disk) Keys(prefix string) []string {
	var ks []string
	add := func(k string) {
		if len(k) >= len(prefix) && k[:len(prefix)] == prefix && !d.deleted[k] {
			ks = append(ks, k)
		}
	}
	for k := range d.durable {
		if _, p := d.pending[k]; !p {
			add(k)
		}
	}
	for k := range d.pending {
		add(k)
	}
	sort.Strings(ks)
	return ks
}

// Sync makes every pending write durable.
func (d *Disk) Sync() {
	if len(d.pending)+len(d.deleted) > 0 {
		d.version++
	}
	for k, v := range d.pending {
		d.durable[k] = v
	}
	for k := range d.deleted {
		delete(d.durable, k)
	}
	// Emptied in place (the maps keep their room for the next writes; an
	// empty one is left as it is).
	if len(d.pending) > 0 {
		clear(d.pending)
	}
	if len(d.deleted) > 0 {
		clear(d.deleted)
	}
}

// Unsynced reports how many writes a crash would lose now.
func (d *Disk) Unsynced() int { return len(d.pending) + len(d.deleted) }

// crash drops what was not synced.
func (d *Disk) crash() {
	d.pending = map[string]any{}
	d.deleted = map[string]bool{}
}
