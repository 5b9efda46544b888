package judge

import (
	"encoding/json"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// System is the name of system A in traces.
const System = "arbiter"

// NetworkPolicy is the network's base policy.
type NetworkPolicy = network.Policy

// DefaultNetwork is the network of system A's runs: 1-20 ms of delay, no
// loss (faults add it).
func DefaultNetwork() network.Policy {
	return network.Policy{DelayMin: time.Millisecond, DelayMax: 20 * time.Millisecond}
}

// Options describe one run.
type Options struct {
	Design    Design
	Workload  Workload
	Schedule  sim.Schedule
	Seed      uint64      // the PCG seed, when Entropy is nil
	Entropy   sim.Entropy // nil: sim.NewPCG(Seed)
	Network   *network.Policy
	Until     time.Duration // the run's end in simulated time
	MaxEvents uint64        // 0: 20 million
	// Settle, when set, ends the run early once the world is quiet (see
	// World.Quiet) after its last fault: the run goes on for Settle more
	// and stops, instead of ticking idle timers until Until. The world is
	// checked once a simulated second.
	Settle   time.Duration
	Recorder sim.Recorder
	Filter   func(kind string) bool // nil: record every kind
}

// Header returns the trace header of a run (the tape of a rapid run is
// filled in after it ran: see Simulate).
func (o Options) Header(w *World) traces.Header {
	l := o.limits()
	l.MaxPending = 0 // the same default on every run: not written, so that headers and hashes stay as before
	lim, _ := json.Marshal(Limits{Limits: l, Settle: o.Settle})
	h := traces.Header{System: System, Design: o.Design.JSON(), Seed: o.Seed, Entropy: "pcg",
		Schedule: o.Schedule.JSON(), Limits: lim}
	if w != nil {
		h.Workload = w.WorkloadJSON()
	}
	switch e := o.Entropy.(type) {
	case *sim.Rapid:
		h.Entropy, h.Tape = "tape", e.Tape()
	case *sim.Tape:
		h.Entropy, h.Tape = "tape", e.Tape()
	}
	if o.Network != nil {
		h.Network, _ = json.Marshal(o.Network)
	}
	return h
}

// Limits are a run's limits as its trace header holds them: the kernel's,
// and the settle period of a run that ends when quiet (absent in traces of
// runs that went to their end time).
type Limits struct {
	sim.Limits
	Settle time.Duration `json:"settle,omitempty"`
}

// SettleOf is the settle period of a quiet run: long enough for every
// periodic activity to run again (a sweep, a claim's long poll and its
// timeout, a monitor's probe past its threshold), so that nothing left
// undone hides behind the early end.
func SettleOf(d Design) time.Duration {
	return max(d.ProbeThreshold+d.ProbeEvery, d.SweepEvery+d.ClaimHold+d.RequestTimeout, d.LeaderRetry+d.DispatchEvery)
}

func (o Options) limits() sim.Limits {
	max := o.MaxEvents
	if max == 0 {
		max = 20_000_000
	}
	return sim.Limits{MaxTime: clock.Time(o.Until), MaxEvents: max, MaxPending: sim.DefaultMaxPending}
}

// Build builds the world of a run without running it.
func (o Options) Build() (*World, error) {
	ent := o.Entropy
	if ent == nil {
		ent = sim.NewPCG(o.Seed)
	}
	pol := DefaultNetwork()
	if o.Network != nil {
		pol = *o.Network
	}
	return Build(o.Design, o.Workload, sim.Config{Entropy: ent, Network: pol, Schedule: o.Schedule, Limits: o.limits(), Recorder: o.Recorder, Filter: o.Filter})
}

// Simulate builds and runs one run. The world is closed when the run ends
// (its processes unwound); its nodes' state can still be read.
func Simulate(o Options) (*World, error) {
	w, err := o.Build()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	return w, o.run(w)
}

// run runs a built world to its end: Until, or, with Settle, the first
// quiet moment after the last fault plus Settle.
func (o Options) run(w *World) error {
	if o.Settle <= 0 {
		return w.Run()
	}
	end := o.limits().MaxTime
	if end == 0 {
		end = clock.Never
	}
	t := clock.Time(0)
	for _, a := range o.Schedule {
		t = max(t, a.At)
	}
	for {
		t = min(t, end)
		if err := w.RunUntil(t); err != nil {
			return err
		}
		if w.Idle() {
			// Periodic requests may be on the wire at whole seconds: step
			// through the next second for a moment with nothing in flight.
			for next := t.Add(time.Second); w.Now() < next; {
				if w.Quiet() {
					return w.RunUntil(min(w.Now().Add(o.Settle), end))
				}
				if more, err := w.Step(); err != nil || !more {
					return err
				}
			}
			t = w.Now()
			continue
		}
		if t >= end {
			return nil
		}
		t = t.Add(time.Second)
	}
}
