package harness

import (
	"fmt"
	"slices"
	"time"

	"github.com/fencesim/fencesim/model/outbox"

	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// The generic fault search: faults placed on the protocol's own events
// rather than spread uniformly over a horizon (sim.Reference places them;
// its vocabulary is the kernel's: crash-yield, message, pause). System B's
// protocol events are each note it wrote and each commit; a node that may
// crash is one of outbox.Names.Crashable. Nothing here knows a knob. The timed
// faults of outbox.FaultSpec (sim.Generate) come on top, over a horizon drawn
// around the workload: its protocol events' span.

// PlacedKinds are the kinds of fault the search places on the reference.
var PlacedKinds = []sim.Kind{sim.CrashYield, sim.Message, sim.Pause}

// Timeouts lists a design's timeouts (the sender's, the relay's, the
// broker's, the databases'), sorted, without repeats.
func Timeouts(d outbox.Design) []time.Duration {
	ts := []time.Duration{d.RequestTimeout, d.PublishTimeout, d.RedeliverAfter, d.DBTimeout, d.PollEvery}
	if d.LockTimeout > 0 {
		ts = append(ts, d.LockTimeout)
	}
	slices.Sort(ts)
	return slices.Compact(ts)
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
func NewReference(d outbox.Design, wl outbox.Workload, events []outbox.Event, ent sim.Entropy) (*sim.Reference, error) {
	until := outbox.HealAt(outbox.FaultSpec(d)).Add(-time.Second)
	rec := sim.NewRefRecorder(until, Timeouts(d))
	w, err := outbox.BuildWith(d, wl, events, sim.Config{
		Entropy: ent, Network: outbox.Network(), Recorder: rec, Filter: refKinds,
		Limits: sim.Limits{MaxTime: until, MaxEvents: 2_000_000, MaxPending: sim.DefaultMaxPending},
	})
	if err != nil {
		return nil, err
	}
	defer w.Close()
	rec.Watch(w.World, w.Names.Crashable())
	if err := w.RunUntil(until); err != nil {
		return nil, fmt.Errorf("the fault-free run: %w", err)
	}
	return rec.Reference(nil), nil
}

// SearchFaults draws a run's fault schedule on its reference: the timed
// faults of outbox.FaultSpec over the workload's span (at most timed of them),
// then a profile of the placed kinds and at most placed placed faults, and
// the heal-all at outbox.HealAt. A zero draw is no fault.
func SearchFaults(r sim.Rand, each sim.Each, d outbox.Design, ref *sim.Reference, timed, placed int) (sim.Schedule, sim.Profile) {
	g := outbox.FaultSpec(d)
	heal := outbox.HealAt(g)
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

// The intensities of fencesim explore (--faults): moderate is outbox.FaultSpec's
// eight timed faults and three placed ones; heavy twice as many; none no
// fault at all (the schedule is only the heal-all).
var (
	Moderate = sim.Intensity{Timed: 8, Placed: 3}
	Heavy    = sim.Intensity{Timed: 16, Placed: 6}
	None     = sim.Intensity{}
)

// Seeded is a run drawn from a seed: its world, its events and its faults.
type Seeded struct {
	Design   outbox.Design
	Workload outbox.Workload // Plan holds the events
	Schedule sim.Schedule
	Profile  sim.Profile
}

// DrawSeed draws what fencesim explore plays for a seed: the world from
// the seed's "world" stream (DrawWorld: the design's pinned parameters
// kept), the world's reference run, and the faults from the "faults"
// stream (SearchFaults). Simulate it with sim.NewPCG(seed).
func DrawSeed(base outbox.Design, seed uint64, in sim.Intensity) (Seeded, error) {
	ent := sim.NewPCG(seed)
	d, wl := DrawWorld(sim.Steer(ent.Stream("world"), seed, Levers), base)
	x := Seeded{Design: d, Workload: wl}
	ref, err := NewReference(d, wl, wl.Plan, ent)
	if err != nil {
		return x, err
	}
	x.Schedule, x.Profile = SearchFaults(sim.Steer(ent.Stream("faults"), seed, Levers), nil, d, ref, in.Timed, in.Placed)
	return x, nil
}

// Levers are system B's steered seeds' levers (sim.Steer): the drawn
// world's largest choices (four handlers, three senders, two relays, ten
// events), its shortest window (500 ms), the most timed faults the
// intensity allows, and each fault kind on, timed and placed. Each is
// named as the feature it forces (Seeded.Features,
// internal/directed.Features). The list is the seed format: a lever is
// appended, never moved or removed.
var Levers = slices.Clip(append([]sim.Lever{
	{Name: "handlers=4", Label: "extra-handlers", Value: sim.LeverMax},
	{Name: "senders=3", Label: "extra-senders", Value: sim.LeverMax},
	{Name: "relays=2", Label: "extra-relays", Value: sim.LeverMax},
	{Name: "events=10", Label: "extra-events", Value: sim.LeverMax},
	{Name: "window=500ms", Label: "window", Value: 3},
	{Name: "faults>=8", Label: "faults", Value: sim.LeverMax},
}, sim.KindLevers([]sim.Kind{sim.Crash, sim.Pause, sim.Partition, sim.Loss, sim.Dup, sim.Delay, sim.Stall, sim.Break, sim.CrashYield, sim.Message})...))

// Features names the drawn world's choices for the directed search
// (internal/directed): the handlers, senders, relays, events and the
// window. Levers are named as these.
func (x Seeded) Features() []string {
	d, wl := x.Design, x.Workload
	return []string{fmt.Sprintf("handlers=%d", d.Handlers), fmt.Sprintf("senders=%d", d.Senders), fmt.Sprintf("relays=%d", d.Relays),
		fmt.Sprintf("events=%d", wl.Events), "window=" + wl.Window.String()}
}
