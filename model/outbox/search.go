package outbox

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// The generic fault search: faults placed on the protocol's own events
// rather than spread uniformly over a horizon. The world's fault-free run
// (its Reference) says, per node, how many blocking calls it made and
// where its protocol events fell (each note it wrote and each commit, with
// the node's call count and the time then), and how many messages each
// link carried. Up to the first fault a faulty run is that run, so the
// N-th blocking call of a node, or the n-th message of a link, is the same
// one in both: a fault armed on it hits the protocol where it chose to.
// Nothing here knows a knob; the vocabulary is the kernel's:
//
//   - crash-yield: a node crashes at one of its blocking calls (crash
//     points included: every step between two statements), drawn either
//     uniformly over its calls or just after one of its protocol events
//     (1 to 4 calls later), and restarts soon or past one of the design's
//     timeouts; the node is drawn as often as the protocol happens there
//     (every protocol event of every node alike);
//   - message: the n-th message of a link is dropped, duplicated, or
//     delayed past one of the design's timeouts (a late reply, a late
//     duplicate), arriving before the heal-all all the same;
//   - pause: a node stalls just after one of its protocol events, past one
//     of the design's timeouts.
//
// The timed faults of FaultSpec (sim.Generate) come on top, over a
// horizon drawn around the workload: its protocol events' span.

// PlacedKinds are the kinds of fault the search places on the reference.
var PlacedKinds = []sim.Kind{sim.CrashYield, sim.Message, sim.Pause}

// Reference is the fault-free run of a world, as the fault search places
// faults on it.
type Reference struct {
	Nodes    []NodeRef       // the nodes that may crash or pause, in the world's order (those with calls)
	Links    []LinkRef       // the links that carried messages, sorted
	End      clock.Time      // the time of the last protocol event
	Until    clock.Time      // the reference was recorded up to here: the faults' last chance before the heal-all
	Timeouts []time.Duration // the design's timeouts, sorted: delays and downtimes are drawn past them
}

// NodeRef is one node of the reference.
type NodeRef struct {
	Name    string
	Calls   int      // blocking calls up to Until
	Anchors []Anchor // its protocol events, in order
}

// Anchor is one protocol event of a node: when it happened, and how many
// blocking calls the node had made by then.
type Anchor struct {
	T     clock.Time
	Calls int
}

// LinkRef is one link of the reference and the messages it carried: when
// each was sent.
type LinkRef struct {
	From, To string
	At       []clock.Time
}

// Timeouts lists a design's timeouts (the sender's, the relay's, the
// broker's, the databases'), sorted, without repeats.
func (d Design) Timeouts() []time.Duration {
	ts := []time.Duration{d.RequestTimeout, d.PublishTimeout, d.RedeliverAfter, d.DBTimeout, d.PollEvery}
	if d.LockTimeout > 0 {
		ts = append(ts, d.LockTimeout)
	}
	slices.Sort(ts)
	return slices.Compact(ts)
}

// refRecorder counts what the reference needs as the run records it.
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
}

// refKinds are the kinds the reference reads: sends, system B's notes,
// the databases' commits.
func refKinds(kind string) bool {
	switch kind {
	case "send", "commit", hist.KindBHandle, hist.KindBRelay, hist.KindBPublish, hist.KindBPush, hist.KindBApply:
		return true
	}
	return false
}

// NewReference runs a world without faults up to the heal-all's second
// before (the faults' last chance) and returns its reference. ent must be
// the entropy the faulty runs will use (the network's and the nodes'
// streams), so that both runs agree up to the first fault.
func NewReference(d Design, wl Workload, events []Event, ent sim.Entropy) (*Reference, error) {
	g := FaultSpec(d)
	ref := &Reference{Until: HealAt(g).Add(-time.Second), Timeouts: d.Timeouts()}
	rec := &refRecorder{ref: ref, index: map[string]int{}, links: map[[2]string][]clock.Time{}}
	w, err := BuildWith(d, wl, events, sim.Config{
		Entropy: ent, Network: Network(), Recorder: rec, Filter: refKinds,
		Limits: sim.Limits{MaxTime: ref.Until, MaxEvents: 2_000_000, MaxPending: sim.DefaultMaxPending},
	})
	if err != nil {
		return nil, err
	}
	defer w.Close()
	rec.w = w.World
	for i, n := range w.Names.Crashable() {
		ref.Nodes = append(ref.Nodes, NodeRef{Name: n})
		rec.index[n] = i
	}
	if err := w.RunUntil(ref.Until); err != nil {
		return nil, fmt.Errorf("the fault-free run: %w", err)
	}
	nodes := ref.Nodes[:0]
	for _, n := range ref.Nodes {
		n.Calls = int(w.Yields(n.Name))
		if n.Calls > 0 {
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

// SearchFaults draws a run's fault schedule on its reference: the timed
// faults of FaultSpec over the workload's span (at most timed of them),
// then a profile of the placed kinds and at most placed placed faults, and
// the heal-all at HealAt. A zero draw is no fault.
func SearchFaults(r sim.Rand, each Each, d Design, ref *Reference, timed, placed int) (sim.Schedule, sim.Profile) {
	g := FaultSpec(d)
	heal := HealAt(g)
	g.Horizon = min(g.Horizon, max(time.Second, time.Duration(ref.End)+500*time.Millisecond))
	g.MaxActions = timed
	var s sim.Schedule
	var prof sim.Profile
	if timed > 0 {
		s, prof = sim.Generate(r, g)
	}
	var on []sim.Kind
	for _, k := range PlacedKinds {
		if placed > 0 && r.Uint64n("kind-on/"+string(k), 2) == 1 {
			on = append(on, k)
		}
	}
	if len(on) > 0 && len(ref.Nodes) > 0 {
		prof.On = append(prof.On, on...)
		one := func(r sim.Rand) []sim.Action { return ref.Fault(r, on) }
		if each == nil {
			n := int(r.Uint64n("placed-faults", uint64(placed)+1))
			for range n {
				s = append(s, one(r)...)
			}
		} else {
			s = append(s, each("placed-faults", placed, one)...)
		}
	}
	s = s.Sorted()
	return append(s, sim.Action{At: heal, Kind: sim.HealAll}), prof
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
			// Late, but in before the heal-all: the faults end there.
			a.Arg, a.Amount = sim.FateDelay, max(time.Millisecond, min(ref.past(r, "delay"), ref.Until.Sub(l.At[i])))
		}
		return []sim.Action{a}
	case sim.Pause:
		n, a, ok := ref.event(r, "pause-event")
		if !ok {
			return nil
		}
		at := a.T.Add(time.Duration(r.Uint64n("pause-after-ms", 3)) * time.Millisecond)
		d := ref.past(r, "stuck")
		return []sim.Action{{At: at, Kind: sim.Pause, Node: n.Name}, {At: at.Add(d), Kind: sim.Resume, Node: n.Name}}
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
	panic("outbox: an event beyond the reference's")
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

// Intensity bounds the faults of a drawn schedule: at most Timed timed
// faults (FaultSpec's kinds) and Placed faults placed on the reference.
type Intensity struct{ Timed, Placed int }

// The intensities of fencesim explore (--faults): moderate is FaultSpec's
// eight timed faults and three placed ones; heavy twice as many; none no
// fault at all (the schedule is only the heal-all).
var (
	Moderate = Intensity{Timed: 8, Placed: 3}
	Heavy    = Intensity{Timed: 16, Placed: 6}
	None     = Intensity{}
)

// Seeded is a run drawn from a seed: its world, its events and its faults.
type Seeded struct {
	Design   Design
	Workload Workload // Plan holds the events
	Schedule sim.Schedule
	Profile  sim.Profile
}

// DrawSeed draws what fencesim explore plays for a seed: the world from
// the seed's "world" stream (DrawWorld: the design's pinned parameters
// kept), the world's reference run, and the faults from the "faults"
// stream (SearchFaults). Simulate it with sim.NewPCG(seed).
func DrawSeed(base Design, seed uint64, in Intensity) (Seeded, error) {
	ent := sim.NewPCG(seed)
	d, wl := DrawWorld(ent.Stream("world"), base)
	x := Seeded{Design: d, Workload: wl}
	ref, err := NewReference(d, wl, wl.Plan, ent)
	if err != nil {
		return x, err
	}
	x.Schedule, x.Profile = SearchFaults(ent.Stream("faults"), nil, d, ref, in.Timed, in.Placed)
	return x, nil
}
