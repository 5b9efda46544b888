package harness

import (
	"regexp"
	"testing"
	"time"

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
// so one claim episode ends with two leases: PA4), and its shrunk
// counterexample is a single crash of the arbiter at a blocking call the
// trace names.
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
		assert.Equal(t, 1, last.Options.Schedule.Faults(), "the shrunk schedule is one crash:\n%s", last.Options.Schedule)
		hit := yieldHit(last)
		assert.NotEmpty(t, hit, "the trace names the blocking call the crash hit")
		t.Logf("caught by %s after %d runs; shrunk to %s, which hit %s", last.Failed()[0].Property, res.Runs, last.Options.Schedule, hit)
	})
}
