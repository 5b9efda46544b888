package outbox

// Every statement of system B is here, one function each. A knob changes
// the mechanism at the one place it lives: the key (KeyOf), the answer to a
// duplicate (DuplicateAnswer), a refusal kept with its key (RecordRefusal),
// the refund (Reverse), the consumer's apply (Apply); the schema's unique
// constraint is in schema.go, the outbox write in the handler's
// writeMessage, the relay's order in relay.go.

import (
	"fmt"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
)

// KeyOf names the idempotency key of a delivery (B.5): the id the sender
// promises is stable. A delivery without one has no key ("": refused, B.5).
// Under key-includes-delivery-time the delivery's timestamp is part of the
// key, so a redelivery looks new.
func (d Design) KeyOf(dl Delivery) string {
	if dl.Event == "" {
		return ""
	}
	key := dl.Op + ":" + dl.Event
	if d.Has(KeyIncludesDeliveryTime) {
		key += fmt.Sprintf("@%d", int64(dl.DeliveredAt))
	}
	return key
}

// FindKey reads a stored answer.
func FindKey(key string) db.Stmt {
	return db.Select(TKeys, db.W("key", db.Eq, key)).OrderedBy(db.Order{Col: "id"}).Limited(1)
}

// StoreKey stores the key with the answer the first arrival will give, in
// the transaction that does the work (its code is the column's default,
// 200). A plain INSERT: a second arrival gets a unique violation (it waits
// for the first one's transaction, as PostgreSQL does) and turns it into
// "done" (B.2).
func StoreKey(key, event, op, answer string) db.Stmt {
	return db.Insert(TKeys, db.Row{"key": key, "event_id": event, "op_id": op, "answer": answer})
}

// RecordRefusal keeps a definitive refusal (a 4xx: a refund of a charge
// that does not exist, or of one already refunded) with its key, as the
// source does ("Rồi tôi ghi thất bại vào cùng chỗ với thành công": failure
// is recorded in the same place as success): the key row this arrival
// inserted (op) takes the refusal's code and answer, and the transaction
// commits without business rows or a message, so that every later
// delivery of the key gets the same refusal and the sender can stop. Under
// refusal-not-stored there is nothing to record (false): the handler rolls
// the key back with the refusal, and a later delivery of the key runs
// again and may succeed.
func (d Design) RecordRefusal(key, op string, code int, answer string) (db.Stmt, bool) {
	if d.Has(RefusalNotStored) {
		return db.Stmt{}, false
	}
	return db.Update(TKeys, []db.Assign{db.Set("code", int64(code)), db.Set("answer", answer)},
		db.W("key", db.Eq, key), db.W("op_id", db.Eq, op)), true
}

// DuplicateAnswer is the answer to an arrival whose key is already stored
// (B.6: the same answer as the first arrival's, its code and body: a
// success, or a recorded refusal). Under conflict-is-500 it is an error
// page.
func (d Design) DuplicateAnswer(code int64, stored string) (int, string) {
	if d.Has(ConflictIs500) {
		return Code500, "duplicate key value violates unique constraint"
	}
	return int(code), stored
}

// Ids derived from an operation id (one per handled delivery attempt).
func ChargeID(op string) string  { return "ch-" + op }
func EntryID(op string) string   { return "le-" + op }
func MessageID(op string) string { return "msg-" + op }

// Answer is what the first arrival answers and stores.
func Answer(kind, op string) string {
	if kind == OpRefund {
		return "refunded " + EntryID(op)
	}
	return "received " + ChargeID(op)
}

// InsertCharge writes the business row.
func InsertCharge(op, event, payload string, amount int64) db.Stmt {
	return db.Insert(TCharges, db.Row{"id": ChargeID(op), "event_id": event, "payload": payload, "amount": amount})
}

// LedgerCharge appends the charge's ledger entry.
func LedgerCharge(op, event string, amount int64) db.Stmt {
	return db.Insert(TLedger, db.Row{"id": EntryID(op), "account": Account, "event_id": event, "kind": OpCharge, "amount": amount})
}

// FindCharge reads the ledger entry of the charge a refund reverses.
func FindCharge(refEvent string) db.Stmt {
	return db.Select(TLedger, db.W("event_id", db.Eq, refEvent), db.W("kind", db.Eq, OpCharge)).OrderedBy(db.Order{Col: "id"}).Limited(1)
}

// Reverse undoes a charge (B.4): a compensating entry that names the entry
// it reverses; the original stays readable. A charge is reversed at most
// once (UNIQUE reversal_of): a second refund of it under another key
// inserts nothing (ON CONFLICT DO NOTHING, waiting for a concurrent first
// refund's transaction as PostgreSQL does), and the handler answers it as
// a definitive refusal, recorded with its key (Affected 0: "already
// refunded"). Under double-refund-is-error it is a plain INSERT: the
// unique violation is answered 503 as a database error, and the sender
// redelivers until it gives up. Under edit-in-place-refund the original
// row is overwritten instead.
func (d Design) Reverse(op, event string, original db.Row) db.Stmt {
	amount, _ := original["amount"].(int64)
	if d.Has(EditInPlaceRefund) {
		return db.Update(TLedger, []db.Assign{db.Set("amount", int64(0))}, db.W("id", db.Eq, original["id"]))
	}
	entry := db.Row{"id": EntryID(op), "account": Account, "event_id": event, "kind": OpRefund,
		"amount": -amount, "reversal_of": original["id"]}
	if d.Has(DoubleRefundIsError) {
		return db.Insert(TLedger, entry)
	}
	return db.InsertOrNothing(TLedger, entry)
}

// OutboxMessage writes the outgoing message in the business transaction
// (B.3).
func OutboxMessage(m Message) db.Stmt {
	return db.Insert(TOutbox, db.Row{"id": m.ID, "event_id": m.Event, "op_id": m.OpID, "kind": m.Kind, "amount": m.Amount})
}

// UnsentMessages is the relay's poll.
func UnsentMessages(batch int) db.Stmt {
	return db.Select(TOutbox, db.W("sent", db.Eq, false)).OrderedBy(db.Order{Col: "at"}, db.Order{Col: "id"}).Limited(batch)
}

// MarkSent marks a message published.
func MarkSent(id string) db.Stmt {
	return db.Update(TOutbox, []db.Assign{db.Set("sent", true)}, db.W("id", db.Eq, id))
}

// MessageOf reads an outbox row back into a Message.
func MessageOf(r db.Row) Message {
	m := Message{}
	m.ID, _ = r["id"].(string)
	m.Event, _ = r["event_id"].(string)
	m.OpID, _ = r["op_id"].(string)
	m.Kind, _ = r["kind"].(string)
	m.Amount, _ = r["amount"].(int64)
	return m
}

// Apply is the consumer's transaction for one message: record the message
// id (the dedup, PRIMARY KEY) and the effect, atomically; a unique
// violation means it was applied before. Under consumer-without-dedup only
// the effect is written.
func (d Design) Apply(m Message) []db.Stmt {
	effect := db.Insert(TEffects, db.Row{"msg_id": m.ID, "event_id": m.Event, "op_id": m.OpID, "kind": m.Kind}).Named("effect")
	if d.Has(ConsumerWithoutDedup) {
		return []db.Stmt{effect}
	}
	return []db.Stmt{db.Insert(TProcessed, db.Row{"msg_id": m.ID}).Named("dedup"), effect}
}

// LedgerAsOf reads the ledger entries recorded by instant t (the database's
// clock): with an append-only ledger, what was believed at t (B.4).
func LedgerAsOf(t clock.Time) db.Stmt {
	return db.Select(TLedger, db.W("at", db.Le, t)).OrderedBy(db.Order{Col: "at"}, db.Order{Col: "id"})
}

// Balance sums the amounts of ledger rows.
func Balance(rows []db.Row) int64 {
	var s int64
	for _, r := range rows {
		if v, ok := r["amount"].(int64); ok {
			s += v
		}
	}
	return s
}

// BalanceAt answers, from the ledger's rows as they are now, the balance as
// believed at instant t: the sum of entries recorded by t. It is right only
// if no entry was ever edited (B.4).
func BalanceAt(rows []db.Row, t clock.Time) int64 {
	var s int64
	for _, r := range rows {
		at, _ := r["at"].(clock.Time)
		if v, ok := r["amount"].(int64); ok && at <= t {
			s += v
		}
	}
	return s
}
