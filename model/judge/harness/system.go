package harness

import (
	"fmt"
	"io"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/checker"
	jc "github.com/fencesim/fencesim/checker/judge"
	"github.com/fencesim/fencesim/model/contract"
	"github.com/fencesim/fencesim/model/design"
	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/model/judge/scenario"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// System is system A behind the system contract: the judge arbiter with
// leases and fencing tokens (model/judge, this package, checker/judge).
type System struct{}

var _ contract.System = System{}

// Name implements contract.System.
func (System) Name() string { return judge.System }

// Title implements contract.System.
func (System) Title() string { return "A: judge arbiter (leases, fencing tokens)" }

// Knobs implements contract.System.
func (System) Knobs() []contract.Knob { return contract.KnobsOf(judge.Knobs) }

// Params implements contract.System.
func (System) Params() []string { return judge.ParamNames() }

// ParamInfos implements contract.System.
func (System) ParamInfos() []design.Info { return judge.ParamInfos() }

// Probes implements contract.System: system A has none.
func (System) Probes() []string { return nil }

// Supports implements contract.System: three world modes, the bounded
// exhaustive mode, a live world with a workload of submissions.
func (System) Supports() contract.Support {
	return contract.Support{
		Worlds:       []string{string(WorldDrawn), string(WorldFixed), string(WorldWide)},
		Exhaustive:   ExhaustiveSpace,
		Live:         true,
		LiveWorkload: true,
		Promises:     []string{"extra_latency (MA1)", "wasted_judgings (MA2)", "false_system_errors (MA3)", "outage_retry_load (MA5)"},
		Budget:       200,
		// Batch claims meet the freezes and outages with several leases
		// per claim.
		Variants: [][]string{{"claim_batch=2"}, {"claim_batch=4"}},
		Levers:   Levers,
	}
}

// designs are the system's designs behind the contract.
var designs = contract.Designs[judge.Design, judge.Knob]{System: judge.System, Default: judge.Default, Parse: judge.ParseDesign,
	With: judge.Design.With, Set: (*judge.Design).Assign, Validate: judge.Design.Validate, JSON: judge.Design.JSON,
	Knobs: func(d judge.Design) []judge.Knob { return d.Knobs }, Pinned: func(d *judge.Design) *[]string { return &d.Pinned },
	Waivers: []string{"allow_unsafe"},
}

// Default implements contract.System.
func (System) Default() contract.Design { return designs.Wrap(judge.Default()) }

// NewDesign implements contract.System. The parameters set pin themselves:
// a drawn or wide world keeps them (DrawWorld; a design file pins what its
// "pinned" says). allow_unsafe (--unsafe) is a waiver, not a parameter of
// the world, and pins nothing.
func (System) NewDesign(knobs, sets []string, file []byte) (contract.Design, error) {
	return designs.New(knobs, sets, file)
}

// drawn is system A's drawn world: the run's options and its world mode.
type drawn struct {
	opts judge.Options
	mode WorldMode
	keep func(kind string) bool // under Options.Digest: what the record keeps
}

// Draw implements contract.System: SeedOptionsIn, the world mode's world
// and schedule drawn from the seed's streams; the fast path records only
// the checker's event kinds (CheckerFilter), Options.Full everything.
func (System) Draw(dd contract.Design, seed uint64, f contract.Faults, o contract.Options) (*contract.World, error) {
	d := dd.Value().(judge.Design)
	hf, err := Intensity(string(f))
	if err != nil {
		return nil, err
	}
	if err := sim.CheckSteer(seed, judge.System, Levers); err != nil {
		return nil, err
	}
	mode, err := ParseWorld(dd.World)
	if err != nil {
		return nil, err
	}
	opts, prof := SeedOptionsIn(d, mode, hf, seed)
	w := &contract.World{Seed: seed, Schedule: opts.Schedule, Profile: prof.String(), Nodes: judge.NamesOf(opts.Design).All()}
	if o.Given {
		w.Schedule, w.Profile = o.Schedule, "given"
		opts.Schedule = o.Schedule
	}
	var keep func(string) bool
	switch {
	case o.Full:
		opts.Filter = nil
	case o.Digesting():
		keep, opts.Filter = opts.Filter, nil
	}
	w.V = drawn{opts, mode, keep}
	return w, nil
}

// Play implements contract.System: judge.Simulate, recorded in memory
// (under Options.Digest, every event hashed and the checker's kept).
func (System) Play(w *contract.World, o contract.Options) *contract.Outcome {
	x := w.V.(drawn)
	mem := &traces.Memory{}
	x.opts.Recorder = mem
	var dg *traces.Digest
	if o.Digesting() && x.keep != nil {
		dg = traces.NewDigest(o.Digest, x.keep, mem)
		x.opts.Recorder = dg
	}
	sw, err := judge.Simulate(x.opts)
	out := &contract.Outcome{World: w, Header: x.opts.Header(sw), Events: mem.Events, Schedule: w.Schedule, Err: err}
	out.Digested(dg)
	return out
}

// Judge implements contract.System: the trace decoded, the invariants,
// porcupine and the metrics (checker/judge); a drawn or wide world's runs
// are also judged with the generic bounds of their drawn design.
func (System) Judge(o *contract.Outcome) *contract.Result {
	r := &contract.Result{System: judge.System, Seed: o.Header.Seed, Schedule: o.Schedule, Header: o.Header, Events: o.Events}
	if d, err := judge.ParseDesign(o.Header.Design); err == nil {
		r.Nodes = judge.NamesOf(d).All()
	}
	if o.Err != nil {
		r.Verdicts = []checker.Verdict{contract.RunFailed(o.Err)}
		return r
	}
	sw := o.Stopwatch()
	run, err := jc.Decode(o.Header, o.Events)
	sw.Lap("decode")
	if err != nil {
		r.Verdicts = []checker.Verdict{contract.RunFailed(err)}
		return r
	}
	res := jc.Check(run)
	if o.World != nil {
		// A drawn world carries its generic bounds (DrawWorld), as its
		// trace's header does for a replay.
		judgeBounds(&res, o.World.V.(drawn).opts.Workload.Bounds)
	}
	judged(r, res)
	sw.Lap("invariants, porcupine, metrics")
	r.Timings = sw.Timings()
	return r
}

func judged(r *contract.Result, res jc.Result) {
	r.Verdicts = res.Verdicts
	m := res.Metrics
	var lat []float64
	for _, k := range checker.SortedKeys(m.ExtraLatency) {
		lat = append(lat, m.ExtraLatency[k].Seconds())
	}
	r.Metrics = []contract.Metric{
		{Name: "extra_latency (MA1)", Unit: "s", Values: lat},
		{Name: "wasted_judgings (MA2)", Values: contract.Count(m.Wasted)},
		{Name: "system_errors", Values: contract.Count(m.SystemErrors)},
		{Name: "false_system_errors (MA3)", Values: contract.Count(m.FalseSystemErrors)},
		{Name: "stuck_detect_time (MA4)", Unit: "s", Values: contract.Durs(m.DetectTimes...)},
		{Name: "false_alerts (MA4)", Values: contract.Count(m.FalseAlerts)},
		{Name: "outage_retry_load (MA5)", Values: contract.Count(m.OutageLoad)},
		{Name: "home_first_misses (MA6)", Values: contract.Count(m.HomeFirstMisses)},
	}
	if res.Info != nil {
		info := *res.Info
		r.Visualize = func(w io.Writer) error { return porcupine.Visualize(jc.LeaseModel(), info, w) }
	}
}

// Replay implements contract.System.
func (System) Replay(h traces.Header) (*contract.Result, error) {
	o, err := Replay(h)
	if err != nil {
		return nil, err
	}
	r := &contract.Result{System: judge.System, Seed: h.Seed, Schedule: o.Options.Schedule, Header: o.Header, Events: o.Events,
		Nodes: judge.NamesOf(o.Options.Design).All()}
	judged(r, o.Result)
	r.Hash = traces.HashOf(r.Header, r.Events)
	return r, nil
}

// Scenarios implements contract.System: A-S1..A-S9, docs/systems.md A.5
// with the measured costs.
func (System) Scenarios() (string, bool, error) {
	costs := map[string]scenario.Cost{}
	ok := true
	for _, s := range scenario.All() {
		_, c, err := s.Measured()
		if err != nil {
			return "", false, err
		}
		costs[s.ID] = c
		ok = ok && c.OK()
	}
	return scenario.Table(scenario.All(), costs), ok, nil
}

// KnobScenario implements contract.System: the knob's scenarios of the
// source, then its fault families with drawn parameters.
func (System) KnobScenario(knob string) (bool, string, bool, error) {
	info, ok := judge.Info(judge.Knob(knob))
	if !ok {
		return false, "", false, fmt.Errorf("unknown knob %q for the arbiter", knob)
	}
	for _, id := range info.Scenarios {
		s, ok := scenario.ByID(id)
		if !ok {
			continue
		}
		_, c, err := s.Measured(info.Knob)
		if err != nil {
			return false, "", true, err
		}
		if !c.OK() {
			why := append(append([]string(nil), c.Broken...), verdictTexts(c.Verdict)...)
			return true, contract.CaughtBy(id, why), true, nil
		}
	}
	// Then the knob's fault families: its scenario with drawn parameters,
	// judged with the family's promised bounds (the same hunt as
	// TestDesignKnobs, here with seeds).
	d := judge.Default().MustWith(info.Knob)
	for _, name := range KnobFamilies[info.Knob] {
		f, err := FamilyByName(name)
		if err != nil {
			return false, "", true, err
		}
		for seed := uint64(1); seed <= familySeeds; seed++ {
			ent := sim.NewPCG(seed)
			o, err := f.Judged(ent.Stream("family"), d, ent)
			if err != nil {
				return false, "", true, err
			}
			if bad := o.Failed(); len(bad) > 0 {
				return true, fmt.Sprintf("family %s seed %d: %s", name, seed, bad[0].Property), true, nil
			}
		}
	}
	return false, "", len(info.Scenarios) > 0 || len(KnobFamilies[info.Knob]) > 0, nil
}

// familySeeds is how many seeds of each fault family a knob is hunted in.
const familySeeds = 60

func verdictTexts(vs []checker.Verdict) []string {
	var out []string
	for _, v := range checker.Failed(vs) {
		out = append(out, v.Property)
	}
	return out
}

// Property implements contract.System: PropertyIn in the design's world
// mode (drawn by default), the shrunk case trimmed at its violation.
func (System) Property(dd contract.Design, f contract.Faults, failed func(traces.Header)) func(*rapid.T) {
	hf, err := Intensity(string(f))
	if err != nil {
		panic(err) // the caller parses intensities first
	}
	mode, err := ParseWorld(dd.World)
	if err != nil {
		panic(err)
	}
	return PropertyIn(dd.Value().(judge.Design), mode, hf, func(o *Outcome) {
		if failed != nil {
			failed(o.Header)
		}
	})
}

// Outcome is a played run, its trace and the checkers' verdicts
// (scenario.Outcome: the scenarios play runs the same way).
type Outcome = scenario.Outcome

// HeaderInputs are the parts of a trace header a replay needs.
type HeaderInputs = traces.Header

// Play runs a world's options and checks the trace.
func Play(o judge.Options) (*Outcome, error) { return scenario.Play(o) }

// Features names the world's drawn choices for the directed search
// (internal/directed): the fleet, the workload's size, its poison, two
// rejudges or more, the stalled old leader: the world mode's choices a
// fault profile cannot show. Levers are named as these (Levers).
func (x drawn) Features() []string {
	d, wl := x.opts.Design, x.opts.Workload
	out := []string{
		fmt.Sprintf("arbiters=%d", d.Arbiters),
		fmt.Sprintf("standby=%d", d.StandbyArbiters),
		fmt.Sprintf("home_workers=%d", d.HomeWorkers),
		fmt.Sprintf("prod_workers=%d", d.ProdWorkers),
		fmt.Sprintf("sandboxes=%d", d.Sandboxes),
		fmt.Sprintf("zombies=%d", d.Zombies),
		fmt.Sprintf("local_request_ids=%t", d.LocalRequestIDs),
		fmt.Sprintf("poison=%t", len(wl.Poison) > 0),
	}
	rejudges, oldLeader := 0, false
	leader := judge.NamesOf(d).Arbiters[0]
	for _, a := range x.opts.Schedule {
		switch {
		case a.Kind == sim.Do && a.Point == "rejudge":
			rejudges++
		case a.Kind == sim.PauseAt && a.Point == judge.PointBeforeCommit && d.Arbiters >= 2 && a.Node == leader:
			oldLeader = true
		}
	}
	if rejudges >= 2 {
		out = append(out, "rejudges>=2")
	}
	if oldLeader {
		out = append(out, "old-leader")
	}
	switch {
	case wl.Submissions <= 3:
		out = append(out, "submissions<=3")
	case wl.Submissions <= 12:
		out = append(out, "submissions<=12")
	default:
		out = append(out, "submissions>12")
	}
	return out
}
