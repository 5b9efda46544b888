package live

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cb "github.com/fencesim/fencesim/checker/outbox"
	"github.com/fencesim/fencesim/model/outbox"
	outboxharness "github.com/fencesim/fencesim/model/outbox/harness"
	"github.com/fencesim/fencesim/sim"
)

// TestOutboxWorkloadIsTheSimulators: a live run of system B draws its
// events from --seed as the simulator's drawn world does (DrawEvents, the
// "workload" stream), and its nodes are the simulator's, in its order.
func TestOutboxWorkloadIsTheSimulators(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		o := Options{System: outboxharness.Name, Design: outbox.Default().JSON(), Seed: seed, Duration: 20 * time.Second}
		p, err := outboxPlan(o)
		require.NoError(t, err)
		wl := OutboxWorkload(o.Duration)
		assert.Equal(t, outbox.DefaultWorkload(), wl, "at 20 s, the simulator's default sizes")
		wl.Plan = outboxharness.DrawEvents(wl, sim.NewPCG(seed).Stream("workload"), outbox.Default().Senders)
		w, err := outbox.Build(outbox.Default(), wl, sim.Config{Entropy: sim.NewPCG(seed)})
		require.NoError(t, err)
		assert.JSONEq(t, string(w.WorkloadJSON()), string(p.workload), "seed %d: the drawn world's events", seed)
		var names []string
		for _, n := range p.nodes {
			names = append(names, n.Name)
		}
		all := w.Names.All()
		assert.Equal(t, all[2:], names, "the nodes but the databases, in the simulator's order")
		assert.Equal(t, all[:2], dbNames(p))
		w.Close()
	}
}

// TestOutboxDefaultSchedule: every node the default schedule names is the
// world's, with one handler too, and its crash points are the nodes' own.
func TestOutboxDefaultSchedule(t *testing.T) {
	for _, handlers := range []int{3, 1} {
		d := outbox.Default()
		d.Handlers = handlers
		s, err := DefaultSchedule(outboxharness.Name, d.JSON(), 20*time.Second)
		require.NoError(t, err)
		require.Len(t, s, 7)
		n := outbox.NamesOf(d)
		assert.NoError(t, refuse(s, n.All(), []string{n.DB, n.ConsumerDB}), "handlers=%d", handlers)
		assert.Equal(t, sim.Action{Kind: sim.CrashAt, Node: "relay", Point: outbox.PointAfterMark, Count: 1}, s[0])
		assert.Contains(t, outbox.RelayPoints, s[0].Point)
		assert.Contains(t, outbox.HandlerPoints, s[1].Point)
		assert.Equal(t, sim.HealAll, s[len(s)-1].Kind)
	}
}

// runOutbox runs a short live world of system B with the default schedule
// on a server of the test's, and judges it with PB1-PB6.
func runOutbox(t *testing.T, bin string, pg []string, d outbox.Design, dur time.Duration) (*Result, []cb.Verdict) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := DefaultSchedule(outboxharness.Name, d.JSON(), dur)
	require.NoError(t, err)
	res, err := Run(ctx, Options{System: outboxharness.Name, Design: d.JSON(), Seed: 1, Duration: dur, Schedule: s,
		PG: pg, Dir: t.TempDir(), Binary: bin})
	require.NoError(t, err)
	h, err := cb.Decode(res.Events)
	require.NoError(t, err)
	assertNoNodeLeft(t, bin)
	return res, cb.Check(h)
}

// TestLiveOutbox runs system B live (a server of its own, the default
// schedule over 8 s: the relay and a handler killed at their crash points
// and restarted, a stall on the broker's link, broken database
// connections): every property holds of the default design, and
// mark-sent-before-publish, whose relay dies between its mark and its
// publish, loses a message (PB2).
func TestLiveOutbox(t *testing.T) {
	bin := binary(t)
	pg := servers(t, 1)
	t.Run("default design", func(t *testing.T) {
		res, vs := runOutbox(t, bin, pg, outbox.Default(), 8*time.Second)
		assert.Empty(t, cb.Failed(vs), "every property holds: %v", vs)
		assert.Len(t, vs, 6)
		fired := strings.Join(res.Faults, "\n")
		assert.Contains(t, fired, "crash-at relay point=relay/after-mark: the node killed itself there", "the relay was killed at its crash point")
		var commits, applies int
		for _, e := range res.Events {
			switch e.Kind {
			case "commit":
				commits++
			case cb.KindApply:
				applies++
			}
		}
		assert.Positive(t, commits, "the databases' commits are in the record")
		assert.Positive(t, applies, "the consumer applied messages")
	})
	t.Run("mark-sent-before-publish", func(t *testing.T) {
		_, vs := runOutbox(t, bin, pg, outbox.Default().MustWith(outbox.MarkSentBeforePublish), 8*time.Second)
		v, ok := cb.Find(vs, cb.PB2)
		require.True(t, ok)
		assert.False(t, v.OK, "the message marked sent and never published: %v", vs)
		assert.Contains(t, strings.Join(v.Why, "; "), "committed but its message was never published")
	})
}
