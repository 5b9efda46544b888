package sim

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/traces"
)

// This file carries out the fault schedule: actions, bursts of link
// faults, and the fates of single messages.

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

// fateDropped is why a message fault's drop lost a message.
const fateDropped = "message fault"

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
		w.setDrift(int32(idx), clock.PPM(a.Rate))
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
				w.setDrift(int32(i), 0)
			}
			if !s.up && s.node == nil && s.factory != nil && (s.inc > 0) {
				w.start(int32(i), "restart")
			}
			w.resume(int32(i))
		}
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

func durationOf(ns int64) time.Duration { return time.Duration(ns) }

// setDrift changes a node's drift rate from now, and moves the node's
// pending timers with it: a timer elapses when the node's monotonic clock
// reaches its deadline (Clock.Elapse converts at the rate of the moment it
// was armed), so one armed before a drift began fires as the drifted clock
// says (a slowed clock fires it later in world time, a fast one sooner),
// not at the world time the old rate gave (explore --faults heavy, steered
// seed 9499362202889486791: a worker's backoff armed before its clock
// slowed by 17% fired 30 s of world time later, 27 s of its own, and MA5
// counted 14 requests in one minute of its clock, over the bound of 12).
// The events keep their sequence numbers, so ties break as before.
func (w *World) setDrift(idx int32, rate clock.PPM) {
	c := &w.slots[idx].clock
	old := c.Drift()
	c.SetDrift(w.now, rate)
	if old == rate {
		return
	}
	moved := false
	for i := range w.queue {
		e := &w.queue[i]
		if e.kind != evTimer || e.node != idx || e.at <= w.now {
			continue
		}
		// The monotonic time left at the old rate, elapsed at the new one.
		left := time.Duration(int64(e.at-w.now) * (1_000_000 + int64(old)) / 1_000_000)
		e.at = w.now.Add(c.Elapse(left))
		moved = true
	}
	if moved {
		w.heapify()
	}
}
