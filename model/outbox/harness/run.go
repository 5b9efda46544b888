package harness

import (
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

// RunSeed runs one simulated run of a design for a seed: the workload and
// the faults are drawn from the seed's streams, the run goes until it
// settles after the faults heal (or MaxTime), and every property is
// checked. It is what `fencesim explore` plays per seed.
func RunSeed(d outbox.Design, wl outbox.Workload, seed uint64) *Outcome {
	ent := sim.NewPCG(seed)
	events := wl.Draw(ent.Stream("workload"))
	s, p := outbox.Faults(ent.Stream("faults"), outbox.FaultSpec(d))
	o := Simulate(d, wl, events, s, ent)
	o.Seed, o.Profile = seed, p
	return o
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
