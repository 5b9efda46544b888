package harness

import (
	"slices"

	"pgregory.net/rapid"

	check "github.com/fencesim/fencesim/checker/outbox"
	"github.com/fencesim/fencesim/model/outbox"
	"github.com/fencesim/fencesim/sim"
)

// Outcome is one simulated run with its judgement.
type Outcome struct {
	*outbox.Outcome
	History  *check.History // nil when the run failed or its trace did not decode
	Verdicts []check.Verdict
	Probes   map[string]bool
}

// Judge decodes a run's trace and runs every property and probe on it.
func Judge(o *outbox.Outcome) *Outcome {
	j := &Outcome{Outcome: o}
	if o.Err != nil {
		return j
	}
	h, err := check.Decode(o.Trace)
	if err != nil {
		o.Err = err
		return j
	}
	j.History, j.Verdicts, j.Probes = h, check.Check(h), check.Probes(h)
	return j
}

// Simulate runs a world with given events and schedule (outbox.Simulate)
// and judges it.
func Simulate(d outbox.Design, wl outbox.Workload, events []outbox.Event, schedule sim.Schedule, ent sim.Entropy) *Outcome {
	return Judge(outbox.Simulate(d, wl, events, schedule, ent))
}

// RunSeed runs one simulated run of a design for a seed, as fencesim
// explore plays it: the world and the faults drawn from the seed
// (outbox.DrawSeed: the world first, then its fault-free reference, then
// faults placed on it and timed over the workload's span), the run going
// until it settles after the faults heal (or MaxTime), every property
// checked.
func RunSeed(d outbox.Design, seed uint64) *Outcome {
	return RunSeedWith(d, seed, outbox.Moderate)
}

// RunSeedWith is RunSeed under a fault intensity.
func RunSeedWith(d outbox.Design, seed uint64, in sim.Intensity) *Outcome {
	x, err := outbox.DrawSeed(d, seed, in)
	if err != nil {
		return &Outcome{Outcome: &outbox.Outcome{Seed: seed, Design: x.Design, Err: err}}
	}
	o := Simulate(x.Design, x.Workload, x.Workload.Plan, x.Schedule, sim.NewPCG(seed))
	o.Seed, o.Profile = seed, x.Profile
	return o
}

// Property is the rapid property of a design, the generic search under
// rapid: draw the world (outbox.DrawWorld, so that a failure shrinks
// toward the smallest world), a seed for the network's and the nodes'
// streams, run the world's reference, draw the faults on it
// (outbox.SearchFaults, each list a rapid slice so that shrinking deletes
// whole faults), run, and fail when one of the watched properties fails
// (every property when watch is empty; a run that fails to run always
// fails). The last failing outcome (after shrinking: the shrunk one) is
// left in *last when last is not nil.
func Property(d outbox.Design, in sim.Intensity, watch []string, last **Outcome) func(*rapid.T) {
	return func(t *rapid.T) {
		r := sim.NewRapid(t)
		dw, wl := outbox.DrawWorld(r, d)
		seed := r.Uint64n("seed", 1<<20)
		ent := sim.NewPCG(seed)
		ref, err := outbox.NewReference(dw, wl, wl.Plan, ent)
		if err != nil {
			t.Fatalf("the reference run: %v", err)
		}
		s, p := outbox.SearchFaults(r, sim.RapidEach(t), dw, ref, in.Timed, in.Placed)
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

// Failed returns the failed properties ("run" when the run itself failed).
func (o *Outcome) Failed() []string {
	if o.Err != nil {
		return []string{"run"}
	}
	return check.Failed(o.Verdicts)
}

// OK reports whether the run completed and every property held.
func (o *Outcome) OK() bool { return len(o.Failed()) == 0 }

// Summary renders the run and its verdicts in a few lines.
func (o *Outcome) Summary() string {
	s := o.Outcome.Summary()
	for _, v := range o.Verdicts {
		s += v.String() + "\n"
	}
	return s
}
