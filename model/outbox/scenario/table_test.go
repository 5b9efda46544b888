package scenario_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/outbox"
	"github.com/fencesim/fencesim/model/outbox/scenario"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files under testdata/")

// results plays every scenario with the knobs given.
func results(t *testing.T, knobs ...outbox.Knob) map[string]scenario.Result {
	out := map[string]scenario.Result{}
	for _, s := range scenario.All() {
		_, r, err := s.Run(knobs...)
		require.NoError(t, err)
		out[s.ID] = r
	}
	return out
}

// TestScenariosKeepTheirPromises: B.1-B.7 on the default design: every
// expectation and every property holds.
func TestScenariosKeepTheirPromises(t *testing.T) {
	all := scenario.All()
	require.Len(t, all, 7)
	for id, r := range results(t) {
		assert.True(t, r.OK(), "%s: %v %v", id, r.Broken, r.Failed)
	}
}

// TestTableB: the table fencesim scenarios prints for system B, against
// testdata/table-b.txt (go test -run TableB -rewrite to update).
func TestTableB(t *testing.T) {
	got := scenario.Table(scenario.All(), results(t))
	path := filepath.Join("testdata", "table-b.txt")
	if *rewrite {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file: run go test -run TableB -rewrite")
	assert.Equal(t, string(want), got, "the B table changed; if that is intended, rerun with -rewrite")
}

// TestScenariosCatchTheirKnobs: each harmful knob breaks the scenario of
// the mechanism it removes.
func TestScenariosCatchTheirKnobs(t *testing.T) {
	for _, tc := range []struct {
		knob outbox.Knob
		id   string
	}{
		{outbox.CheckThenInsert, "B.2"},
		{outbox.SendBeforeCommit, "B.3"},
		{outbox.EditInPlaceRefund, "B.4"},
		{outbox.KeyIncludesDeliveryTime, "B.1"},
		{outbox.ConflictIs500, "B.6"},
		{outbox.ConsumerWithoutDedup, "B.7"},
		{outbox.MarkSentBeforePublish, "B.3"},
	} {
		s, ok := scenario.ByID(tc.id)
		require.True(t, ok)
		_, r, err := s.Run(tc.knob)
		require.NoError(t, err)
		assert.False(t, r.OK(), "%s must break %s", tc.knob, tc.id)
		t.Logf("%s breaks %s: %v %v", tc.knob, tc.id, r.Broken, r.Failed)
	}
}
