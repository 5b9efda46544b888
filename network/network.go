package network

import (
	"fmt"
	"sort"
	"time"
	"unsafe"

	"github.com/fencesim/fencesim/clock"
)

// Addr names a node.
type Addr string

// ConnID identifies a connection; 0 means "no connection" (a datagram).
type ConnID uint64

// Rand is the source of the network's decisions. A zero draw is always the
// uneventful outcome (delivered, not duplicated, minimum delay).
type Rand interface {
	Uint64n(label string, n uint64) uint64
}

// Message is one message in flight. Body is the payload; the kernel renders it
// in traces with fmt's %v, so payload types should implement String.
type Message struct {
	ID   uint64
	From Addr
	To   Addr
	Conn ConnID
	Body any
	Sent clock.Time
	Dup  bool // this copy was made by the network
}

// Per-million rates.
const Million = 1_000_000

// Policy decides the fate of datagrams on a link. Rates are per million.
// Delay is uniform in [DelayMin, DelayMax]; a spread reorders messages.
type Policy struct {
	Loss     uint32        `json:"loss,omitempty"`
	Dup      uint32        `json:"dup,omitempty"`
	DelayMin time.Duration `json:"delay_min,omitempty"`
	DelayMax time.Duration `json:"delay_max,omitempty"`
	// HoldUntil stalls the link: a message sent before this time is held
	// and delivered no earlier than it (plus its delay), in send order.
	HoldUntil clock.Time `json:"hold_until,omitempty"`
}

// Validate reports an unusable policy.
func (p Policy) Validate() error {
	switch {
	case p.Loss > Million:
		return fmt.Errorf("loss rate %d is above %d per million", p.Loss, Million)
	case p.Dup > Million:
		return fmt.Errorf("duplication rate %d is above %d per million", p.Dup, Million)
	case p.DelayMin < 0 || p.DelayMax < p.DelayMin:
		return fmt.Errorf("delay range [%v, %v] is empty or negative: need 0 <= min <= max", p.DelayMin, p.DelayMax)
	}
	return nil
}

// Fate is what the network decided for one sent message.
type Fate struct {
	Dropped string      // non-empty: why the message was dropped at send
	N       int         // copies to deliver: 0, 1, or 2 when duplicated
	Copy    [2]Delivery // the deliveries to schedule, Copy[:N]
}

// Copies returns the deliveries to schedule.
func (f *Fate) Copies() []Delivery { return f.Copy[:f.N] }

// Delivery is one copy of a message due at At. Slot is where the network
// keeps it in flight: ArriveSlot finds it there without a lookup.
type Delivery struct {
	At   clock.Time
	ID   uint64
	Slot uint32
}

type link struct{ from, to Addr }

type conn struct {
	a, b     Addr
	open     bool
	closedBy Addr       // set by a graceful Close: data already sent still arrives, except to the closer
	lastAt   clock.Time // FIFO: no delivery on this connection before lastAt
}

type flight struct {
	msg    Message
	to     int32  // the destination's index (Index)
	toDown uint32 // crash count of the destination when sent
	live   bool
}

// Network is the simulated network. The zero value is not usable; call New.
type Network struct {
	def   Policy
	links map[link]Policy
	cut   map[link]bool
	// conns is indexed by ConnID (IDs are dense, from 1); a forgotten
	// connection leaves nil.
	conns []*conn
	// ids numbers the addresses (Index); downs counts each one's crashes.
	ids   map[Addr]int32
	downs []uint32
	cache [32]addrCache
	// flights holds the messages in flight in reusable slots (free lists
	// the empty ones), so that sending and arriving need no map.
	flights  []flight
	free     []uint32
	flying   int
	nextID   uint64
	nextConn ConnID
}

// New returns a network whose links all follow def.
func New(def Policy) *Network {
	return &Network{
		def:   def,
		links: map[link]Policy{},
		cut:   map[link]bool{},
		conns: []*conn{nil},
		ids:   map[Addr]int32{},
	}
}

// Index returns the number of an address: 0, 1, ... in the order addresses
// were first seen (the kernel registers its nodes first, in the order it
// adds them). ArriveSlot reports the destination's index.
func (n *Network) Index(a Addr) int32 {
	// The addresses a node sends to are mostly the same strings each time:
	// a small cache keyed by the string's bytes answers those without
	// hashing. (Hit or miss, the answer is the same.)
	p := unsafe.StringData(string(a))
	h := uint64(uintptr(unsafe.Pointer(p))) * 0x9E3779B97F4A7C15 // short names share words: mix every bit
	c := &n.cache[h>>(64-5)]
	if c.p == p && c.n == len(a) && p != nil {
		return c.i
	}
	i, ok := n.ids[a]
	if !ok {
		i = int32(len(n.downs))
		n.ids[a] = i
		n.downs = append(n.downs, 0)
	}
	*c = addrCache{p: p, n: len(a), i: i}
	return i
}

type addrCache struct {
	p *byte
	n int
	i int32
}

func (n *Network) conn(id ConnID) *conn {
	if id == 0 || uint64(id) >= uint64(len(n.conns)) {
		return nil
	}
	return n.conns[id]
}

// fly puts a message in flight and returns its slot.
func (n *Network) fly(m Message, to int32, toDown uint32) uint32 {
	var i uint32
	if k := len(n.free); k > 0 {
		i = n.free[k-1]
		n.free = n.free[:k-1]
	} else {
		i = uint32(len(n.flights))
		n.flights = append(n.flights, flight{})
	}
	n.flights[i] = flight{msg: m, to: to, toDown: toDown, live: true}
	n.flying++
	return i
}

// Default returns the default policy.
func (n *Network) Default() Policy { return n.def }

// SetDefault changes the policy of every link without an override.
func (n *Network) SetDefault(p Policy) { n.def = p }

// SetLink overrides the policy of the directed link from -> to.
func (n *Network) SetLink(from, to Addr, p Policy) { n.links[link{from, to}] = p }

// ClearLink removes the override of from -> to.
func (n *Network) ClearLink(from, to Addr) { delete(n.links, link{from, to}) }

// ClearLinks removes every override.
func (n *Network) ClearLinks() { n.links = map[link]Policy{} }

// PolicyOf returns the policy in force on from -> to.
func (n *Network) PolicyOf(from, to Addr) Policy {
	if len(n.links) > 0 {
		if p, ok := n.links[link{from, to}]; ok {
			return p
		}
	}
	return n.def
}

// Cut blocks the directed link from -> to (a one-way partition) and returns
// the connections it breaks, in ID order.
func (n *Network) Cut(from, to Addr) []ConnID {
	n.cut[link{from, to}] = true
	var broken []ConnID
	for id, c := range n.conns {
		if c != nil && c.open && ((c.a == from && c.b == to) || (c.a == to && c.b == from)) {
			c.open = false
			broken = append(broken, ConnID(id))
		}
	}
	return broken
}

// Partition cuts every link between nodes of different groups, both ways,
// and returns the connections it breaks.
func (n *Network) Partition(groups [][]Addr) []ConnID {
	var broken []ConnID
	for i, g := range groups {
		for j, h := range groups {
			if i == j {
				continue
			}
			for _, a := range g {
				for _, b := range h {
					broken = append(broken, n.Cut(a, b)...)
				}
			}
		}
	}
	return broken
}

// Heal removes every cut. Broken connections stay broken.
func (n *Network) Heal() { n.cut = map[link]bool{} }

// HealLink removes the cut from -> to.
func (n *Network) HealLink(from, to Addr) { delete(n.cut, link{from, to}) }

// IsCut reports whether from -> to is blocked.
func (n *Network) IsCut(from, to Addr) bool { return len(n.cut) > 0 && n.cut[link{from, to}] }

// Dial opens a connection from a to b. It succeeds even across a cut; the
// first message then breaks it.
func (n *Network) Dial(a, b Addr) ConnID {
	n.nextConn++
	n.conns = append(n.conns, &conn{a: a, b: b, open: !n.IsCut(a, b) && !n.IsCut(b, a)})
	return n.nextConn
}

// Ends returns the two ends of a connection (dialer first).
func (n *Network) Ends(id ConnID) (Addr, Addr, bool) {
	c := n.conn(id)
	if c == nil {
		return "", "", false
	}
	return c.a, c.b, true
}

// Open reports whether a connection is open.
func (n *Network) Open(id ConnID) bool {
	c := n.conn(id)
	return c != nil && c.open
}

// Close closes a connection gracefully, as by endpoint by: what was sent
// before still arrives at the other end (in order), what is on its way to
// the closer is discarded. It returns when the other end sees the close
// (after the data in flight) and whether the connection was open.
func (n *Network) Close(id ConnID, by Addr) (clock.Time, bool) {
	c := n.conn(id)
	if c == nil || !c.open {
		return 0, false
	}
	c.open = false
	c.closedBy = by
	return c.lastAt, true
}

// Break breaks a connection; it reports whether it was open. Both ends must
// be told (the kernel does that).
func (n *Network) Break(id ConnID) bool {
	c := n.conn(id)
	if c == nil || !c.open {
		return false
	}
	c.open = false
	c.closedBy = ""
	return true
}

// BreakBetween breaks every open connection between a and b (either
// direction; b == "" means every connection of a), in ID order.
func (n *Network) BreakBetween(a, b Addr) []ConnID {
	var broken []ConnID
	for id, c := range n.conns {
		if c == nil {
			continue
		}
		if !c.open {
			c.closedBy = "" // a closing connection's data in flight is lost too
			continue
		}
		if (c.a == a && (b == "" || c.b == b)) || (c.b == a && (b == "" || c.a == b)) {
			c.open = false
			broken = append(broken, ConnID(id))
		}
	}
	return broken
}

// Idlest returns the open connection between a and b (either direction)
// whose last delivery is the oldest, the lowest ID among equals: the one a
// firewall's or a server's idle timeout ends first.
func (n *Network) Idlest(a, b Addr) (ConnID, bool) {
	best, found := ConnID(0), false
	var at clock.Time
	for id, c := range n.conns {
		if c == nil || !c.open || !((c.a == a && c.b == b) || (c.a == b && c.b == a)) {
			continue
		}
		if !found || c.lastAt < at {
			best, at, found = ConnID(id), c.lastAt, true
		}
	}
	return best, found
}

// Forget drops the record of a broken connection (a gracefully closed one
// is kept while its data may still be in flight).
func (n *Network) Forget(id ConnID) {
	if c := n.conn(id); c != nil && !c.open && c.closedBy == "" {
		n.conns[id] = nil
	}
}

// NodeDown records that a node crashed: every message in flight to it is lost
// and its connections break. It returns the broken connections.
func (n *Network) NodeDown(a Addr) []ConnID {
	n.downs[n.Index(a)]++
	return n.BreakBetween(a, "")
}

// NodeUp records that a node (re)started: a message sent to it while it
// was down that arrives now is lost, as one sent before its crash is
// ("destination crashed"): nothing listened when it was sent, and a
// connection dialed then was refused, not handed to the new incarnation
// (found in system B, heavy faults, seed 28007935: a handler's BEGIN and
// INSERT, sent while the database was down and held up by a stall,
// opened a session of the restarted database that no client ever closed,
// and its transaction held the key's lock to the end).
func (n *Network) NodeUp(a Addr) { n.downs[n.Index(a)]++ }

// Send decides the fate of msg, sent at now, and puts the surviving copies in
// flight. The message's ID is assigned here.
func (n *Network) Send(now clock.Time, msg Message, r Rand) (Message, Fate) {
	n.nextID++
	msg.ID = n.nextID
	msg.Sent = now
	p := n.PolicyOf(msg.From, msg.To)
	if msg.Conn != 0 {
		c := n.conn(msg.Conn)
		if c == nil || !c.open {
			return msg, Fate{Dropped: "connection closed"}
		}
		if n.IsCut(msg.From, msg.To) {
			c.open = false
			return msg, Fate{Dropped: "partition"}
		}
		at := held(p, now).Add(delay(p, r))
		if at < c.lastAt {
			at = c.lastAt
		}
		c.lastAt = at
		to := n.Index(msg.To)
		slot := n.fly(msg, to, n.downs[to])
		return msg, Fate{N: 1, Copy: [2]Delivery{{At: at, ID: msg.ID, Slot: slot}}}
	}
	if n.IsCut(msg.From, msg.To) {
		return msg, Fate{Dropped: "partition"}
	}
	if p.Loss > 0 && chance(r, "loss", p.Loss) {
		return msg, Fate{Dropped: "loss"}
	}
	to := n.Index(msg.To)
	toDown := n.downs[to]
	slot := n.fly(msg, to, toDown)
	f := Fate{N: 1, Copy: [2]Delivery{{At: held(p, now).Add(delay(p, r)), ID: msg.ID, Slot: slot}}}
	if p.Dup > 0 && chance(r, "dup", p.Dup) {
		n.nextID++
		dup := msg
		dup.ID = n.nextID
		dup.Dup = true
		slot := n.fly(dup, to, toDown)
		f.Copy[1] = Delivery{At: held(p, now).Add(delay(p, r)), ID: dup.ID, Slot: slot}
		f.N = 2
	}
	return msg, f
}

// Discard takes a message out of flight without delivering it (a message
// fault lost it).
func (n *Network) Discard(id uint64, slot uint32) {
	if int(slot) < len(n.flights) && n.flights[slot].live && n.flights[slot].msg.ID == id {
		n.flights[slot] = flight{}
		n.free = append(n.free, slot)
		n.flying--
	}
}

// Duplicate puts a copy of the message in flight in slot (as Send returned
// it) in flight too, with the next ID, due at at: on a connection no
// earlier than what was sent before on it.
func (n *Network) Duplicate(slot uint32, at clock.Time) Delivery {
	f := n.flights[slot]
	n.nextID++
	dup := f.msg
	dup.ID = n.nextID
	dup.Dup = true
	if c := n.conn(dup.Conn); c != nil {
		at = max(at, c.lastAt)
		c.lastAt = at
	}
	return Delivery{At: at, ID: dup.ID, Slot: n.fly(dup, f.to, f.toDown)}
}

// After holds a connection's later messages until at (a delayed message is
// still delivered in order).
func (n *Network) After(id ConnID, at clock.Time) {
	if c := n.conn(id); c != nil && at > c.lastAt {
		c.lastAt = at
	}
}

// Arrive takes a message out of flight at its delivery time. It returns the
// message and "" when it arrives, or why it does not (the destination crashed
// after it was sent, a partition now cuts the link, its connection broke).
func (n *Network) Arrive(id uint64) (Message, string) {
	for i := range n.flights {
		if f := &n.flights[i]; f.live && f.msg.ID == id {
			m, _, why := n.ArriveSlot(id, uint32(i))
			return m, why
		}
	}
	return Message{}, "not in flight"
}

// ArriveSlot is Arrive for a delivery whose slot is known (Delivery.Slot):
// the message is found there, or it is no longer in flight. It also returns
// the destination's Index.
func (n *Network) ArriveSlot(id uint64, slot uint32) (Message, int32, string) {
	if int(slot) >= len(n.flights) {
		return Message{}, -1, "not in flight"
	}
	f := &n.flights[slot]
	if !f.live || f.msg.ID != id {
		return Message{}, -1, "not in flight"
	}
	m, to, toDown := f.msg, f.to, f.toDown
	*f = flight{}
	n.free = append(n.free, slot)
	n.flying--
	switch {
	case n.downs[to] != toDown:
		return m, to, "destination crashed"
	case m.Conn != 0 && !n.deliverable(m):
		return m, to, "connection broken"
	case n.IsCut(m.From, m.To):
		return m, to, "partition"
	}
	return m, to, ""
}

// deliverable reports whether a connection message can still arrive: the
// connection is open, or was closed gracefully by the message's sender.
func (n *Network) deliverable(m Message) bool {
	c := n.conn(m.Conn)
	return c != nil && (c.open || (c.closedBy != "" && c.closedBy == m.From))
}

// InFlight returns the messages in flight, in ID order.
func (n *Network) InFlight() []Message {
	out := make([]Message, 0, n.flying)
	for i := range n.flights {
		if n.flights[i].live {
			out = append(out, n.flights[i].msg)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Flying returns how many messages are in flight.
func (n *Network) Flying() int { return n.flying }

// held returns when a message sent at now leaves a stalled link.
func held(p Policy, now clock.Time) clock.Time {
	if p.HoldUntil > now {
		return p.HoldUntil
	}
	return now
}

func delay(p Policy, r Rand) time.Duration {
	if p.DelayMax <= p.DelayMin {
		return p.DelayMin
	}
	return p.DelayMin + time.Duration(r.Uint64n("delay", uint64(p.DelayMax-p.DelayMin)+1))
}

// chance is true with probability rate per million; a zero draw is false.
func chance(r Rand, label string, rate uint32) bool {
	if rate >= Million {
		return true
	}
	return r.Uint64n(label, Million) >= uint64(Million-rate)
}

// Chance exposes the network's rate convention to other packages: true with
// probability rate per million, false on a zero draw.
func Chance(r Rand, label string, rate uint32) bool { return chance(r, label, rate) }
