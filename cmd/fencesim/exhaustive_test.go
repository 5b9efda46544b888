package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExploreExhaustive: explore --exhaustive prints its schedule counts
// and time and passes for the default design (few pairs here), fails with
// the failing schedule for a harmful knob, and refuses other systems in
// one line.
func TestExploreExhaustive(t *testing.T) {
	code, stdout, stderr := run(t, "explore", "--exhaustive", "--pairs", "200", "--workers", "2")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Regexp(t, `schedules: \d+ singles \+ 8 old-leader freezes \+ \d+ pairs \(an even spread of the \d+ pairs; --pairs 0 runs all\) \+ 3 fault-free = \d+ runs in [0-9.]+s on 2 workers`, stdout)
	assert.Contains(t, stdout, "result: PASS")

	code, stdout, stderr = run(t, "explore", "--exhaustive", "--system", "arbiter", "--knob", "no-request-id", "--pairs", "50", "--workers", "2")
	require.Equal(t, exitFail, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Regexp(t, `result: FAIL in \d+ runs \(.*PA4 idempotent-claim: \d+`, stdout)
	assert.Regexp(t, `failure 1 \(singles world\): PA4 idempotent-claim: .*\n  schedule: @0.000s crash-yield arbiter-1 for=1s count=\d+ from-start; @[0-9.]+s heal-all\n  json: \[`, stdout)

	// A run counts under every property it failed (PA3 was missing when
	// only a run's first failed property was counted), and the failing
	// runs not shown are counted.
	code, stdout, stderr = run(t, "explore", "--exhaustive", "--system", "arbiter", "--knob", "reclaim-keeps-token", "--pairs", "100", "--workers", "2")
	require.Equal(t, exitFail, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Regexp(t, `result: FAIL in \d+ runs \(runs failing each property: PA1 at-most-one-owner: \d+, PA1 at-most-one-owner \(porcupine, oracle view\): \d+, PA3 linearizable-api: \d+\)\n`, stdout)
	assert.Regexp(t, `\n\(\d+ more failing runs not shown: the first 5 in enumeration order are\)\n`, stdout)

	// The old leader's world: only it shows claim-lookup-only (PA4 needs
	// two arbiters dispatching).
	code, stdout, stderr = run(t, "explore", "--exhaustive", "--system", "arbiter", "--knob", "claim-lookup-only", "--pairs", "50", "--workers", "2")
	require.Equal(t, exitFail, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stdout, "claim COMMITs: arbiter-1 2 (the old leader, A-S6")
	assert.Regexp(t, `failure 1 \(old-leader world\): PA4 idempotent-claim: .*\n  schedule: @0.000s pause-at arbiter-1->db for=36s point=claim-before-commit from-start; @[0-9.]+s heal-all\n`, stdout)

	for _, args := range [][]string{
		{"explore", "--exhaustive", "--system", "twopc"},
		{"explore", "--exhaustive", "--pairs", "-1"},
		{"explore", "--exhaustive", "--knob", "nonsense"},
	} {
		code, stdout, stderr = run(t, args...)
		assert.Equal(t, exitUsage, code, "%v", args)
		assert.Empty(t, stdout)
		assert.Regexp(t, `^fencesim explore: [^\n]+\n$`, stderr, "%v: one line", args)
	}
	_, _, stderr = run(t, "explore", "--exhaustive", "--system", "twopc")
	assert.Contains(t, stderr, "supports --system arbiter only")
}
