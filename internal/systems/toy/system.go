package toy

import (
	"encoding/json"

	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/model/contract"
	"github.com/fencesim/fencesim/model/design"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// System is the toy behind the system contract.
type System struct{}

var _ contract.System = System{}

// Name implements contract.System.
func (System) Name() string { return Name }

// Title implements contract.System.
func (System) Title() string { return "toy: a lease by ping and pong (a demonstration)" }

// Knobs implements contract.System.
func (System) Knobs() []contract.Knob { return contract.KnobsOf(Knobs) }

// Params implements contract.System.
func (System) Params() []string { return spec.ParamNames() }

// ParamInfos implements contract.System.
func (System) ParamInfos() []design.Info { return spec.Infos() }

// Probes implements contract.System: none.
func (System) Probes() []string { return nil }

// Supports implements contract.System: seeded runs only, hidden.
func (System) Supports() contract.Support {
	return contract.Support{Promises: []string{"acts"}, Budget: 200, Hidden: true}
}

// designs are the toy's designs behind the contract.
var designs = contract.Designs[Design, Knob]{System: Name, Default: Default, Parse: spec.Parse,
	With: spec.With, Set: spec.Assign, Validate: spec.Validate, JSON: Design.JSON,
	Knobs: func(d Design) []Knob { return d.Knobs }, Pinned: func(d *Design) *[]string { return &d.Pinned },
}

// Default implements contract.System.
func (System) Default() contract.Design { return designs.Wrap(Default()) }

// NewDesign implements contract.System.
func (System) NewDesign(knobs, sets []string, file []byte) (contract.Design, error) {
	return designs.New(knobs, sets, file)
}

// maxFaults is each intensity's bound on the drawn faults.
func maxFaults(f contract.Faults) int {
	switch f {
	case contract.None:
		return 0
	case contract.Heavy:
		return 12
	}
	return 6
}

type drawn struct {
	d Design
	s sim.Schedule
}

// Draw implements contract.System: the design from the seed's "world"
// stream, the faults from its "faults" stream (or the ones given).
func (System) Draw(dd contract.Design, seed uint64, f contract.Faults, o contract.Options) (*contract.World, error) {
	if err := sim.CheckSteer(seed, Name, nil); err != nil {
		return nil, err
	}
	ent := sim.NewPCG(seed)
	d := DrawWorld(ent.Stream("world"), dd.Value().(Design))
	s, prof := faults(ent.Stream("faults"), maxFaults(f))
	w := &contract.World{Seed: seed, Schedule: s, Profile: prof.String(), Nodes: Nodes}
	if o.Given {
		w.Schedule, w.Profile = o.Schedule, "given"
	}
	w.V = drawn{d, w.Schedule}
	return w, nil
}

// Play implements contract.System.
func (System) Play(w *contract.World, _ contract.Options) *contract.Outcome {
	x := w.V.(drawn)
	evs, err := simulate(x.d, x.s, sim.NewPCG(w.Seed))
	return &contract.Outcome{World: w, Header: header(x.d, w.Seed, x.s), Events: evs, Schedule: x.s, Err: err}
}

func header(d Design, seed uint64, s sim.Schedule) traces.Header {
	lim, _ := json.Marshal(limits(d))
	pol, _ := json.Marshal(policy())
	return traces.Header{Format: traces.Format, System: Name, Design: d.JSON(), Seed: seed, Entropy: "pcg", Schedule: s.JSON(), Limits: lim, Network: pol}
}

// healOf is when a schedule's heal-all ends the faults.
func healOf(s sim.Schedule) int64 {
	h := int64(healAt)
	for _, a := range s {
		if a.Kind == sim.HealAll {
			h = int64(a.At)
		}
	}
	return h
}

// Judge implements contract.System: TL1 and TL2, the acts counted.
func (System) Judge(o *contract.Outcome) *contract.Result {
	r := &contract.Result{System: Name, Seed: o.Header.Seed, Schedule: o.Schedule, Header: o.Header, Events: o.Events, Nodes: Nodes}
	if o.Err != nil {
		r.Verdicts = []checker.Verdict{contract.RunFailed(o.Err)}
		return r
	}
	d, err := spec.Parse(o.Header.Design)
	if err != nil {
		r.Verdicts = []checker.Verdict{contract.RunFailed(err)}
		return r
	}
	sw := o.Stopwatch()
	vs, acts, err := Check(o.Events, healOf(o.Schedule), d.PingEvery)
	sw.Lap("TL1-TL2")
	r.Timings = sw.Timings()
	if err != nil {
		r.Verdicts = []checker.Verdict{contract.RunFailed(err)}
		return r
	}
	r.Verdicts = vs
	r.Metrics = []contract.Metric{{Name: "acts", Values: contract.Count(acts)}}
	return r
}

// Replay implements contract.System.
func (s System) Replay(h traces.Header) (*contract.Result, error) {
	if err := contract.SeededHeader(h, Name); err != nil {
		return nil, err
	}
	d, err := spec.Parse(h.Design)
	if err != nil {
		return nil, err
	}
	sched, err := sim.ParseSchedule(h.Schedule, Nodes)
	if err != nil {
		return nil, err
	}
	evs, err := simulate(d, sched, sim.NewPCG(h.Seed))
	r := s.Judge(&contract.Outcome{Header: header(d, h.Seed, sched), Events: evs, Schedule: sched, Err: err})
	r.Hash = traces.HashOf(r.Header, r.Events)
	return r, nil
}

// Property implements contract.System: the design and the faults drawn
// from rapid (shrinking toward the default design and fewer faults), the
// run's streams from a drawn seed.
func (s System) Property(dd contract.Design, f contract.Faults, failed func(traces.Header)) func(*rapid.T) {
	return func(t *rapid.T) {
		r := sim.NewRapid(t)
		d := DrawWorld(r, dd.Value().(Design))
		sched, _ := faults(r, maxFaults(f))
		seed := r.Uint64n("seed", 1<<20)
		evs, err := simulate(d, sched, sim.NewPCG(seed))
		res := s.Judge(&contract.Outcome{Header: header(d, seed, sched), Events: evs, Schedule: sched, Err: err})
		if bad := res.Failed(); len(bad) > 0 {
			if failed != nil {
				failed(res.Header)
			}
			t.Fatalf("%s\nschedule:\n%s", bad[0], sched)
		}
	}
}

// Scenarios implements contract.System: the toy has none.
func (System) Scenarios() (string, bool, error) {
	return "(the toy system has no named scenarios)\n", true, nil
}

// KnobScenario implements contract.System: not supported.
func (System) KnobScenario(string) (bool, string, bool, error) { return false, "", false, nil }
