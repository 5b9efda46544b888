package harness

import (
	"regexp"
	"testing"
	"time"

	"github.com/fencesim/fencesim/clock"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/internal/hunt"
	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/sim"
)

// yieldFaults draws only crash-yield faults: the node crashes at its N-th
// blocking call from a drawn time, and is restarted after a drawn downtime.
func yieldFaults(nodes ...string) Faults {
	return Faults{Horizon: 2 * time.Minute, MaxActions: 3, MaxDown: 20 * time.Second, Kinds: []sim.Kind{}, Yields: nodes, MaxYield: 60}
}

var crashAtCall = regexp.MustCompile(`crash at blocking call \d+: (.+)`)

// yieldHit returns the label of the blocking call a crash-yield fault hit
// in a run ("" when none fired).
func yieldHit(o *Outcome) string {
	for _, e := range o.Events {
		if m := crashAtCall.FindStringSubmatch(e.Text); e.Kind == "fault" && m != nil {
			return e.Node + " at " + m[1]
		}
	}
	return ""
}

// TestCrashAtAnyYield: crashes at any blocking call of the arbiter's and the
// workers' processes. The default design survives them; the knob
// no-request-id does not (the worker's retry after the crash is a new claim,
// so one claim episode ends with two leases: PA4): rapid's shrunk
// counterexample has at most two crashes, and a single crash of the
// arbiter at a blocking call the trace names does it.
func TestCrashAtAnyYield(t *testing.T) {
	wl := judge.DefaultWorkload()
	t.Run("default", func(t *testing.T) {
		res := hunt.RunShrink(t.Name(), 40, 1, 0, Property(judge.Default(), wl, yieldFaults("arbiter-1", "home-1", "home-2", "prod-1"), nil))
		assert.False(t, res.Found, "the default design must survive crashes at any blocking call:\n%s", res.Output)
	})
	t.Run(string(judge.NoRequestID), func(t *testing.T) {
		var last *Outcome
		prop := Property(judge.Default().MustWith(judge.NoRequestID), wl, yieldFaults("arbiter-1"), func(o *Outcome) { last = o })
		res := hunt.RunShrink(t.Name(), 200, 1, 20*time.Second, func(rt *rapid.T) { prop(rt) })
		require.True(t, res.Found, "no-request-id must be caught by crashes at blocking calls within 200 runs")
		require.NotNil(t, last)
		// rapid's shrink can stop at two crashes where one does (the first
		// shifts the count the second needs): at most two.
		assert.LessOrEqual(t, last.Options.Schedule.Faults(), 2, "the shrunk schedule:\n%s", last.Options.Schedule)
		// One crash does it: the arbiter's 27th blocking call from the
		// start (the default workload, seed 1), then a restart.
		o := judge.Options{Design: judge.Default().MustWith(judge.NoRequestID), Workload: wl, Entropy: sim.NewPCG(1), Until: 10 * time.Minute,
			Schedule: sim.Schedule{{At: 0, Kind: sim.CrashYield, Node: "arbiter-1", Count: 27, For: time.Second}, {At: clock.Time(2 * time.Minute), Kind: sim.HealAll}}}
		o.Workload.Arrivals = o.Workload.Plan(sim.NewPCG(1).Stream("w"))
		one, err := Play(o)
		require.NoError(t, err)
		_, ok := caughtBy(one, []string{"PA4"})
		assert.True(t, ok, "a single crash at a blocking call: %v", one.Failed())
		t.Logf("one crash: %s", yieldHit(one))
		hit := yieldHit(last)
		assert.NotEmpty(t, hit, "the trace names the blocking call the crash hit")
		t.Logf("caught by %s after %d runs; shrunk to %s, which hit %s", last.Failed()[0].Property, res.Runs, last.Options.Schedule, hit)
	})
}
