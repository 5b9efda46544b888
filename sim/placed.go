package sim

import (
	"slices"
	"strings"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/traces"
	"pgregory.net/rapid"
)

// Placed faults: faults placed on a system's own protocol events rather
// than spread uniformly over a horizon. A world's fault-free run (its
// Reference) says, per node, how many blocking calls it made and where its
// protocol events fell (with the node's call count and the time then), and
// when each link carried each message. Up to the first fault a faulty run
// is that run, so the N-th blocking call of a node, or the n-th message of
// a link, is the same one in both: a fault armed on it hits the protocol
// where it chose to. A system says which events are its protocol's (the
// Filter of the reference run), which nodes count, and its timeouts; the
// vocabulary is the kernel's:
//
//   - CrashYield: a node crashes at one of its blocking calls, drawn either
//     uniformly over its calls or just after one of its protocol events (1
//     to 4 calls later), and restarts soon or past one of the timeouts; the
//     node is drawn as often as the protocol happens there (every protocol
//     event of every node alike);
//   - Message: the n-th message of a link is dropped, duplicated, or delayed
//     past one of the timeouts, arriving before the reference's end all the
//     same;
//   - Pause: a node stalls just after one of its protocol events, past one
//     of the timeouts;
//   - Restart: a node of Standby starts just after a protocol event (a
//     standby's takeover), when the world has one.

// Reference is the fault-free run of a world, as the fault search places
// faults on it.
type Reference struct {
	Nodes    []NodeRef       // the nodes that may crash or pause (those with calls), in the world's order
	Standby  []string        // nodes a placed Restart may start (a standby's takeover); none: no Restart
	Links    []LinkRef       // the links that carried messages, sorted
	End      clock.Time      // the time of the last protocol event
	Until    clock.Time      // the reference was recorded up to here: the faults' last chance before the heal-all
	Timeouts []time.Duration // the design's timeouts, sorted: delays and downtimes are drawn past them
	Events   []clock.Time    // the times of every protocol event, in order (a takeover's moments)
}

// NodeRef is one node of the reference.
type NodeRef struct {
	Name    string
	Calls   int      // blocking calls (a state machine: inputs) up to Until
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
	// Datagrams: some of its messages were datagrams (the others went
	// over connections, which never deliver a message twice).
	Datagrams bool
}

// RefRecorder records a Reference as a fault-free world runs: it is the
// world's Recorder, with a Filter that accepts "send" and the system's
// protocol events. Build the world with it, Watch the world, run it up to
// until, and take the Reference.
type RefRecorder struct {
	w         *World
	ref       *Reference
	index     map[string]int
	links     map[[2]string][]clock.Time
	datagrams map[[2]string]bool
}

// NewRefRecorder starts a reference recorded up to until, with the
// design's timeouts (sorted, without repeats).
func NewRefRecorder(until clock.Time, timeouts []time.Duration) *RefRecorder {
	return &RefRecorder{
		ref:   &Reference{Until: until, Timeouts: timeouts},
		index: map[string]int{},
		links: map[[2]string][]clock.Time{}, datagrams: map[[2]string]bool{},
	}
}

// Watch names the world, once built, and the nodes whose protocol events
// anchor faults (crash and pause), in the world's order; the events of
// other nodes are not the reference's.
func (r *RefRecorder) Watch(w *World, nodes []string) {
	r.w = w
	for _, n := range nodes {
		r.index[n] = len(r.ref.Nodes)
		r.ref.Nodes = append(r.ref.Nodes, NodeRef{Name: n})
	}
}

// Record implements Recorder: a send counts on its link, any other event of
// a watched node is one of its protocol events.
func (r *RefRecorder) Record(e *traces.Event) {
	t := clock.Time(e.T)
	if t > r.ref.Until {
		return
	}
	if e.Kind == "send" {
		var from, to string
		conn := false
		if e.Msg != nil {
			from, to, conn = string(e.Msg.From), string(e.Msg.To), e.Msg.Conn != 0
		} else if f := strings.Fields(e.Text); len(f) > 1 {
			from, to, _ = strings.Cut(f[1], "->")
			conn = len(f) > 2 && strings.HasPrefix(f[2], "conn=")
		}
		if from != "" && to != "" {
			l := [2]string{from, to}
			r.links[l] = append(r.links[l], t)
			if !conn {
				r.datagrams[l] = true
			}
		}
		return
	}
	i, ok := r.index[e.Node]
	if !ok {
		return
	}
	n := &r.ref.Nodes[i]
	n.Anchors = append(n.Anchors, Anchor{T: t, Calls: int(r.w.Yields(e.Node))})
	r.ref.Events = append(r.ref.Events, t)
	r.ref.End = max(r.ref.End, t)
}

// HeadersOnly implements HeaderRecorder: a send counts by its ends alone,
// so its body is never rendered.
func (r *RefRecorder) HeadersOnly() {}

// Reference returns the reference once the world has run: each watched
// node's calls (those without any left out), the links sorted by (from,
// to), and standby, the nodes a placed Restart may start.
func (r *RefRecorder) Reference(standby []string) *Reference {
	ref := r.ref
	ref.Standby = standby
	nodes := ref.Nodes[:0]
	for _, n := range ref.Nodes {
		if n.Calls = int(r.w.Yields(n.Name)); n.Calls > 0 {
			nodes = append(nodes, n)
		}
	}
	ref.Nodes = nodes
	keys := make([][2]string, 0, len(r.links))
	for l := range r.links {
		keys = append(keys, l)
	}
	slices.SortFunc(keys, func(a, b [2]string) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	for _, l := range keys {
		ref.Links = append(ref.Links, LinkRef{From: l[0], To: l[1], At: r.links[l], Datagrams: r.datagrams[l]})
	}
	return ref
}

// Each draws a list of up to max elements, one at a time: a seeded stream
// draws a count and then the elements (nil Each); a property backed by
// rapid draws a rapid slice instead, so that its shrinker deletes whole
// elements.
type Each func(label string, max int, one func(r Rand) []Action) []Action

// Intensity bounds the faults of a drawn schedule: at most Timed timed
// faults (the system's FaultSpec) and Placed faults placed on the
// reference.
type Intensity struct{ Timed, Placed int }

// Fault draws one placed fault of a kind that is on (nil when the draw
// makes none).
func (ref *Reference) Fault(r Rand, on []Kind) []Action {
	switch on[r.Uint64n("placed-kind", uint64(len(on)))] {
	case CrashYield:
		n, a, ok := ref.event(r, "yield-event")
		call := 1 + int(r.Uint64n("yield", uint64(n.Calls)))
		if ok && r.Uint64n("yield-after-event", 2) == 1 {
			call = a.Calls + 1 + int(r.Uint64n("calls-after", 4))
		}
		return []Action{{At: 0, Kind: CrashYield, Node: n.Name, Count: call, For: ref.down(r), FromStart: true}}
	case Message:
		if len(ref.Links) == 0 {
			return nil
		}
		l := ref.Links[r.Uint64n("link", uint64(len(ref.Links)))]
		i := int(r.Uint64n("message", uint64(len(l.At))))
		a := Action{At: 0, Kind: Message, Node: l.From, Peer: l.To, Count: i + 1, FromStart: true}
		// A connection never delivers a message twice: a link of
		// connections only is dropped or delayed.
		fates := []string{FateDrop, FateDelay}
		if l.Datagrams {
			fates = []string{FateDrop, FateDup, FateDelay}
		}
		switch fates[r.Uint64n("fate", uint64(len(fates)))] {
		case FateDrop:
			a.Arg = FateDrop
		case FateDup:
			a.Arg = FateDup
		case FateDelay:
			// Late, but in before the heal-all: the faults end there.
			a.Arg, a.Amount = FateDelay, max(time.Millisecond, min(ref.past(r, "delay"), ref.Until.Sub(l.At[i])))
		}
		return []Action{a}
	case Pause:
		n, a, ok := ref.event(r, "pause-event")
		if !ok {
			return nil
		}
		at := a.T.Add(time.Duration(r.Uint64n("pause-after-ms", 3)) * time.Millisecond)
		return []Action{{At: at, Kind: Pause, Node: n.Name}, {At: at.Add(ref.past(r, "stuck")), Kind: Resume, Node: n.Name}}
	case Restart:
		if len(ref.Standby) == 0 || len(ref.Events) == 0 {
			return nil
		}
		c := ref.Standby[r.Uint64n("standby", uint64(len(ref.Standby)))]
		at := ref.Events[r.Uint64n("takeover-after", uint64(len(ref.Events)))].Add(time.Duration(r.Uint64n("takeover-after-ms", 3)) * time.Millisecond)
		return []Action{{At: at, Kind: Restart, Node: c}}
	}
	return nil
}

// event draws a protocol event of the reference, every event of every node
// alike, so that a node is hit as often as the protocol happens there (a
// node without events counts as one, so that it is still drawn); it
// returns the event's node and the event (false for such a node).
func (ref *Reference) event(r Rand, label string) (NodeRef, Anchor, bool) {
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
	panic("sim: an event beyond the reference's")
}

// down draws a crash's downtime: a quick restart (zero), or past one of
// the design's timeouts.
func (ref *Reference) down(r Rand) time.Duration {
	if i := r.Uint64n("down", uint64(len(ref.Timeouts))+1); i > 0 {
		return past(ref.Timeouts[i-1])
	}
	return time.Millisecond
}

// past draws a delay past one of the design's timeouts.
func (ref *Reference) past(r Rand, label string) time.Duration {
	return past(ref.Timeouts[r.Uint64n(label, uint64(len(ref.Timeouts)))])
}

// past is a little longer than a timeout: a tenth more, at least 10 ms.
func past(t time.Duration) time.Duration { return t + max(t/10, 10*time.Millisecond) }

// RapidEach is the Each of a property backed by rapid: a list is a rapid
// slice of up to max elements, each drawn by one from t, so that rapid's
// shrinker deletes whole elements.
func RapidEach(t *rapid.T) Each {
	return func(label string, max int, one func(Rand) []Action) []Action {
		gen := rapid.Custom(func(t *rapid.T) []Action { return one(NewRapid(t)) })
		var out []Action
		for _, acts := range rapid.SliceOfN(gen, 0, max).Draw(t, label) {
			out = append(out, acts...)
		}
		return out
	}
}
