package systems

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/checker"
	jc "github.com/fencesim/fencesim/checker/judge"
	"github.com/fencesim/fencesim/model/design"
	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/model/judge/harness"
	"github.com/fencesim/fencesim/model/judge/scenario"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// Arbiter is system A: the judge arbiter with leases and fencing tokens
// (model/judge, model/judge/harness, checker/judge).
type Arbiter struct{}

var _ System = Arbiter{}

// CheckWorld reports a world mode system A does not know (fixed, drawn,
// wide).
func CheckWorld(mode string) error {
	_, err := harness.ParseWorld(mode)
	return err
}

// Name implements System.
func (Arbiter) Name() string { return judge.System }

// Title implements System.
func (Arbiter) Title() string { return "A: judge arbiter (leases, fencing tokens)" }

// Knobs implements System.
func (Arbiter) Knobs() []Knob {
	var out []Knob
	for _, k := range judge.Knobs {
		out = append(out, Knob{Name: string(k.Knob), Removes: k.Removes, Harmful: k.Harmful, CaughtBy: k.CaughtBy, Faults: k.Faults, Scenarios: k.Scenarios})
	}
	return out
}

// Params implements System.
func (Arbiter) Params() []string { return judge.ParamNames() }

// ParamInfos implements System.
func (Arbiter) ParamInfos() []design.Info { return judge.ParamInfos() }

// Probes implements System: system A has none.
func (Arbiter) Probes() []string { return nil }

func (Arbiter) wrap(d judge.Design) Design {
	return Design{System: judge.System, Knobs: knobNames(d.Knobs), JSON: d.JSON(), v: d}
}

// Default implements System.
func (a Arbiter) Default() Design { return a.wrap(judge.Default()) }

// NewDesign implements System. The parameters set pin themselves: a
// drawn or wide world keeps them (harness.DrawWorld; a design file pins
// what its "pinned" says). allow_unsafe (--unsafe) is a waiver, not a
// parameter of the world, and pins nothing.
func (a Arbiter) NewDesign(knobs, sets []string, file []byte) (Design, error) {
	d := judge.Default()
	err := buildDesign(file, knobs, sets,
		func(b []byte) (err error) { d, err = judge.ParseDesign(b); return err },
		func(k string) (err error) { d, err = d.With(judge.Knob(k)); return err },
		func(name, value string) error { return d.Set(name, value) })
	if err != nil {
		return Design{}, err
	}
	var world []string
	for _, s := range sets {
		if name, _, err := splitSet(s); err == nil && name != "allow_unsafe" {
			world = append(world, s)
		}
	}
	d.Pinned = pin(d.Pinned, world)
	return a.wrap(d), nil
}

// Run implements System. The fast path records only the checker's event
// kinds (harness.CheckerFilter); Options.Full records everything. It plays
// what harness.RunSeed plays, timing the checker apart from the run.
func (a Arbiter) Run(dd Design, seed uint64, f Faults, o Options) *Result {
	d := dd.v.(judge.Design)
	hf, err := harness.Intensity(string(f))
	if err != nil {
		panic(err) // the command line parses intensities first
	}
	mode, err := harness.ParseWorld(dd.World)
	if err != nil {
		panic(err) // the command line parses world modes first
	}
	opts, prof := harness.SeedOptionsIn(d, mode, hf, seed)
	s, profile := opts.Schedule, prof.String()
	if o.Given {
		s, profile = o.Schedule, "given"
		opts.Schedule = s
	}
	if o.Full {
		opts.Filter = nil
	}
	mem := &traces.Memory{}
	opts.Recorder = mem
	r := &Result{System: judge.System, Seed: seed, Schedule: s, Profile: profile, Nodes: judge.NamesOf(opts.Design).All()}
	w, err := judge.Simulate(opts)
	r.Header, r.Events = opts.Header(w), mem.Events
	if err != nil {
		r.Verdicts = []checker.Verdict{runFailed(err)}
		dropValues(r, o)
		hashIf(r, o)
		return r
	}
	t0 := time.Now()
	run, err := jc.Decode(r.Header, mem.Events)
	t1 := time.Now()
	if err != nil {
		r.Verdicts = []checker.Verdict{runFailed(err)}
		dropValues(r, o)
		hashIf(r, o)
		return r
	}
	res := jc.Check(run)
	if mode != harness.WorldFixed {
		harness.JudgeGeneric(&res, opts.Design)
	}
	a.judged(r, res)
	dropValues(r, o)
	hashIf(r, o)
	r.Timings = []Timing{{"decode", t1.Sub(t0)}, {"invariants, porcupine, metrics", time.Since(t1)}}
	return r
}

func (Arbiter) judged(r *Result, res jc.Result) {
	r.Verdicts = res.Verdicts
	m := res.Metrics
	var lat []float64
	for _, k := range checker.SortedKeys(m.ExtraLatency) {
		lat = append(lat, m.ExtraLatency[k].Seconds())
	}
	r.Metrics = []Metric{
		{"extra_latency (MA1)", "s", lat},
		{"wasted_judgings (MA2)", "", count(m.Wasted)},
		{"system_errors", "", count(m.SystemErrors)},
		{"false_system_errors (MA3)", "", count(m.FalseSystemErrors)},
		{"stuck_detect_time (MA4)", "s", durs(m.DetectTimes...)},
		{"false_alerts (MA4)", "", count(m.FalseAlerts)},
		{"outage_retry_load (MA5)", "", count(m.OutageLoad)},
		{"home_first_misses (MA6)", "", count(m.HomeFirstMisses)},
	}
	if res.Info != nil {
		info := *res.Info
		r.Visualize = func(w io.Writer) error { return porcupine.Visualize(jc.LeaseModel(), info, w) }
	}
}

// Replay implements System.
func (a Arbiter) Replay(h traces.Header) (*Result, error) {
	o, err := harness.Replay(h)
	if err != nil {
		return nil, err
	}
	r := &Result{System: judge.System, Seed: h.Seed, Schedule: o.Options.Schedule, Header: o.Header, Events: o.Events,
		Nodes: judge.NamesOf(o.Options.Design).All()}
	a.judged(r, o.Result)
	r.Hash = traces.HashOf(r.Header, r.Events)
	return r, nil
}

// Judge runs the checkers on a record made elsewhere (a live run's): the
// same decoding, invariants, porcupine and metrics as a simulated run's.
func (a Arbiter) Judge(h traces.Header, evs []traces.Event) *Result {
	r := &Result{System: judge.System, Seed: h.Seed, Header: h, Events: evs}
	if d, err := judge.ParseDesign(h.Design); err == nil {
		r.Nodes = judge.NamesOf(d).All()
	}
	t0 := time.Now()
	run, err := jc.Decode(h, evs)
	t1 := time.Now()
	if err != nil {
		r.Verdicts = []checker.Verdict{runFailed(err)}
		return r
	}
	a.judged(r, jc.Check(run))
	r.Timings = []Timing{{"decode", t1.Sub(t0)}, {"invariants, porcupine, metrics", time.Since(t1)}}
	return r
}

// Scenarios implements System: A-S1..A-S9, docs/systems.md A.5 with the
// measured costs.
func (Arbiter) Scenarios() (string, bool, error) {
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

// KnobScenario implements System.
func (Arbiter) KnobScenario(knob string) (bool, string, bool, error) {
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
			return true, id + ": " + firstLine(why), true, nil
		}
	}
	// Then the knob's fault families: its scenario with drawn parameters,
	// judged with the family's promised bounds (the same hunt as
	// TestDesignKnobs, here with seeds).
	d := judge.Default().MustWith(info.Knob)
	for _, name := range harness.KnobFamilies[info.Knob] {
		f, err := harness.FamilyByName(name)
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
	return false, "", len(info.Scenarios) > 0 || len(harness.KnobFamilies[info.Knob]) > 0, nil
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

func firstLine(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	s := xs[0]
	if len(xs) > 1 {
		s += fmt.Sprintf(" (+%d more)", len(xs)-1)
	}
	return strings.TrimSpace(s)
}

// Property implements System: harness.PropertyIn in the design's world
// mode (drawn by default), the shrunk case trimmed at its violation.
func (Arbiter) Property(dd Design, f Faults, failed func(traces.Header)) func(*rapid.T) {
	hf, err := harness.Intensity(string(f))
	if err != nil {
		panic(err) // the caller parses intensities first
	}
	mode, err := harness.ParseWorld(dd.World)
	if err != nil {
		panic(err)
	}
	return harness.PropertyIn(dd.v.(judge.Design), mode, hf, func(o *harness.Outcome) {
		if failed != nil {
			failed(o.Header)
		}
	})
}
