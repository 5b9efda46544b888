package systems

import (
	"pgregory.net/rapid"

	"encoding/json"
	"fmt"
	"time"

	ct "github.com/fencesim/fencesim/checker/twopc"
	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/design"
	"github.com/fencesim/fencesim/model/twopc"
	twopcharness "github.com/fencesim/fencesim/model/twopc/harness"
	twopcscenario "github.com/fencesim/fencesim/model/twopc/scenario"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// TwoPC is system C: two-phase commit under coordinator crashes
// (model/twopc, checker/twopc).
type TwoPC struct{}

var _ System = TwoPC{}

// Name implements System.
func (TwoPC) Name() string { return twopc.System }

// Title implements System.
func (TwoPC) Title() string { return "C: two-phase commit under coordinator crashes" }

// Knobs implements System.
func (TwoPC) Knobs() []Knob {
	var out []Knob
	for _, k := range twopc.Knobs {
		out = append(out, Knob{Name: string(k.Knob), Removes: k.Removes, Harmful: k.Harmful, CaughtBy: k.CaughtBy, Faults: k.Faults, Scenarios: k.Scenarios})
	}
	return out
}

// Params implements System.
func (TwoPC) Params() []string { return twopc.ParamNames() }

// ParamInfos implements System.
func (TwoPC) ParamInfos() []design.Info { return twopc.ParamInfos() }

// Probes implements System: system C has none.
func (TwoPC) Probes() []string { return nil }

func (TwoPC) wrap(d twopc.Design) Design {
	return Design{System: twopc.System, Knobs: knobNames(d.Knobs), JSON: d.JSON(), v: d}
}

// Default implements System.
func (c TwoPC) Default() Design { return c.wrap(twopc.Default()) }

// NewDesign implements System. The parameters set pin themselves: the
// world drawn per run keeps them (a design file pins what its "pinned"
// says).
func (c TwoPC) NewDesign(knobs, sets []string, file []byte) (Design, error) {
	d := twopc.Default()
	err := buildDesign(file, knobs, sets,
		func(b []byte) (err error) { d, err = twopc.ParseDesign(b); return err },
		func(k string) (err error) { d, err = d.With(twopc.Knob(k)); return err },
		func(name, value string) error { return d.Set(name, value) })
	if err != nil {
		return Design{}, err
	}
	d.Pinned = pin(d.Pinned, sets)
	return c.wrap(d), nil
}

// intensity is the fault intensity's bounds: moderate is the model's three
// timed faults and three placed on the world's reference run; heavy twice
// as many; none draws nothing.
func (TwoPC) intensity(f Faults) sim.Intensity {
	switch f {
	case Heavy:
		return twopcharness.Heavy
	case None:
		return twopcharness.None
	}
	return twopcharness.Moderate
}

// Run implements System: what twopcharness.RunSeed plays (the model records
// every event): the world drawn from the seed (the parameters the user set
// kept), then the faults of the intensity placed on its reference run, or
// the ones given.
func (c TwoPC) Run(dd Design, seed uint64, f Faults, o Options) *Result {
	d := dd.v.(twopc.Design)
	h := twopcharness.DefaultHarness()
	var x twopcharness.Seeded
	var err error
	if o.Given {
		x.Design, x.Schedule = twopc.DrawWorld(sim.NewPCG(seed).Stream("world"), d), o.Schedule
	} else {
		x, err = h.DrawSeed(d, seed, c.intensity(f))
	}
	profile := x.Profile.String()
	if o.Given {
		profile = "given"
	}
	out := &twopcharness.Outcome{Err: err}
	if err == nil {
		out = h.Run(x.Design, x.Schedule, sim.NewPCG(seed))
	}
	r := c.result(x.Design, h, seed, out)
	r.Profile = profile
	dropValues(r, o)
	hashIf(r, o)
	return r
}

func (TwoPC) result(d twopc.Design, h twopcharness.Harness, seed uint64, out *twopcharness.Outcome) *Result {
	r := &Result{System: twopc.System, Seed: seed, Schedule: out.Schedule, Events: out.Events, Nodes: twopc.NamesOf(d).All()}
	lim, _ := json.Marshal(sim.Limits{MaxTime: clock.Time(h.HealAt + h.Settle), MaxEvents: 2_000_000})
	pol, _ := json.Marshal(h.Network)
	r.Header = traces.Header{Format: traces.Format, System: twopc.System, Design: d.JSON(), Seed: seed, Entropy: "pcg",
		Schedule: out.Schedule.JSON(), Limits: lim, Network: pol}
	if out.Err != nil {
		r.Verdicts = append(r.Verdicts, runFailed(out.Err))
	}
	if len(out.Events) == 0 {
		return r
	}
	// The harness judged the run already; the checker is run again on the
	// same trace to time it (the report is the same).
	judgeTwoPC(r, out.Err == nil)
	return r
}

// judgeTwoPC runs PC1-PC5 and the metrics on r.Events; a trace that does
// not decode fails the run unless it failed already (ownErr false).
func judgeTwoPC(r *Result, ownErr bool) {
	t0 := time.Now()
	rep, err := ct.Check(r.Events)
	r.Timings = []Timing{{"PC1-PC5, metrics", time.Since(t0)}}
	if err != nil {
		if ownErr {
			r.Verdicts = append(r.Verdicts, runFailed(err))
		}
		return
	}
	r.Verdicts = append(rep.Verdicts, r.Verdicts...)
	m := rep.Metrics
	r.Metrics = []Metric{
		{"blocked_max", "s", durs(m.BlockedMax)},
		{"blocked_total", "s", durs(m.BlockedTotal)},
		{"rows_locked", "", count(m.RowsLocked)},
		{"lock_timeouts", "", count(m.LockTimeouts)},
		{"vacuum_horizon_held", "s", durs(m.HorizonHeld)},
		{"agents_blocked", "", count(m.Blocked)},
		{"still_prepared", "", count(m.StillPrep)},
	}
}

// Judge runs the checkers on a record made elsewhere (a live run's).
func (TwoPC) Judge(h traces.Header, evs []traces.Event) *Result {
	r := &Result{System: twopc.System, Seed: h.Seed, Header: h, Events: evs}
	if d, err := twopc.ParseDesign(h.Design); err == nil {
		r.Nodes = twopc.NamesOf(d).All()
	}
	judgeTwoPC(r, true)
	return r
}

// Replay implements System.
func (c TwoPC) Replay(hd traces.Header) (*Result, error) {
	if hd.Entropy != "pcg" {
		return nil, fmt.Errorf("a twopc trace replays from a pcg seed, not from entropy %q", hd.Entropy)
	}
	d, err := twopc.ParseDesign(hd.Design)
	if err != nil {
		return nil, err
	}
	s, err := sim.ParseSchedule(hd.Schedule, twopc.NamesOf(d).All())
	if err != nil {
		return nil, err
	}
	h := twopcharness.DefaultHarness()
	r := c.result(d, h, hd.Seed, h.Run(d, s, sim.NewPCG(hd.Seed)))
	r.Hash = traces.HashOf(r.Header, r.Events)
	return r, nil
}

// Scenarios implements System: C.1-C.8 with the source's numbers.
func (TwoPC) Scenarios() (string, bool, error) {
	ts, err := twopcscenario.Scenarios()
	if err != nil {
		return "", false, err
	}
	return twopcscenario.Render(ts), true, nil
}

// KnobScenario implements System: the source's C tables are reproductions,
// not pass/fail checks, so knobs are judged by exploration only.
func (TwoPC) KnobScenario(string) (bool, string, bool, error) { return false, "", false, nil }

// Property implements System: the harness's Property, every property
// watched.
func (c TwoPC) Property(dd Design, f Faults, failed func(traces.Header)) func(*rapid.T) {
	h := twopcharness.DefaultHarness()
	var last *twopcharness.Outcome
	prop := h.Property(dd.v.(twopc.Design), c.intensity(f), nil, &last)
	return func(t *rapid.T) {
		last = nil
		defer func() {
			if last != nil && failed != nil {
				failed(c.result(last.Design, h, last.Seed, last).Header)
			}
		}()
		prop(t)
	}
}
