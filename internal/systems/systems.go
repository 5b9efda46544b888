package systems

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/model/design"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// System is one system under test as the command line drives it.
type System interface {
	// Name is the system's name in traces and on the command line.
	Name() string
	// Title is a few words for tables.
	Title() string
	// Knobs is the design-knob registry, in the order of docs/systems.md's tables.
	Knobs() []Knob
	// Params lists the parameters --set accepts.
	Params() []string
	// ParamInfos describes them: meaning, default, range and the rules
	// between them, from the design's own parameter table.
	ParamInfos() []design.Info
	// Probes lists the probe names, in order (nil: the system has none).
	Probes() []string
	// Default is the correct design.
	Default() Design
	// NewDesign builds a design: file (a JSON design as trace headers hold
	// it; nil: the default), then the knobs turned on, then the parameters
	// set ("name=value"). Errors name the unknown knob, the unknown
	// parameter or the bad value.
	NewDesign(knobs, sets []string, file []byte) (Design, error)
	// Run plays one seed under a fault intensity and judges it.
	Run(d Design, seed uint64, faults Faults, o Options) *Result
	// Replay re-runs a trace from its header, recording every event.
	Replay(h traces.Header) (*Result, error)
	// Property is the system's rapid property under a design, the generic
	// search: the world, the fault schedule and the run's streams drawn
	// from rapid (shrinking toward the smallest world and the fewest
	// faults), every property judged. When a run fails, failed is called
	// with its trace header (Replay re-runs it in full); the last call is
	// rapid's replay of the shrunk case.
	Property(d Design, f Faults, failed func(h traces.Header)) func(*rapid.T)
	// Scenarios runs the system's named scenarios and renders their
	// tables; ok is false when a scenario broke its promise.
	Scenarios() (text string, ok bool, err error)
	// KnobScenario plays the scenarios where a knob's damage shows in the
	// source (the registry's Scenarios) with the knob on; caught says
	// whether one broke, by names it and what broke. supported is false
	// when the system has no scenario a knob can be played in.
	KnobScenario(knob string) (caught bool, by string, supported bool, err error)
}

// Knob is one entry of a system's knob registry.
type Knob struct {
	Name      string   `json:"name"`
	Removes   string   `json:"removes"`
	Harmful   bool     `json:"harmful"`
	CaughtBy  []string `json:"caught_by,omitempty"`
	Scenarios []string `json:"scenarios,omitempty"`
	Faults    string   `json:"faults,omitempty"` // the faults it needs to show
}

// Design is a system's design (parameters and knobs) behind one type.
type Design struct {
	System string
	// World says how much of each run's world is drawn (system A: fixed,
	// drawn or wide; see harness.WorldMode); empty is the system's default.
	World string
	Knobs []string        // the knobs that are on, sorted
	JSON  json.RawMessage // the design as trace headers hold it
	v     any             // the model's own Design value
}

// Faults is a fault intensity.
type Faults string

// The fault intensities.
const (
	None     Faults = "none"
	Moderate Faults = "moderate"
	Heavy    Faults = "heavy"
)

// ParseFaults reads a fault intensity.
func ParseFaults(s string) (Faults, error) {
	switch Faults(s) {
	case None, Moderate, Heavy:
		return Faults(s), nil
	}
	return "", fmt.Errorf("unknown fault intensity %q (none, moderate, heavy)", s)
}

// Options change how a run is played.
type Options struct {
	// Full records every event (for artifacts and replay); otherwise a
	// system may record only what its checker reads.
	Full bool
	// Schedule, when Given, is played as the run's fault schedule instead
	// of the one drawn from the seed (the workload and every other stream
	// still come from the seed).
	Schedule sim.Schedule
	Given    bool
	// Hash computes the canonical hash of what was recorded.
	Hash bool
}

// Metric is one measured quantity of one run: zero or more samples.
type Metric struct {
	Name   string    `json:"name"`
	Unit   string    `json:"unit,omitempty"` // "s" for durations, "" for counts
	Values []float64 `json:"values"`
}

// Result is one judged run.
type Result struct {
	System   string
	Seed     uint64
	Verdicts []checker.Verdict
	Metrics  []Metric        // the same names in the same order on every run of a system
	Probes   map[string]bool // the probes the run hit (nil: the system has none)
	Schedule sim.Schedule    // the fault schedule played
	Profile  string          // the fault profile, for drawn schedules
	Header   traces.Header
	Events   []traces.Event // what was recorded (everything with Options.Full)
	Hash     string         // traces.HashOf(Header, Events) with Options.Hash
	Nodes    []string       // the world's nodes, for report lanes
	Timings  []Timing       // checker timings
	// Visualize writes porcupine's visualization of the failed
	// linearization (nil when none failed or the system has none).
	Visualize func(w io.Writer) error
}

// Timing is how long one checker took.
type Timing struct {
	Name string
	D    time.Duration
}

// CheckTime is the total checker time of a run.
func (r *Result) CheckTime() time.Duration {
	var t time.Duration
	for _, x := range r.Timings {
		t += x.D
	}
	return t
}

// Failed returns the failing verdicts.
func (r *Result) Failed() []checker.Verdict { return checker.Failed(r.Verdicts) }

// FailedIDs returns the ids of the failing properties ("PA1", "run"),
// sorted, without repeats.
func (r *Result) FailedIDs() []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range r.Failed() {
		id := PropertyID(v.Property)
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// Fails reports whether property id (e.g. "PA1") failed.
func (r *Result) Fails(id string) bool {
	for _, v := range r.Failed() {
		if PropertyID(v.Property) == id {
			return true
		}
	}
	return false
}

// PropertyID is the id of a property name: its first word.
func PropertyID(name string) string {
	if f := strings.Fields(name); len(f) > 0 {
		return f[0]
	}
	return name
}

// RunProperty is the property name under which a run that could not be
// played or judged counts as failed.
const RunProperty = "run"

// LimitProperty is the property under which a run that hit a budget of its
// limits (a *sim.LimitError: a livelock, a flood) counts as failed: a
// finding like any other, with its seed and artifacts.
const LimitProperty = "limit"

func runFailed(err error) checker.Verdict {
	if le, ok := sim.IsLimit(err); ok {
		return checker.Verdict{Property: LimitProperty, Message: le.Error()}
	}
	return checker.Verdict{Property: RunProperty, Message: err.Error()}
}

// All returns the three systems, in order.
func All() []System { return []System{Arbiter{}, Outbox{}, TwoPC{}} }

// Names lists the systems' names.
func Names() []string {
	var out []string
	for _, s := range All() {
		out = append(out, s.Name())
	}
	return out
}

// ByName returns a system by its name.
func ByName(name string) (System, error) {
	for _, s := range All() {
		if s.Name() == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("unknown system %q (systems: %s)", name, strings.Join(Names(), ", "))
}

// OwnerOf returns the system a knob belongs to.
func OwnerOf(knob string) (System, bool) {
	for _, s := range All() {
		for _, k := range s.Knobs() {
			if k.Name == knob {
				return s, true
			}
		}
	}
	return nil, false
}

// splitSet splits "name=value".
func splitSet(s string) (string, string, error) {
	i := strings.IndexByte(s, '=')
	if i <= 0 {
		return "", "", fmt.Errorf("--set %q: want name=value (e.g. --set lease=90s)", s)
	}
	return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:]), nil
}

// buildDesign applies, in order, a design file, knobs and "name=value"
// settings through a model's own functions (each adapter's NewDesign).
func buildDesign(file []byte, knobs, sets []string, parse func([]byte) error, with func(knob string) error, set func(name, value string) error) error {
	if file != nil {
		if err := parse(file); err != nil {
			return err
		}
	}
	for _, k := range knobs {
		if err := with(k); err != nil {
			return err
		}
	}
	for _, s := range sets {
		name, value, err := splitSet(s)
		if err != nil {
			return err
		}
		if err := set(name, value); err != nil {
			return err
		}
	}
	return nil
}

// knobNames renders knobs of any string type, sorted.
func knobNames[K ~string](ks []K) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	sort.Strings(out)
	return out
}

func hashIf(r *Result, o Options) {
	if o.Hash {
		r.Hash = traces.HashOf(r.Header, r.Events)
	}
}

func durs(ds ...time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = d.Seconds()
	}
	return out
}

func count(n int) []float64 { return []float64{float64(n)} }

// dropValues keeps a result small once the checkers have read its events'
// typed values. A result that may be kept (an audited run waits for its
// second run, a failure's is written as an artifact, a full one is for a
// file) gets its lazy parts rendered (traces.Event.Fill: the message texts,
// the notes' JSON) and forgets the typed values: it holds what files and
// hashes use. Any other result is dropped as soon as its verdicts are
// counted, so its events stay as recorded (valid, only not rendered), and
// nothing is encoded for nothing.
func dropValues(r *Result, o Options) {
	if !o.Hash && !o.Full && len(r.Failed()) == 0 {
		return
	}
	for i := range r.Events {
		e := &r.Events[i]
		e.Fill()
		e.Value = nil
	}
}
