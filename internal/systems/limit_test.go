package systems

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/sim"
)

// spin re-arms a zero-delay timer forever.
type spin struct{}

func (spin) Step(env *sim.Env, in sim.Input) { env.After(0, nil) }

// TestLimitHitIsAFinding: a run that ends on a budget of its limits fails
// the "limit" property (not the generic "run"), with the kernel's message,
// so that explore reports it with its seed and artifacts.
func TestLimitHitIsAFinding(t *testing.T) {
	w := sim.New(sim.Config{Limits: sim.Limits{MaxEvents: 1000, MaxPending: sim.DefaultMaxPending}})
	w.Add("spin", func(string, *sim.Disk) sim.Node { return spin{} })
	err := w.Run()
	require.Error(t, err)
	for _, e := range []error{err, fmt.Errorf("simulate: %w", err)} {
		v := runFailed(e)
		assert.Equal(t, LimitProperty, v.Property)
		assert.False(t, v.OK)
		assert.Regexp(t, `^limit hit: events: 1000 events run by `, v.Message)
		r := &Result{Verdicts: []checker.Verdict{v}}
		assert.Equal(t, []string{"limit"}, r.FailedIDs())
	}
	other := runFailed(fmt.Errorf("the schedule names no node"))
	assert.Equal(t, RunProperty, other.Property, "other run errors stay run failures")
}
