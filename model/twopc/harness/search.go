package harness

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/twopc"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// The generic fault search of system C: faults placed on the protocol's
// own events rather than spread uniformly over a horizon. The world's
// fault-free run (its Reference) says, per node, how many blocking calls
// it made (a database: how many inputs) and where its protocol events fell
// (each 2PC note it wrote, each prepared transaction and commit, with the
// node's call count and the time then), and when each link carried each
// message. Up to the first fault a faulty run is that run, so the N-th
// blocking call of a node, or the n-th message of a link, is the same one
// in both. Nothing here knows a knob; the vocabulary is the kernel's:
//
//   - crash-yield: a coordinator, a participant or an agent crashes at one
//     of its blocking calls (every step between two statements), drawn
//     uniformly over its calls or just after one of its protocol events (1
//     to 4 calls later), and restarts soon or past one of the design's
//     timeouts (a coordinator away longer than abort_after, a vote that
//     timed out); the node is drawn as often as the protocol happens there
//     (every protocol event of every node alike);
//   - message: the n-th message of a link is dropped, duplicated, or
//     delayed past one of the design's timeouts, arriving before the
//     heal-all all the same;
//   - pause: a node stalls just after one of its protocol events, past one
//     of the design's timeouts;
//   - restart of a standby coordinator just after a protocol event (a
//     takeover from the same log), when the world has one.
//
// The timed faults of model/twopc's Spec (sim.Generate: crashes, crash-at
// points, broken connections) come on top, over the workload's span.

// PlacedKinds are the kinds of fault the search places on the reference
// (restart: a standby coordinator's takeover).
var PlacedKinds = []sim.Kind{sim.CrashYield, sim.Message, sim.Pause, sim.Restart}

// Reference is the fault-free run of a world, as the fault search places
// faults on it.
type Reference struct {
	Nodes    []NodeRef       // the nodes that may crash or pause (those with calls), in the world's order
	Standby  []string        // standby coordinators a takeover may start
	Links    []LinkRef       // the links that carried messages, sorted
	End      clock.Time      // the time of the last protocol event
	Until    clock.Time      // the reference was recorded up to here: the faults' last chance before the heal-all
	Timeouts []time.Duration // the design's timeouts, sorted: delays and downtimes are drawn past them
	Events   []clock.Time    // the times of every protocol event, in order (a takeover's moments)
}

// NodeRef is one node of the reference.
type NodeRef struct {
	Name    string
	Calls   int      // blocking calls (a database: inputs) up to Until
	Anchors []Anchor // its protocol events, in order
}

// Anchor is one protocol event of a node: when it happened, and how many
// blocking calls the node had made by then.
type Anchor struct {
	T     clock.Time
	Calls int
}

// LinkRef is one link of the reference: when each of its messages was sent.
type LinkRef struct {
	From, To string
	At       []clock.Time
}

// Timeouts lists a design's timeouts, sorted, without repeats: the vote's,
// a request's, the lock's, and the agents' when the world has agents.
func Timeouts(d twopc.Design) []time.Duration {
	ts := []time.Duration{d.VoteTimeout, d.ReqTimeout}
	if d.LockTimeout > 0 {
		ts = append(ts, d.LockTimeout)
	}
	if len(twopc.NamesOf(d).Agents) > 0 {
		ts = append(ts, d.AgentPoll)
		if d.Cooperative {
			ts = append(ts, d.AskAfter)
		}
		if d.Has(twopc.TimeoutAbort) {
			ts = append(ts, d.AbortAfter)
		}
	}
	slices.Sort(ts)
	return slices.Compact(ts)
}

type refRecorder struct {
	w     *sim.World
	ref   *Reference
	index map[string]int
	links map[[2]string][]clock.Time
}

func (r *refRecorder) Record(e *traces.Event) {
	t := clock.Time(e.T)
	if t > r.ref.Until {
		return
	}
	if e.Kind == "send" {
		var from, to string
		if e.Msg != nil {
			from, to = e.Msg.From, e.Msg.To
		} else if f := strings.Fields(e.Text); len(f) > 1 {
			from, to, _ = strings.Cut(f[1], "->")
		}
		if from != "" && to != "" {
			l := [2]string{from, to}
			r.links[l] = append(r.links[l], t)
		}
		return
	}
	i, ok := r.index[e.Node]
	if !ok {
		return
	}
	n := &r.ref.Nodes[i]
	n.Anchors = append(n.Anchors, Anchor{T: t, Calls: int(r.w.Yields(e.Node))})
	r.ref.End = max(r.ref.End, t)
	r.ref.Events = append(r.ref.Events, t)
}

func refKinds(kind string) bool {
	switch kind {
	case "send", "commit", "prepared", hist.KindTxn:
		return true
	}
	return false
}

// NewReference runs a world without faults up to a second before the
// heal-all (the faults' last chance) and returns its reference. ent must
// be the entropy the faulty runs will use.
func (h Harness) NewReference(d twopc.Design, ent sim.Entropy) (*Reference, error) {
	ref := &Reference{Until: clock.Time(h.HealAt - time.Second), Timeouts: Timeouts(d)}
	rec := &refRecorder{ref: ref, index: map[string]int{}, links: map[[2]string][]clock.Time{}}
	w, err := twopc.Build(d, sim.Config{
		Entropy: ent, Network: h.Network, Recorder: rec, Filter: refKinds,
		Limits: sim.Limits{MaxTime: ref.Until, MaxEvents: 2_000_000, MaxPending: sim.DefaultMaxPending},
	})
	if err != nil {
		return nil, err
	}
	defer w.Close()
	rec.w = w.World
	names := w.Names
	for _, n := range slices.Concat(names.Started, names.Participants, names.Agents) {
		rec.index[n] = len(ref.Nodes)
		ref.Nodes = append(ref.Nodes, NodeRef{Name: n})
	}
	ref.Standby = names.Standby
	if err := w.RunUntil(ref.Until); err != nil {
		return nil, fmt.Errorf("the fault-free run: %w", err)
	}
	nodes := ref.Nodes[:0]
	for _, n := range ref.Nodes {
		if n.Calls = int(w.Yields(n.Name)); n.Calls > 0 {
			nodes = append(nodes, n)
		}
	}
	ref.Nodes = nodes
	for l, at := range rec.links {
		ref.Links = append(ref.Links, LinkRef{From: l[0], To: l[1], At: at})
	}
	sort.Slice(ref.Links, func(i, j int) bool {
		a, b := ref.Links[i], ref.Links[j]
		return a.From < b.From || (a.From == b.From && a.To < b.To)
	})
	return ref, nil
}

// Each draws a list of up to max elements, one at a time: a seeded stream
// draws a count and then the elements (nil Each); a property backed by
// rapid draws a rapid slice instead, so that its shrinker deletes whole
// elements.
type Each func(label string, max int, one func(r sim.Rand) []sim.Action) []sim.Action

// Intensity bounds the faults of a drawn schedule: at most Timed timed
// faults (model/twopc's Spec) and Placed faults placed on the reference.
type Intensity struct{ Timed, Placed int }

// The intensities of fencesim explore (--faults): moderate is Spec's three
// timed faults and three placed ones; heavy twice as many; none nothing.
var (
	Moderate = Intensity{Timed: 3, Placed: 3}
	Heavy    = Intensity{Timed: 6, Placed: 6}
	None     = Intensity{}
)

// SearchFaults draws a run's faults on its reference: the timed faults of
// Spec over the workload's span (its last protocol event and 50 ms more),
// then a profile of the placed kinds and the placed faults. A zero draw is
// no fault. The harness's Run ends them with the heal-all.
func (h Harness) SearchFaults(r sim.Rand, each Each, d twopc.Design, ref *Reference, in Intensity) (sim.Schedule, sim.Profile) {
	var s sim.Schedule
	var prof sim.Profile
	if in.Timed > 0 {
		g := twopc.Spec(d, time.Duration(ref.End)+50*time.Millisecond, h.MaxDown)
		g.MaxActions = in.Timed
		s, prof = sim.Generate(r, g)
	}
	var on []sim.Kind
	for _, k := range PlacedKinds {
		if in.Placed > 0 && r.Uint64n("kind-on/"+string(k), 2) == 1 && (k != sim.Restart || len(ref.Standby) > 0) {
			on = append(on, k)
		}
	}
	if len(on) > 0 && len(ref.Nodes) > 0 {
		prof.On = append(prof.On, on...)
		one := func(r sim.Rand) []sim.Action { return ref.Fault(r, on) }
		if each == nil {
			for range int(r.Uint64n("placed-faults", uint64(in.Placed)+1)) {
				s = append(s, one(r)...)
			}
		} else {
			s = append(s, each("placed-faults", in.Placed, one)...)
		}
	}
	return s.Sorted(), prof
}

// Fault draws one placed fault of a kind that is on (nil when the draw
// makes none).
func (ref *Reference) Fault(r sim.Rand, on []sim.Kind) []sim.Action {
	switch on[r.Uint64n("placed-kind", uint64(len(on)))] {
	case sim.CrashYield:
		n, a, ok := ref.event(r, "yield-event")
		call := 1 + int(r.Uint64n("yield", uint64(n.Calls)))
		if ok && r.Uint64n("yield-after-event", 2) == 1 {
			call = a.Calls + 1 + int(r.Uint64n("calls-after", 4))
		}
		return []sim.Action{{At: 0, Kind: sim.CrashYield, Node: n.Name, Count: call, For: ref.down(r), FromStart: true}}
	case sim.Message:
		if len(ref.Links) == 0 {
			return nil
		}
		l := ref.Links[r.Uint64n("link", uint64(len(ref.Links)))]
		i := int(r.Uint64n("message", uint64(len(l.At))))
		a := sim.Action{At: 0, Kind: sim.Message, Node: l.From, Peer: l.To, Count: i + 1, FromStart: true}
		switch r.Uint64n("fate", 3) {
		case 0:
			a.Arg = sim.FateDrop
		case 1:
			a.Arg = sim.FateDup
		case 2:
			a.Arg, a.Amount = sim.FateDelay, max(time.Millisecond, min(ref.past(r, "delay"), ref.Until.Sub(l.At[i])))
		}
		return []sim.Action{a}
	case sim.Pause:
		n, a, ok := ref.event(r, "pause-event")
		if !ok {
			return nil
		}
		at := a.T.Add(time.Duration(r.Uint64n("pause-after-ms", 3)) * time.Millisecond)
		return []sim.Action{{At: at, Kind: sim.Pause, Node: n.Name}, {At: at.Add(ref.past(r, "stuck")), Kind: sim.Resume, Node: n.Name}}
	case sim.Restart:
		if len(ref.Standby) == 0 || len(ref.Events) == 0 {
			return nil
		}
		c := ref.Standby[r.Uint64n("standby", uint64(len(ref.Standby)))]
		at := ref.Events[r.Uint64n("takeover-after", uint64(len(ref.Events)))].Add(time.Duration(r.Uint64n("takeover-after-ms", 3)) * time.Millisecond)
		return []sim.Action{{At: at, Kind: sim.Restart, Node: c}}
	}
	return nil
}

// event draws a protocol event of the reference, every event of every node
// alike, so that a node is hit as often as the protocol happens there (a
// node without events counts as one, so that it is still drawn); it
// returns the event's node and the event (false for such a node).
func (ref *Reference) event(r sim.Rand, label string) (NodeRef, Anchor, bool) {
	total := 0
	for _, n := range ref.Nodes {
		total += max(1, len(n.Anchors))
	}
	i := int(r.Uint64n(label, uint64(total)))
	for _, n := range ref.Nodes {
		if k := max(1, len(n.Anchors)); i >= k {
			i -= k
			continue
		}
		if len(n.Anchors) == 0 {
			return n, Anchor{}, false
		}
		return n, n.Anchors[i], true
	}
	panic("twopc: an event beyond the reference's")
}

// down draws a crash's downtime: a quick restart (zero), or past one of
// the design's timeouts.
func (ref *Reference) down(r sim.Rand) time.Duration {
	if i := r.Uint64n("down", uint64(len(ref.Timeouts))+1); i > 0 {
		return past(ref.Timeouts[i-1])
	}
	return time.Millisecond
}

// past draws a delay past one of the design's timeouts.
func (ref *Reference) past(r sim.Rand, label string) time.Duration {
	return past(ref.Timeouts[r.Uint64n(label, uint64(len(ref.Timeouts)))])
}

// past is a little longer than a timeout: a tenth more, at least 10 ms.
func past(t time.Duration) time.Duration { return t + max(t/10, 10*time.Millisecond) }

// Seeded is a run drawn from a seed: its world and its faults.
type Seeded struct {
	Design   twopc.Design
	Schedule sim.Schedule // the faults (the harness's Run adds the heal-all)
	Profile  sim.Profile
}

// DrawSeed draws what fencesim explore plays for a seed: the world from
// the seed's "world" stream (twopc.DrawWorld: the design's pinned
// parameters kept), the world's reference run, and the faults from the
// "faults" stream (SearchFaults). Run it with sim.NewPCG(seed).
func (h Harness) DrawSeed(base twopc.Design, seed uint64, in Intensity) (Seeded, error) {
	ent := sim.NewPCG(seed)
	d := twopc.DrawWorld(ent.Stream("world"), base)
	x := Seeded{Design: d}
	ref, err := h.NewReference(d, ent)
	if err != nil {
		return x, err
	}
	x.Schedule, x.Profile = h.SearchFaults(ent.Stream("faults"), nil, d, ref, in)
	return x, nil
}
