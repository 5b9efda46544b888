package outbox

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// Metrics are measured on every run, from its trace.
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

// Outcome is one simulated run: its inputs, its trace and its metrics. It
// is judged by checker/outbox (see model/outbox/harness); this package does
// not import a checker.
type Outcome struct {
	Seed     uint64
	Design   Design
	Workload Workload // the world's workload (its Plan is Events)
	Schedule sim.Schedule
	Profile  sim.Profile
	Events   []Event
	Metrics  Metrics
	Trace    []traces.Event
	World    *World // the world at the end, closed: its nodes' state can be read, it cannot run again
	Err      error  // the run itself failed (budget, an invalid schedule)
}

// Summary renders the run's inputs in a few lines.
func (o *Outcome) Summary() string {
	s := fmt.Sprintf("design %s\nseed %d, profile: %s\nschedule:\n%s\nevents:\n", o.Design.JSON(), o.Seed, o.Profile, o.Schedule)
	for _, e := range o.Events {
		b, _ := json.Marshal(e)
		s += "  " + string(b) + "\n"
	}
	if o.Err != nil {
		s += "run error: " + o.Err.Error() + "\n"
	}
	return s
}

// Draw draws a run's events and fault schedule from r.
func Draw(r sim.Rand, d Design, wl Workload) ([]Event, sim.Schedule, sim.Profile) {
	events := wl.Draw(r)
	s, p := Faults(r, FaultSpec(d))
	return events, s, p
}

// Simulate runs a world with given events and schedule: past the faults,
// then until it settles (or MaxTime). It records every event, measures the
// run, and closes the world.
func Simulate(d Design, wl Workload, events []Event, schedule sim.Schedule, ent sim.Entropy) *Outcome {
	return simulate(d, wl, events, schedule, ent, 0)
}

// SimulateUntil runs a world as Simulate does but stops at time stop: a
// failing run replayed only up to its violation (what it records is what
// Simulate records up to then).
func SimulateUntil(d Design, wl Workload, events []Event, schedule sim.Schedule, ent sim.Entropy, stop clock.Time) *Outcome {
	return simulate(d, wl, events, schedule, ent, stop)
}

func simulate(d Design, wl Workload, events []Event, schedule sim.Schedule, ent sim.Entropy, stop clock.Time) *Outcome {
	o := &Outcome{Design: d, Workload: wl, Schedule: schedule, Events: events}
	mem := &traces.Memory{}
	g := FaultSpec(d)
	wlp := wl
	wlp.Plan = events
	end := MaxTime(d, wlp, g)
	w, err := BuildWith(d, wl, events, sim.Config{
		Entropy: ent, Network: Network(), Schedule: schedule, Recorder: mem,
		Limits: sim.Limits{MaxTime: end, MaxEvents: 2_000_000, MaxPending: sim.DefaultMaxPending},
	})
	if err != nil {
		o.Err = err
		return o
	}
	defer w.Close()
	heal := HealAt(g)
	for _, a := range schedule {
		if a.At > heal {
			heal = a.At
		}
	}
	// Run past the faults, then in steps until the world settles.
	t := heal
	for stop == 0 {
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
	if stop > 0 {
		if err := w.RunUntil(min(stop, end)); err != nil {
			o.Err = err
		}
	}
	o.Trace, o.World = mem.Events, w
	o.Metrics.SimTime = time.Duration(w.Now())
	o.Metrics.KernelSteps = w.Events()
	o.Metrics.TraceEvents = len(mem.Events)
	if err := o.Metrics.count(mem.Events); err != nil && o.Err == nil {
		o.Err = err
	}
	return o
}

// count measures the trace: deliveries, publishes and give-ups from the
// notes, charges and effects from the databases' commit records.
func (m *Metrics) count(events []traces.Event) error {
	for i := range events {
		e := &events[i]
		switch e.Kind {
		case hist.KindCall:
			m.Deliveries++
		case hist.KindBPublish:
			m.Publishes++
		case hist.KindBSender:
			var s hist.BSender
			if err := json.Unmarshal(e.DataJSON(), &s); err != nil {
				return fmt.Errorf("trace #%d (%s): %w", e.Seq, e.Kind, err)
			}
			if s.What == hist.SenderGiveUp {
				m.GaveUp++
			}
		case hist.KindCommit:
			var c struct {
				Changes []struct{ Table, Op string } `json:"changes"`
			}
			if err := json.Unmarshal(e.DataJSON(), &c); err != nil {
				return fmt.Errorf("trace #%d (%s): %w", e.Seq, e.Kind, err)
			}
			for _, ch := range c.Changes {
				if ch.Op == db.OpInsert && ch.Table == TCharges {
					m.Charges++
				}
				if ch.Op == db.OpInsert && ch.Table == TEffects {
					m.Effects++
				}
			}
		}
	}
	return nil
}
