package summary

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Format is the version of the JSON summary (--summary-out, --json).
const Format = "fencesim-summary/1"

// Summary is what explore and mutants print: the same from one machine or
// from merged shards (except timings and which failures got artifacts).
type Summary struct {
	Format  string `json:"format"`
	Command string `json:"command"` // explore or mutants
	Faults  string `json:"faults"`
	Seeds   string `json:"seeds"` // the whole range, the same in every shard
	Budget  int    `json:"budget,omitempty"`
	Shard   string `json:"shard,omitempty"` // "i/n" of a shard's summary; empty when whole or merged
	// FailFast: explore --failfast stopped at the first failing run; the
	// text prints its minimized schedule.
	FailFast bool     `json:"failfast,omitempty"`
	Systems  []System `json:"systems,omitempty"`
	Mutants  []Mutant `json:"mutants,omitempty"`
	// Designs (mutants) are the designs the knobs were switched on in,
	// one per system of the matrix (the default, or the --set given), and
	// MinimizeBudget the runs a catch's minimization could make: merge
	// compares them. A mutants summary without them, an older fencesim's,
	// is not merged.
	Designs        []Design `json:"designs,omitempty"`
	MinimizeBudget int      `json:"minimize_budget,omitempty"`
	// Interrupted names the signal (SIGINT, SIGTERM) that stopped the
	// command: the summary covers only the runs that finished.
	Interrupted string `json:"interrupted,omitempty"`
	// NotRun lists the systems (explore) or knobs (mutants) an
	// interruption left out, or whose unfinished results were dropped.
	NotRun []string `json:"not_run,omitempty"`
}

// System is one system's exploration.
type System struct {
	System     string          `json:"system"`
	Title      string          `json:"title"`
	Design     string          `json:"design"`          // in words: default, or the knobs and parameters set
	World      string          `json:"world,omitempty"` // system A: how much of each run's world was drawn
	DesignJSON json.RawMessage `json:"design_json"`
	Runs       int             `json:"runs"`
	FailedRuns int             `json:"failed_runs"`
	Properties []PropertyCount `json:"properties"`
	Failures   []Failure       `json:"failures,omitempty"` // every failing seed, by seed
	// Undecided lists the runs a check could not decide (its bounded
	// search gave up: "undecided: ..."), by seed: not failures, and not
	// checked by that check either.
	Undecided []Failure       `json:"undecided,omitempty"`
	Probes    []ProbeCount    `json:"probes,omitempty"`
	Metrics   []MetricSamples `json:"metrics"`
	Audit     Audit           `json:"audit"`
	Artifacts []Artifact      `json:"artifacts,omitempty"`
	Kept      []Kept          `json:"kept,omitempty"` // --keep-worst: passing runs written in full
	// KeepWorst is what --keep-worst asked of this system, in its order:
	// a merge keeps the N highest of the shards' kept runs per metric.
	KeepWorst []Keep `json:"keep_worst,omitempty"`
	// Abandoned counts the runs still in progress when the system stopped
	// (Ctrl-C, the end of --time) that did not finish within the grace:
	// they are not in the counts.
	Abandoned int    `json:"abandoned,omitempty"`
	Timing    Timing `json:"timing"`
	// Directed is the directed search's account (explore --search
	// directed): nil for uniform seeds.
	Directed *Directed `json:"directed,omitempty"`
}

// Directed is what a directed search did: its target, the seeds it ran in
// the order it picked them (each replays alone: explore --seeds S), the
// run that failed first, and the world choices it learned to favour.
type Directed struct {
	Target     string `json:"target"`
	SearchSeed uint64 `json:"search_seed"`
	// FirstFailure is the 1-based index in Order of the first failing
	// run (0: none failed).
	FirstFailure int        `json:"first_failure"`
	Order        []uint64   `json:"order"`
	Favoured     []Favoured `json:"favoured,omitempty"`
}

// Favoured is one world choice the search favoured: the mean reward of
// the runs whose world had it, against every run's.
type Favoured struct {
	Feature string  `json:"feature"`
	Runs    int     `json:"runs"`
	Rate    float64 `json:"reward_rate"`
	Mean    float64 `json:"mean_reward"`
}

// PropertyCount is how many runs failed a property, and how many it could
// not decide.
type PropertyCount struct {
	Property  string `json:"property"`
	Failed    int    `json:"failed"`
	Undecided int    `json:"undecided,omitempty"`
}

// Failure is one failing seed.
type Failure struct {
	Seed       uint64   `json:"seed"`
	Properties []string `json:"properties"`
	Message    string   `json:"message"`
}

// ProbeCount is how many runs hit a probe.
type ProbeCount struct {
	Name string `json:"name"`
	Runs int    `json:"runs"`
}

// MetricSamples are every sample of a metric over the runs, sorted.
type MetricSamples struct {
	Name   string    `json:"name"`
	Unit   string    `json:"unit,omitempty"`
	Values []float64 `json:"values"`
}

// Audit is the determinism audit: seeds run twice and compared.
type Audit struct {
	Runs       int        `json:"runs"`
	Mismatches []Mismatch `json:"mismatches,omitempty"`
}

// Mismatch is a seed whose two runs differed.
type Mismatch struct {
	Seed   uint64 `json:"seed"`
	Index  int    `json:"index"` // the first differing event, from 1
	First  string `json:"first"`
	Second string `json:"second"`
}

// Artifact is what was written for one failing seed.
type Artifact struct {
	Seed      uint64 `json:"seed"`
	Property  string `json:"property"` // the property kept failing while minimizing
	Trace     string `json:"trace"`
	Minimized string `json:"minimized_trace"`
	Schedule  string `json:"schedule"`
	Report    string `json:"report"`
	Porcupine string `json:"porcupine,omitempty"`
	Faults    int    `json:"faults"`   // fault actions in the failing run's schedule
	Kept      int    `json:"kept"`     // fault actions after minimization
	Needed    int    `json:"needed"`   // of those, the ones the failure needs
	MinRuns   int    `json:"min_runs"` // runs the minimization made
	Complete  bool   `json:"complete"` // the minimization finished within its budget
	Error     string `json:"error,omitempty"`
	Skipped   string `json:"skipped,omitempty"` // why nothing was written: the command ran out of time or was interrupted
	// Lines is the minimized schedule, one action a line, each marked
	// needed, not needed or end.
	Lines []string `json:"schedule_lines,omitempty"`
	// Timeline is the failure told in at most 25 lines: the needed faults
	// and the violating key's story, one step a line.
	Timeline []string `json:"timeline,omitempty"`
}

// Kept is a passing run kept in full by --keep-worst: one of the runs a
// mean hides.
type Kept struct {
	Metric string  `json:"metric"`
	Value  float64 `json:"value"` // the run's value of the metric (a count's total, a duration's largest sample)
	Unit   string  `json:"unit,omitempty"`
	Seed   uint64  `json:"seed"`
	Trace  string  `json:"trace,omitempty"`
	Report string  `json:"report,omitempty"`
	Error  string  `json:"error,omitempty"`
}

// Keep is one --keep-worst METRIC=N: the N passing runs with the highest
// value of the metric.
type Keep struct {
	Metric string `json:"metric"`
	N      int    `json:"n"`
}

// TopKept returns the runs one machine would have kept of those given (a
// merge's shards' together): per Keep, in their order, the N with the
// highest value, then the lowest seed.
func TopKept(kept []Kept, keep []Keep) []Kept {
	var out []Kept
	for _, k := range keep {
		var of []Kept
		for _, r := range kept {
			if r.Metric == k.Metric {
				of = append(of, r)
			}
		}
		sort.SliceStable(of, func(i, j int) bool {
			if of[i].Value != of[j].Value {
				return of[i].Value > of[j].Value
			}
			return of[i].Seed < of[j].Seed
		})
		out = append(out, of[:min(len(of), k.N)]...)
	}
	return out
}

// Timing is wall-clock time: it differs between machines and runs.
type Timing struct {
	WallNS  int64 `json:"wall_ns"`  // elapsed, for the system's runs
	RunNS   int64 `json:"run_ns"`   // the sum of the runs' durations (one core each)
	CheckNS int64 `json:"check_ns"` // the sum of the checkers' durations
	Workers int   `json:"workers"`
}

// Design is the design mutants switched a system's knobs on in.
type Design struct {
	System     string          `json:"system"`
	Design     string          `json:"design"` // in words: default, or the parameters set
	DesignJSON json.RawMessage `json:"design_json"`
}

// Mutant is one knob of the matrix.
type Mutant struct {
	System   string   `json:"system"`
	Knob     string   `json:"knob"`
	Harmful  bool     `json:"harmful"`
	Expected []string `json:"expected,omitempty"` // the properties the registry expects to catch it
	First    uint64   `json:"first"`              // the budget's first seed
	Budget   int      `json:"budget"`             // seeds in the budget (every shard's)
	// Runs counts the budget's seeds up to the first failing one (the
	// whole budget when none failed), of the shards summarized: the runs
	// one machine going through the seeds in order makes. The runs the
	// workers started past it are not counted (nor timed in RunNS).
	Runs     int      `json:"runs"`
	Seed     uint64   `json:"seed,omitempty"`     // the first failing seed, 0 when none failed
	Failed   []string `json:"failed,omitempty"`   // the properties that seed failed
	Scenario string   `json:"scenario,omitempty"` // caught by a named scenario instead of the exploration
	Faults   int      `json:"faults,omitempty"`   // fault actions of the failing seed's schedule
	Kept     int      `json:"kept,omitempty"`     // after minimization
	Needed   int      `json:"needed,omitempty"`   // of those, the ones the failure needs
	RunNS    int64    `json:"run_ns"`             // time of the runs counted (one core each; merged: their mean time over the shards, times Runs)
	// BaseFails are the seeds that failed with the knob and fail as well,
	// by the same properties, without it: the design's own failures, not
	// the knob's damage; they do not count as catches.
	BaseFails []uint64 `json:"base_fails,omitempty"`
}

// Caught reports whether a run or a named scenario caught the knob.
func (m Mutant) Caught() bool { return m.Seed != 0 || m.Scenario != "" }

// AsExpected reports whether the knob was judged as the registry says:
// caught when harmful, not caught when harmless.
func (m Mutant) AsExpected() bool { return m.Caught() == m.Harmful }

// RunsToDetect is the position of the first failing seed in the budget:
// the runs one machine going through the seeds in order makes.
func (m Mutant) RunsToDetect() int {
	if m.Seed == 0 {
		return 0
	}
	return int(m.Seed - m.First + 1)
}

// Failed reports whether the summary has a failure (a property, a missed
// or falsely caught knob, or a determinism mismatch).
func (s *Summary) Failed() bool {
	for _, x := range s.Systems {
		if x.FailedRuns > 0 || len(x.Audit.Mismatches) > 0 {
			return true
		}
	}
	for _, m := range s.Mutants {
		if !m.AsExpected() || len(m.BaseFails) > 0 {
			return true // a knob not judged as expected, or a design that fails on its own
		}
	}
	return false
}

// Shard is one of the n parts the seeds are cut into (--shard i/n): seed
// s belongs to shard s mod n.
type Shard struct {
	I, N uint64
}

// Has reports whether seed belongs to the shard (every seed does when the
// seeds are not cut).
func (s Shard) Has(seed uint64) bool { return s.N <= 1 || seed%s.N == s.I }

// count is how many seeds of first..last belong to the shard.
func (s Shard) count(first, last uint64) uint64 {
	if last < first {
		return 0
	}
	if s.N <= 1 {
		return last - first + 1
	}
	// upTo counts the shard's seeds in 0..x.
	upTo := func(x uint64) uint64 {
		if x < s.I {
			return 0
		}
		return (x-s.I)/s.N + 1
	}
	n := upTo(last)
	if first > 0 {
		n -= upTo(first - 1)
	}
	return n
}

// String is the shard as i/n, as a summary names it.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// ParseShard parses i/n (the --shard that cut the seeds, a summary's
// shard); empty is the whole, 0/1.
func ParseShard(v string) (Shard, error) {
	if v == "" {
		return Shard{0, 1}, nil
	}
	a, b, ok := strings.Cut(v, "/")
	i, err1 := strconv.ParseUint(strings.TrimSpace(a), 10, 64)
	n, err2 := strconv.ParseUint(strings.TrimSpace(b), 10, 64)
	if !ok || err1 != nil || err2 != nil || n == 0 || i >= n {
		return Shard{}, fmt.Errorf("--shard %q: want i/n with 0 <= i < n, e.g. --shard 0/4 (seed s belongs to shard s mod n)", v)
	}
	return Shard{i, n}, nil
}
