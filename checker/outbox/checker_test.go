package outbox

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// h is a hand-made trace: each method appends one event, times in ms.
type h struct {
	t      *testing.T
	events []traces.Event
}

func (x *h) add(ms int64, node, kind string, data any) *h {
	b, err := json.Marshal(data)
	require.NoError(x.t, err)
	x.events = append(x.events, traces.Event{Seq: uint64(len(x.events) + 1), T: ms * 1e6, Node: node, Kind: kind, Data: b})
	return x
}

func (x *h) event(ms int64, ev, payload, op string, copies, bound int) *h {
	return x.add(ms, "sender", KindEvent, map[string]any{"event": ev, "payload": payload, "op": op, "copies": copies, "bound": bound})
}

func (x *h) call(ms int64, id, op, key, payload string, attempt int, deliveredAt int64) *h {
	x.add(ms, "sender", hist.KindCall, hist.Call{ID: id, Client: "sender", Op: op, Key: key, RequestID: payload})
	return x.add(ms, "sender", KindDelivery, map[string]any{"call": id, "event": key, "payload": payload, "handler": "handler-1", "attempt": attempt, "delivered_at": deliveredAt})
}

func (x *h) ret(ms int64, id string, code int, value string) *h {
	return x.add(ms, "sender", hist.KindReturn, hist.Return{ID: id, Code: code, Value: value})
}

func (x *h) stop(ms int64, ev, payload, what string, code, attempts int) *h {
	return x.add(ms, "sender", KindSender, map[string]any{"event": ev, "payload": payload, "what": what, "code": code, "attempts": attempts})
}

type change struct {
	Table  string         `json:"table"`
	Op     string         `json:"op"`
	Key    []any          `json:"key"`
	Before map[string]any `json:"before,omitempty"`
	After  map[string]any `json:"after,omitempty"`
}

func (x *h) commit(ms int64, node string, changes ...change) *h {
	return x.add(ms, node, hist.KindCommit, map[string]any{"seq": len(x.events), "tx": len(x.events), "at": ms * 1e6, "changes": changes})
}

func ins(table string, row map[string]any) change {
	return change{Table: table, Op: "insert", Key: []any{row["id"]}, After: row}
}

// charge is the handler's committed transaction for op on event.
func charge(op, ev, payload string, amount int64, ms int64) []change {
	return []change{
		ins(TKeys, map[string]any{"id": 1, "key": "charge:" + ev, "event_id": ev, "op_id": op, "answer": "received ch-" + op}),
		ins(TCharges, map[string]any{"id": "ch-" + op, "event_id": ev, "payload": payload, "amount": amount, "at": ms * 1e6}),
		ins(TLedger, map[string]any{"id": "le-" + op, "account": "merchant", "event_id": ev, "kind": OpCharge, "amount": amount, "reversal_of": nil, "at": ms * 1e6}),
		ins(TOutbox, map[string]any{"id": "msg-" + op, "event_id": ev, "op_id": op, "kind": OpCharge, "amount": amount, "sent": false}),
	}
}

func (x *h) publish(ms int64, op, ev string, seq uint64) *h {
	return x.add(ms, "broker", KindPublish, map[string]any{"msg": Message{ID: "msg-" + op, Event: ev, OpID: op, Kind: OpCharge, Amount: 100}, "from": "relay", "seq": seq})
}

func (x *h) effect(ms int64, op, ev string, id int) *h {
	return x.commit(ms, "consumer-db",
		ins(TProcessed, map[string]any{"id": "msg-" + op, "msg_id": "msg-" + op}),
		ins(TEffects, map[string]any{"id": id, "msg_id": "msg-" + op, "event_id": ev, "op_id": op, "kind": OpCharge}))
}

// good is a clean run: one event delivered twice at once (both answered
// with the same answer), one commit, one publish, one effect.
func good(t *testing.T) *h {
	x := &h{t: t}
	x.event(0, "evt-1", "order-1", OpCharge, 2, 11)
	x.call(0, "d1", OpCharge, "evt-1", "order-1", 0, 0)
	x.call(1, "d2", OpCharge, "evt-1", "order-1", 0, 1e6)
	x.commit(20, "db", charge("h1.1.1", "evt-1", "order-1", 100, 10)...)
	x.ret(25, "d1", 200, "received ch-h1.1.1")
	x.ret(26, "d2", 200, "received ch-h1.1.1")
	x.stop(25, "evt-1", "order-1", "done", 200, 1)
	x.publish(300, "h1.1.1", "evt-1", 1)
	x.effect(310, "h1.1.1", "evt-1", 1)
	return x
}

func judge(t *testing.T, x *h) []Verdict {
	t.Helper()
	hs, err := Decode(x.events)
	require.NoError(t, err)
	return Check(hs)
}

func requireOnly(t *testing.T, vs []Verdict, failing ...string) {
	t.Helper()
	assert.ElementsMatch(t, failing, Failed(vs), "verdicts: %v", vs)
}

func TestGoodHistoryPasses(t *testing.T) {
	requireOnly(t, judge(t, good(t)))
}

func TestUnknownOutcomesAreAccepted(t *testing.T) {
	x := good(t)
	// A third delivery whose reply was lost, and a fourth answered 503.
	x.call(400, "d3", OpCharge, "evt-1", "order-1", 1, 400e6)
	x.call(500, "d4", OpCharge, "evt-1", "order-1", 2, 500e6)
	x.ret(501, "d4", 503, "database connection lost")
	requireOnly(t, judge(t, x))
}

func TestPB1DifferentAnswersFail(t *testing.T) {
	x := good(t)
	x.call(400, "d3", OpCharge, "evt-1", "order-1", 1, 400e6)
	x.ret(401, "d3", 200, "received ch-h2.1.1")
	vs := judge(t, x)
	requireOnly(t, vs, PB1)
	v, _ := Find(vs, PB1)
	assert.Contains(t, v.Why[0], "not linearizable")
}

func TestPB1TwoChargesFail(t *testing.T) {
	x := good(t)
	x.commit(30, "db", charge("h2.1.1", "evt-1", "order-1", 100, 30)[1:]...) // a second charge row, no key (check-then-insert)
	second := uint64(len(x.events))
	x.publish(300, "h2.1.1", "evt-1", 2)
	x.effect(320, "h2.1.1", "evt-1", 2)
	effect := uint64(len(x.events))
	vs := judge(t, x)
	requireOnly(t, vs, PB1)
	v, _ := Find(vs, PB1)
	assert.Contains(t, v.String(), "2 charge rows")
	assert.Contains(t, v.String(), "2 side effects")
	assert.Equal(t, []uint64{second, effect}, v.Events, "PB1 names the commits of the second charge row and the second effect")
}

func TestPB1NotFoundAfterSuccessFails(t *testing.T) {
	x := good(t)
	x.call(400, "d3", OpCharge, "evt-1", "order-1", 1, 400e6)
	x.ret(401, "d3", 404, "no charge")
	requireOnly(t, judge(t, x), PB1)
}

func TestPB2(t *testing.T) {
	t.Run("committed-never-published", func(t *testing.T) {
		x := &h{t: t}
		x.event(0, "evt-1", "order-1", OpCharge, 1, 10)
		x.call(0, "d1", OpCharge, "evt-1", "order-1", 0, 0)
		x.commit(20, "db", charge("h1.1.1", "evt-1", "order-1", 100, 10)...)
		x.ret(25, "d1", 200, "received ch-h1.1.1")
		x.stop(25, "evt-1", "order-1", "done", 200, 1)
		requireOnly(t, judge(t, x), PB2)
	})
	t.Run("published-never-committed", func(t *testing.T) {
		x := good(t)
		x.publish(15, "h3.1.1", "evt-2", 2) // sent before a COMMIT that never came
		x.effect(30, "h3.1.1", "evt-2", 2)
		requireOnly(t, judge(t, x), PB2)
	})
}

func TestPB3(t *testing.T) {
	t.Run("published-twice-applied-once-passes", func(t *testing.T) {
		x := good(t)
		x.publish(800, "h1.1.1", "evt-1", 2) // the relay crashed before the mark
		requireOnly(t, judge(t, x))
	})
	t.Run("applied-twice", func(t *testing.T) {
		x := good(t)
		x.publish(800, "h1.1.1", "evt-1", 2)
		x.commit(810, "consumer-db", ins(TEffects, map[string]any{"id": 2, "msg_id": "msg-h1.1.1", "event_id": "evt-1", "op_id": "h1.1.1", "kind": OpCharge}))
		requireOnly(t, judge(t, x), PB1, PB3)
	})
	t.Run("never-applied", func(t *testing.T) {
		x := good(t)
		x.events = x.events[:len(x.events)-1] // drop the effect
		requireOnly(t, judge(t, x), PB3)
	})
}

func TestPB4(t *testing.T) {
	refund := func(x *h, ms int64, reverses string, amount int64) {
		x.commit(ms, "db",
			ins(TKeys, map[string]any{"id": 2, "key": "refund:evt-1/refund", "event_id": "evt-1/refund", "op_id": "h1.1.2", "answer": "refunded le-h1.1.2"}),
			ins(TLedger, map[string]any{"id": "le-h1.1.2", "account": "merchant", "event_id": "evt-1/refund", "kind": OpRefund, "amount": amount, "reversal_of": reverses}),
			ins(TOutbox, map[string]any{"id": "msg-h1.1.2", "event_id": "evt-1/refund", "op_id": "h1.1.2", "kind": OpRefund}))
		x.publish(ms+10, "h1.1.2", "evt-1/refund", 5)
		x.effect(ms+20, "h1.1.2", "evt-1/refund", 9)
	}
	t.Run("compensating-entry-passes", func(t *testing.T) {
		x := good(t)
		refund(x, 1000, "le-h1.1.1", -100)
		requireOnly(t, judge(t, x))
	})
	t.Run("wrong-amount", func(t *testing.T) {
		x := good(t)
		refund(x, 1000, "le-h1.1.1", -50)
		requireOnly(t, judge(t, x), PB4)
	})
	t.Run("edit-in-place", func(t *testing.T) {
		x := good(t)
		x.commit(1000, "db", change{Table: TLedger, Op: "update", Key: []any{"le-h1.1.1"},
			Before: map[string]any{"id": "le-h1.1.1", "amount": 100, "kind": OpCharge},
			After:  map[string]any{"id": "le-h1.1.1", "amount": 0, "kind": OpCharge}})
		vs := judge(t, x)
		requireOnly(t, vs, PB4)
		v, _ := Find(vs, PB4)
		assert.Contains(t, v.String(), "changed in place")
		assert.Contains(t, v.String(), "balance believed at 0.020s was 100")
	})
	t.Run("delete", func(t *testing.T) {
		x := good(t)
		x.commit(1000, "db", change{Table: TLedger, Op: "delete", Key: []any{"le-h1.1.1"}, Before: map[string]any{"id": "le-h1.1.1", "amount": 100}})
		requireOnly(t, judge(t, x), PB4)
	})
}

func TestPB5(t *testing.T) {
	t.Run("gave-up-on-committed-event", func(t *testing.T) {
		x := &h{t: t}
		x.event(0, "evt-1", "order-1", OpCharge, 1, 3)
		x.call(0, "d1", OpCharge, "evt-1", "order-1", 0, 0)
		x.commit(20, "db", charge("h1.1.1", "evt-1", "order-1", 100, 10)...)
		// the 200 was lost; every redelivery is answered 500
		x.call(1000, "d2", OpCharge, "evt-1", "order-1", 1, 1000e6)
		x.ret(1001, "d2", 500, "duplicate key value violates unique constraint")
		x.call(2000, "d3", OpCharge, "evt-1", "order-1", 2, 2000e6)
		x.ret(2001, "d3", 500, "duplicate key value violates unique constraint")
		x.stop(2001, "evt-1", "order-1", "give-up", 0, 3)
		x.publish(300, "h1.1.1", "evt-1", 1)
		x.effect(310, "h1.1.1", "evt-1", 1)
		requireOnly(t, judge(t, x), PB5)
	})
	t.Run("above-bound", func(t *testing.T) {
		x := good(t)
		x.events[0] = (&h{t: t}).event(0, "evt-1", "order-1", OpCharge, 2, 1).events[0]
		requireOnly(t, judge(t, x), PB5)
	})
	t.Run("still-delivering", func(t *testing.T) {
		x := good(t)
		var kept []traces.Event
		for _, e := range x.events {
			if e.Kind != KindSender {
				kept = append(kept, e)
			}
		}
		x.events = kept
		requireOnly(t, judge(t, x), PB5)
	})
	t.Run("gave-up-on-nothing-fails", func(t *testing.T) {
		// Nothing committed, and still the sender could not stop on an
		// answer: the second refund of one charge answered 503 until it
		// gave up (double-refund-is-error).
		x := good(t)
		x.event(2000, "evt-2", "order-2", OpCharge, 1, 2)
		x.call(2000, "d9", OpCharge, "evt-2", "order-2", 0, 2000e6)
		x.ret(2001, "d9", 503, "database error: 23505")
		x.stop(9000, "evt-2", "order-2", "give-up", 0, 2)
		requireOnly(t, judge(t, x), PB5)
	})
	t.Run("refused-and-recorded-passes", func(t *testing.T) {
		// A refund of nothing, refused with its key recorded; its
		// redelivery gets the same refusal.
		x := good(t).refused(500, "h2.1.1", "evt-2", "order-2", 404, "no charge for event evt-9")
		x.call(600, "d9", OpRefund, "evt-2", "order-2", 1, 600e6)
		x.ret(601, "d9", 404, "no charge for event evt-9")
		requireOnly(t, judge(t, x))
	})
}

func TestPB6(t *testing.T) {
	t.Run("refused-passes", func(t *testing.T) {
		x := good(t)
		x.event(50, "", "order-7", OpCharge, 1, 10)
		x.call(50, "d7", OpCharge, "", "order-7", 0, 50e6)
		x.ret(52, "d7", 400, "refused: the request has no Idempotency-Key")
		x.stop(52, "", "order-7", "done", 400, 1)
		requireOnly(t, judge(t, x))
	})
	t.Run("processed", func(t *testing.T) {
		x := good(t)
		x.event(50, "", "order-7", OpCharge, 1, 10)
		x.call(50, "d7", OpCharge, "", "order-7", 0, 50e6)
		x.commit(60, "db", charge("h1.1.9", "", "order-7", 100, 55)...)
		x.ret(62, "d7", 200, "received ch-h1.1.9")
		x.stop(62, "", "order-7", "done", 200, 1)
		x.publish(300, "h1.1.9", "", 3)
		x.effect(310, "h1.1.9", "", 3)
		requireOnly(t, judge(t, x), PB6)
	})
}

func TestDecodeRejectsBrokenContract(t *testing.T) {
	x := &h{t: t}
	x.add(0, "sender", hist.KindReturn, hist.Return{ID: "nobody", Code: 200})
	_, err := Decode(x.events)
	require.Error(t, err)
	x = &h{t: t}
	x.events = append(x.events, traces.Event{Seq: 1, Kind: KindPublish, Data: json.RawMessage(`{"msg": 7}`)})
	_, err = Decode(x.events)
	require.Error(t, err)
}

func TestProbesRelayCrashBetween(t *testing.T) {
	x := good(t)
	x.add(290, "relay", KindRelay, map[string]any{"msg": "msg-h1.1.1", "what": "published"})
	x.events = append(x.events, traces.Event{Seq: 99, T: 295e6, Node: "relay", Kind: "crash"})
	x.add(900, "relay", KindRelay, map[string]any{"msg": "msg-h1.1.1", "what": "published"})
	x.add(901, "relay", KindRelay, map[string]any{"msg": "msg-h1.1.1", "what": "marked"})
	hs, err := Decode(x.events)
	require.NoError(t, err)
	p := Probes(hs)
	assert.True(t, p[ProbeRelayBetween])
	assert.False(t, p[ProbeGaveUp])
}

// TestProbesRelayCrashPerInstance: with two relays, the probe follows each
// relay on its own: a crash of one relay while the other has a published,
// unmarked message is not a crash between publish and mark; a crash of
// the second relay with its own unmarked message is.
func TestProbesRelayCrashPerInstance(t *testing.T) {
	x := good(t)
	x.add(290, "relay", KindRelay, map[string]any{"msg": "msg-h1.1.1", "what": "published"})
	x.events = append(x.events, traces.Event{Seq: 99, T: 295e6, Node: "relay-2", Kind: "crash"})
	x.add(300, "relay", KindRelay, map[string]any{"msg": "msg-h1.1.1", "what": "marked"})
	hs, err := Decode(x.events)
	require.NoError(t, err)
	assert.False(t, Probes(hs)[ProbeRelayBetween], "relay-2 had nothing unmarked")

	x.add(400, "relay-2", KindRelay, map[string]any{"msg": "msg-h1.1.2", "what": "published"})
	x.events = append(x.events, traces.Event{Seq: 100, T: 450e6, Node: "relay-2", Kind: "crash"})
	hs, err = Decode(x.events)
	require.NoError(t, err)
	assert.True(t, Probes(hs)[ProbeRelayBetween], "relay-2 crashed with msg-h1.1.2 published, not marked")
}
