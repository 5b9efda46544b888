package harness

import (
	"fmt"
	"slices"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/twopc"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// The generic fault search of system C: faults placed on the protocol's
// own events rather than spread uniformly over a horizon (sim.Reference
// places them; its vocabulary is the kernel's). System C's protocol events
// are each 2PC note it wrote and each prepared transaction and commit; the
// nodes that may crash or pause are the started coordinators, the
// participants (a database: its calls are its inputs) and the agents; a
// placed restart is a standby coordinator's takeover from the same log.
// Downtimes and delays are drawn past the design's timeouts (a coordinator
// away longer than abort_after, a vote that timed out). Nothing here knows
// a knob. The timed faults of model/twopc's Spec (sim.Generate: crashes,
// crash-at points, broken connections) come on top, over the workload's
// span.

// PlacedKinds are the kinds of fault the search places on the reference
// (restart: a standby coordinator's takeover).
var PlacedKinds = []sim.Kind{sim.CrashYield, sim.Message, sim.Pause, sim.Restart}

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

// refKinds are the kinds the reference reads: sends, system C's 2PC
// notes, the databases' prepared transactions and commits.
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
func (h Harness) NewReference(d twopc.Design, ent sim.Entropy) (*sim.Reference, error) {
	until := clock.Time(h.HealAt - time.Second)
	rec := sim.NewRefRecorder(until, Timeouts(d))
	w, err := twopc.Build(d, sim.Config{
		Entropy: ent, Network: h.Network, Recorder: rec, Filter: refKinds,
		Limits: sim.Limits{MaxTime: until, MaxEvents: 2_000_000, MaxPending: sim.DefaultMaxPending},
	})
	if err != nil {
		return nil, err
	}
	defer w.Close()
	names := w.Names
	rec.Watch(w.World, slices.Concat(names.Started, names.Participants, names.Agents))
	if err := w.RunUntil(until); err != nil {
		return nil, fmt.Errorf("the fault-free run: %w", err)
	}
	return rec.Reference(names.Standby), nil
}

// The intensities of fencesim explore (--faults): moderate is Spec's three
// timed faults and three placed ones; heavy twice as many; none nothing.
var (
	Moderate = sim.Intensity{Timed: 3, Placed: 3}
	Heavy    = sim.Intensity{Timed: 6, Placed: 6}
	None     = sim.Intensity{}
)

// SearchFaults draws a run's faults on its reference: the timed faults of
// Spec over the workload's span (its last protocol event and 50 ms more),
// then a profile of the placed kinds and the placed faults. A zero draw is
// no fault. The harness's Run ends them with the heal-all.
func (h Harness) SearchFaults(r sim.Rand, each sim.Each, d twopc.Design, ref *sim.Reference, in sim.Intensity) (sim.Schedule, sim.Profile) {
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

// Seeded is a run drawn from a seed: its world and its faults.
type Seeded struct {
	Design   twopc.Design
	Schedule sim.Schedule // the faults (the harness's Run adds the heal-all)
	Profile  sim.Profile
}

// DrawSeed draws what fencesim explore plays for a seed: the world from
// the seed's "world" stream (DrawWorld: the design's pinned
// parameters kept), the world's reference run, and the faults from the
// "faults" stream (SearchFaults). Run it with sim.NewPCG(seed).
func (h Harness) DrawSeed(base twopc.Design, seed uint64, in sim.Intensity) (Seeded, error) {
	ent := sim.NewPCG(seed)
	d := DrawWorld(sim.Steer(ent.Stream("world"), seed, Levers), base)
	x := Seeded{Design: d}
	ref, err := h.NewReference(d, ent)
	if err != nil {
		return x, err
	}
	x.Schedule, x.Profile = h.SearchFaults(sim.Steer(ent.Stream("faults"), seed, Levers), nil, d, ref, in)
	return x, nil
}

// Levers are system C's steered seeds' levers (sim.Steer): the drawn
// world's largest choices (four participants, two coordinators sharing
// the log, a standby, cooperative termination, four transactions) and
// each fault kind on, timed (crash, break) and placed (crash-yield,
// message, pause, restart). Each is named as the feature it forces
// (Seeded.Features, internal/directed.Features). The list is the seed
// format: a lever is appended, never moved or removed.
var Levers = slices.Clip(append([]sim.Lever{
	{Name: "participants=4", Label: "extra-participants", Value: sim.LeverMax},
	{Name: "coordinators=2", Label: "extra-coordinators", Value: sim.LeverMax},
	{Name: "standby=1", Label: "extra-standby", Value: sim.LeverMax},
	{Name: "cooperative", Label: "cooperative", Value: 1},
	{Name: "txns=4", Label: "extra-txns", Value: sim.LeverMax},
}, sim.KindLevers([]sim.Kind{sim.Crash, sim.Break, sim.CrashYield, sim.Message, sim.Pause, sim.Restart})...))

// Features names the drawn world's choices for the directed search
// (internal/directed): the participants, coordinators, standby,
// cooperative termination and transactions. Levers are named as these.
func (x Seeded) Features() []string {
	d := x.Design
	out := []string{fmt.Sprintf("participants=%d", d.Participants), fmt.Sprintf("coordinators=%d", d.Coordinators),
		fmt.Sprintf("standby=%d", d.Standby), fmt.Sprintf("txns=%d", d.Txns)}
	if d.Cooperative {
		out = append(out, "cooperative")
	}
	return out
}
