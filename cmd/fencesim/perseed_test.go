package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/internal/stats"
	"github.com/fencesim/fencesim/internal/summary"
	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/traces"
)

func readRecords(t *testing.T, path string) []seedRecord {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	recs, err := readPerSeed(f, path)
	require.NoError(t, err)
	return recs
}

// TestPerSeedAndKeepWorst: --per-seed writes one record per seed, by seed,
// its failures those of the summary; --keep-worst keeps the passing runs
// with the highest values, which the per-seed file confirms.
func TestPerSeedAndKeepWorst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "runs.jsonl")
	var stdout, stderr bytes.Buffer
	code := Main([]string{"explore", "--system", "arbiter", "--knob", "fence-by-worker-id", "--runs", "30", "--artifacts", "0",
		"--per-seed", file, "--keep-worst", "MA1=2", "--out", dir, "--json", "--workers", "2"}, &stdout, &stderr)
	require.Equal(t, exitFail, code, "%s", stderr.String())
	var s summary.Summary
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &s))
	recs := readRecords(t, file)
	require.Len(t, recs, 30)
	failing := map[uint64]bool{}
	for _, f := range s.Systems[0].Failures {
		failing[f.Seed] = true
	}
	best := map[uint64]float64{}
	for i, r := range recs {
		assert.Equal(t, uint64(i+1), r.Seed, "records by seed")
		assert.Equal(t, traces.HashV2, traces.HashVersion(r.Hash), "%q: a version 2 hash by default", r.Hash)
		assert.Positive(t, r.Events)
		assert.Equal(t, failing[r.Seed], len(r.Failed) > 0, "seed %d: the record's verdict is the summary's", r.Seed)
		if len(r.Failed) == 0 {
			for _, m := range r.Metrics {
				if m.Name == "extra_latency (MA1)" {
					for _, v := range m.Values {
						best[r.Seed] = max(best[r.Seed], v)
					}
				}
			}
		}
	}
	require.NotEmpty(t, failing, "fence-by-worker-id fails some of 30 seeds")
	kept := s.Systems[0].Kept
	require.Len(t, kept, 2)
	for _, k := range kept {
		assert.False(t, failing[k.Seed], "a kept run passes")
		assert.FileExists(t, k.Trace)
		assert.FileExists(t, k.Report)
		assert.Equal(t, best[k.Seed], k.Value)
		for seed, v := range best {
			if seed != kept[0].Seed && seed != kept[1].Seed {
				assert.LessOrEqual(t, v, k.Value, "seed %d's extra latency is above a kept one's", seed)
			}
		}
	}
}

// TestPerSeedHashVersions: --per-seed-hash 1 writes the hash fencesim
// wrote before versions (the sha256 of the full record's lines, the empty
// header's first), 2 (the default) the xxh3 of the events' fields, each
// the hash of the run recorded in full; a version diff's two sides do not
// share is not asked for, and records of two versions are refused.
func TestPerSeedHashVersions(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []int{traces.HashV1, traces.HashV2} {
		file := filepath.Join(dir, fmt.Sprintf("v%d.jsonl", v))
		var stdout, stderr bytes.Buffer
		code := Main([]string{"explore", "--system", "arbiter,outbox,twopc", "--runs", "4", "--artifacts", "0", "--audit", "0",
			"--per-seed", file, "--per-seed-hash", fmt.Sprint(v)}, &stdout, &stderr)
		require.Contains(t, []int{exitOK, exitFail}, code, "%s", stderr.String())
		recs := readRecords(t, file)
		require.Len(t, recs, 12)
		for _, r := range recs {
			sys, err := systems.ByName(r.System)
			require.NoError(t, err)
			full := systems.Run(sys, sys.Default(), r.Seed, systems.Moderate, systems.Options{Full: true})
			want := traces.EventsHash(v, full.Events)
			if v == traces.HashV1 {
				assert.Equal(t, traces.HashOf(traces.Header{}, full.Events), want, "version 1 is the hash of the lines")
			}
			assert.Equal(t, want, r.Hash, "%s seed %d: version %d", r.System, r.Seed, v)
			assert.Equal(t, len(full.Events), r.Events, "%s seed %d: every event counted", r.System, r.Seed)
			assert.Equal(t, v, traces.HashVersion(r.Hash))
		}
	}
	for _, args := range [][]string{
		{"--per-seed", filepath.Join(dir, "x.jsonl"), "--per-seed-hash", "3"},
		{"--per-seed-hash", "1"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(append([]string{"explore", "--system", "arbiter", "--runs", "2"}, args...), &stdout, &stderr)
		assert.Equal(t, exitUsage, code, "%v", args)
		assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr.String()), "\n")+1, "one line: %q", stderr.String())
		assert.Contains(t, stderr.String(), "--per-seed-hash")
	}

	// diff asks both sides for version 2 only when both know the flag.
	old := fakeFencesim(t, dir, "old", "--never", "Usage: fencesim explore [flags]\n  -per-seed FILE", 0)
	cur := fakeFencesim(t, dir, "cur", "--never", "Usage: fencesim explore [flags]\n  -per-seed FILE\n  -per-seed-hash VERSION", 0)
	ctx := context.Background()
	assert.Equal(t, [2][]string{{"--per-seed-hash", "2"}, {"--per-seed-hash", "2"}}, hashArgs(ctx, [2]string{cur, cur}, dir))
	assert.Equal(t, [2][]string{nil, {"--per-seed-hash", "1"}}, hashArgs(ctx, [2]string{old, cur}, dir))
	assert.Equal(t, [2][]string{{"--per-seed-hash", "1"}, nil}, hashArgs(ctx, [2]string{cur, old}, dir))
	assert.Equal(t, [2][]string{nil, nil}, hashArgs(ctx, [2]string{old, old}, dir))
	v1 := seedRecord{Hash: strings.Repeat("a", 64)}
	v2 := seedRecord{Hash: "v2:" + strings.Repeat("b", 32)}
	assert.NoError(t, sameHashVersion([2][]seedRecord{{v1}, {v1}}))
	assert.NoError(t, sameHashVersion([2][]seedRecord{{v2}, {v2}}))
	err := sameHashVersion([2][]seedRecord{{v1}, {v2}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "version 1, the working tree's version 2")
}

// TestFailFast: explore stops at the first failure, minimizes it and
// prints its schedule one action a line.
func TestFailFast(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Main([]string{"explore", "--system", "arbiter", "--knob", "fence-by-worker-id", "--runs", "1000", "--failfast", "--out", dir, "--workers", "2"}, &stdout, &stderr)
	require.Equal(t, exitFail, code, "%s", stderr.String())
	out := stdout.String()
	assert.NotContains(t, out, "runs: 1000,", "stops before the end")
	i := strings.Index(out, "minimized schedule of seed ")
	require.GreaterOrEqual(t, i, 0, "%s", out)
	lines := strings.Split(out[i:], "\n")[1:]
	n := 0
	for _, l := range lines {
		if !strings.HasPrefix(l, "  ") {
			break
		}
		n++
		assert.Regexp(t, `^  (needed|not needed|end) +@`, l)
	}
	assert.Positive(t, n, "one action a line")
	assert.Contains(t, out, "replay: fencesim replay "+dir)
	assert.Contains(t, out, "\nFAILFAST: stopped at the first failing run (--failfast): the counts cover the runs made until then, not every seed\n")
}

// TestDeltaCounts: a rare event is counted exactly and named by seed; a
// property newly failing is named with its seeds; thresholds cross as
// their sign says.
func TestDeltaCounts(t *testing.T) {
	rec := func(seed uint64, fse float64, failed ...string) seedRecord {
		r := seedRecord{Format: perSeedFormat, System: "arbiter", Seed: seed, Hash: "h", Failed: failed, Held: []string{"PA1 x"},
			Metrics: []systems.Metric{{Name: "false_system_errors (MA3)", Values: []float64{fse}}, {Name: "wasted_judgings (MA2)", Values: []float64{float64(seed % 3)}}}}
		if len(failed) > 0 {
			r.Hash = "other"
		}
		return r
	}
	var a, b []seedRecord
	for s := uint64(1); s <= 1000; s++ {
		a = append(a, rec(s, 0))
		switch s {
		case 17:
			b = append(b, rec(s, 1, "MA3 false-system-errors"))
		default:
			b = append(b, rec(s, 0))
		}
	}
	d := newDelta("arbiter", [2]string{"base", "working"}, a, b)
	assert.Equal(t, 1, d.Altered)
	assert.Equal(t, []uint64{17}, d.AlteredSeeds)
	var buf bytes.Buffer
	d.writeText(&buf, "your change")
	out := buf.String()
	assert.Contains(t, out, "your change altered 1 of 1000 runs")
	assert.Contains(t, out, "false_system_errors (MA3): 0 runs with any on base, 1 run (seed 17, total 1) on working")
	assert.True(t, d.newlyFailing())
	for _, tc := range []struct {
		spec    string
		crossed bool
	}{
		{"MA3.runs=+0", true},
		{"MA3=+1000%", true}, // relative to a zero baseline: any rise crosses
		{"MA3.total=+1", false},
		{"MA2=+1%", false},
		{"MA2=-1%", false},
	} {
		th, err := parseThreshold(tc.spec, []string{"false_system_errors (MA3)", "wasted_judgings (MA2)"}, map[string]string{})
		require.NoError(t, err, tc.spec)
		th.judge(d)
		assert.Equal(t, tc.crossed, th.Crossed, tc.spec)
	}
}

// TestDeltaUndecided: a run a check could not decide is counted per side
// and property and named in one line; a flip whose held side was such a
// run is listed as one that may be none.
func TestDeltaUndecided(t *testing.T) {
	rec := func(seed uint64, undecided bool, failed ...string) seedRecord {
		r := seedRecord{Format: perSeedFormat, System: "arbiter", Seed: seed, Hash: "h", Failed: failed, Held: []string{"PA1 x"}}
		if len(failed) > 0 {
			r.Held, r.Hash = nil, "other"
		}
		if undecided {
			r.Undecided = []string{"PA1 x"}
		}
		return r
	}
	var a, b []seedRecord
	for s := uint64(1); s <= 20; s++ {
		a = append(a, rec(s, s == 5 || s == 9))
		b = append(b, rec(s, s == 12, map[bool]string{true: "PA1 x"}[s == 5 || s == 7]))
	}
	for i := range b {
		if b[i].Failed[0] == "" {
			b[i].Failed = nil
		}
	}
	d := newDelta("arbiter", [2]string{"base", "working"}, a, b)
	assert.Equal(t, [2][]uint64{{5, 9}, {12}}, d.UndecidedSeeds)
	require.Len(t, d.Properties, 1)
	p := d.Properties[0]
	assert.Equal(t, [2]int{2, 1}, p.Undecided)
	assert.Equal(t, []uint64{5, 7}, p.NewlyFailing)
	assert.Equal(t, []uint64{5}, p.Unsure, "seed 5 held on base undecided")
	var buf bytes.Buffer
	d.writeText(&buf, "your change")
	out := buf.String()
	assert.Contains(t, out, "undecided runs: base 2, working 1 (a check could not decide: held, not judged by that check; fencesim run --seed S says why): PA1 x in 2 and 1; base seeds 5, 9; working seeds 12\n")
	assert.Contains(t, out, "  PA1 newly fails on 2: seeds 5, 7\n  PA1: 1 of these flips held undecided (a check gave up): the run may have failed it too: seeds 5\n")

	// Without undecided runs, no line.
	d = newDelta("arbiter", [2]string{"base", "working"}, []seedRecord{rec(1, false)}, []seedRecord{rec(1, false)})
	buf.Reset()
	d.writeText(&buf, "your change")
	assert.NotContains(t, buf.String(), "undecided")
	assert.Equal(t, [2][]uint64{{}, {}}, d.UndecidedSeeds)
}

// TestMutantsSeparateTheDesignsOwnFailures: a seed that fails with a knob
// and fails the same way without it is the design's own failure, not the
// knob's. Batch claims used to fail MA3 on seed 163 by themselves (the
// frozen arbiter that got no grace, fixed by [trust]): now the design with
// claim_batch=2 passes on its own, so the harmless knob's row names no
// failure of the design's and the matrix exits 0. (The merge of shards'
// own failures is internal/summary's TestMergeMutants.)
func TestMutantsSeparateTheDesignsOwnFailures(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Main([]string{"mutants", "--system", "arbiter", "--set", "claim_batch=2", "--knob", "no-leader-lock", "--json"}, &stdout, &stderr)
	require.Equal(t, exitOK, code, "%s", stderr.String())
	var s summary.Summary
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &s))
	require.Len(t, s.Mutants, 1)
	m := s.Mutants[0]
	assert.Zero(t, m.Seed, "no-leader-lock did no damage of its own")
	assert.True(t, m.AsExpected(), "a harmless knob that did nothing is as expected")
	assert.Empty(t, m.BaseFails, "the design with batch claims no longer fails on its own")
	var text bytes.Buffer
	writeMutants(&text, &s)
	assert.NotContains(t, text.String(), "THE DESIGN ITSELF FAILS")
}

// TestReviewFindings: the edge cases a review reproduced: a "-0" bound is
// a fall; both sides' records of several systems are written by system,
// then seed. (Merged shards keeping only the design's own failures before
// the catch is internal/summary's TestMergeMutants.)
func TestReviewFindings(t *testing.T) {
	d := &runDelta{Metrics: []metricDelta{{Name: "wasted_judgings (MA2)", Sides: [2]stats.Spread{{Mean: 5}, {Mean: 6}}}}}
	for _, spec := range []string{"MA2=-0", "MA2=-0%"} {
		th, err := parseThreshold(spec, []string{"wasted_judgings (MA2)"}, map[string]string{})
		require.NoError(t, err)
		th.judge(d)
		assert.False(t, th.Crossed, "%s bounds a fall: a rise does not cross it", spec)
	}
	rec := func(sys, side string, seed uint64) seedRecord {
		return seedRecord{Format: perSeedFormat, System: sys, Side: side, Seed: seed, Failed: []string{}, Held: []string{}, Metrics: []systems.Metric{}}
	}
	file := filepath.Join(t.TempDir(), "both.jsonl")
	require.NoError(t, writeBothSides(file, [2][]seedRecord{
		{rec("arbiter", "base", 1), rec("arbiter", "base", 2), rec("outbox", "base", 1)},
		{rec("arbiter", "working", 1), rec("arbiter", "working", 2), rec("outbox", "working", 1)}}))
	var order []string
	for _, r := range readRecords(t, file) {
		order = append(order, fmt.Sprintf("%s/%s/%d", r.System, r.Side, r.Seed))
	}
	assert.Equal(t, []string{"arbiter/base/1", "arbiter/working/1", "arbiter/base/2", "arbiter/working/2", "outbox/base/1", "outbox/working/1"}, order)
}
