package harness

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fencesim/fencesim/model/judge"
)

// TestGenericBoundsMA5 pins the value of MA5's bounds on a drawn world
// (docs/clauses.md, row MA5.7): (1 + claim_batch) retry streams, each
// sending at most what the design's backoff ramp sends in a minute, and
// per arbiter process the periodic heartbeats plus one retry stream. The
// bound is the promised design's: a knob that removes the backoff's cap
// does not loosen the bound that catches it.
func TestGenericBoundsMA5(t *testing.T) {
	set := func(f func(*judge.Design)) judge.Design {
		d := judge.Default()
		f(&d)
		return d
	}
	for _, tc := range []struct {
		name              string
		d                 judge.Design
		outage, heartbeat int
	}{
		// backoff 1 s doubling to 30 s: 1, 2, 4, 8, 16 s in the first
		// minute (31 s), the next at 61 s: 6 requests a stream.
		{"default", judge.Default(), 2 * 6, 1 * (60/20 + 1 + 6)},
		{"claim_batch 4", set(func(d *judge.Design) { d.ClaimBatch = 4 }), 5 * 6, 1 * (4 + 6)},
		// capped at 10 s: 1, 2, 4, 8, 10, 10, 10, 10 (55 s), then 65 s: 9.
		{"backoff_cap 10s", set(func(d *judge.Design) { d.BackoffCap = 10 * time.Second }), 2 * 9, 1 * (4 + 9)},
		{"heartbeat 10s", set(func(d *judge.Design) { d.Heartbeat = 10 * time.Second }), 2 * 6, 1 * (60/10 + 1 + 6)},
		{"two arbiters and a standby", set(func(d *judge.Design) { d.Arbiters, d.StandbyArbiters = 2, 1 }), 2 * 6, 3 * (4 + 6)},
		{"no-backoff-cap", judge.Default().MustWith(judge.NoBackoffCap), 2 * 6, 1 * (4 + 6)},
	} {
		b := GenericBounds(tc.d)
		assert.Equal(t, tc.outage, b.OutageLoad, fmt.Sprintf("%s: outage load", tc.name))
		assert.Equal(t, tc.heartbeat, b.HeartbeatLoad, fmt.Sprintf("%s: heartbeat load", tc.name))
	}
}
