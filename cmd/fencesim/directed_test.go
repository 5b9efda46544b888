package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/internal/summary"
	"github.com/fencesim/fencesim/sim"
)

// directedRun runs explore --search directed and returns its one system.
func directedRun(t *testing.T, args ...string) (int, summary.System) {
	t.Helper()
	code, stdout, stderr := run(t, append([]string{"explore", "--search", "directed", "--json", "--artifacts", "0", "--workers", "2"}, args...)...)
	require.Contains(t, []int{exitOK, exitFail}, code, stderr)
	var s summary.Summary
	require.NoError(t, json.Unmarshal([]byte(stdout), &s), stdout)
	require.Len(t, s.Systems, 1)
	require.NotNil(t, s.Systems[0].Directed)
	return code, s.Systems[0]
}

// TestDirectedSeedsReplay: a directed search's failing seed is a plain
// seed: explore --seeds plays it to the same verdicts, run writes its
// trace and replay says identical; the search itself is deterministic in
// its seed.
func TestDirectedSeedsReplay(t *testing.T) {
	code, x := directedRun(t, "--system", "arbiter", "--knob", "claim-lookup-only", "--runs", "120", "--search-seed", "3")
	require.Equal(t, exitFail, code, "claim-lookup-only fails within 120 directed runs (search seed 3)")
	d := x.Directed
	require.Equal(t, "failures and claim-lookup-only's caught-by metrics", d.Target, "one --knob: its metrics, no coverage build")
	require.Len(t, d.Order, 120)
	require.Greater(t, d.FirstFailure, 0)
	// After the first failure the search steers seeds to the failing
	// worlds' features (sim.Steer): one of them fails too, and is the
	// seed replayed below.
	var seed uint64
	for _, f := range x.Failures {
		if mask, _ := sim.Steering(f.Seed); mask != 0 {
			seed = f.Seed
		}
	}
	require.NotZero(t, seed, "a steered seed failed: %v", x.Failures)
	var props []string
	for _, f := range x.Failures {
		if f.Seed == seed {
			props = f.Properties
		}
	}
	require.NotEmpty(t, props)

	// The same search again: the same seeds in the same order.
	_, y := directedRun(t, "--system", "arbiter", "--knob", "claim-lookup-only", "--runs", "120", "--search-seed", "3")
	assert.Equal(t, d.Order, y.Directed.Order)
	assert.Equal(t, x.Failures, y.Failures)

	// Every failing seed replays alone, as a list.
	var list []string
	for _, f := range x.Failures {
		list = append(list, fmt.Sprint(f.Seed))
	}
	if len(list) == 1 {
		list = append(list, fmt.Sprint(d.Order[0])) // a list of two: one failing, one not
	}
	code, stdout, stderr := run(t, "explore", "--system", "arbiter", "--knob", "claim-lookup-only", "--seeds", strings.Join(list, ","), "--json", "--artifacts", "0", "--audit", "0")
	require.Equal(t, exitFail, code, stderr)
	var s summary.Summary
	require.NoError(t, json.Unmarshal([]byte(stdout), &s))
	assert.Equal(t, x.Failures, s.Systems[0].Failures, "explore --seeds gives the directed runs' verdicts")

	out := t.TempDir()
	code, _, stderr = run(t, "run", "--system", "arbiter", "--knob", "claim-lookup-only", "--seed", fmt.Sprint(seed), "--out", out)
	require.Equal(t, exitFail, code, stderr)
	code, stdout, _ = run(t, "replay", filepath.Join(out, fmt.Sprintf("arbiter-seed-%d.jsonl", seed)))
	assert.Equal(t, exitFail, code)
	assert.True(t, strings.HasPrefix(stdout, "identical\n"), stdout)
	for _, p := range props {
		assert.Contains(t, stdout, p)
	}
}

// TestDirectedDefaultPasses: the default designs pass a directed search
// (which favours the worlds where runs come closest to the promise
// metrics' worst), and a search's seeds differ from uniform's after the
// warm-up.
func TestDirectedDefaultPasses(t *testing.T) {
	for _, sys := range []string{"arbiter", "outbox", "twopc"} {
		code, x := directedRun(t, "--system", sys, "--runs", "60")
		assert.Equal(t, exitOK, code, sys)
		assert.Equal(t, 0, x.FailedRuns, sys)
		assert.Equal(t, "failures", x.Directed.Target)
		uniform := true
		for i, s := range x.Directed.Order {
			if s != uint64(i+1) {
				uniform = false
			}
		}
		assert.False(t, uniform, "%s: the search picks its own seeds after the warm-up", sys)
		for i, s := range x.Directed.Order[:16] {
			assert.Equal(t, uint64(i+1), s, "%s: the warm-up runs the first seeds in order", sys)
		}
	}
}

// TestDirectedBadInput: what a directed search cannot take.
func TestDirectedBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--target", "knob:no-grace"}, "add --search directed"},
		{[]string{"--search", "sideways"}, `--search "sideways"`},
		{[]string{"--search", "directed", "--system", "arbiter", "--target", "probe:nope"}, "has no probe"},
		{[]string{"--search", "directed", "--system", "arbiter", "--target", "knob:nope"}, "want knob:NAME"},
		{[]string{"--search", "directed", "--system", "arbiter", "--target", "model/judge/sql.go:9-3"}, "FROM <= TO"},
		{[]string{"--search", "directed", "--system", "arbiter", "--target", "model/judge/nosuch.go:3-9"}, "no such file"},
		{[]string{"--search", "directed", "--system", "arbiter", "--shard", "0/2"}, "--shard does not go"},
		{[]string{"--search", "directed", "--system", "arbiter", "--time", "5s"}, "--time does not go"},
		{[]string{"--search", "directed", "--system", "arbiter", "--seeds", "1,5"}, "list does not go"},
		{[]string{"--seeds", "1,x"}, `--seeds "1,x"`},
	} {
		code, stdout, stderr := run(t, append([]string{"explore", "--out", dir}, c.args...)...)
		assert.Equal(t, exitUsage, code, "%v: %s", c.args, stderr)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, c.want, c.args)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
	}
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries)
	code, _, stderr := run(t, "mutants", "--search", "directed", "--system", "arbiter")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "needs --budget")
}

// TestMutantsSearchTable: mutants --search directed prints the runs to
// first failure of both modes for a harmful knob, and a harmless knob's
// runs pass.
func TestMutantsSearchTable(t *testing.T) {
	code, stdout, stderr := run(t, "mutants", "--system", "arbiter", "--knob", "no-grace", "--knob", "no-leader-lock", "--search", "directed", "--budget", "60", "--searches", "2")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "uniform / directed")
	assert.Contains(t, stdout, "no-leader-lock (harmless)")
	assert.Contains(t, stdout, "passed every run")
	assert.Contains(t, stdout, "geometric mean")
	code, stdout, _ = run(t, "mutants", "--system", "arbiter", "--knob", "no-grace", "--search", "directed", "--budget", "60", "--searches", "2", "--json")
	require.Equal(t, exitOK, code)
	var doc struct {
		Rows []searchRow `json:"rows"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	require.Len(t, doc.Rows, 1)
	assert.Len(t, doc.Rows[0].Uniform, 2)
	assert.Len(t, doc.Rows[0].Directed, 2)
	assert.NotContains(t, doc.Rows[0].Uniform, 0, "no-grace fails within 60 uniform runs from seeds 1 and 100001")
}

// TestDirectedCodeTarget: a code target (a knob's code, or lines) makes
// explore build fencesim with those lines counted and search in it: each
// run's record carries how often the code ran, and the search is rewarded
// by it.
func TestDirectedCodeTarget(t *testing.T) {
	dir := t.TempDir()
	per := filepath.Join(dir, "per-seed.jsonl")
	code, stdout, stderr := run(t, "explore", "--system", "arbiter", "--knob", "no-backoff-cap", "--search", "directed", "--target", "knob:no-backoff-cap",
		"--runs", "40", "--json", "--artifacts", "0", "--per-seed", per)
	require.Contains(t, []int{exitOK, exitFail}, code, stderr)
	assert.Contains(t, stderr, "building fencesim with 1 range counted")
	var s summary.Summary
	require.NoError(t, json.Unmarshal([]byte(stdout), &s), stdout)
	assert.Equal(t, "knob:no-backoff-cap", s.Systems[0].Directed.Target)
	recs := strings.Split(strings.TrimSpace(readFile(t, per)), "\n")
	require.Len(t, recs, 40)
	ran := 0
	for _, line := range recs {
		var r seedRecord
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		require.Len(t, r.Cover, 1, "one counted range: Design.Backoff's test of the knob")
		if r.Cover[0] > 0 {
			ran++
		}
	}
	assert.Greater(t, ran, 0, "the knob's code ran in some of the runs")
}

// TestSteeredSeedRefused: a steered seed of a system without levers (the
// demonstration system), or naming a lever its system does not have, is
// refused in one line (exit 2) by every command that takes seeds.
func TestSteeredSeedRefused(t *testing.T) {
	steered := fmt.Sprint(sim.SteerSeed(5, 1))
	past := fmt.Sprint(sim.SteerSeed(5, 1<<30))
	for _, args := range [][]string{
		{"run", "--system", "toy", "--seed", steered},
		{"explore", "--system", "toy", "--seeds", "3," + steered},
		{"run", "--system", "outbox", "--seed", past},
		{"explore", "--system", "all", "--seeds", past},
		{"run", "--system", "arbiter", "--seed", past},
		{"mutants", "--system", "toy", "--first", steered, "--budget", "3"},
		{"baseline", "--first", steered, "--runs", "1"},
	} {
		code, stdout, stderr := run(t, args...)
		assert.Equal(t, exitUsage, code, "%v", args)
		assert.Empty(t, stdout)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "%v: one line: %s", args, stderr)
		assert.Regexp(t, "steered seed|below 2\\^63", stderr, "%v", args)
	}
}

// TestSteerFlag: --steer plays the seeds of --first and --runs steered by
// the levers named (a failover's worlds: claim-lookup-only fails in far
// more of them than in uniform's), each a steered seed that explore
// --seeds plays with the same verdicts; bad --steer input is refused in
// one line.
func TestSteerFlag(t *testing.T) {
	var seeds string
	explore := func(args ...string) summary.System {
		code, stdout, stderr := run(t, append([]string{"explore", "--system", "arbiter", "--knob", "claim-lookup-only", "--json", "--artifacts", "0", "--audit", "0"}, args...)...)
		require.Contains(t, []int{exitOK, exitFail}, code, stderr)
		var s summary.Summary
		require.NoError(t, json.Unmarshal([]byte(stdout), &s))
		seeds = s.Seeds
		return s.Systems[0]
	}
	plain := explore("--runs", "60")
	steered := explore("--runs", "60", "--steer", "arbiters=2,old-leader")
	assert.Contains(t, seeds, "(numbers 1-60 steered: arbiters=2, old-leader)")
	assert.Greater(t, steered.FailedRuns, plain.FailedRuns+3, "two arbiters and the old leader stalled: claim-lookup-only's corner")
	var list []string
	for _, f := range steered.Failures {
		mask, n := sim.Steering(f.Seed)
		assert.Equal(t, uint64(0b11), mask, "seed %d pulls the two levers", f.Seed)
		assert.True(t, n >= 1 && n <= 60)
		list = append(list, fmt.Sprint(f.Seed))
	}
	require.NotEmpty(t, list)
	again := explore("--seeds", strings.Join(list, ","))
	assert.Equal(t, steered.Failures, again.Failures, "explore --seeds plays the steered seeds alike")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"explore", "--system", "arbiter", "--steer", "arbiters=3"}, `"arbiters=3" is not a lever of arbiter`},
		{[]string{"explore", "--system", "arbiter", "--steer", "help"}, "a comma-separated list of arbiter's levers: arbiters=2, old-leader"},
		{[]string{"explore", "--system", "all", "--steer", "on:crash"}, "pick one system that has levers"},
		{[]string{"explore", "--system", "toy", "--steer", "on:crash"}, "pick one system that has levers"},
		{[]string{"explore", "--system", "arbiter", "--steer", "on:crash", "--seeds", "1-5"}, "do not combine it with --seeds or --time"},
		{[]string{"explore", "--system", "arbiter", "--steer", "on:crash", "--search", "directed"}, "drop --steer"},
		{[]string{"explore", "--system", "arbiter", "--steer", "on:crash", "--first", "4294967290", "--runs", "10"}, "lower --first or --runs"},
	} {
		code, stdout, stderr := run(t, tc.args...)
		assert.Equal(t, exitUsage, code, "%v", tc.args)
		assert.Empty(t, stdout)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "%v: %s", tc.args, stderr)
		assert.Contains(t, stderr, tc.want, "%v", tc.args)
	}
}

// TestSteerableByBase: a diff's base plays a plan's steered seeds only
// when it pulls every lever they name as the working tree does.
func TestSteerableByBase(t *testing.T) {
	list, err := (&selection{system: "arbiter"}).systems(true)
	require.NoError(t, err)
	p := plan{list: []uint64{3, sim.SteerSeed(4, 0b101)}}
	p.first, p.last = p.list[0], p.list[1]
	assert.NoError(t, p.steerable(list, map[string]int{"arbiter": 3}))
	assert.ErrorContains(t, p.steerable(list, map[string]int{"arbiter": 2}), "pulls only the first 2 of arbiter's levers")
	assert.ErrorContains(t, p.steerable(list, map[string]int{}), "shares none of arbiter's levers")
	plain := plan{first: 1, last: 300}
	assert.NoError(t, plain.steerable(list, map[string]int{}))
}
