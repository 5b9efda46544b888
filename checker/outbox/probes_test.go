package outbox

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

func (x *h) handle(ms int64, handler, key, phase, path string) *h {
	return x.add(ms, handler, KindHandle, hist.BHandle{Handler: handler, Event: key, Key: key, Phase: phase, Path: path})
}

func (x *h) crash(ms int64, node string) *h {
	x.events = append(x.events, traces.Event{Seq: uint64(len(x.events) + 1), T: ms * 1e6, Node: node, Kind: "crash"})
	return x
}

func probes(t *testing.T, x *h) map[string]bool {
	t.Helper()
	hs, err := Decode(x.events)
	require.NoError(t, err)
	return Probes(hs)
}

// TestProbes: each probe on a hand-made history that reaches it, and the
// near miss that does not.
func TestProbes(t *testing.T) {
	assert.Empty(t, probes(t, good(t)), "the clean run reaches no hard case")

	race := func(secondStart int64, second string) *h {
		x := good(t)
		x.handle(10, "handler-1", "evt-1", hist.HandleStart, "")
		x.handle(secondStart, second, "evt-1", hist.HandleStart, "")
		x.handle(20, "handler-1", "evt-1", hist.HandleEnd, "first")
		x.handle(25, second, "evt-1", hist.HandleEnd, "first")
		return x
	}
	assert.True(t, probes(t, race(19, "handler-2"))[ProbeRace])
	assert.False(t, probes(t, race(20, "handler-2"))[ProbeRace], "the second started as the first ended")
	assert.False(t, probes(t, race(19, "handler-1"))[ProbeRace], "one handler")
	x := good(t)
	x.handle(10, "handler-1", "evt-1", hist.HandleStart, "")
	x.handle(12, "handler-2", "evt-2", hist.HandleStart, "")
	x.handle(20, "handler-1", "evt-1", hist.HandleEnd, "first")
	x.handle(22, "handler-2", "evt-2", hist.HandleEnd, "first")
	assert.False(t, probes(t, x)[ProbeRace], "two keys")
	x = good(t)
	x.handle(10, "handler-1", "", hist.HandleStart, "")
	x.handle(12, "handler-2", "", hist.HandleStart, "")
	x.handle(20, "handler-1", "", hist.HandleEnd, "refused")
	x.handle(22, "handler-2", "", hist.HandleEnd, "duplicate")
	assert.False(t, probes(t, x)[ProbeRace], "keyless requests share no key")
	assert.False(t, probes(t, x)[ProbeDuplicate])

	x = good(t)
	x.handle(10, "handler-1", "evt-1", hist.HandleStart, "")
	x.handle(20, "handler-1", "evt-1", hist.HandleEnd, "duplicate")
	assert.True(t, probes(t, x)[ProbeDuplicate])

	// A handler that crashed mid-delivery races with the one that took over.
	crashed := func(crash bool) *h {
		x := good(t)
		x.handle(10, "handler-1", "evt-1", hist.HandleStart, "")
		if crash {
			x.crash(30, "handler-1")
		}
		x.handle(40, "handler-2", "evt-1", hist.HandleStart, "")
		x.handle(50, "handler-2", "evt-1", hist.HandleEnd, "first")
		return x
	}
	p := probes(t, crashed(true))
	assert.True(t, p[ProbeHandlerCrash])
	assert.False(t, p[ProbeRace], "handler-1 was gone by 30")
	p = probes(t, crashed(false))
	assert.False(t, p[ProbeHandlerCrash], "still in flight at the end")
	assert.True(t, p[ProbeRace], "an open delivery lasts to the end of the run")

	x = good(t)
	x.call(400, "d3", OpCharge, "evt-1", "order-1", 1, 400e6)
	assert.True(t, probes(t, x)[ProbeRedelivery])
	x = good(t)
	x.call(400, "d3", OpCharge, "evt-1", "order-1", 1, 0)
	assert.False(t, probes(t, x)[ProbeRedelivery], "a retry with the first timestamp")

	x = good(t)
	x.publish(320, "h1.1.1", "evt-1", 2)
	assert.True(t, probes(t, x)[ProbeDoublePub])

	x = good(t)
	x.add(320, "broker", KindPush, map[string]any{"msg": "msg-h1.1.1", "seq": 1, "attempt": 2})
	x.add(321, "consumer", KindApply, map[string]any{"msg": "msg-h1.1.1", "seq": 1, "what": hist.ApplyDuplicate})
	p = probes(t, x)
	assert.True(t, p[ProbeBrokerRedo])
	assert.True(t, p[ProbeDedup])
	x = good(t)
	x.add(321, "consumer", KindApply, map[string]any{"msg": "msg-h1.1.1", "seq": 1, "what": hist.ApplyApplied})
	assert.False(t, probes(t, x)[ProbeDedup])

	x = good(t)
	x.commit(600, "db", ins(TKeys, map[string]any{"id": 2, "key": "refund:evt-1", "event_id": "evt-1", "op_id": "r1", "answer": "refunded"}))
	assert.True(t, probes(t, x)[ProbeRefund])
	assert.False(t, probes(t, x)[ProbeRefusal])
	x = good(t).refused(600, "r1", "evt-2", "order-2", 404, "no charge for event evt-9")
	assert.True(t, probes(t, x)[ProbeRefusal], "a refusal recorded with its key")
	assert.False(t, probes(t, x)[ProbeRefund], "a refused refund is no refund")

	keyless := func(code int) *h {
		x := good(t)
		x.call(600, "d9", OpCharge, "", "order-9", 0, 600e6)
		x.ret(601, "d9", code, "missing Idempotency-Key")
		return x
	}
	assert.True(t, probes(t, keyless(400))[ProbeKeyless])
	assert.False(t, probes(t, keyless(503))[ProbeKeyless])

	x = &h{t: t}
	x.event(0, "evt-1", "order-1", OpCharge, 1, 3)
	x.call(0, "d1", OpCharge, "evt-1", "order-1", 0, 0)
	x.stop(100, "evt-1", "order-1", hist.SenderGiveUp, 0, 3)
	assert.True(t, probes(t, x)[ProbeGaveUp])
}

// TestVerdictReasons: a failed property lists its reasons sorted, at most
// eight and a count of the rest; a verdict reads in one line.
func TestVerdictReasons(t *testing.T) {
	x := good(t)
	for i := 0; i < 10; i++ {
		id := string(rune('a' + i))
		x.call(int64(600+i), "k"+id, OpCharge, "", "order-k"+id, 0, 0)
		x.ret(int64(601+i), "k"+id, 200, "ok")
	}
	vs := judge(t, x)
	v, ok := Find(vs, PB6)
	require.True(t, ok)
	assert.False(t, v.OK)
	require.Len(t, v.Why, 9)
	assert.Equal(t, "(and 2 more)", v.Why[8])
	assert.Contains(t, v.Why[0], "order-ka")
	assert.Contains(t, v.Why[7], "order-kh")
	assert.Equal(t, "PB6 FAILED: "+strings.Join(v.Why, "; "), v.String())
	ok1, _ := Find(vs, PB2)
	assert.Equal(t, "PB2 ok", ok1.String())
	_, found := Find(vs, "PB9")
	assert.False(t, found)
}

// TestDecodeRejectsBadNotes: a relay, push or apply note that does not
// decode is an error, not a silent pass.
func TestDecodeRejectsBadNotes(t *testing.T) {
	for _, kind := range []string{KindRelay, KindPush, KindApply, KindHandle, KindEvent} {
		x := &h{t: t}
		x.events = append(x.events, traces.Event{Seq: 1, Kind: kind, Data: json.RawMessage(`{"msg": 7, "seq": "x", "event": 3, "handler": 1}`)})
		_, err := Decode(x.events)
		assert.Error(t, err, kind)
	}
}

// TestPropertyEdges: must-pass and must-fail histories at the edges of
// PB1, PB2, PB4, PB5 and PB6, and what their failures say.
func TestPropertyEdges(t *testing.T) {
	t.Run("PB1 two refund entries for one event", func(t *testing.T) {
		x := good(t)
		for i, id := range []string{"le-r1", "le-r2"} {
			x.commit(int64(1000+i), "db", ins(TLedger, map[string]any{"id": id, "account": "merchant", "event_id": "evt-9", "kind": OpRefund, "amount": -100, "reversal_of": "le-h1.1.1"}))
		}
		v, _ := Find(judge(t, x), PB1)
		assert.False(t, v.OK)
		assert.Contains(t, v.String(), "event evt-9 has 2 refund entries: le-r1, le-r2")
	})
	t.Run("PB2 a publish of nothing says when", func(t *testing.T) {
		x := good(t)
		x.publish(1500, "h3.1.1", "evt-2", 2)
		v, _ := Find(judge(t, x), PB2)
		assert.Contains(t, v.String(), "published at 1.500s but its transaction never committed")
	})
	t.Run("PB3 says how often it was published", func(t *testing.T) {
		x := good(t)
		x.events = x.events[:len(x.events)-1]
		x.publish(800, "h1.1.1", "evt-1", 2)
		v, _ := Find(judge(t, x), PB3)
		assert.Contains(t, v.String(), "message msg-h1.1.1 published 2 time(s) but never applied")
	})
	t.Run("PB4 says when a row was changed or deleted", func(t *testing.T) {
		x := good(t)
		// committed at the database's clock 1.25 s (the event at 1 s)
		x.add(1000, "db", hist.KindCommit, map[string]any{"seq": 90, "tx": 90, "at": int64(1250e6), "changes": []change{{Table: TLedger, Op: "update",
			Key: []any{"le-h1.1.1"}, Before: map[string]any{"id": "le-h1.1.1", "amount": 100}, After: map[string]any{"id": "le-h1.1.1", "amount": 0}}}})
		x.commit(2000, "db", change{Table: TLedger, Op: "delete", Key: []any{"le-h1.1.1"}, Before: map[string]any{"id": "le-h1.1.1", "amount": 0}})
		v, _ := Find(judge(t, x), PB4)
		assert.Contains(t, v.String(), "ledger row le-h1.1.1 changed in place at 1.250s: amount 100 -> 0")
		assert.Contains(t, v.String(), "ledger row le-h1.1.1 deleted at 2.000s")
	})
	bounded := func(bound, deliveries int) *h {
		x := &h{t: t}
		x.event(0, "evt-1", "order-1", OpCharge, 1, bound)
		for i := 0; i < deliveries; i++ {
			id := string(rune('a' + i))
			x.call(int64(i*10), id, OpCharge, "evt-1", "order-1", i, int64(i)*10e6)
			if i == 0 {
				x.commit(5, "db", charge("h1.1.1", "evt-1", "order-1", 100, 5)...)
			}
			x.ret(int64(i*10+5), id, 200, "received ch-h1.1.1")
		}
		x.stop(100, "evt-1", "order-1", "done", 200, deliveries)
		x.publish(300, "h1.1.1", "evt-1", 1)
		x.effect(310, "h1.1.1", "evt-1", 1)
		return x
	}
	t.Run("PB5 at the sender's bound", func(t *testing.T) {
		requireOnly(t, judge(t, bounded(3, 3)))
		requireOnly(t, judge(t, bounded(3, 4)), PB5)
		requireOnly(t, judge(t, bounded(0, 4))) // no bound: nothing to exceed
	})
	t.Run("PB6 a refused request that changed something", func(t *testing.T) {
		x := good(t)
		x.event(50, "", "order-7", OpCharge, 1, 10)
		x.call(50, "d7", OpCharge, "", "order-7", 0, 50e6)
		x.commit(60, "db", ins(TCharges, map[string]any{"id": "ch-x", "event_id": "", "payload": "order-7", "amount": 1}))
		x.ret(62, "d7", 400, "refused: the request has no Idempotency-Key")
		v, _ := Find(judge(t, x), PB6)
		assert.False(t, v.OK)
		assert.Contains(t, v.String(), "keyless request order-7 changed charges")
	})
	t.Run("PB6 an empty key stored", func(t *testing.T) {
		x := good(t)
		x.commit(60, "db", ins(TKeys, map[string]any{"id": 7, "key": "charge:", "event_id": "", "op_id": "h9", "answer": "x"}))
		v, _ := Find(judge(t, x), PB6)
		assert.False(t, v.OK)
		assert.Contains(t, v.String(), "an empty key was stored")
		x = good(t)
		x.commit(60, "db", change{Table: TKeys, Op: "delete", Key: []any{1}, Before: map[string]any{"id": 1, "event_id": ""}})
		v, _ = Find(judge(t, x), PB6)
		assert.True(t, v.OK, "a key row deleted is not a key stored")
	})
	t.Run("reasons: eight are listed in full", func(t *testing.T) {
		x := good(t)
		for i := 0; i < 8; i++ {
			id := string(rune('a' + i))
			x.call(int64(600+i), "k"+id, OpCharge, "", "order-k"+id, 0, 0)
			x.ret(int64(601+i), "k"+id, 200, "ok")
		}
		v, _ := Find(judge(t, x), PB6)
		assert.Len(t, v.Why, 8)
		assert.NotContains(t, v.String(), "more)")
	})
}
