package main

import (
	"bytes"
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
		assert.Len(t, r.Hash, 64)
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
