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
	Recorder  sim.Recorder
	Filter    func(kind string) bool // nil: record every kind
}

// Header returns the trace header of a run (the tape of a rapid run is
// filled in after it ran: see Simulate).
func (o Options) Header(w *World) traces.Header {
	l := o.limits()
	l.MaxPending = 0 // the same default on every run: not written, so that headers and hashes stay as before
	lim, _ := json.Marshal(l)
	h := traces.Header{System: System, Design: o.Design.JSON(), Seed: o.Seed, Entropy: "pcg",
		Schedule: o.Schedule.JSON(), Limits: lim}
	if w != nil {
		h.Workload = w.WorkloadJSON()
	}
	switch e := o.Entropy.(type) {
	case *sim.Rapid:
		h.Entropy, h.Tape = "tape", e.Tape()
	case *sim.Tape:
		h.Entropy = "tape"
	}
	if o.Network != nil {
		h.Network, _ = json.Marshal(o.Network)
	}
	return h
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
	return w, w.Run()
}
