package harness

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/checker"
	jc "github.com/fencesim/fencesim/checker/judge"
	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/sim"
)

// poisoned is a run of one poison submission and one home worker, with no
// fault: every judging of it kills its worker, so only the attempt cap
// ends it.
func poisoned(maxAttempts int) judge.Options {
	d := judge.Default()
	d.HomeWorkers, d.ProdWorkers = 1, 0
	d.JudgeMin, d.JudgeMax = 10*time.Second, 10*time.Second
	d.MaxAttempts = maxAttempts
	wl := judge.Workload{Arrivals: []judge.Arrival{{At: 2 * time.Second, ID: 101, User: 1, Problem: 1}}, Poison: []int64{101}}
	return judge.Options{Design: d, Workload: wl, Entropy: sim.NewPCG(1), Until: 20 * time.Minute}
}

// TestAttemptCapOnPoison: a poison submission gets max_attempts leases and
// ends in system_error, and PA9 holds; the same run with the cap not
// enforced (the model allows 10 attempts, the run is judged against the
// design's 3) fails PA9: a test of the property against the bug it exists
// for.
func TestAttemptCapOnPoison(t *testing.T) {
	o, err := Play(poisoned(3))
	require.NoError(t, err)
	assert.Empty(t, o.Failed(), "the cap holds")
	assert.Equal(t, judge.StatusSystemError, o.Run.Final(101).Status, "three deaths, then system_error")
	assert.Len(t, o.Transitions(101, judge.StatusPending, judge.StatusJudging), 3, "three leases")

	// The cap not enforced: the model gives ten attempts, the checker
	// reads the design's three.
	o, err = Play(poisoned(10))
	require.NoError(t, err)
	h := o.Header
	var dj map[string]any
	require.NoError(t, json.Unmarshal(h.Design, &dj))
	dj["max_attempts"] = 3
	h.Design, _ = json.Marshal(dj)
	run, err := jc.Decode(h, o.Events)
	require.NoError(t, err)
	var pa9 checker.Verdict
	for _, v := range jc.Check(run).Verdicts {
		if v.Property == jc.PA9 {
			pa9 = v
		}
	}
	assert.False(t, pa9.OK, "a fourth lease, or the third's reclaim back to pending, breaks PA9")
	t.Log(pa9)
}
