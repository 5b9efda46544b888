package scenario

import (
	"flag"
	"os"
	"testing"

	"github.com/fencesim/fencesim/model/judge"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/checker"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files under testdata/")

// run plays a scenario and fails on any broken expectation or property,
// logging the measured cost beside the promised one.
func run(t *testing.T, s Scenario, knobs ...judge.Knob) ([]*Outcome, Cost) {
	t.Helper()
	os, c, err := s.Measured(knobs...)
	require.NoError(t, err)
	t.Logf("%s: promised %q; measured: %s", s.ID, s.Promise, c.Text)
	for _, b := range c.Broken {
		t.Errorf("%s: %s", s.ID, b)
	}
	for _, v := range checker.Failed(c.Verdict) {
		t.Errorf("%s: %s", s.ID, v)
	}
	return os, c
}

func TestScenarioA_S1(t *testing.T) { run(t, S1()) }
func TestScenarioA_S2(t *testing.T) { run(t, S2()) }
func TestScenarioA_S3(t *testing.T) { run(t, S3()) }
func TestScenarioA_S4(t *testing.T) { run(t, S4()) }
func TestScenarioA_S5(t *testing.T) { run(t, S5()) }
func TestScenarioA_S6(t *testing.T) { run(t, S6()) }
func TestScenarioA_S7(t *testing.T) { run(t, S7()) }
func TestScenarioA_S8(t *testing.T) { run(t, S8()) }
func TestScenarioA_S9(t *testing.T) { run(t, S9()) }

// TestTableA5 renders docs/systems.md A.5 with the measured worst costs and pins
// it to testdata/a5.golden (go test -run TableA5 -rewrite to update).
func TestTableA5(t *testing.T) {
	costs := map[string]Cost{}
	for _, s := range All() {
		_, c, err := s.Measured()
		require.NoError(t, err)
		costs[s.ID] = c
	}
	got := Table(All(), costs)
	path := "testdata/a5.golden"
	if *rewrite {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file: run go test -run TableA5 -rewrite")
	assert.Equal(t, string(want), got, "the A.5 table changed; if that is intended, rerun with -rewrite")
}

// The two damages the issue names, checked in detail.
func TestKnobDamageDetails(t *testing.T) {
	t.Run("A-S5 with fence-by-worker-id: the stale result is accepted", func(t *testing.T) {
		o, err := Play(S5Options(judge.FenceByWorkerID))
		require.NoError(t, err)
		grants := o.Transitions(101, "pending", "judging")
		require.Len(t, grants, 2)
		require.NotEmpty(t, o.Run.Accepted)
		assert.Equal(t, grants[0].Token, o.Run.Accepted[0].Token, "the token-A result was accepted")
		assert.Equal(t, grants[1].Token, o.Run.Accepted[0].Before.Token, "while token B held the lease")
		assert.NotEmpty(t, o.Failed())
	})
	t.Run("A-S2 with no-grace: double judging, then system_error", func(t *testing.T) {
		os, c, err := S2().Measured(judge.NoGrace)
		require.NoError(t, err)
		assert.False(t, c.OK())
		assert.Greater(t, os[0].Result.Metrics.Wasted, 0, "double judging after one long outage")
		assert.Equal(t, "system_error", os[1].Run.Final(101).Status, "three outages during one judging use up the attempts")
		assert.Equal(t, 1, os[1].Result.Metrics.FalseSystemErrors, "without a single genuine worker failure")
	})
}
