package harness

import (
	"encoding/json"
	"fmt"
	"strings"

	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/checker"
	check "github.com/fencesim/fencesim/checker/outbox"
	"github.com/fencesim/fencesim/model/contract"
	"github.com/fencesim/fencesim/model/design"
	"github.com/fencesim/fencesim/model/outbox"
	"github.com/fencesim/fencesim/model/outbox/scenario"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// System is system B behind the system contract: the idempotent receiver
// with a transactional outbox (model/outbox, this package, checker/outbox).
type System struct{}

var _ contract.System = System{}

// Name is system B's name in traces.
const Name = "outbox"

// Name implements contract.System.
func (System) Name() string { return Name }

// Title implements contract.System.
func (System) Title() string { return "B: idempotent receiver + transactional outbox" }

// Knobs implements contract.System.
func (System) Knobs() []contract.Knob { return contract.KnobsOf(outbox.Knobs) }

// Params implements contract.System.
func (System) Params() []string { return outbox.ParamNames() }

// ParamInfos implements contract.System.
func (System) ParamInfos() []design.Info { return outbox.ParamInfos() }

// Probes implements contract.System.
func (System) Probes() []string { return check.ProbeNames }

// Supports implements contract.System: one drawn world, no exhaustive
// mode; a live world (internal/live).
func (System) Supports() contract.Support {
	return contract.Support{
		Live:     true,
		Promises: []string{"deliveries (retry load)", "gave_up"},
		Budget:   300,
		Levers:   Levers,
	}
}

// designs are the system's designs behind the contract.
var designs = contract.Designs[outbox.Design, outbox.Knob]{System: Name, Default: outbox.Default, Parse: outbox.ParseDesign,
	With: outbox.Design.With, Set: (*outbox.Design).Assign, Validate: outbox.Design.Validate, JSON: outbox.Design.JSON,
	Knobs: func(d outbox.Design) []outbox.Knob { return d.Knobs }, Pinned: func(d *outbox.Design) *[]string { return &d.Pinned },
}

// Default implements contract.System.
func (System) Default() contract.Design { return designs.Wrap(outbox.Default()) }

// NewDesign implements contract.System. The parameters set pin themselves:
// the world drawn per run keeps them (a design file pins what its "pinned"
// says).
func (System) NewDesign(knobs, sets []string, file []byte) (contract.Design, error) {
	return designs.New(knobs, sets, file)
}

// intensity is the fault intensity's bounds: moderate is the model's
// eight timed faults and three placed on the world's reference run; heavy
// twice as many; none draws nothing (the schedule is only the heal-all).
func intensity(f contract.Faults) sim.Intensity {
	return contract.ByIntensity(f, None, Moderate, Heavy)
}

// Draw implements contract.System: the world drawn from the seed (the
// parameters the user set kept), then the faults of the intensity placed
// on its reference run (DrawSeed), or the ones given.
func (System) Draw(dd contract.Design, seed uint64, f contract.Faults, o contract.Options) (*contract.World, error) {
	d := dd.Value().(outbox.Design)
	var x Seeded
	if err := sim.CheckSteer(seed, Name, Levers); err != nil {
		return nil, err
	}
	var err error
	if o.Given {
		x.Design, x.Workload = DrawWorld(sim.Steer(sim.NewPCG(seed).Stream("world"), seed, Levers), d)
		x.Schedule = o.Schedule
	} else {
		x, err = DrawSeed(d, seed, intensity(f))
	}
	w := &contract.World{Seed: seed, Schedule: x.Schedule, Profile: x.Profile.String(), Nodes: outbox.NamesOf(x.Design).All(), V: x}
	if o.Given {
		w.Profile = "given"
	}
	return w, err
}

// Play implements contract.System: Play, the trace header written from
// the drawn world; it records what the checker reads (scenario.PlayChecked),
// everything under Options.Full or Hash, every event hashed under Digest.
func (System) Play(w *contract.World, o contract.Options) *contract.Outcome {
	x := w.V.(Seeded)
	var out *Played
	switch {
	case o.Full || o.Hash:
		out = Play(x.Design, x.Workload, x.Workload.Plan, x.Schedule, sim.NewPCG(w.Seed))
	case o.Digesting():
		out = scenario.PlayDigest(o.Digest, x.Design, x.Workload, x.Workload.Plan, x.Schedule, sim.NewPCG(w.Seed))
	default:
		out = scenario.PlayChecked(x.Design, x.Workload, x.Workload.Plan, x.Schedule, sim.NewPCG(w.Seed))
	}
	out.Seed = w.Seed
	c := outcome(w, x.Workload, x.Workload.Plan, out)
	c.Digested(out.Digest)
	return c
}

// outcome puts a model's run behind contract.Outcome with its trace
// header.
func outcome(w *contract.World, wl outbox.Workload, events []outbox.Event, out *Played) *contract.Outcome {
	return &contract.Outcome{World: w, Header: Header(out.Design, wl, events, out.Seed, out.Schedule), Events: out.Trace, Schedule: out.Schedule, Err: out.Err, V: out}
}

// Header is the trace header of a run of system B: its drawn design and
// workload (the events planned), its seed and schedule, the limits it ran
// under and the network.
func Header(d outbox.Design, wl outbox.Workload, events []outbox.Event, seed uint64, s sim.Schedule) traces.Header {
	wlp := wl
	wlp.Plan = events
	wlJSON, _ := json.Marshal(wlp)
	lim, _ := json.Marshal(sim.Limits{MaxTime: outbox.MaxTime(d, wlp, outbox.FaultSpec(d)), MaxEvents: 2_000_000})
	pol, _ := json.Marshal(outbox.Network())
	return traces.Header{Format: traces.Format, System: Name, Design: d.JSON(), Seed: seed, Entropy: "pcg",
		Schedule: s.JSON(), Workload: wlJSON, Limits: lim, Network: pol}
}

// Judge implements contract.System: PB1-PB6 and the probes
// (checker/outbox), and the run's own counts as metrics.
func (System) Judge(o *contract.Outcome) *contract.Result {
	r := &contract.Result{System: Name, Seed: o.Header.Seed, Schedule: o.Schedule, Header: o.Header, Events: o.Events}
	if d, err := outbox.ParseDesign(o.Header.Design); err == nil {
		r.Nodes = outbox.NamesOf(d).All()
	}
	if o.Err != nil {
		r.Verdicts = []checker.Verdict{contract.RunFailed(o.Err)}
		return r
	}
	sw := o.Stopwatch()
	h, err := check.Decode(o.Events)
	if out, ok := o.V.(*Played); ok && err == nil {
		h.End = max(h.End, int64(out.End)) // a filtered record's last event may be earlier
	}
	sw.Lap("decode")
	if err != nil {
		r.Verdicts = []checker.Verdict{contract.RunFailed(err)}
		return r
	}
	vs := check.Check(h)
	sw.Lap("PB1-PB6")
	probes := check.Probes(h)
	sw.Lap("probes")
	r.Timings = sw.Timings()
	names := map[string]string{}
	for _, p := range check.Properties {
		names[p.ID] = p.ID + " " + strings.Join(strings.Fields(strings.ReplaceAll(p.Name, ",", "")), "-")
	}
	for _, v := range vs {
		name := names[v.Property]
		if name == "" {
			name = v.Property
		}
		r.Verdicts = append(r.Verdicts, checker.Verdict{Property: name, OK: v.OK, Message: strings.Join(v.Why, "; "), Events: v.Events})
	}
	r.Probes = probes
	var m Metrics
	if out, ok := o.V.(*Played); ok {
		m = out.Metrics
	}
	r.Metrics = []contract.Metric{
		{Name: "deliveries (retry load)", Values: contract.Count(m.Deliveries)},
		{Name: "publishes", Values: contract.Count(m.Publishes)},
		{Name: "effects", Values: contract.Count(m.Effects)},
		{Name: "gave_up", Values: contract.Count(m.GaveUp)},
		{Name: "settle_time", Unit: "s", Values: contract.Durs(m.SimTime)},
	}
	return r
}

// Replay implements contract.System.
func (s System) Replay(h traces.Header) (*contract.Result, error) {
	if err := contract.SeededHeader(h, Name); err != nil {
		return nil, err
	}
	d, err := outbox.ParseDesign(h.Design)
	if err != nil {
		return nil, err
	}
	var wl outbox.Workload
	dec := json.NewDecoder(strings.NewReader(string(h.Workload)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&wl); err != nil {
		return nil, fmt.Errorf("the trace header's workload: %w", err)
	}
	events := wl.Plan
	wl.Plan = nil
	sched, err := sim.ParseSchedule(h.Schedule, outbox.NamesOf(d).All())
	if err != nil {
		return nil, err
	}
	out := Play(d, wl, events, sched, sim.NewPCG(h.Seed))
	out.Seed = h.Seed
	r := s.Judge(outcome(nil, wl, events, out))
	r.Hash = traces.HashOf(r.Header, r.Events)
	return r, nil
}

// Scenarios implements contract.System: B.1-B.7, each played on its own
// plan and faults (model/outbox/scenario).
func (System) Scenarios() (string, bool, error) {
	rs := map[string]scenario.Result{}
	ok := true
	for _, s := range scenario.All() {
		_, r, err := s.Run()
		if err != nil {
			return "", false, err
		}
		rs[s.ID] = r
		ok = ok && r.OK()
	}
	return scenario.Table(scenario.All(), rs), ok, nil
}

// KnobScenario implements contract.System: the scenarios of the knob's
// mechanism (the registry's Scenarios) played with the knob on.
func (System) KnobScenario(knob string) (bool, string, bool, error) {
	info, ok := outbox.Info(outbox.Knob(knob))
	if !ok {
		return false, "", false, fmt.Errorf("unknown knob %q for the outbox", knob)
	}
	for _, id := range info.Scenarios {
		s, ok := scenario.ByID(id)
		if !ok {
			continue
		}
		_, r, err := s.Run(info.Knob)
		if err != nil {
			return false, "", true, err
		}
		if !r.OK() {
			return true, contract.CaughtBy(id, append(append([]string(nil), r.Broken...), r.Failed...)), true, nil
		}
	}
	return false, "", len(info.Scenarios) > 0, nil
}

// Property implements contract.System: Property, every property watched.
func (s System) Property(dd contract.Design, f contract.Faults, failed func(traces.Header)) func(*rapid.T) {
	var last *Outcome
	prop := Property(dd.Value().(outbox.Design), intensity(f), nil, &last)
	return func(t *rapid.T) {
		last = nil
		defer func() {
			if last != nil && failed != nil {
				o := last.Played
				failed(Header(o.Design, o.Workload, o.Events, o.Seed, o.Schedule))
			}
		}()
		prop(t)
	}
}
