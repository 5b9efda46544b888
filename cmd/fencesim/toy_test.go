package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencesim/fencesim/internal/summary"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestToySystem: the contract's demonstration system (internal/systems/toy,
// one package and one registry line) goes through explore, run, replay
// and report like the three systems; "all" leaves it out.
func TestToySystem(t *testing.T) {
	code, stdout, stderr := run(t, "explore", "--system", "toy", "--runs", "100", "--json")
	require.Equal(t, exitOK, code, stderr)
	var sum summary.Summary
	require.NoError(t, json.Unmarshal([]byte(stdout), &sum))
	require.Len(t, sum.Systems, 1)
	assert.Equal(t, "toy", sum.Systems[0].System)
	assert.Equal(t, 100, sum.Systems[0].Runs)

	out := t.TempDir()
	code, stdout, stderr = run(t, "explore", "--system", "toy", "--knob", "lease-from-receipt", "--seeds", "1-300", "--artifacts", "1", "--out", out)
	require.Equal(t, exitFail, code, "the harmful knob fails a seed: %s%s", stdout, stderr)
	assert.Contains(t, stdout, "TL1 lease-safety")
	traces, err := filepath.Glob(filepath.Join(out, "toy-seed-*[0-9].jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, traces, "explore wrote the failing seed's trace")
	seed := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(traces[0]), "toy-seed-"), ".jsonl")

	runOut := t.TempDir()
	code, stdout, stderr = run(t, "run", "--system", "toy", "--knob", "lease-from-receipt", "--seed", seed, "--out", runOut)
	require.Equal(t, exitFail, code, stderr)
	assert.Contains(t, stdout, "TL1 lease-safety: FAILED")
	trace := filepath.Join(runOut, "toy-seed-"+seed+".jsonl")
	assert.Equal(t, readFile(t, traces[0]), readFile(t, trace), "run --seed plays explore's seed")

	code, stdout, _ = run(t, "replay", trace)
	assert.Equal(t, exitFail, code, "the replayed run fails again")
	assert.True(t, strings.HasPrefix(stdout, "identical\nTL1 lease-safety: FAILED"), stdout)

	page := filepath.Join(runOut, "page.html")
	code, _, stderr = run(t, "report", "--out", page, trace)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, readFile(t, page), "TL1 lease-safety")

	code, stdout, _ = run(t, "mutants", "--json", "--budget", "1", "--minimize-budget", "1", "--workers", "1")
	assert.NotContains(t, stdout, "lease-from-receipt", "mutants of all systems leave the hidden toy out (exit %d)", code)
}

// TestToyDiff: diff validates a change to the toy's node code: the client
// counting its lease from the pong's receipt (what the knob does, written
// as a code change) newly fails TL1.
func TestToyDiff(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fencesim twice")
	}
	dir := scratchRepo(t)
	t.Chdir(dir)
	model := filepath.Join(dir, "internal", "systems", "toy", "model.go")
	b, err := os.ReadFile(model)
	require.NoError(t, err)
	changed := strings.Replace(string(b), "if c.d.Has(LeaseFromReceipt) {", "if true { // counted from the receipt", 1)
	require.NotEqual(t, string(b), changed, "the knob's switch is where the test expects it")
	require.NoError(t, os.WriteFile(model, []byte(changed), 0o644))
	var stdout, stderr bytes.Buffer
	code := Main([]string{"diff", "--system", "toy", "--runs", "300", "--keep", "0", "--json"}, &stdout, &stderr)
	require.Equal(t, exitFail, code, "a harmful change: %s%s", stdout.String(), stderr.String())
	var res diffResult
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &res))
	assert.Equal(t, "failed", res.Verdict)
	require.Len(t, res.Systems, 1)
	var flipped []uint64
	for _, p := range res.Systems[0].Properties {
		if strings.HasPrefix(p.Property, "TL1 ") {
			flipped = append(flipped, p.NewlyFailing...)
		}
	}
	assert.NotEmpty(t, flipped, "TL1 newly fails: %s", stdout.String())
}
