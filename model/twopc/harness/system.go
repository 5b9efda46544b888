package harness

import (
	"encoding/json"

	"pgregory.net/rapid"

	ct "github.com/fencesim/fencesim/checker/twopc"
	"github.com/fencesim/fencesim/model/contract"
	"github.com/fencesim/fencesim/model/design"
	"github.com/fencesim/fencesim/model/twopc"
	twopcscenario "github.com/fencesim/fencesim/model/twopc/scenario"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// System is system C behind the system contract: two-phase commit under
// coordinator crashes (model/twopc, this package, model/twopc/scenario,
// checker/twopc).
type System struct{}

var _ contract.System = System{}

// Name implements contract.System.
func (System) Name() string { return twopc.System }

// Title implements contract.System.
func (System) Title() string { return "C: two-phase commit under coordinator crashes" }

// Knobs implements contract.System.
func (System) Knobs() []contract.Knob { return contract.KnobsOf(twopc.Knobs) }

// Params implements contract.System.
func (System) Params() []string { return twopc.ParamNames() }

// ParamInfos implements contract.System.
func (System) ParamInfos() []design.Info { return twopc.ParamInfos() }

// Probes implements contract.System: system C has none.
func (System) Probes() []string { return nil }

// Supports implements contract.System: one drawn world, a live world that
// can play the source's C.1 and C.4 tables; its crash enumeration is a
// test, not the exhaustive mode.
func (System) Supports() contract.Support {
	return contract.Support{
		NoExhaustive: "twopc has its own crash enumeration: go test ./model/twopc/harness -run Enumerate",
		Live:         true,
		LiveTable:    true,
		Promises:     []string{"blocked_max", "still_prepared"},
		Budget:       1000,
		Levers:       Levers,
	}
}

// designs are the system's designs behind the contract.
var designs = contract.Designs[twopc.Design, twopc.Knob]{System: twopc.System, Default: twopc.Default, Parse: twopc.ParseDesign,
	With: twopc.Design.With, Set: (*twopc.Design).Assign, Validate: twopc.Design.Validate, JSON: twopc.Design.JSON,
	Knobs: func(d twopc.Design) []twopc.Knob { return d.Knobs }, Pinned: func(d *twopc.Design) *[]string { return &d.Pinned },
}

// Default implements contract.System.
func (System) Default() contract.Design { return designs.Wrap(twopc.Default()) }

// NewDesign implements contract.System. The parameters set pin themselves:
// the world drawn per run keeps them (a design file pins what its "pinned"
// says).
func (System) NewDesign(knobs, sets []string, file []byte) (contract.Design, error) {
	return designs.New(knobs, sets, file)
}

// intensity is the fault intensity's bounds: moderate is the model's three
// timed faults and three placed on the world's reference run; heavy twice
// as many; none draws nothing.
func intensity(f contract.Faults) sim.Intensity {
	return contract.ByIntensity(f, None, Moderate, Heavy)
}

// Draw implements contract.System: the world drawn from the seed (the
// parameters the user set kept), then the faults of the intensity placed
// on its reference run (DrawSeed), or the ones given.
func (System) Draw(dd contract.Design, seed uint64, f contract.Faults, o contract.Options) (*contract.World, error) {
	d := dd.Value().(twopc.Design)
	var x Seeded
	if err := sim.CheckSteer(seed, twopc.System, Levers); err != nil {
		return nil, err
	}
	var err error
	if o.Given {
		x.Design, x.Schedule = DrawWorld(sim.Steer(sim.NewPCG(seed).Stream("world"), seed, Levers), d), o.Schedule
	} else {
		x, err = DefaultHarness().DrawSeed(d, seed, intensity(f))
	}
	w := &contract.World{Seed: seed, Schedule: x.Schedule, Profile: x.Profile.String(), Nodes: twopc.NamesOf(x.Design).All(), V: x}
	if o.Given {
		w.Profile = "given"
	}
	return w, err
}

// Play implements contract.System: the default harness's run, unchecked;
// it records what the checker reads (CheckerFilter), everything under
// Options.Full or Hash, every event hashed under Digest.
func (System) Play(w *contract.World, o contract.Options) *contract.Outcome {
	x := w.V.(Seeded)
	h := DefaultHarness()
	var out *Outcome
	switch {
	case o.Full || o.Hash:
		out = h.Simulate(x.Design, x.Schedule, sim.NewPCG(w.Seed))
	case o.Digesting():
		out = h.SimulateDigest(o.Digest, x.Design, x.Schedule, sim.NewPCG(w.Seed))
	default:
		out = h.SimulateChecked(x.Design, x.Schedule, sim.NewPCG(w.Seed))
	}
	c := outcome(w, h, x.Design, w.Seed, out)
	c.Digested(out.Digest)
	return c
}

func outcome(w *contract.World, h Harness, d twopc.Design, seed uint64, out *Outcome) *contract.Outcome {
	return &contract.Outcome{World: w, Header: h.Header(d, seed, out.Schedule), Events: out.Events, Schedule: out.Schedule, Err: out.Err, V: out}
}

// Header is the trace header of a run of the harness: the drawn design,
// the seed, the schedule as played, the limits and the network. (Its
// limits are written without MaxPending, as traces have always had them:
// a replay plays under the harness's Limits.)
func (h Harness) Header(d twopc.Design, seed uint64, s sim.Schedule) traces.Header {
	l := h.Limits(d)
	lim, _ := json.Marshal(sim.Limits{MaxTime: l.MaxTime, MaxEvents: l.MaxEvents})
	pol, _ := json.Marshal(h.Network)
	return traces.Header{Format: traces.Format, System: twopc.System, Design: d.JSON(), Seed: seed, Entropy: "pcg",
		Schedule: s.JSON(), Limits: lim, Network: pol}
}

// Judge implements contract.System: PC1-PC5 and the metrics
// (checker/twopc), once.
func (System) Judge(o *contract.Outcome) *contract.Result {
	r := &contract.Result{System: twopc.System, Seed: o.Header.Seed, Schedule: o.Schedule, Header: o.Header, Events: o.Events}
	if d, err := twopc.ParseDesign(o.Header.Design); err == nil {
		r.Nodes = twopc.NamesOf(d).All()
	}
	if o.Err != nil {
		r.Verdicts = append(r.Verdicts, contract.RunFailed(o.Err))
	}
	if len(o.Events) == 0 {
		return r
	}
	sw := o.Stopwatch()
	rep, err := ct.Check(o.Events)
	sw.Lap("PC1-PC5, metrics")
	r.Timings = sw.Timings()
	if err != nil {
		if o.Err == nil {
			r.Verdicts = append(r.Verdicts, contract.RunFailed(err))
		}
		return r
	}
	r.Verdicts = append(rep.Verdicts, r.Verdicts...)
	m := rep.Metrics
	r.Metrics = []contract.Metric{
		{Name: "blocked_max", Unit: "s", Values: contract.Durs(m.BlockedMax)},
		{Name: "blocked_total", Unit: "s", Values: contract.Durs(m.BlockedTotal)},
		{Name: "rows_locked", Values: contract.Count(m.RowsLocked)},
		{Name: "lock_timeouts", Values: contract.Count(m.LockTimeouts)},
		{Name: "vacuum_horizon_held", Unit: "s", Values: contract.Durs(m.HorizonHeld)},
		{Name: "agents_blocked", Values: contract.Count(m.Blocked)},
		{Name: "still_prepared", Values: contract.Count(m.StillPrep)},
	}
	return r
}

// Replay implements contract.System.
func (s System) Replay(hd traces.Header) (*contract.Result, error) {
	if err := contract.SeededHeader(hd, twopc.System); err != nil {
		return nil, err
	}
	d, err := twopc.ParseDesign(hd.Design)
	if err != nil {
		return nil, err
	}
	sched, err := sim.ParseSchedule(hd.Schedule, twopc.NamesOf(d).All())
	if err != nil {
		return nil, err
	}
	h := DefaultHarness()
	r := s.Judge(outcome(nil, h, d, hd.Seed, h.Simulate(d, sched, sim.NewPCG(hd.Seed))))
	r.Hash = traces.HashOf(r.Header, r.Events)
	return r, nil
}

// Scenarios implements contract.System: C.1-C.8 with the source's numbers.
func (System) Scenarios() (string, bool, error) {
	ts, err := twopcscenario.Scenarios()
	if err != nil {
		return "", false, err
	}
	return twopcscenario.Render(ts), true, nil
}

// KnobScenario implements contract.System: the source's C tables are
// reproductions, not pass/fail checks, so knobs are judged by exploration
// only.
func (System) KnobScenario(string) (bool, string, bool, error) { return false, "", false, nil }

// Property implements contract.System: the harness's Property, every
// property watched.
func (System) Property(dd contract.Design, f contract.Faults, failed func(traces.Header)) func(*rapid.T) {
	h := DefaultHarness()
	var last *Outcome
	prop := h.Property(dd.Value().(twopc.Design), intensity(f), nil, &last)
	return func(t *rapid.T) {
		last = nil
		defer func() {
			if last != nil && failed != nil {
				failed(h.Header(last.Design, last.Seed, last.Schedule))
			}
		}()
		prop(t)
	}
}
