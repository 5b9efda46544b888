package harness

import (
	"slices"

	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/outbox"
	"github.com/fencesim/fencesim/model/outbox/scenario"
	"github.com/fencesim/fencesim/sim"
)

// Outcome is one judged run (scenario.Outcome: the scenarios play runs
// the same way).
type Outcome = scenario.Outcome

// Played is one simulated run, unjudged (scenario.Played).
type Played = scenario.Played

// Metrics are measured on every run (scenario.Metrics).
type Metrics = scenario.Metrics

// Judge decodes a run's trace and runs every property and probe on it
// (scenario.Judge).
func Judge(o *Played) *Outcome { return scenario.Judge(o) }

// Simulate runs a world with given events and schedule and judges it
// (scenario.Simulate).
func Simulate(d outbox.Design, wl outbox.Workload, events []outbox.Event, schedule sim.Schedule, ent sim.Entropy) *Outcome {
	return scenario.Simulate(d, wl, events, schedule, ent)
}

// Play runs a world with given events and schedule, unjudged
// (scenario.Play).
func Play(d outbox.Design, wl outbox.Workload, events []outbox.Event, schedule sim.Schedule, ent sim.Entropy) *Played {
	return scenario.Play(d, wl, events, schedule, ent)
}

// PlayUntil is Play stopped at time stop (scenario.PlayUntil).
func PlayUntil(d outbox.Design, wl outbox.Workload, events []outbox.Event, schedule sim.Schedule, ent sim.Entropy, stop clock.Time) *Played {
	return scenario.PlayUntil(d, wl, events, schedule, ent, stop)
}

// RunSeed runs one simulated run of a design for a seed, as fencesim
// explore plays it: the world and the faults drawn from the seed
// (DrawSeed: the world first, then its fault-free reference, then
// faults placed on it and timed over the workload's span), the run going
// until it settles after the faults heal (or MaxTime), every property
// checked.
func RunSeed(d outbox.Design, seed uint64) *Outcome {
	return RunSeedWith(d, seed, Moderate)
}

// RunSeedWith is RunSeed under a fault intensity.
func RunSeedWith(d outbox.Design, seed uint64, in sim.Intensity) *Outcome {
	x, err := DrawSeed(d, seed, in)
	if err != nil {
		return &Outcome{Played: &Played{Seed: seed, Design: x.Design, Err: err}}
	}
	o := Simulate(x.Design, x.Workload, x.Workload.Plan, x.Schedule, sim.NewPCG(seed))
	o.Seed, o.Profile = seed, x.Profile
	return o
}

// Property is the rapid property of a design, the generic search under
// rapid: draw the world (DrawWorld, so that a failure shrinks
// toward the smallest world), a seed for the network's and the nodes'
// streams, run the world's reference, draw the faults on it
// (SearchFaults, each list a rapid slice so that shrinking deletes
// whole faults), run, and fail when one of the watched properties fails
// (every property when watch is empty; a run that fails to run always
// fails). The last failing outcome (after shrinking: the shrunk one) is
// left in *last when last is not nil.
func Property(d outbox.Design, in sim.Intensity, watch []string, last **Outcome) func(*rapid.T) {
	return func(t *rapid.T) {
		r := sim.NewRapid(t)
		dw, wl := DrawWorld(r, d)
		seed := r.Uint64n("seed", 1<<20)
		ent := sim.NewPCG(seed)
		ref, err := NewReference(dw, wl, wl.Plan, ent)
		if err != nil {
			t.Fatalf("the reference run: %v", err)
		}
		s, p := SearchFaults(r, sim.RapidEach(t), dw, ref, in.Timed, in.Placed)
		o := Simulate(dw, wl, wl.Plan, s, ent)
		o.Seed, o.Profile = seed, p
		var bad []string
		for _, f := range o.Failed() {
			if len(watch) == 0 || f == "run" || slices.Contains(watch, f) {
				bad = append(bad, f)
			}
		}
		if len(bad) > 0 {
			if last != nil {
				*last = o
			}
			t.Fatalf("properties %v failed:\n%s", bad, o.Summary())
		}
	}
}
