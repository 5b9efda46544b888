package outbox

import (
	"encoding/json"
	"fmt"
	"time"

	check "github.com/fencesim/fencesim/checker/outbox"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// Metrics are measured on every run.
type Metrics struct {
	Deliveries  int           `json:"deliveries"`   // deliveries the sender made
	Charges     int           `json:"charges"`      // charge rows committed
	Publishes   int           `json:"publishes"`    // messages the broker took (duplicates included)
	Effects     int           `json:"effects"`      // effects the consumer applied
	GaveUp      int           `json:"gave_up"`      // events the sender gave up on
	Settled     bool          `json:"settled"`      // the run reached a state with nothing left to do
	SimTime     time.Duration `json:"sim_time"`     // simulated time at the end
	KernelSteps uint64        `json:"kernel_steps"` // events the kernel ran
	TraceEvents int           `json:"trace_events"`
}

// Outcome is one simulated run and its judgement.
type Outcome struct {
	Seed     uint64
	Design   Design
	Schedule sim.Schedule
	Profile  sim.Profile
	Events   []Event
	Verdicts []check.Verdict
	Probes   map[string]bool
	Metrics  Metrics
	Trace    []traces.Event
	World    *World // the world at the end, for tests and reports
	Err      error  // the run itself failed (budget, an invalid schedule, an undecodable trace)
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

// Summary renders the outcome in a few lines.
func (o *Outcome) Summary() string {
	s := fmt.Sprintf("design %s\nseed %d, profile: %s\nschedule:\n%s\nevents:\n", o.Design.JSON(), o.Seed, o.Profile, o.Schedule)
	for _, e := range o.Events {
		b, _ := json.Marshal(e)
		s += "  " + string(b) + "\n"
	}
	if o.Err != nil {
		s += "run error: " + o.Err.Error() + "\n"
	}
	for _, v := range o.Verdicts {
		s += v.String() + "\n"
	}
	return s
}

// Draw draws a run's events and fault schedule from r.
func Draw(r sim.Rand, d Design, wl Workload) ([]Event, sim.Schedule, sim.Profile) {
	events := wl.Draw(r)
	s, p := Faults(r, FaultSpec(d))
	return events, s, p
}

// RunSeed runs one simulated run of a design for a seed: the workload and
// the faults are drawn from the seed's streams, the run goes until it
// settles after the faults heal (or MaxTime), and every property is
// checked. It is what `fencesim explore` calls per seed.
func RunSeed(d Design, wl Workload, seed uint64) *Outcome {
	ent := sim.NewPCG(seed)
	events := wl.Draw(ent.Stream("workload"))
	s, p := Faults(ent.Stream("faults"), FaultSpec(d))
	o := Simulate(d, wl, events, s, ent)
	o.Seed, o.Profile = seed, p
	return o
}

// Simulate runs a world with given events and schedule and judges it.
func Simulate(d Design, wl Workload, events []Event, schedule sim.Schedule, ent sim.Entropy) *Outcome {
	o := &Outcome{Design: d, Schedule: schedule, Events: events}
	mem := &traces.Memory{}
	g := FaultSpec(d)
	wlp := wl
	wlp.Plan = events
	end := MaxTime(d, wlp, g)
	w, err := BuildWith(d, wl, events, sim.Config{
		Entropy: ent, Network: Network(), Schedule: schedule, Recorder: mem,
		Limits: sim.Limits{MaxTime: end, MaxEvents: 2_000_000},
	})
	if err != nil {
		o.Err = err
		return o
	}
	heal := HealAt(g)
	for _, a := range schedule {
		if a.At > heal {
			heal = a.At
		}
	}
	// Run past the faults, then in steps until the world settles.
	t := heal
	for {
		if err := w.RunUntil(t); err != nil {
			o.Err = err
			break
		}
		if w.Settled() {
			o.Metrics.Settled = true
			err := w.RunUntil(t.Add(time.Second))
			if err != nil {
				o.Err = err
			}
			break
		}
		if t >= end {
			break
		}
		t = t.Add(time.Second)
		if t > end {
			t = end
		}
	}
	o.Trace, o.World = mem.Events, w
	o.Metrics.SimTime = time.Duration(w.Now())
	o.Metrics.KernelSteps = w.Events()
	o.Metrics.TraceEvents = len(mem.Events)
	h, err := check.Decode(mem.Events)
	if err != nil {
		o.Err = err
		return o
	}
	o.Verdicts = check.Check(h)
	o.Probes = check.Probes(h)
	o.Metrics.Deliveries = len(h.Calls)
	o.Metrics.Publishes = len(h.Publishes)
	for _, c := range h.Commits {
		for _, ch := range c.Changes {
			if ch.Op == "insert" && ch.Table == check.TCharges {
				o.Metrics.Charges++
			}
			if ch.Op == "insert" && ch.Table == check.TEffects {
				o.Metrics.Effects++
			}
		}
	}
	for _, e := range h.Events {
		if e.What == "give-up" {
			o.Metrics.GaveUp++
		}
	}
	return o
}
