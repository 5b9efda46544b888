package summary

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outcome is what a test run of one seed gave.
type outcome struct {
	failed  []string // the properties it failed
	undec   []string // the properties it left undecided
	latency float64  // its one sample of a metric
	probe   bool     // whether it hit the probe
}

// outcomes are the runs of seeds 1-8 of a made-up system.
var outcomes = map[uint64]outcome{
	1: {latency: 0.5},
	2: {failed: []string{"P2"}, latency: 2, probe: true},
	3: {latency: 1.5, probe: true, undec: []string{"P3"}},
	4: {latency: 0.25},
	5: {failed: []string{"P1", "P2"}, latency: 3},
	6: {latency: 1, undec: []string{"P1", "P3"}},
	7: {failed: []string{"P1"}, latency: 0.75, probe: true},
	8: {latency: 4},
}

// explored is the summary of the runs of seeds 1-8 in shard sh (0/1: all
// of them), built as explore builds it: properties by name, failures and
// samples sorted.
func explored(sh Shard, design string) *Summary {
	x := System{System: "toy", Title: "a toy", Design: "default", DesignJSON: json.RawMessage(design),
		Probes:  []ProbeCount{{Name: "hit", Runs: 0}},
		Metrics: []MetricSamples{{Name: "latency", Unit: "s", Values: []float64{}}},
		Timing:  Timing{WallNS: 100, RunNS: 10, CheckNS: 1, Workers: 2}}
	failed, undec := map[string]int{"P1": 0, "P2": 0, "P3": 0}, map[string]int{}
	for seed := uint64(1); seed <= 8; seed++ {
		if !sh.Has(seed) {
			continue
		}
		o := outcomes[seed]
		x.Runs++
		x.Timing.RunNS += 10
		if len(o.failed) > 0 {
			x.FailedRuns++
			x.Failures = append(x.Failures, Failure{Seed: seed, Properties: o.failed, Message: fmt.Sprintf("seed %d failed", seed)})
			x.Artifacts = append(x.Artifacts, Artifact{Seed: seed, Property: o.failed[0]})
		}
		for _, p := range o.failed {
			failed[p]++
		}
		if len(o.undec) > 0 {
			x.Undecided = append(x.Undecided, Failure{Seed: seed, Properties: o.undec, Message: fmt.Sprintf("seed %d undecided", seed)})
		}
		for _, p := range o.undec {
			undec[p]++
		}
		if o.probe {
			x.Probes[0].Runs++
		}
		x.Metrics[0].Values = append(x.Metrics[0].Values, o.latency)
		if seed%4 == 0 {
			x.Audit.Runs++
		}
	}
	for _, p := range []string{"P1", "P2", "P3"} {
		x.Properties = append(x.Properties, PropertyCount{Property: p, Failed: failed[p], Undecided: undec[p]})
	}
	sort.Float64s(x.Metrics[0].Values)
	s := &Summary{Format: Format, Command: "explore", Faults: "moderate", Seeds: "1-8", Systems: []System{x}}
	if sh.N > 1 {
		s.Shard = sh.String()
	}
	return s
}

// withoutTiming drops what differs between one run and merged shards:
// the wall-clock timings.
func withoutTiming(s *Summary) *Summary {
	c := *s
	c.Systems = append([]System(nil), s.Systems...)
	for i := range c.Systems {
		c.Systems[i].Timing = Timing{}
	}
	return &c
}

// TestMerge: two shards' summaries merge to what one run of every seed
// gives: the counts add, the failures (and artifacts) merge by seed, the
// samples merge sorted; the timings add (the wall clock is the longest
// shard's).
func TestMerge(t *testing.T) {
	const design = `{"knobs":[]}`
	whole := explored(Shard{0, 1}, design)
	// Given in either order, the shards merge to the same summary.
	for _, order := range [][2]uint64{{0, 1}, {1, 0}} {
		a, b := explored(Shard{order[0], 2}, design), explored(Shard{order[1], 2}, design)
		got, notes, err := Merge([]*Summary{a, b})
		require.NoError(t, err)
		assert.Empty(t, notes, "every shard is there")
		assert.Equal(t, withoutTiming(whole), withoutTiming(got), "shards %v", order)

		x := got.Systems[0]
		assert.Equal(t, 8, x.Runs)
		assert.Equal(t, 3, x.FailedRuns)
		assert.Equal(t, []PropertyCount{{"P1", 2, 1}, {"P2", 2, 0}, {"P3", 0, 2}}, x.Properties)
		var undecided []uint64
		for _, f := range x.Undecided {
			undecided = append(undecided, f.Seed)
		}
		assert.Equal(t, []uint64{3, 6}, undecided, "undecided runs by seed")
		var seeds []uint64
		for _, f := range x.Failures {
			seeds = append(seeds, f.Seed)
		}
		assert.Equal(t, []uint64{2, 5, 7}, seeds, "failures by seed")
		assert.Equal(t, 3, x.Probes[0].Runs)
		assert.Equal(t, 2, x.Audit.Runs)
		assert.Equal(t, []float64{0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4}, x.Metrics[0].Values)
		assert.Equal(t, Timing{WallNS: 100, RunNS: 100, CheckNS: 2, Workers: 4}, x.Timing)
		assert.Empty(t, got.Shard, "the merged summary is no shard")
		assert.True(t, got.Failed(), "a failing run fails the merged summary")
	}

	// Merging does not change the shards' own samples.
	a, b := explored(Shard{0, 2}, design), explored(Shard{1, 2}, design)
	before := append([]float64(nil), a.Systems[0].Metrics[0].Values...)
	_, _, err := Merge([]*Summary{a, b})
	require.NoError(t, err)
	assert.Equal(t, before, a.Systems[0].Metrics[0].Values)

	// One whole summary merges to itself.
	got, notes, err := Merge([]*Summary{whole})
	require.NoError(t, err)
	assert.Empty(t, notes)
	assert.Equal(t, whole, got)
}

// TestMergeRefuses: summaries that are not shards of one run are refused
// with an error naming what differs; a missing shard is a note.
func TestMergeRefuses(t *testing.T) {
	const design = `{"knobs":[]}`
	shard := func(i, n uint64) *Summary { return explored(Shard{i, n}, design) }
	// matrix is shard i/2 of a knob matrix, changed by change.
	matrix := func(i int, change func(*Summary)) *Summary {
		s := &Summary{Format: Format, Command: "mutants", Faults: "moderate", Seeds: "from 1", Shard: fmt.Sprintf("%d/2", i),
			Mutants: []Mutant{{System: "twopc", Knob: "a"}}, MinimizeBudget: 300,
			Designs: []Design{{System: "twopc", Design: "default", DesignJSON: json.RawMessage(`{"n":1}`)}}}
		if change != nil {
			change(s)
		}
		return s
	}
	for _, tc := range []struct {
		name  string
		parts []*Summary
		err   string
	}{
		{"nothing", nil, "nothing to merge"},
		{"designs", []*Summary{shard(0, 2), func() *Summary {
			s := explored(Shard{1, 2}, `{"knobs":["k"]}`)
			s.Systems[0].Design = "knobs k"
			return s
		}()},
			"summary 2 ran another design of toy (knobs k) than summary 1 (default): not shards of one run; run every shard with the same --knob, --set and --design"},
		{"worlds", []*Summary{shard(0, 2), func() *Summary { s := shard(1, 2); s.Systems[0].World = "fixed"; return s }()},
			"summary 2 ran toy in world fixed, summary 1 in world (none): not shards of one run; run every shard with the same --world"},
		{"worlds, the first shard interrupted before the system", []*Summary{
			func() *Summary {
				s := shard(0, 3)
				s.Systems, s.Interrupted, s.NotRun = nil, "SIGINT", []string{"toy"}
				return s
			}(),
			shard(1, 3), func() *Summary { s := shard(2, 3); s.Systems[0].World = "fixed"; return s }()},
			"summary 3 ran toy in world fixed, summary 2 in world (none): not shards of one run; run every shard with the same --world"},
		{"faults", []*Summary{shard(0, 2), func() *Summary { s := shard(1, 2); s.Faults = "heavy"; return s }()},
			"summary 2 is of explore --faults heavy --seeds 1-8, summary 1 of explore --faults moderate --seeds 1-8: not shards of one run"},
		{"seeds", []*Summary{shard(0, 2), func() *Summary { s := shard(1, 2); s.Seeds = "1-9"; return s }()},
			"summary 2 is of explore --faults moderate --seeds 1-9, summary 1 of explore --faults moderate --seeds 1-8: not shards of one run"},
		{"command", []*Summary{shard(0, 2), func() *Summary { s := shard(1, 2); s.Command = "mutants"; return s }()},
			"summary 2 is of mutants --faults moderate --seeds 1-8, summary 1 of explore --faults moderate --seeds 1-8: not shards of one run"},
		{"format", []*Summary{shard(0, 2), func() *Summary { s := shard(1, 2); s.Format = "x"; return s }()},
			`summary 2: format "x" is not "fencesim-summary/1"`},
		{"shard counts", []*Summary{shard(0, 2), shard(1, 3)}, "summary 2 is shard 1/3, summary 1 is of 2 shards"},
		{"twice", []*Summary{shard(0, 2), shard(0, 2)}, "shard 0/2 is given twice"},
		{"systems", []*Summary{shard(0, 2), func() *Summary { s := shard(1, 2); s.Systems = append(s.Systems, System{System: "outbox"}); return s }()},
			"summary 2 ran the system outbox, which summary 1 did not: not shards of one run (the merged summary would cover some systems with only part of the seeds); run every shard with the same --system"},
		{"fewer systems", []*Summary{shard(0, 2), func() *Summary { s := shard(1, 2); s.Systems = nil; s.NotRun = []string{"twopc"}; return s }()},
			"summary 2 ran the system twopc and not the system toy, unlike summary 1: not shards of one run (the merged summary would cover some systems with only part of the seeds); run every shard with the same --system"},
		{"systems in another order", []*Summary{
			func() *Summary { s := shard(0, 2); s.NotRun = []string{"a", "b"}; return s }(),
			func() *Summary { s := shard(1, 2); s.NotRun = []string{"b", "a"}; return s }()},
			"summary 2 ran the systems in another order (toy, b, a) than summary 1 (toy, a, b): not shards of one run (the merged summary would cover some systems with only part of the seeds); run every shard with the same --system"},
		{"knobs", []*Summary{matrix(0, nil), matrix(1, func(s *Summary) { s.NotRun = []string{"b"} })},
			"summary 2 ran the knob b, which summary 1 did not: not shards of one run (the merged summary would cover some knobs with only part of the seeds); run every shard with the same --system and --knob"},
		{"matrix designs", []*Summary{matrix(0, nil), matrix(1, func(s *Summary) {
			s.Designs = []Design{{System: "twopc", Design: "set n=2", DesignJSON: json.RawMessage(`{"n": 2}`)}}
		})},
			"summary 2 switched the knobs of twopc on in another design (set n=2) than summary 1 (default): not shards of one run; run every shard with the same --set"},
		{"matrix designs, indented", []*Summary{matrix(0, nil), matrix(1, func(s *Summary) {
			s.Designs = []Design{{System: "twopc", Design: "default", DesignJSON: json.RawMessage("{\n  \"n\": 1\n}")}}
			s.MinimizeBudget = 5
		})},
			"summary 2 minimized its catches with --minimize-budget 5, summary 1 with 300: not shards of one run; run every shard with the same --minimize-budget"},
		{"matrix of an older fencesim", []*Summary{matrix(0, nil), matrix(1, func(s *Summary) { s.Designs, s.MinimizeBudget = nil, 0 })},
			"summary 2 records no design for its knobs (an older fencesim wrote it): merge cannot tell whether its shards ran one matrix; run every shard again with this fencesim"},
		{"failfast", []*Summary{shard(0, 2), func() *Summary { s := shard(1, 2); s.FailFast = true; return s }()},
			"summary 2 ran with --failfast, summary 1 without: not shards of one run (a --failfast shard stops at its first failing run and leaves its other seeds out); run every shard with --failfast, or none"},
		{"failfast first", []*Summary{func() *Summary { s := shard(0, 2); s.FailFast = true; return s }(), shard(1, 2)},
			"summary 1 ran with --failfast, summary 2 without: not shards of one run (a --failfast shard stops at its first failing run and leaves its other seeds out); run every shard with --failfast, or none"},
		{"bad shard", []*Summary{func() *Summary { s := shard(0, 2); s.Shard = "2/2"; return s }()},
			`summary 1: --shard "2/2": want i/n with 0 <= i < n, e.g. --shard 0/4 (seed s belongs to shard s mod n)`},
	} {
		got, _, err := Merge(tc.parts)
		assert.EqualError(t, err, tc.err, tc.name)
		assert.Nil(t, got, tc.name)
	}

	got, notes, err := Merge([]*Summary{shard(1, 3)})
	require.NoError(t, err)
	assert.Equal(t, []string{"shards missing: 0/3, 2/3 (the summary covers only the others)"}, notes)
	assert.Equal(t, 3, got.Systems[0].Runs, "shard 1/3 of seeds 1-8: 1, 4 and 7")
	named, count := Missing([]*Summary{shard(1, 3)})
	assert.Equal(t, []string{"0/3", "2/3"}, named)
	assert.Equal(t, uint64(2), count)
	named, count = Missing([]*Summary{shard(0, 3), shard(1, 3), shard(2, 3)})
	assert.Empty(t, named)
	assert.Zero(t, count)
	// Many shards missing: the first named, the rest counted.
	named, count = Missing([]*Summary{shard(3, 1<<40)})
	assert.Equal(t, uint64(1<<40-1), count)
	assert.Equal(t, "0/1099511627776, 1/1099511627776, 2/1099511627776, 4/1099511627776, 5/1099511627776, 6/1099511627776, 7/1099511627776, 8/1099511627776 and 1099511627767 more", MissingText(named, count))
}

// TestMergeInterrupted: an interrupted shard marks the merged summary
// interrupted and lists what it did not run once.
func TestMergeInterrupted(t *testing.T) {
	a, b := explored(Shard{0, 2}, "{}"), explored(Shard{1, 2}, "{}")
	a.Interrupted, a.NotRun = "SIGINT", []string{"outbox", "twopc"}
	b.Interrupted, b.NotRun = "SIGTERM", []string{"twopc"}
	b.Systems = append(b.Systems, System{System: "outbox", Runs: 1}) // interrupted in it
	got, notes, err := Merge([]*Summary{a, b})
	require.NoError(t, err)
	assert.Equal(t, "SIGTERM", got.Interrupted, "the last interruption's signal")
	assert.Equal(t, []string{"outbox", "twopc"}, got.NotRun)
	require.Len(t, got.Systems, 1, "outbox, run by shard 1/2 alone, is left out")
	assert.Equal(t, "toy", got.Systems[0].System)
	assert.Equal(t, []string{
		"summary 1 (shard 0/2) was interrupted: the merged summary covers only what finished",
		"summary 2 (shard 1/2) was interrupted: the merged summary covers only what finished",
		"outbox left out: an interrupted shard did not run them (the other shards' summaries hold their runs)",
	}, notes)
}

// TestMergeFailFast: --failfast shards merge as one machine's --failfast
// run: no system after the first that failed (the others are not run),
// and a note that the runs are those the shards made; without a failure
// they merge to the whole run.
func TestMergeFailFast(t *testing.T) {
	failfast := func(sh Shard) *Summary {
		s := explored(sh, "{}")
		s.FailFast = true
		// A second system that passed every seed.
		s.Systems = append(s.Systems, System{System: "other", Runs: 4, Properties: []PropertyCount{{Property: "P1"}}, Metrics: []MetricSamples{}})
		return s
	}
	a, b := failfast(Shard{0, 2}), failfast(Shard{1, 2})
	// Shard 0/2 stopped at its first failing run, seed 2, before other.
	a.Systems[0].Runs, a.Systems[0].FailedRuns = 1, 1
	a.Systems[0].Failures = a.Systems[0].Failures[:1]
	a.Systems, a.NotRun = a.Systems[:1], []string{"other"}
	got, notes, err := Merge([]*Summary{a, b})
	require.NoError(t, err)
	assert.True(t, got.FailFast)
	require.Len(t, got.Systems, 1, "other is left out")
	assert.Equal(t, "toy", got.Systems[0].System)
	assert.Equal(t, 1+4, got.Systems[0].Runs, "the runs the shards made")
	assert.Equal(t, []string{"other"}, got.NotRun)
	assert.Equal(t, []string{"the shards ran --failfast: each stopped at its own first failing run, so the merged summary counts the runs they made, not every seed; other left out, as one machine would not have started them after toy failed (the shards' own summaries hold their runs)"}, notes)

	// A shard that failed in other, after toy passed in both.
	a, b = failfast(Shard{0, 2}), failfast(Shard{1, 2})
	for _, s := range []*Summary{a, b} {
		s.Systems[0] = explored(Shard{0, 1}, "{}").Systems[0]
		s.Systems[0].FailedRuns, s.Systems[0].Failures, s.Systems[0].Properties = 0, nil, nil
	}
	b.Systems[1].FailedRuns = 1
	got, notes, err = Merge([]*Summary{a, b})
	require.NoError(t, err)
	assert.Len(t, got.Systems, 2)
	assert.Empty(t, got.NotRun)
	assert.Equal(t, []string{"the shards ran --failfast: each stopped at its own first failing run, so the merged summary counts the runs they made, not every seed"}, notes)

	// No failure: nothing stopped, the whole run.
	a, b = failfast(Shard{0, 2}), failfast(Shard{1, 2})
	for _, s := range []*Summary{a, b} {
		s.Systems = s.Systems[1:]
	}
	got, notes, err = Merge([]*Summary{a, b})
	require.NoError(t, err)
	assert.Empty(t, notes)
	assert.Equal(t, 8, got.Systems[0].Runs)
	assert.True(t, got.FailFast)
}

// TestMergeMutants: the knob matrix's shards merge to one machine's row:
// the first failing seed of either shard is the catch, the runs are the
// seeds up to it (the time the shards' mean per run), a scenario counts
// only when no seed caught the knob, and the design's own failures are
// kept only before the catch, by seed.
func TestMergeMutants(t *testing.T) {
	s := &Summary{}
	s.mergeMutant(Mutant{System: "arbiter", Knob: "k", Harmful: true, Seed: 10, BaseFails: []uint64{8, 2}})
	s.mergeMutant(Mutant{System: "arbiter", Knob: "k", Harmful: true, BaseFails: []uint64{15, 3}})
	assert.Equal(t, []uint64{2, 3, 8}, s.Mutants[0].BaseFails, "the design's own failures before the catch, by seed")

	part := func(sh string, m ...Mutant) *Summary {
		return &Summary{Format: Format, Command: "mutants", Faults: "moderate", Seeds: "from 1", Budget: 20, Shard: sh, Mutants: m,
			Designs: []Design{{System: "outbox", Design: "default", DesignJSON: json.RawMessage(`{}`)}}, MinimizeBudget: 300}
	}
	got, notes, err := Merge([]*Summary{
		part("0/2",
			Mutant{System: "outbox", Knob: "a", Harmful: true, First: 1, Budget: 20, Runs: 5, Seed: 10, Failed: []string{"PB1"}, Faults: 7, Kept: 2, Needed: 1, RunNS: 50},
			Mutant{System: "outbox", Knob: "b", Harmful: false, First: 1, Budget: 20, Runs: 10, RunNS: 100},
			Mutant{System: "outbox", Knob: "c", Harmful: true, First: 1, Budget: 20, Runs: 2, Seed: 4, Failed: []string{"PB1"}, RunNS: 20}),
		part("1/2",
			Mutant{System: "outbox", Knob: "a", Harmful: true, First: 1, Budget: 20, Runs: 4, Seed: 7, Failed: []string{"PB2"}, Faults: 5, Kept: 1, Needed: 1, RunNS: 40},
			Mutant{System: "outbox", Knob: "b", Harmful: false, First: 1, Budget: 20, Runs: 10, RunNS: 100, Scenario: "B.3"},
			Mutant{System: "outbox", Knob: "c", Harmful: true, First: 1, Budget: 20, Runs: 10, RunNS: 100, Scenario: "B.5"}),
	})
	require.NoError(t, err)
	assert.Empty(t, notes)
	require.Len(t, got.Mutants, 3)
	a := got.Mutants[0]
	assert.Equal(t, Mutant{System: "outbox", Knob: "a", Harmful: true, First: 1, Budget: 20, Runs: 7, Seed: 7, Failed: []string{"PB2"}, Faults: 5, Kept: 1, Needed: 1, RunNS: 70}, a,
		"seeds 1-7 run, 10ns each")
	assert.Equal(t, 7, a.RunsToDetect())
	assert.True(t, a.AsExpected())
	b := got.Mutants[1]
	assert.Equal(t, 20, b.Runs)
	assert.Equal(t, "B.3", b.Scenario)
	assert.True(t, b.Caught(), "a harmless knob a scenario caught")
	assert.False(t, b.AsExpected())
	assert.True(t, got.Failed(), "a false alarm fails the matrix")
	c := got.Mutants[2]
	assert.Equal(t, Mutant{System: "outbox", Knob: "c", Harmful: true, First: 1, Budget: 20, Runs: 4, Seed: 4, Failed: []string{"PB1"}, RunNS: 40}, c,
		"caught by seed 4 of shard 0/2: no scenario played (shard 1/2 played one, having missed it), seeds 1-4 run")

	// --partial: the runs are the seeds of the shards given.
	got, _, err = Merge([]*Summary{part("1/3", Mutant{System: "outbox", Knob: "a", Harmful: true, First: 1, Budget: 20, Runs: 3, Seed: 7, RunNS: 30})})
	require.NoError(t, err)
	assert.Equal(t, 3, got.Mutants[0].Runs, "seeds 1, 4 and 7")
}

// TestShardCount: the seeds of a range that belong to a shard.
func TestShardCount(t *testing.T) {
	for _, c := range []struct {
		sh          Shard
		first, last uint64
		want        uint64
	}{
		{Shard{0, 1}, 1, 20, 20},
		{Shard{0, 2}, 1, 7, 3},
		{Shard{1, 2}, 1, 7, 4},
		{Shard{1, 3}, 1, 7, 3},
		{Shard{0, 3}, 0, 0, 1},
		{Shard{2, 3}, 0, 1, 0},
		{Shard{3, 4}, 5, 4, 0},
		{Shard{1, 4}, 1<<64 - 10, 1<<64 - 1, 2},
	} {
		n := uint64(0)
		for s := c.first; s >= c.first && s <= c.last; s++ {
			if c.sh.Has(s) {
				n++
			}
		}
		assert.Equal(t, n, c.want, "the test's own count, %v of %d-%d", c.sh, c.first, c.last)
		assert.Equal(t, c.want, c.sh.count(c.first, c.last), "%v of %d-%d", c.sh, c.first, c.last)
	}
}

// TestFile: a saved summary reads back the same (its design's JSON
// indented with the rest) and saves to the same file again; a file of
// another format, or with a field the format does not have, is refused.
func TestFile(t *testing.T) {
	dir := t.TempDir()
	path, again := filepath.Join(dir, "s.json"), filepath.Join(dir, "again.json")
	want := explored(Shard{1, 2}, `{"knobs":[]}`)
	require.NoError(t, want.Save(path))
	got, err := Read(path)
	require.NoError(t, err)
	var design bytes.Buffer
	require.NoError(t, json.Compact(&design, got.Systems[0].DesignJSON))
	assert.Equal(t, `{"knobs":[]}`, design.String())
	got.Systems[0].DesignJSON = want.Systems[0].DesignJSON
	assert.Equal(t, want, got)
	got, err = Read(path)
	require.NoError(t, err)
	require.NoError(t, got.Save(again))
	a, err := os.ReadFile(path)
	require.NoError(t, err)
	b, err := os.ReadFile(again)
	require.NoError(t, err)
	assert.Equal(t, string(a), string(b))
	require.NoError(t, (&Summary{}).Save(""), "no path: nothing written")

	other := filepath.Join(dir, "other.json")
	require.NoError(t, os.WriteFile(other, []byte(`{"format":"fencesim-summary/0"}`), 0o644))
	_, err = Read(other)
	assert.EqualError(t, err, other+`: format "fencesim-summary/0" is not "fencesim-summary/1"`)
	require.NoError(t, os.WriteFile(other, []byte(`{"format":"fencesim-summary/1","extra":1}`), 0o644))
	_, err = Read(other)
	assert.EqualError(t, err, other+`: not a fencesim summary: json: unknown field "extra"`)
	_, err = Read(filepath.Join(dir, "none.json"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestShard: i/n parses, seed s belongs to shard s mod n, and anything
// else is refused.
func TestShard(t *testing.T) {
	sh, err := ParseShard("")
	require.NoError(t, err)
	assert.Equal(t, Shard{0, 1}, sh)
	sh, err = ParseShard(" 2 / 3")
	require.NoError(t, err)
	assert.Equal(t, Shard{2, 3}, sh)
	assert.Equal(t, "2/3", sh.String())
	assert.True(t, sh.Has(5))
	assert.False(t, sh.Has(6))
	assert.True(t, Shard{0, 1}.Has(6))
	for _, bad := range []string{"3/3", "1", "a/2", "0/0", "-1/2"} {
		_, err := ParseShard(bad)
		assert.Error(t, err, bad)
	}
}
