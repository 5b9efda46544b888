package contract

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/model/design"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// System is one system under test as the command line and the Go route
// drive it. Every model/<system>/harness package implements it.
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
	// Supports says what the system offers beyond seeded runs.
	Supports() Support
	// Default is the correct design.
	Default() Design
	// NewDesign builds a design: file (a JSON design as trace headers hold
	// it; nil: the default), then the knobs turned on, then the parameters
	// set ("name=value"). Errors name the unknown knob, the unknown
	// parameter or the bad value.
	NewDesign(knobs, sets []string, file []byte) (Design, error)

	// Draw draws one run's world from its seed, in one step: the design's
	// drawn parameters and workload, then the fault schedule of the
	// intensity placed on it (o.Schedule instead when o.Given). Its
	// result is all Play needs.
	Draw(d Design, seed uint64, f Faults, o Options) (*World, error)
	// Play runs a drawn world into an outcome: its trace header (limits
	// included) and what was recorded (everything with o.Full).
	Play(w *World, o Options) *Outcome
	// Judge runs the system's checkers on an outcome, a simulated one or
	// a live record (Outcome.World nil): verdicts, metrics and probes
	// with their ids, and the checkers' timings.
	Judge(o *Outcome) *Result

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

// Support is what a system offers beyond seeded runs, and the few facts
// about it the command line would otherwise have to know by name.
type Support struct {
	// Worlds are the world modes --world accepts (nil: the system has
	// one world, its drawn one); "" is the system's default.
	Worlds []string
	// Exhaustive is the bounded exhaustive mode's space for a design, at
	// most maxPairs pairs (0: all; nil: the system has no such mode).
	Exhaustive func(d Design, maxPairs int) (*ExhaustiveSpace, error)
	// NoExhaustive says what a system without an exhaustive mode has
	// instead (for the error that refuses --exhaustive).
	NoExhaustive string
	// Live says whether the system has a live world (fencesim live).
	Live bool
	// LiveWorkload: a live run takes --submissions.
	LiveWorkload bool
	// LiveTable: a live run can play the source's tables (--table).
	LiveTable bool
	// Promises are the metrics a design's change must not move (diff's
	// paired tests warn on them).
	Promises []string
	// Budget is how many seeds mutants gives a knob by default.
	Budget int
	// Levers are the draws a steered seed may force (sim.Steer), in the
	// order of the seed format: appended to, never reordered (nil: the
	// system's seeds are plain, and Draw refuses a steered one).
	Levers []sim.Lever
	// Variants are the designs besides the default ("name=value"
	// settings) that the baseline matrix covers, in the drawn world.
	Variants [][]string
	// Hidden systems are left out of "all" and of the lists in help texts
	// (a demonstration system for tests); --system names them.
	Hidden bool
}

// WorldCheck reports a world mode the system does not know.
func (s Support) WorldCheck(mode string) error {
	if mode == "" || slices.Contains(s.Worlds, mode) {
		return nil
	}
	if len(s.Worlds) == 0 {
		return fmt.Errorf("unknown world %q: this system has one world, its drawn one", mode)
	}
	return fmt.Errorf("unknown world %q (%s)", mode, strings.Join(s.Worlds, ", "))
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
	// World says how much of each run's world is drawn (Support.Worlds);
	// empty is the system's default.
	World string
	Knobs []string        // the knobs that are on, sorted
	JSON  json.RawMessage // the design as trace headers hold it
	v     any             // the model's own Design value
}

// Wrap puts a model's own design behind Design.
func Wrap(system string, knobs []string, js json.RawMessage, v any) Design {
	return Design{System: system, Knobs: knobs, JSON: js, v: v}
}

// Value is the model's own design value (what Wrap was given).
func (d Design) Value() any { return d.v }

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
	// system may record only what its checker reads: some kinds, and of
	// model/db's statement notes neither text nor SQL (sim.Env.ForCheckers;
	// contracttest.FastIsFull holds the rest of each event to the full
	// record's).
	Full bool
	// Schedule, when Given, is played as the run's fault schedule instead
	// of the one drawn from the seed (the workload and every other stream
	// still come from the seed).
	Schedule sim.Schedule
	Given    bool
	// Hash computes the canonical hash of what was recorded.
	Hash bool
	// Digest, a hash version (traces.HashV1, HashV2; 0: none), hashes
	// every event of the run as it is recorded, the header left out
	// (Result.Digest, a --per-seed record's hash: traces.EventsHash of the
	// full record), and records only what the checkers read: the hash of a
	// full record at the cost of a checked one. Full or Hash records in
	// full instead (Digest is then left empty); a system that cannot
	// digest records in full too.
	Digest int
	// Clock times the checkers (Result.Timings; nil: not timed). The
	// caller gives it: the model never reads the wall clock.
	Clock func() time.Time
}

// Digesting reports whether a run records through a traces.Digest
// (Options.Digest, and neither Full nor Hash).
func (o Options) Digesting() bool { return o.Digest != 0 && !o.Full && !o.Hash }

// Digested sets the outcome's Digest and Recorded from the digest it was
// recorded through (nil: none).
func (out *Outcome) Digested(d *traces.Digest) {
	if d != nil {
		out.Digest, out.Recorded = d.Sum()
	}
}

// World is one run's drawn world: what Play needs, drawn once.
type World struct {
	Seed     uint64
	Schedule sim.Schedule // the fault schedule to play
	Profile  string       // the fault profile ("given" for a given schedule)
	Nodes    []string     // the world's nodes, for report lanes
	V        any          // the system's own drawn world
}

// Outcome is a played world (or a live record: World nil).
type Outcome struct {
	World  *World
	Header traces.Header  // the trace header, limits included
	Events []traces.Event // what was recorded
	// Schedule is the fault schedule as played (the drawn one, with what
	// the run added, e.g. a supervisor's restarts).
	Schedule sim.Schedule
	// Err: the run could not be played to its end (a limit, a model
	// error); Judge fails it.
	Err error
	V   any // the system's own outcome
	// Clock times the checkers (Options.Clock; nil: not timed).
	Clock func() time.Time
	// Digest and Recorded are, under Options.Digest, the hash of every
	// event of the run (traces.Digest) and how many there were.
	Digest   string
	Recorded int
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
	Digest   string         // with Options.Digest: traces.EventsHash of every event; Events holds the checked ones
	Recorded int            // with Options.Digest: how many events the run recorded
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
func (r *Result) FailedIDs() []string { return idsOf(r.Failed()) }

// UndecidedIDs returns the ids of the properties a check of which could
// not decide (checker.IsUndecided: held, nothing shown to break), sorted,
// without repeats.
func (r *Result) UndecidedIDs() []string {
	var vs []checker.Verdict
	for _, v := range r.Verdicts {
		if checker.IsUndecided(v) {
			vs = append(vs, v)
		}
	}
	return idsOf(vs)
}

func idsOf(vs []checker.Verdict) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range vs {
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

// RunFailed is the verdict of a run that could not be played or judged.
func RunFailed(err error) checker.Verdict {
	if le, ok := sim.IsLimit(err); ok {
		return checker.Verdict{Property: LimitProperty, Message: le.Error()}
	}
	return checker.Verdict{Property: RunProperty, Message: err.Error()}
}

// Run plays one seed of a system under a fault intensity and judges it:
// Draw, Play, Judge.
func Run(s System, d Design, seed uint64, f Faults, o Options) *Result {
	w, err := s.Draw(d, seed, f, o)
	if err != nil {
		r := &Result{System: s.Name(), Seed: seed, Verdicts: []checker.Verdict{RunFailed(err)}}
		if w != nil {
			r.Schedule, r.Profile, r.Nodes = w.Schedule, w.Profile, w.Nodes
		}
		return r
	}
	out := s.Play(w, o)
	out.Clock = o.Clock
	r := s.Judge(out)
	r.Seed, r.Profile, r.Nodes = seed, w.Profile, w.Nodes
	r.Digest, r.Recorded = out.Digest, out.Recorded
	Finish(r, o)
	return r
}

// Finish is what every judged run gets last: its lazy parts rendered when
// it may be kept (DropValues), its hash when asked for.
func Finish(r *Result, o Options) {
	DropValues(r, o)
	if o.Hash {
		r.Hash = traces.HashOf(r.Header, r.Events)
	}
}

// DropValues keeps a result small once the checkers have read its events'
// typed values. A result that may be kept (an audited run waits for its
// second run, a failure's is written as an artifact, a full one is for a
// file) gets its lazy parts rendered (traces.Event.Fill: the message texts,
// the notes' JSON) and forgets the typed values: it holds what files and
// hashes use. Any other result is dropped as soon as its verdicts are
// counted, so its events stay as recorded (valid, only not rendered), and
// nothing is encoded for nothing.
func DropValues(r *Result, o Options) {
	if !o.Hash && !o.Full && len(r.Failed()) == 0 {
		return
	}
	for i := range r.Events {
		e := &r.Events[i]
		e.Fill()
		e.Value = nil
	}
}

// SplitSet splits "name=value".
func SplitSet(s string) (string, string, error) {
	i := strings.IndexByte(s, '=')
	if i <= 0 {
		return "", "", fmt.Errorf("--set %q: want name=value (e.g. --set lease=90s)", s)
	}
	return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:]), nil
}

// BuildDesign applies, in order, a design file, knobs and "name=value"
// settings through a model's own functions (each system's NewDesign).
func BuildDesign(file []byte, knobs, sets []string, parse func([]byte) error, with func(knob string) error, set func(name, value string) error) error {
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
		name, value, err := SplitSet(s)
		if err != nil {
			return err
		}
		if err := set(name, value); err != nil {
			return err
		}
	}
	return nil
}

// Pin adds the parameters of "name=value" settings (knobs aside) to a
// design's pinned ones: sorted, without repeats.
func Pin(pinned, sets []string) []string {
	out := append([]string(nil), pinned...)
	for _, s := range sets {
		if name, _, err := SplitSet(s); err == nil && name != "knob" && name != "knobs" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil
	}
	sort.Strings(out)
	return out
}

// KnobNames renders knobs of any string type, sorted.
func KnobNames[K ~string](ks []K) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	sort.Strings(out)
	return out
}

// Durs is durations as seconds, a metric's values.
func Durs(ds ...time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = d.Seconds()
	}
	return out
}

// Count is a count, a metric's value.
func Count(n int) []float64 { return []float64{float64(n)} }

// Stopwatch times a run's checkers with the clock its caller gave
// (Options.Clock, Outcome.Clock): the model never reads the wall clock
// itself. Without a clock it records nothing.
type Stopwatch struct {
	now  func() time.Time
	last time.Time
	laps []Timing
}

// Stopwatch starts timing the checkers of an outcome.
func (o *Outcome) Stopwatch() *Stopwatch {
	s := &Stopwatch{now: o.Clock}
	if s.now != nil {
		s.last = s.now()
	}
	return s
}

// Lap records the time since the last lap (or the start) under name.
func (s *Stopwatch) Lap(name string) {
	if s.now == nil {
		return
	}
	t := s.now()
	s.laps = append(s.laps, Timing{Name: name, D: t.Sub(s.last)})
	s.last = t
}

// Timings are the laps recorded.
func (s *Stopwatch) Timings() []Timing { return s.laps }

// KnobsOf is a model's knob registry as the contract lists it.
func KnobsOf[K ~string](reg design.Registry[K]) []Knob {
	out := make([]Knob, 0, len(reg))
	for _, k := range reg {
		out = append(out, Knob{Name: string(k.Knob), Removes: k.Removes, Harmful: k.Harmful, CaughtBy: k.CaughtBy, Faults: k.Faults, Scenarios: k.Scenarios})
	}
	return out
}

// DesignFrom builds a model's design for NewDesign: def, or the design
// file parsed, then the knobs turned on, then the "name=value" settings.
func DesignFrom[D any](def D, file []byte, knobs, sets []string, parse func([]byte) (D, error), with func(D, string) (D, error), set func(*D, string, string) error) (D, error) {
	d := def
	err := BuildDesign(file, knobs, sets,
		func(b []byte) (err error) { d, err = parse(b); return err },
		func(k string) (err error) { d, err = with(d, k); return err },
		func(name, value string) error { return set(&d, name, value) })
	return d, err
}

// ByIntensity picks a system's value for a fault intensity (moderate for
// anything else).
func ByIntensity[T any](f Faults, none, moderate, heavy T) T {
	switch f {
	case None:
		return none
	case Heavy:
		return heavy
	}
	return moderate
}

// CaughtBy renders what broke in a knob's scenario: its id, the first
// thing that broke and how many more did.
func CaughtBy(id string, why []string) string {
	s := id + ": "
	if len(why) > 0 {
		s += strings.TrimSpace(why[0])
	}
	if len(why) > 1 {
		s += fmt.Sprintf(" (+%d more)", len(why)-1)
	}
	return s
}

// SeededHeader checks that a trace header replays from a PCG seed (the
// entropy every seeded run of B, C and the toy has).
func SeededHeader(h traces.Header, system string) error {
	if h.Entropy != "pcg" {
		return fmt.Errorf("a%s %s trace replays from a pcg seed, not from entropy %q", article(system), system, h.Entropy)
	}
	return nil
}

func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "n"
	}
	return ""
}

// Designs is what a model gives the contract about its Design type D
// (knob type K): how to make, read, change and show one. Its Default and
// New are every system's Default and NewDesign.
type Designs[D any, K ~string] struct {
	System  string                         // the system's name
	Default func() D                       // the correct design
	Parse   func([]byte) (D, error)        // a design file (a trace header's design)
	With    func(D, ...K) (D, error)       // knobs turned on
	Set     func(*D, string, string) error // a parameter set from text, not yet validated
	// Validate checks the design once the file, the knobs and every
	// setting are applied: a rule between two parameters holds of the
	// settings together, whatever their order.
	Validate func(D) error
	JSON     func(D) json.RawMessage // the design as trace headers hold it
	Knobs    func(D) []K             // the knobs that are on
	Pinned   func(*D) *[]string      // the parameters the drawn world keeps
	// Waivers are settings that pin nothing (not parameters of the world:
	// system A's allow_unsafe).
	Waivers []string
}

// Wrap puts a design behind Design.
func (m Designs[D, K]) Wrap(d D) Design {
	return Wrap(m.System, KnobNames(m.Knobs(d)), m.JSON(d), d)
}

// New is NewDesign: the default or the design file, then the knobs
// turned on, then the "name=value" settings, which pin themselves (the
// world drawn per run keeps them; a design file pins what its "pinned"
// says), waivers aside.
func (m Designs[D, K]) New(knobs, sets []string, file []byte) (Design, error) {
	d, err := DesignFrom(m.Default(), file, knobs, sets, m.Parse,
		func(d D, k string) (D, error) { return m.With(d, K(k)) }, m.Set)
	if err == nil {
		err = m.Validate(d)
	}
	if err != nil {
		return Design{}, err
	}
	var world []string
	for _, s := range sets {
		if name, _, err := SplitSet(s); err == nil && !slices.Contains(m.Waivers, name) {
			world = append(world, s)
		}
	}
	p := m.Pinned(&d)
	*p = Pin(*p, world)
	return m.Wrap(d), nil
}
