package harness

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fencesim/fencesim/model/twopc"
)

// TestEnumerateCrashes crashes the coordinator and every participant at
// every step and named crash point, once and then twice per run, for 2 and
// 3 participants; the default design must pass every run.
func TestEnumerateCrashes(t *testing.T) {
	total := 0
	for _, n := range []int{2, 3} {
		d := twopc.Default()
		d.Participants = n
		cov := DefaultHarness().Enumerate(d, true, 3)
		t.Logf("%d participants: %d crash sites; %d single-crash runs, %d two-crash runs (%d runs in all); %d failed",
			n, len(cov.Sites), cov.Singles, cov.Pairs, cov.Runs, len(cov.Failures))
		total += cov.Singles + cov.Pairs
		assert.Greater(t, cov.Singles, 10*n, "every node has several steps")
		assert.Greater(t, cov.Pairs, cov.Singles)
		for _, f := range cov.Failures {
			t.Errorf("%d participants, schedule\n%v\nfailed %v:\n%s\n%s", n, f.Schedule, f.Failed(), f.Report.String(), f.Tail(30))
		}
	}
	t.Logf("crash points covered: %d runs with every crash reached", total)
}
