package outbox

import (
	"fmt"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/traces/hist"
)

// Operations a sender delivers.
const (
	OpCharge = "charge" // take a payment: one charge row, one ledger entry, one message
	OpRefund = "refund" // reverse a charge: one compensating ledger entry, one message
)

// HTTP status codes of the handler.
const (
	Code200 = 200 // received (first arrival and every duplicate: the source's "Đã nhận")
	Code400 = 400 // refused: no idempotency key
	Code404 = 404 // a refund of a charge that does not exist (recorded with the key)
	Code409 = 409 // a refund of a charge already refunded under another key (recorded with the key)
	Code500 = 500 // an error answer (only under conflict-is-500)
	Code503 = 503 // the database was unreachable or the outcome is unknown: deliver again
)

// Delivery is one delivery of an event (a webhook, a queue message, a
// browser's POST). Event is the stable id the sender promises (a provider's
// event id, or the Idempotency-Key a client sends; "" when a client sent
// none). A redelivery carries the same Event with a new DeliveredAt.
type Delivery struct {
	No          uint64     // the sender's request number, echoed by the reply
	Op          string     // OpCharge or OpRefund
	Event       string     // the idempotency key the sender sends ("" if none)
	Ref         string     // a refund: the event id of the charge it reverses
	Payload     string     // what the request is about (an order id), stable across retries
	Amount      int64      // the charge's amount
	DeliveredAt clock.Time // the sender's timestamp of this delivery
}

func (d Delivery) String() string {
	key := d.Event
	if key == "" {
		key = "(none)"
	}
	s := fmt.Sprintf("POST /%s no=%d key=%s payload=%s delivered_at=%s", d.Op, d.No, key, d.Payload, d.DeliveredAt)
	if d.Ref != "" {
		s += " ref=" + d.Ref
	}
	return s
}

// Reply answers a Delivery.
type Reply struct {
	No    uint64
	Code  int
	Value string // the stored answer ("received ch-...", "refunded le-...") or the error
}

func (r Reply) String() string { return fmt.Sprintf("%d no=%d %s", r.Code, r.No, r.Value) }

// Message is an outgoing message: written to the outbox with the business
// row, published by the relay, applied by the consumer.
type Message struct {
	ID     string `json:"id"`     // msg-<op id>: the consumer dedups by it
	Event  string `json:"event"`  // the event id that caused it
	OpID   string `json:"op"`     // the operation (business row) it belongs to
	Kind   string `json:"kind"`   // OpCharge or OpRefund
	Amount int64  `json:"amount"` // for the email's text
}

func (m Message) String() string {
	return fmt.Sprintf("%s %s event=%s op=%s amount=%d", m.ID, m.Kind, m.Event, m.OpID, m.Amount)
}

// Publish asks the broker to take a message.
type Publish struct{ Msg Message }

func (p Publish) String() string { return "PUBLISH " + p.Msg.String() }

// PubAck confirms a Publish: the broker has the message durably.
type PubAck struct{ ID string }

func (a PubAck) String() string { return "PUBACK " + a.ID }

// Push is the broker delivering a message to the consumer (at least once).
type Push struct {
	Seq     uint64
	Attempt int
	Msg     Message
}

func (p Push) String() string {
	return fmt.Sprintf("PUSH seq=%d attempt=%d %s", p.Seq, p.Attempt, p.Msg)
}

// Ack is the consumer acknowledging a Push.
type Ack struct{ Seq uint64 }

func (a Ack) String() string { return fmt.Sprintf("ACK seq=%d", a.Seq) }

// note is the message as the trace notes carry it (traces/hist).
func (m Message) note() hist.BMessage { return hist.BMessage(m) }
