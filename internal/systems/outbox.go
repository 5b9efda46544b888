package systems

import (
	"pgregory.net/rapid"

	outboxharness "github.com/fencesim/fencesim/model/outbox/harness"

	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fencesim/fencesim/checker"
	check "github.com/fencesim/fencesim/checker/outbox"
	"github.com/fencesim/fencesim/model/design"
	"github.com/fencesim/fencesim/model/outbox"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// Outbox is system B: the idempotent receiver with a transactional outbox
// (model/outbox, checker/outbox).
type Outbox struct{}

var _ System = Outbox{}

// SystemOutbox is system B's name in traces (model/outbox has no constant
// for it).
const SystemOutbox = "outbox"

// Name implements System.
func (Outbox) Name() string { return SystemOutbox }

// Title implements System.
func (Outbox) Title() string { return "B: idempotent receiver + transactional outbox" }

// Knobs implements System.
func (Outbox) Knobs() []Knob {
	var out []Knob
	for _, k := range outbox.Knobs {
		out = append(out, Knob{Name: string(k.Knob), Removes: k.Removes, Harmful: k.Harmful, CaughtBy: k.CaughtBy, Faults: k.Faults})
	}
	return out
}

// Params implements System.
func (Outbox) Params() []string { return outbox.ParamNames() }

// ParamInfos implements System.
func (Outbox) ParamInfos() []design.Info { return outbox.ParamInfos() }

// Probes implements System.
func (Outbox) Probes() []string { return check.ProbeNames }

func (Outbox) wrap(d outbox.Design) Design {
	return Design{System: SystemOutbox, Knobs: knobNames(d.Knobs), JSON: d.JSON(), v: d}
}

// Default implements System.
func (b Outbox) Default() Design { return b.wrap(outbox.Default()) }

// NewDesign implements System. The parameters set pin themselves: the
// world drawn per run keeps them (a design file pins what its "pinned"
// says).
func (b Outbox) NewDesign(knobs, sets []string, file []byte) (Design, error) {
	d := outbox.Default()
	err := buildDesign(file, knobs, sets,
		func(b []byte) (err error) { d, err = outbox.ParseDesign(b); return err },
		func(k string) (err error) { d, err = d.With(outbox.Knob(k)); return err },
		func(name, value string) error { return d.Set(name, value) })
	if err != nil {
		return Design{}, err
	}
	d.Pinned = pin(d.Pinned, sets)
	return b.wrap(d), nil
}

// intensity is the fault intensity's bounds: moderate is the model's
// eight timed faults and three placed on the world's reference run; heavy
// twice as many; none draws nothing (the schedule is only the heal-all).
func (Outbox) intensity(f Faults) sim.Intensity {
	switch f {
	case Heavy:
		return outbox.Heavy
	case None:
		return outbox.None
	}
	return outbox.Moderate
}

// Run implements System: what the harness's RunSeed plays (the model
// records every event): the world drawn from the seed (the parameters the
// user set kept), then the faults of the intensity placed on its
// reference run, or the ones given.
func (b Outbox) Run(dd Design, seed uint64, f Faults, o Options) *Result {
	d := dd.v.(outbox.Design)
	var x outbox.Seeded
	var err error
	if o.Given {
		x.Design, x.Workload = outbox.DrawWorld(sim.NewPCG(seed).Stream("world"), d)
		x.Schedule = o.Schedule
	} else {
		x, err = outbox.DrawSeed(d, seed, b.intensity(f))
	}
	profile := x.Profile.String()
	if o.Given {
		profile = "given"
	}
	var out *outbox.Outcome
	if err != nil {
		out = &outbox.Outcome{Seed: seed, Design: x.Design, Err: err}
	} else {
		out = outbox.Simulate(x.Design, x.Workload, x.Workload.Plan, x.Schedule, sim.NewPCG(seed))
	}
	out.Seed = seed
	r := b.result(x.Design, x.Workload, x.Workload.Plan, out)
	r.Profile = profile
	dropValues(r, o)
	hashIf(r, o)
	return r
}

func (Outbox) result(d outbox.Design, wl outbox.Workload, events []outbox.Event, out *outbox.Outcome) *Result {
	r := &Result{System: SystemOutbox, Seed: out.Seed, Schedule: out.Schedule, Events: out.Trace, Nodes: outbox.NamesOf(d).All()}
	wlp := wl
	wlp.Plan = events
	wlJSON, _ := json.Marshal(wlp)
	lim, _ := json.Marshal(sim.Limits{MaxTime: outbox.MaxTime(d, wlp, outbox.FaultSpec(d)), MaxEvents: 2_000_000})
	pol, _ := json.Marshal(outbox.Network())
	r.Header = traces.Header{Format: traces.Format, System: SystemOutbox, Design: d.JSON(), Seed: out.Seed, Entropy: "pcg",
		Schedule: out.Schedule.JSON(), Workload: wlJSON, Limits: lim, Network: pol}
	if out.Err != nil {
		r.Verdicts = []checker.Verdict{runFailed(out.Err)}
		return r
	}
	// The model judged the run already; the checker is run again on the
	// same trace to time it (the verdicts are the same).
	t0 := time.Now()
	h, err := check.Decode(out.Trace)
	t1 := time.Now()
	if err != nil {
		r.Verdicts = []checker.Verdict{runFailed(err)}
		return r
	}
	vs := check.Check(h)
	t2 := time.Now()
	probes := check.Probes(h)
	r.Timings = []Timing{{"decode", t1.Sub(t0)}, {"PB1-PB6", t2.Sub(t1)}, {"probes", time.Since(t2)}}
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
	m := out.Metrics
	r.Metrics = []Metric{
		{"deliveries (retry load)", "", count(m.Deliveries)},
		{"publishes", "", count(m.Publishes)},
		{"effects", "", count(m.Effects)},
		{"gave_up", "", count(m.GaveUp)},
		{"settle_time", "s", durs(m.SimTime)},
	}
	return r
}

// Replay implements System.
func (b Outbox) Replay(h traces.Header) (*Result, error) {
	if h.Entropy != "pcg" {
		return nil, fmt.Errorf("an outbox trace replays from a pcg seed, not from entropy %q", h.Entropy)
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
	s, err := sim.ParseSchedule(h.Schedule, outbox.NamesOf(d).All())
	if err != nil {
		return nil, err
	}
	out := outbox.Simulate(d, wl, events, s, sim.NewPCG(h.Seed))
	out.Seed = h.Seed
	r := b.result(d, wl, events, out)
	r.Hash = traces.HashOf(r.Header, r.Events)
	return r, nil
}

// Scenarios implements System: system B has no table of named scenarios
// (its scenarios are the named tests of model/outbox).
func (Outbox) Scenarios() (string, bool, error) {
	return "(system B has no table of named scenarios: its scenarios are the named tests of model/outbox, go test ./model/outbox -run Scenario)\n", true, nil
}

// KnobScenario implements System: not supported.
func (Outbox) KnobScenario(string) (bool, string, bool, error) { return false, "", false, nil }

// pin adds the parameters of "name=value" settings (knobs aside) to a
// design's pinned ones: sorted, without repeats.
func pin(pinned, sets []string) []string {
	out := append([]string(nil), pinned...)
	for _, s := range sets {
		if name, _, err := splitSet(s); err == nil && name != "knob" && name != "knobs" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil
	}
	sort.Strings(out)
	return out
}

// Property implements System: outboxharness.Property, every property
// watched.
func (b Outbox) Property(dd Design, f Faults, failed func(traces.Header)) func(*rapid.T) {
	var last *outboxharness.Outcome
	prop := outboxharness.Property(dd.v.(outbox.Design), b.intensity(f), nil, &last)
	return func(t *rapid.T) {
		last = nil
		defer func() {
			if last != nil && failed != nil {
				o := last.Outcome
				failed(b.result(o.Design, o.Workload, o.Events, o).Header)
			}
		}()
		prop(t)
	}
}
