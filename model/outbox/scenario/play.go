package scenario

import (
	"encoding/json"
	"fmt"
	"time"

	check "github.com/fencesim/fencesim/checker/outbox"

	"github.com/fencesim/fencesim/model/outbox"

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

// Played is one simulated run: its inputs, its trace and its metrics. It
// is judged by checker/outbox (see model/outbox/harness); this package does
// not import a checker.
type Played struct {
	Seed     uint64
	Design   outbox.Design
	Workload outbox.Workload // the world's workload (its Plan is Events)
	Schedule sim.Schedule
	Profile  sim.Profile
	Events   []outbox.Event
	Metrics  Metrics
	Trace    []traces.Event
	End      clock.Time    // the time of the run's last event, recorded or not (a filtered Trace may end earlier)
	World    *outbox.World // the world at the end, closed: its nodes' state can be read, it cannot run again
	Err      error         // the run itself failed (budget, an invalid schedule)
	// Digest is, for PlayDigest, the digest every event was hashed by.
	Digest *traces.Digest
}

// Summary renders the run's inputs in a few lines.
func (o *Played) Summary() string {
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
func Draw(r sim.Rand, d outbox.Design, wl outbox.Workload) ([]outbox.Event, sim.Schedule, sim.Profile) {
	events := wl.Draw(r)
	s, p := outbox.Faults(r, outbox.FaultSpec(d))
	return events, s, p
}

// Play runs a world with given events and schedule: past the faults,
// then until it settles (or outbox.MaxTime). It records every event, measures the
// run, and closes the world.
func Play(d outbox.Design, wl outbox.Workload, events []outbox.Event, schedule sim.Schedule, ent sim.Entropy) *Played {
	return play(d, wl, events, schedule, ent, 0, nil, 0)
}

// PlayChecked is Play recording only what the checker and the metrics read
// (CheckerFilter): the same run, judged the same (Played.End is the full
// record's end), its other events numbered but never made. It is what
// explore plays; a failure's report replays the run in full.
func PlayChecked(d outbox.Design, wl outbox.Workload, events []outbox.Event, schedule sim.Schedule, ent sim.Entropy) *Played {
	return play(d, wl, events, schedule, ent, 0, CheckerFilter, 0)
}

// PlayDigest is PlayChecked with every event hashed as it is recorded
// (Played.Digest, a traces.Digest of the hash version): the full record's
// hash, the checked record kept.
func PlayDigest(version int, d outbox.Design, wl outbox.Workload, events []outbox.Event, schedule sim.Schedule, ent sim.Entropy) *Played {
	return play(d, wl, events, schedule, ent, 0, CheckerFilter, version)
}

// CheckerFilter records the kinds checker/outbox reads (Metrics.count's
// are among them).
func CheckerFilter(kind string) bool { return check.Reads(kind) }

// PlayUntil runs a world as Play does but stops at time stop: a
// failing run replayed only up to its violation (what it records is what
// Play records up to then).
func PlayUntil(d outbox.Design, wl outbox.Workload, events []outbox.Event, schedule sim.Schedule, ent sim.Entropy, stop clock.Time) *Played {
	return play(d, wl, events, schedule, ent, stop, nil, 0)
}

func play(d outbox.Design, wl outbox.Workload, events []outbox.Event, schedule sim.Schedule, ent sim.Entropy, stop clock.Time, filter func(string) bool, digest int) *Played {
	o := &Played{Design: d, Workload: wl, Schedule: schedule, Events: events}
	mem := &traces.Memory{}
	var rec sim.Recorder = mem
	if digest != 0 {
		o.Digest = traces.NewDigest(digest, filter, mem)
		rec, filter = o.Digest, nil
	}
	g := outbox.FaultSpec(d)
	wlp := wl
	wlp.Plan = events
	end := outbox.MaxTime(d, wlp, g)
	w, err := outbox.BuildWith(d, wl, events, sim.Config{
		Entropy: ent, Network: outbox.Network(), Schedule: schedule, Recorder: rec, Filter: filter,
		Limits: sim.Limits{MaxTime: end, MaxEvents: 2_000_000, MaxPending: sim.DefaultMaxPending},
	})
	if err != nil {
		o.Err = err
		return o
	}
	defer w.Close()
	heal := outbox.HealAt(g)
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
	n, last := w.Recorded()
	o.Metrics.TraceEvents, o.End = int(n), last
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
			// The sender's own note (a run in memory); decoded, from a file.
			s, ok := e.Value.(hist.BSender)
			if !ok {
				if err := json.Unmarshal(e.DataJSON(), &s); err != nil {
					return fmt.Errorf("trace #%d (%s): %w", e.Seq, e.Kind, err)
				}
			}
			if s.What == hist.SenderGiveUp {
				m.GaveUp++
			}
		case hist.KindCommit:
			// The database's own record (shared: read only); decoded, from
			// a file.
			c, ok := e.Value.(hist.CommitRecord)
			if !ok {
				if err := json.Unmarshal(e.DataJSON(), &c); err != nil {
					return fmt.Errorf("trace #%d (%s): %w", e.Seq, e.Kind, err)
				}
			}
			for _, ch := range c.Changes {
				if ch.Op == db.OpInsert && ch.Table == outbox.TCharges {
					m.Charges++
				}
				if ch.Op == db.OpInsert && ch.Table == outbox.TEffects {
					m.Effects++
				}
			}
		}
	}
	return nil
}

// Outcome is one simulated run with its judgement.
type Outcome struct {
	*Played
	History  *check.History // nil when the run failed or its trace did not decode
	Verdicts []check.Verdict
	Probes   map[string]bool
}

// Judge decodes a run's trace and runs every property and probe on it.
func Judge(o *Played) *Outcome {
	j := &Outcome{Played: o}
	if o.Err != nil {
		return j
	}
	h, err := check.Decode(o.Trace)
	if err == nil {
		h.End = max(h.End, int64(o.End))
	}
	if err != nil {
		o.Err = err
		return j
	}
	j.History, j.Verdicts, j.Probes = h, check.Check(h), check.Probes(h)
	return j
}

// Simulate runs a world with given events and schedule (Play)
// and judges it.
func Simulate(d outbox.Design, wl outbox.Workload, events []outbox.Event, schedule sim.Schedule, ent sim.Entropy) *Outcome {
	return Judge(Play(d, wl, events, schedule, ent))
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
	s := o.Played.Summary()
	for _, v := range o.Verdicts {
		s += v.String() + "\n"
	}
	return s
}
