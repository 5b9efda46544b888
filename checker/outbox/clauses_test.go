package outbox

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// The clause table of system B (docs/clauses.md): for each clause of a
// property in docs/properties.md, a history that breaks just that clause
// (fail) next to the same history without the break (pass). fail must fail
// exactly the properties in want, and the verdict of the clause's property
// must name the clause (why). A clause that permits something (an unknown
// outcome is accepted either way) has its pass history show the permission
// and its fail history show where the permission ends.

// clauseB is one row of the table.
type clauseB struct {
	name       string
	prop       string   // the property the clause belongs to
	want       []string // every property fail must fail
	why        string   // in prop's reasons
	reasons    int      // how many reasons prop gives on fail (0: not asserted)
	pass, fail func(t *testing.T) *h
}

// without drops the events of a kind.
func (x *h) without(kind string) *h {
	var kept []traces.Event
	for _, e := range x.events {
		if e.Kind != kind {
			kept = append(kept, e)
		}
	}
	x.events = kept
	return x
}

// last drops the last n events.
func (x *h) last(n int) *h {
	x.events = x.events[:len(x.events)-n]
	return x
}

// refund commits a refund of le-h1.1.1 for event evt-1/refund as op, with
// its message published and applied (effect id eff).
func (x *h) refund(ms int64, op, reverses string, amount int64, eff int) *h {
	x.commit(ms, "db",
		ins(TKeys, map[string]any{"id": 2, "key": "refund:evt-1/refund", "event_id": "evt-1/refund", "op_id": op, "answer": "refunded le-" + op}),
		ins(TLedger, map[string]any{"id": "le-" + op, "account": "merchant", "event_id": "evt-1/refund", "kind": OpRefund, "amount": amount, "reversal_of": reverses}),
		ins(TOutbox, map[string]any{"id": "msg-" + op, "event_id": "evt-1/refund", "op_id": op, "kind": OpRefund}))
	x.publish(ms+10, op, "evt-1/refund", uint64(eff+10))
	return x.effect(ms+20, op, "evt-1/refund", eff)
}

// refused adds a refund event of its own (key refund:ev) refused with
// code/answer at ms, the refusal recorded with its key (a key row, nothing
// else), the sender stopped on it.
func (x *h) refused(ms int64, op, ev, payload string, code int, answer string) *h {
	x.event(ms, ev, payload, OpRefund, 1, 10)
	x.call(ms, "r-"+payload, OpRefund, ev, payload, 0, ms*1e6)
	x.commit(ms+2, "db", ins(TKeys, map[string]any{"id": 3, "key": "refund:" + ev, "event_id": ev, "op_id": op, "answer": answer, "code": code}))
	x.ret(ms+3, "r-"+payload, code, answer)
	return x.stop(ms+3, ev, payload, "done", code, 1)
}

// keyless adds a keyless request for order-7 answered code/value.
func (x *h) keyless(code int, value string) *h {
	x.event(50, "", "order-7", OpCharge, 1, 10)
	x.call(50, "d7", OpCharge, "", "order-7", 0, 50e6)
	x.ret(52, "d7", code, value)
	return x.stop(52, "", "order-7", "done", code, 1)
}

const refused = "refused: the request has no Idempotency-Key; send the same key with every retry"

// gaveUp is TestPB5's event whose first 200 was lost: every redelivery is
// answered code (value), and the sender ends what after them.
func gaveUp(t *testing.T, code int, value, what string, stopCode int) *h {
	x := &h{t: t}
	x.event(0, "evt-1", "order-1", OpCharge, 1, 3)
	x.call(0, "d1", OpCharge, "evt-1", "order-1", 0, 0)
	x.commit(20, "db", charge("h1.1.1", "evt-1", "order-1", 100, 10)...)
	x.call(1000, "d2", OpCharge, "evt-1", "order-1", 1, 1000e6)
	x.ret(1001, "d2", code, value)
	x.stop(1001, "evt-1", "order-1", what, stopCode, 2)
	x.publish(300, "h1.1.1", "evt-1", 1)
	return x.effect(310, "h1.1.1", "evt-1", 1)
}

var clausesB = []clauseB{
	// PB1 one effect per key.
	{name: "PB1/one-charge-row", prop: PB1, want: []string{PB1, PB2}, why: "event evt-1 has 2 charge rows: ch-h1.1.1, ch-h2.1.1", reasons: 1,
		// A second charge row for evt-1, alone (its own message never
		// published, hence PB2; a published one would add a second
		// side effect, the next clause).
		pass: good,
		fail: func(t *testing.T) *h {
			return good(t).commit(30, "db", ins(TCharges, map[string]any{"id": "ch-h2.1.1", "event_id": "evt-1", "payload": "order-1", "amount": 100}))
		}},
	{name: "PB1/one-refund-entry", prop: PB1, want: []string{PB1, PB2}, why: "event evt-1/refund has 2 refund entries: le-h1.1.2, le-h2.1.2", reasons: 1,
		pass: func(t *testing.T) *h { return good(t).refund(1000, "h1.1.2", "le-h1.1.1", -100, 2) },
		fail: func(t *testing.T) *h {
			return good(t).refund(1000, "h1.1.2", "le-h1.1.1", -100, 2).
				commit(1100, "db", ins(TLedger, map[string]any{"id": "le-h2.1.2", "account": "merchant", "event_id": "evt-1/refund", "kind": OpRefund, "amount": -100, "reversal_of": "le-h1.1.1"}))
		}},
	{name: "PB1/one-side-effect", prop: PB1, want: []string{PB1}, why: "event evt-1 has 2 side effects (messages msg-h1.1.1, msg-h1.1.1b)", reasons: 1,
		// One charge, but two distinct messages for its operation, each
		// published and applied once: PB2 and PB3 hold, the consumer
		// still acted twice for one key.
		pass: good,
		fail: func(t *testing.T) *h {
			x := good(t)
			x.add(800, "broker", KindPublish, map[string]any{"msg": Message{ID: "msg-h1.1.1b", Event: "evt-1", OpID: "h1.1.1", Kind: OpCharge, Amount: 100}, "from": "relay", "seq": 2})
			return x.commit(810, "consumer-db",
				ins(TProcessed, map[string]any{"id": "msg-h1.1.1b", "msg_id": "msg-h1.1.1b"}),
				ins(TEffects, map[string]any{"id": 2, "msg_id": "msg-h1.1.1b", "event_id": "evt-1", "op_id": "h1.1.1", "kind": OpCharge}))
		}},
	{name: "PB1/same-answer", prop: PB1, want: []string{PB1}, why: "answers not linearizable", reasons: 1,
		pass: func(t *testing.T) *h {
			return good(t).call(400, "d3", OpCharge, "evt-1", "order-1", 1, 400e6).ret(401, "d3", 200, "received ch-h1.1.1")
		},
		fail: func(t *testing.T) *h {
			return good(t).call(400, "d3", OpCharge, "evt-1", "order-1", 1, 400e6).ret(401, "d3", 200, "received ch-h2.1.1")
		}},
	{name: "PB1/refusal-is-the-answer", prop: PB1, want: []string{PB1}, why: "refund evt-2 -> 404 no charge for event evt-9; [0.600s, 0.601s] refund evt-2 -> 200 refunded le-h3.1.1", reasons: 1,
		// KeyModel: a refusal (4xx) is the key's answer, as a success is:
		// every later answered delivery gets it (refusal-not-stored breaks
		// it: the refund runs again once its charge exists).
		pass: func(t *testing.T) *h {
			return good(t).refused(500, "h2.1.1", "evt-2", "order-2", 404, "no charge for event evt-9").
				call(600, "d9", OpRefund, "evt-2", "order-2b", 0, 600e6).ret(601, "d9", 404, "no charge for event evt-9")
		},
		fail: func(t *testing.T) *h {
			return good(t).refused(500, "h2.1.1", "evt-2", "order-2", 404, "no charge for event evt-9").
				call(600, "d9", OpRefund, "evt-2", "order-2b", 0, 600e6).ret(601, "d9", 200, "refunded le-h3.1.1")
		}},
	{name: "PB1/refusal-has-no-effect", prop: PB1, want: []string{PB1}, why: `key refund:evt-1/refund recorded the refusal 409 "charge for event evt-1 already refunded", but its transaction wrote ledger (insert le-h1.1.2)`, reasons: 1,
		// A refusal kept with its key commits the key row alone.
		pass: func(t *testing.T) *h {
			return good(t).refund(1000, "h1.1.2", "le-h1.1.1", -100, 2)
		},
		fail: func(t *testing.T) *h {
			x := good(t).refund(1000, "h1.1.2", "le-h1.1.1", -100, 2)
			for i := range x.events {
				if x.events[i].Kind == hist.KindCommit && x.events[i].T == 1000e6 {
					x.events[i] = (&h{t: t}).commit(1000, "db",
						ins(TKeys, map[string]any{"id": 2, "key": "refund:evt-1/refund", "event_id": "evt-1/refund", "op_id": "h1.1.2", "answer": "charge for event evt-1 already refunded", "code": 409}),
						ins(TLedger, map[string]any{"id": "le-h1.1.2", "account": "merchant", "event_id": "evt-1/refund", "kind": OpRefund, "amount": -100, "reversal_of": "le-h1.1.1"})).events[0]
				}
			}
			return x
		}},
	{name: "PB1/lost-reply-is-unknown", prop: PB1, want: []string{PB1}, why: "charge evt-1 -> ?", reasons: 1,
		// Permission: a delivery whose reply never came is accepted
		// whatever it did; it does not excuse a later second answer.
		pass: func(t *testing.T) *h {
			return good(t).call(400, "d3", OpCharge, "evt-1", "order-1", 1, 400e6)
		},
		fail: func(t *testing.T) *h {
			return good(t).call(400, "d3", OpCharge, "evt-1", "order-1", 1, 400e6).
				call(500, "d4", OpCharge, "evt-1", "order-1", 2, 500e6).ret(501, "d4", 200, "received ch-h2.1.1")
		}},
	{name: "PB1/5xx-is-unknown", prop: PB1, want: []string{PB1}, why: "-> 503 database connection lost", reasons: 1,
		pass: func(t *testing.T) *h {
			return good(t).call(400, "d3", OpCharge, "evt-1", "order-1", 1, 400e6).ret(401, "d3", 503, "database connection lost")
		},
		fail: func(t *testing.T) *h {
			return good(t).call(400, "d3", OpCharge, "evt-1", "order-1", 1, 400e6).ret(401, "d3", 503, "database connection lost").
				call(500, "d4", OpCharge, "evt-1", "order-1", 2, 500e6).ret(501, "d4", 200, "received ch-h2.1.1")
		}},

	// PB2 outbox atomicity.
	{name: "PB2/committed-is-published", prop: PB2, want: []string{PB2}, why: "operation h1.1.1 (event evt-1) committed but its message was never published", reasons: 1,
		pass: good,
		fail: func(t *testing.T) *h { return good(t).last(2) }}, // the publish and the effect
	{name: "PB2/published-is-committed", prop: PB2, want: []string{PB2}, why: "message msg-h3.1.1 (event evt-2) published at 0.015s but its transaction never committed", reasons: 1,
		pass: good,
		fail: func(t *testing.T) *h {
			return good(t).publish(15, "h3.1.1", "evt-2", 2).effect(30, "h3.1.1", "evt-2", 2)
		}},

	// PB3 effectively once.
	{name: "PB3/published-is-applied", prop: PB3, want: []string{PB3}, why: "message msg-h1.1.1 published 1 time(s) but never applied", reasons: 1,
		pass: good,
		fail: func(t *testing.T) *h { return good(t).last(1) }}, // the effect
	{name: "PB3/applied-at-most-once", prop: PB3, want: []string{PB1, PB3}, why: "message msg-h1.1.1 applied 2 times (published 2 time(s))", reasons: 1,
		// A broker redelivery applied again: also a second side effect
		// of evt-1 (PB1). Published twice, applied once, passes.
		pass: func(t *testing.T) *h { return good(t).publish(800, "h1.1.1", "evt-1", 2) },
		fail: func(t *testing.T) *h {
			return good(t).publish(800, "h1.1.1", "evt-1", 2).
				commit(810, "consumer-db", ins(TEffects, map[string]any{"id": 2, "msg_id": "msg-h1.1.1", "event_id": "evt-1", "op_id": "h1.1.1", "kind": OpCharge}))
		}},
	{name: "PB3/applied-is-published", prop: PB3, want: []string{PB3}, why: "message msg-h9.1.1 applied but never published", reasons: 1,
		pass: good,
		fail: func(t *testing.T) *h { return good(t).effect(900, "h9.1.1", "evt-9", 2) }},

	// PB4 append-only ledger.
	{name: "PB4/no-row-changed", prop: PB4, want: []string{PB4}, why: "ledger row le-h1.1.1 changed in place at 1.000s", reasons: 1,
		// A change that leaves the amount alone: the balance still
		// reconstructs, only the change itself is caught.
		pass: good,
		fail: func(t *testing.T) *h {
			return good(t).commit(1000, "db", change{Table: TLedger, Op: "update", Key: []any{"le-h1.1.1"},
				Before: map[string]any{"id": "le-h1.1.1", "account": "merchant", "amount": 100, "kind": OpCharge},
				After:  map[string]any{"id": "le-h1.1.1", "account": "other", "amount": 100, "kind": OpCharge}})
		}},
	{name: "PB4/no-row-deleted", prop: PB4, want: []string{PB4}, why: "ledger row le-h2.1.1 deleted at 1.000s", reasons: 1,
		// A zero-amount entry deleted: the balance still reconstructs,
		// only the deletion is caught.
		pass: func(t *testing.T) *h {
			return good(t).commit(500, "db", charge("h2.1.1", "evt-2", "order-2", 0, 500)...).publish(600, "h2.1.1", "evt-2", 2).effect(610, "h2.1.1", "evt-2", 2)
		},
		fail: func(t *testing.T) *h {
			return good(t).commit(500, "db", charge("h2.1.1", "evt-2", "order-2", 0, 500)...).publish(600, "h2.1.1", "evt-2", 2).effect(610, "h2.1.1", "evt-2", 2).
				commit(1000, "db", change{Table: TLedger, Op: "delete", Key: []any{"le-h2.1.1"}, Before: map[string]any{"id": "le-h2.1.1", "amount": 0}})
		}},
	{name: "PB4/refund-names-its-entry", prop: PB4, want: []string{PB4}, why: `refund entry le-h1.1.2 reverses "le-nothing", which is not in the ledger`, reasons: 1,
		pass: func(t *testing.T) *h { return good(t).refund(1000, "h1.1.2", "le-h1.1.1", -100, 2) },
		fail: func(t *testing.T) *h { return good(t).refund(1000, "h1.1.2", "le-nothing", -100, 2) }},
	{name: "PB4/refund-opposite-amount", prop: PB4, want: []string{PB4}, why: "refund entry le-h1.1.2 of -50 does not reverse entry le-h1.1.1 of 100", reasons: 1,
		pass: func(t *testing.T) *h { return good(t).refund(1000, "h1.1.2", "le-h1.1.1", -100, 2) },
		fail: func(t *testing.T) *h { return good(t).refund(1000, "h1.1.2", "le-h1.1.1", -50, 2) }},
	{name: "PB4/balance-reconstructs", prop: PB4, want: []string{PB4}, why: "balance believed at 0.020s was 100; the ledger now says 0 for the same entries", reasons: 1,
		// The entry rewritten by a second insert of its key, which the
		// change and delete clauses do not see (a consistent commit log
		// cannot show it: there the balance follows from the first two
		// clauses; TestPB4/edit-in-place breaks it with an update).
		pass: good,
		fail: func(t *testing.T) *h {
			return good(t).commit(1000, "db", ins(TLedger, map[string]any{"id": "le-h1.1.1", "account": "merchant", "event_id": "evt-1", "kind": OpCharge, "amount": 0}))
		}},

	// PB5 the sender can stop.
	{name: "PB5/within-bound", prop: PB5, want: []string{PB5}, why: "event order-1 delivered 2 times, above the sender's bound 1", reasons: 1,
		pass: func(t *testing.T) *h {
			x := good(t)
			x.events[0] = (&h{t: t}).event(0, "evt-1", "order-1", OpCharge, 2, 2).events[0]
			return x
		},
		fail: func(t *testing.T) *h {
			x := good(t)
			x.events[0] = (&h{t: t}).event(0, "evt-1", "order-1", OpCharge, 2, 1).events[0]
			return x
		}},
	{name: "PB5/committed-is-not-given-up", prop: PB5, want: []string{PB5}, why: "event evt-1 committed but the sender never heard a success: give-up after 2 attempts", reasons: 1,
		pass: func(t *testing.T) *h { return gaveUp(t, 200, "received ch-h1.1.1", "done", 200) },
		fail: func(t *testing.T) *h {
			return gaveUp(t, 500, "duplicate key value violates unique constraint", "give-up", 0)
		}},
	{name: "PB5/committed-is-not-still-delivering", prop: PB5, want: []string{PB5}, why: "event evt-1 committed but the sender was still delivering it at the end (2 deliveries)", reasons: 1,
		pass: good,
		fail: func(t *testing.T) *h { return good(t).without(KindSender) }},
	{name: "PB5/stopped-on-a-success", prop: PB5, want: []string{PB5}, why: "event evt-1 committed but the sender never heard a success: done after 2 attempts", reasons: 1,
		// A 4xx stops the sender too, but is no success: the duplicate
		// answered 409 (the first reply was lost, so PB1 accepts it).
		pass: func(t *testing.T) *h { return gaveUp(t, 200, "received ch-h1.1.1", "done", 200) },
		fail: func(t *testing.T) *h { return gaveUp(t, 409, "conflict: already processed", "done", 409) }},

	{name: "PB5/not-given-up", prop: PB5, want: []string{PB5}, why: "the sender gave up on event evt-2 (order-2) after 3 attempts", reasons: 1,
		// Nothing committed, yet the sender could not stop: the second
		// refund of one charge answered 503 until it gave up
		// (double-refund-is-error). The neighbour: refused with 409,
		// recorded with its key, the sender done on it.
		pass: func(t *testing.T) *h {
			return good(t).refused(500, "h2.1.1", "evt-2", "order-2", 409, "charge for event evt-1 already refunded")
		},
		fail: func(t *testing.T) *h {
			x := good(t)
			x.event(500, "evt-2", "order-2", OpRefund, 1, 10)
			x.call(500, "d9", OpRefund, "evt-2", "order-2", 0, 500e6).ret(501, "d9", 503, "database error: 23505")
			x.call(1500, "d10", OpRefund, "evt-2", "order-2", 1, 1500e6).ret(1501, "d10", 503, "database error: 23505")
			x.call(2500, "d11", OpRefund, "evt-2", "order-2", 2, 2500e6).ret(2501, "d11", 503, "database error: 23505")
			return x.stop(2501, "evt-2", "order-2", "give-up", 0, 3)
		}},
	{name: "PB5/stopped-on-the-recorded-answer", prop: PB5, want: []string{PB1, PB5}, why: `event evt-2 (order-2) stopped on 404, but its key recorded 409 "charge for event evt-1 already refunded"`, reasons: 1,
		// The key evt-2 sent twice (a second sender): the first delivery
		// refused 404 with nothing recorded, the second refused 409 and
		// recorded. The first sender stopped on an answer the key does
		// not hold (PB1: two answers for one key). The neighbour: the
		// first refusal recorded, the second delivery answered it. (A
		// recorded success is the committed clauses' case.)
		pass: func(t *testing.T) *h {
			return good(t).refused(500, "h2.1.1", "evt-2", "order-2", 404, "no charge for event evt-9").
				event(600, "evt-2", "order-2b", OpRefund, 1, 10).
				call(600, "d9", OpRefund, "evt-2", "order-2b", 0, 600e6).ret(601, "d9", 404, "no charge for event evt-9").
				stop(601, "evt-2", "order-2b", "done", 404, 1)
		},
		fail: func(t *testing.T) *h {
			x := good(t)
			x.event(500, "evt-2", "order-2", OpRefund, 1, 10)
			x.call(500, "d8", OpRefund, "evt-2", "order-2", 0, 500e6).ret(501, "d8", 404, "no charge for event evt-9")
			x.stop(501, "evt-2", "order-2", "done", 404, 1)
			return x.refused(600, "h3.1.1", "evt-2", "order-2b", 409, "charge for event evt-1 already refunded")
		}},
	{name: "PB5/refused-is-not-still-delivering", prop: PB5, want: []string{PB5}, why: "event evt-2 was refused (404, recorded with its key) but the sender was still delivering it at the end (1 deliveries)", reasons: 1,
		pass: func(t *testing.T) *h {
			return good(t).refused(500, "h2.1.1", "evt-2", "order-2", 404, "no charge for event evt-9")
		},
		fail: func(t *testing.T) *h {
			return good(t).refused(500, "h2.1.1", "evt-2", "order-2", 404, "no charge for event evt-9").last(1)
		}},

	// PB6 no key, no change.
	{name: "PB6/answered-400", prop: PB6, want: []string{PB6}, why: "keyless request d7 (order-7) answered 422", reasons: 1,
		pass: func(t *testing.T) *h { return good(t).keyless(400, refused) },
		fail: func(t *testing.T) *h { return good(t).keyless(422, refused) }},
	{name: "PB6/names-the-missing-key", prop: PB6, want: []string{PB6}, why: `keyless request d7 (order-7) answered 400 "bad request"`, reasons: 1,
		pass: func(t *testing.T) *h { return good(t).keyless(400, refused) },
		fail: func(t *testing.T) *h { return good(t).keyless(400, "bad request") }},
	{name: "PB6/changes-nothing", prop: PB6, want: []string{PB6}, why: "keyless request order-7 changed charges (insert ch-h1.1.9)", reasons: 3,
		// Refused as it should be, yet its charge committed (no key row:
		// the last clause is not broken); its ledger entry and outbox row
		// are named by their empty event id.
		pass: func(t *testing.T) *h { return good(t).keyless(400, refused) },
		fail: func(t *testing.T) *h {
			return good(t).keyless(400, refused).commit(60, "db", charge("h1.1.9", "", "order-7", 100, 55)[1:]...).publish(300, "h1.1.9", "", 3).effect(310, "h1.1.9", "", 3)
		}},
	{name: "PB6/changes-nothing-without-payload", prop: PB6, want: []string{PB6}, why: "a keyless request changed ledger (insert le-h1.1.9)", reasons: 2,
		// A keyless refund: its ledger entry and message carry no
		// payload, only the empty event id says whose they are.
		pass: func(t *testing.T) *h { return good(t).keyless(400, refused) },
		fail: func(t *testing.T) *h {
			return good(t).keyless(400, refused).commit(60, "db",
				ins(TLedger, map[string]any{"id": "le-h1.1.9", "account": "merchant", "event_id": "", "kind": OpRefund, "amount": -100, "reversal_of": "le-h1.1.1"}),
				ins(TOutbox, map[string]any{"id": "msg-h1.1.9", "event_id": "", "op_id": "h1.1.9", "kind": OpRefund})).
				publish(300, "h1.1.9", "", 3).effect(310, "h1.1.9", "", 3)
		}},
	{name: "PB6/no-empty-key-stored", prop: PB6, want: []string{PB6}, why: "an empty key was stored (row 7)", reasons: 1,
		pass: good,
		fail: func(t *testing.T) *h {
			return good(t).commit(60, "db", ins(TKeys, map[string]any{"id": 7, "key": "", "event_id": "", "op_id": "h1.1.9", "answer": "received ch-h1.1.9"})).
				publish(300, "h1.1.9", "", 3).effect(310, "h1.1.9", "", 3)
		}},
}

// TestClausesB: every clause of PB1-PB6, its breaking history and its
// passing neighbour.
func TestClausesB(t *testing.T) {
	names := map[string]bool{}
	for _, c := range clausesB {
		require.False(t, names[c.name], "one row per clause: %s twice", c.name)
		names[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			t.Run("pass", func(t *testing.T) {
				requireOnly(t, judge(t, c.pass(t)))
			})
			t.Run("fail", func(t *testing.T) {
				vs := judge(t, c.fail(t))
				requireOnly(t, vs, c.want...)
				v, ok := Find(vs, c.prop)
				require.True(t, ok)
				assert.True(t, strings.Contains(strings.Join(v.Why, "; "), c.why), "%s must name the clause %q; it says %v", c.prop, c.why, v.Why)
				if c.reasons > 0 {
					assert.Len(t, v.Why, c.reasons, "%s breaks this clause only: %v", c.prop, v.Why)
				}
			})
		})
	}
}

// TestPB5UndecidedWhileStillDelivering: a run that ends while a sender
// still delivers an event nothing was committed or recorded for (a live
// run's wait for the work ran out: double-refund-is-error, live seed 2,
// the second refund answered 503 twenty times) cannot say whether the
// sender would stop: PB5 holds, undecided, and says so; the same
// history to the sender's give-up fails.
func TestPB5UndecidedWhileStillDelivering(t *testing.T) {
	open := func(t *testing.T) *h {
		x := good(t)
		x.event(500, "evt-2", "order-2", OpRefund, 1, 10)
		x.call(500, "d9", OpRefund, "evt-2", "order-2", 0, 500e6).ret(501, "d9", 503, "database error: 23505")
		x.call(1500, "d10", OpRefund, "evt-2", "order-2", 1, 1500e6).ret(1501, "d10", 503, "database error: 23505")
		return x
	}
	v, ok := Find(judge(t, open(t)), PB5)
	require.True(t, ok)
	assert.True(t, v.OK)
	assert.Equal(t, []string{"undecided: event evt-2 (order-2) was still being delivered at the end (2 deliveries, nothing recorded for its key): whether its sender would stop is not known"}, v.Why)
	assert.True(t, checker.IsUndecided(checker.Verdict{Property: PB5, OK: v.OK, Message: strings.Join(v.Why, "; ")}))
	v, _ = Find(judge(t, open(t).stop(2501, "evt-2", "order-2", "give-up", 0, 2)), PB5)
	assert.False(t, v.OK, "given up: %v", v)
	v, _ = Find(judge(t, good(t)), PB5)
	assert.Empty(t, v.Why, "nothing open: decided")
}
