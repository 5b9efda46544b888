package scenario_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	check "github.com/fencesim/fencesim/checker/outbox"
	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/model/outbox"
	"github.com/fencesim/fencesim/model/outbox/scenario"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

func at(d time.Duration) clock.Time { return clock.Time(d) }

// play runs a hand-written plan and schedule (scenario.PlayPlan adds the
// heal-all) and requires every property to hold.
func play(t *testing.T, d outbox.Design, plan []outbox.Event, s sim.Schedule) *scenario.Outcome {
	t.Helper()
	o := scenario.PlayPlan(d, plan, s)
	require.NoError(t, o.Err)
	require.True(t, o.Metrics.Settled, "the run must settle:\n%s", o.Summary())
	for _, v := range o.Verdicts {
		assert.True(t, v.OK, "%s", v)
	}
	return o
}

func rows(o *scenario.Outcome, node, table string) []db.Row { return scenario.Rows(o, node, table) }

func history(t *testing.T, o *scenario.Outcome) *check.History {
	require.NotNil(t, o.History, "the trace decodes")
	return o.History
}

// TestResendSamePayloadOneEffect is B.7's first test: the same payload is
// sent again (three concurrent copies to three handlers, then, every answer
// having been lost, redeliveries with new timestamps) and there is one
// charge row, one ledger entry, one message, one side effect, and every
// delivery that was answered got the same "received" answer.
func TestResendSamePayloadOneEffect(t *testing.T) {
	d := outbox.Default()
	plan := []outbox.Event{{Event: "evt_1", Payload: "order-1", Amount: 250, Copies: 3, Gap: 2 * time.Millisecond}}
	// Every answer to the first copies is lost: the provider did not hear it.
	var s sim.Schedule
	for _, h := range outbox.NamesOf(d).Handlers {
		s = append(s, sim.Action{At: 0, Kind: sim.Loss, Node: h, Peer: "sender", Rate: 1_000_000, For: 200 * time.Millisecond})
	}
	o := play(t, d, plan, s)
	h := history(t, o)

	assert.Len(t, rows(o, "db", outbox.TCharges), 1, "one charge row")
	assert.Len(t, rows(o, "db", outbox.TLedger), 1, "one ledger entry")
	assert.Len(t, rows(o, "db", outbox.TOutbox), 1, "one outbox message")
	assert.Len(t, rows(o, "db", outbox.TKeys), 1, "one stored key")
	assert.Len(t, rows(o, "consumer-db", outbox.TEffects), 1, "one side effect (one email)")
	assert.Equal(t, int64(250), outbox.Balance(rows(o, "db", outbox.TLedger)))

	require.GreaterOrEqual(t, len(h.Calls), 4, "three copies and at least one redelivery")
	answered := 0
	stamps := map[int64]bool{}
	for _, c := range h.Calls {
		stamps[c.DeliveredAt] = true
		if c.Answered() {
			answered++
			assert.Equal(t, outbox.Code200, c.Code, "every delivery is answered 200, the duplicate too")
			assert.Equal(t, "received "+rows(o, "db", outbox.TCharges)[0]["id"].(string), c.Value, "the same stored answer")
		}
	}
	assert.GreaterOrEqual(t, answered, 1)
	dups := 0
	for _, x := range h.Handles {
		if x.Phase == hist.HandleEnd && x.Path == "duplicate" {
			dups++
		}
	}
	assert.Equal(t, len(h.Calls)-1, dups, "every delivery but the first was answered from the stored key")
	assert.GreaterOrEqual(t, len(stamps), 2, "redeliveries carry new delivery timestamps")
	assert.Equal(t, check.OpCharge, h.Calls[0].Op)
	t.Logf("%d deliveries (%d answered, %d timestamps), 1 charge, 1 effect", len(h.Calls), answered, len(stamps))
}

// TestKillRelayBetweenCommitAndPublish is B.7's second test: the relay is
// killed after the handler's commit and before the publish, or after the
// publish and before the mark. The message still goes out, and is applied
// once.
func TestKillRelayBetweenCommitAndPublish(t *testing.T) {
	d := outbox.Default()
	plan := []outbox.Event{{Event: "evt_1", Payload: "order-1", Amount: 250, Copies: 1}}

	t.Run("after-commit-before-publish", func(t *testing.T) {
		// The relay is down from before the commit until 3 s: the outbox
		// row waits; after the restart the relay publishes it.
		s := sim.Schedule{{At: 0, Kind: sim.Crash, Node: "relay"}, {At: at(3 * time.Second), Kind: sim.Restart, Node: "relay"}}
		o := play(t, d, plan, s)
		h := history(t, o)
		require.Len(t, rows(o, "db", outbox.TCharges), 1)
		committedAt := h.Commits[0].At
		require.Len(t, h.Publishes, 1, "the message goes out once")
		assert.Greater(t, h.Publishes[0].T, int64(3*time.Second), "published after the restart")
		assert.Less(t, committedAt, int64(3*time.Second), "committed while the relay was down")
		assert.Len(t, rows(o, "consumer-db", outbox.TEffects), 1, "applied once")
		out := rows(o, "db", outbox.TOutbox)
		require.Len(t, out, 1)
		assert.Equal(t, true, out[0]["sent"])
	})

	t.Run("after-publish-before-mark", func(t *testing.T) {
		// The relay dies after the broker took the message and before it
		// marked the row: it publishes again after the restart (at least
		// once); the consumer dedups (once).
		s := sim.Schedule{
			{At: 0, Kind: sim.CrashAt, Node: "relay", Point: outbox.PointAfterPublish},
			{At: at(3 * time.Second), Kind: sim.Restart, Node: "relay"},
		}
		o := play(t, d, plan, s)
		h := history(t, o)
		require.Len(t, rows(o, "db", outbox.TCharges), 1)
		assert.Len(t, h.Publishes, 2, "published again after the restart")
		assert.Equal(t, h.Publishes[0].Msg.ID, h.Publishes[1].Msg.ID, "the same message id")
		assert.Len(t, rows(o, "consumer-db", outbox.TEffects), 1, "applied once")
		assert.Len(t, rows(o, "consumer-db", outbox.TProcessed), 1)
		dups := 0
		for _, a := range h.Applies {
			if a.What == hist.ApplyDuplicate {
				dups++
			}
		}
		assert.Equal(t, 1, dups, "the second copy was recognised and skipped")
		assert.True(t, o.Probes[check.ProbeRelayBetween])
	})
}

// TestKeylessRequestRefused: B.5, PB6. A request without a key gets a 400
// that names the missing header; nothing is written anywhere; the sender
// stops.
func TestKeylessRequestRefused(t *testing.T) {
	plan := []outbox.Event{{Payload: "order-9", Amount: 100, Copies: 2}}
	o := play(t, outbox.Default(), plan, nil)
	h := history(t, o)
	require.Len(t, h.Calls, 2)
	for _, c := range h.Calls {
		assert.Equal(t, outbox.Code400, c.Code)
		assert.Contains(t, c.Value, "Idempotency-Key")
	}
	for _, tb := range []string{outbox.TKeys, outbox.TCharges, outbox.TLedger, outbox.TOutbox} {
		assert.Empty(t, rows(o, "db", tb), tb)
	}
	for _, c := range h.Commits {
		assert.NotEqual(t, "db", c.Node, "no transaction of the service database committed")
	}
	require.Len(t, h.Events, 1)
	assert.Equal(t, hist.SenderDone, h.Events[0].What)
}

// TestRefundIsCompensatingEntry: B.4. The refund is a new entry; the
// original stays readable; the balance as believed at any past instant is
// answered from the ledger as it is now.
func TestRefundIsCompensatingEntry(t *testing.T) {
	plan := []outbox.Event{
		{At: time.Second, Event: "evt_1", Payload: "order-1", Amount: 300, Copies: 1, Refund: true},
		{At: 2 * time.Second, Event: "evt_2", Payload: "order-2", Amount: 200, Copies: 1},
	}
	o := play(t, outbox.Default(), plan, nil)
	ledger := rows(o, "db", outbox.TLedger)
	require.Len(t, ledger, 3, "two charges and one compensating entry")
	var charge, refund db.Row
	for _, r := range ledger {
		switch {
		case r["event_id"] == "evt_1" && r["kind"] == outbox.OpCharge:
			charge = r
		case r["kind"] == outbox.OpRefund:
			refund = r
		}
	}
	require.NotNil(t, charge)
	require.NotNil(t, refund)
	assert.Equal(t, int64(300), charge["amount"], "the original stays readable, unchanged")
	assert.Equal(t, int64(-300), refund["amount"])
	assert.Equal(t, charge["id"], refund["reversal_of"])
	chargedAt, refundedAt := charge["at"].(clock.Time), refund["at"].(clock.Time)
	assert.Equal(t, int64(300), outbox.BalanceAt(ledger, chargedAt), "what was believed right after the charge")
	assert.Equal(t, int64(0), outbox.BalanceAt(ledger, refundedAt), "after the refund, before the second charge")
	assert.Equal(t, int64(200), outbox.Balance(ledger))
	assert.Equal(t, int64(0), outbox.BalanceAt(ledger, 0))
	effects := rows(o, "consumer-db", outbox.TEffects)
	assert.Len(t, effects, 3, "charge email, refund email, charge email")

	// Under edit-in-place-refund the past is gone: the ledger now says the
	// first charge was 0, and PB4 says so.
	bad := outbox.Default().MustWith(outbox.EditInPlaceRefund)
	wl := outbox.DefaultWorkload()
	wl.Plan = plan
	ob := scenario.Simulate(bad, wl, plan, sim.Schedule{{At: outbox.HealAt(outbox.FaultSpec(bad)), Kind: sim.HealAll}}, sim.NewPCG(1))
	require.NoError(t, ob.Err)
	lb := rows(ob, "db", outbox.TLedger)
	require.Len(t, lb, 2)
	assert.Equal(t, int64(0), outbox.BalanceAt(lb, chargedAt), "the edited ledger cannot answer what was believed after the charge")
	v, _ := check.Find(ob.Verdicts, check.PB4)
	assert.False(t, v.OK, "PB4 catches the edit")
}
