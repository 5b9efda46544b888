package outbox

import (
	"fmt"

	"github.com/fencesim/fencesim/clock"
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
	Code404 = 404 // a refund of a charge that does not exist
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

// ---- trace notes (the contract with checker/outbox, which decodes the JSON) ----

// Note kinds written by system B's nodes, besides hist.KindCall and
// hist.KindReturn (the sender's deliveries) and the databases' "commit".
const (
	KindEvent    = "b-event"    // EventNote: the sender starts an event
	KindDelivery = "b-delivery" // DeliveryNote: one delivery sent
	KindSender   = "b-sender"   // SenderNote: the sender stops (done or give-up)
	KindHandle   = "b-handle"   // HandleNote: a handler starts or ends a delivery
	KindRelay    = "b-relay"    // RelayNote: the relay published or marked a message
	KindPublish  = "b-publish"  // PublishNote: the broker accepted a message
	KindPush     = "b-push"     // PushNote: the broker pushed a message to the consumer
	KindApply    = "b-apply"    // ApplyNote: the consumer applied or skipped a message
)

// EventNote is written when the sender starts an event.
type EventNote struct {
	Event   string `json:"event"`   // "" for a keyless request
	Payload string `json:"payload"` // unique per event
	Op      string `json:"op"`
	Copies  int    `json:"copies"` // concurrent first deliveries
	Bound   int    `json:"bound"`  // most deliveries the sender's policy allows
}

// DeliveryNote is one delivery.
type DeliveryNote struct {
	Call        string     `json:"call"` // the hist.Call id
	Event       string     `json:"event"`
	Payload     string     `json:"payload"`
	Handler     string     `json:"handler"`
	Attempt     int        `json:"attempt"`
	DeliveredAt clock.Time `json:"delivered_at"`
}

// Sender outcomes.
const (
	SenderDone   = "done"    // an answer that stops it (2xx, 4xx)
	SenderGiveUp = "give-up" // attempts exhausted without such an answer
)

// SenderNote is written once per event when the sender stops.
type SenderNote struct {
	Event    string `json:"event"`
	Payload  string `json:"payload"`
	What     string `json:"what"`
	Code     int    `json:"code,omitempty"`
	Attempts int    `json:"attempts"`
}

// Handle phases.
const (
	HandleStart = "start"
	HandleEnd   = "end"
)

// HandleNote marks a handler's work on one delivery.
type HandleNote struct {
	Handler string `json:"handler"`
	Event   string `json:"event"`
	Key     string `json:"key"` // the key the handler derived
	Phase   string `json:"phase"`
	Code    int    `json:"code,omitempty"`
	Path    string `json:"path,omitempty"` // first, duplicate, refused, ...
}

// Relay steps.
const (
	RelayPublished = "published" // the broker acknowledged the publish
	RelayMarked    = "marked"    // the outbox row is marked sent
)

// RelayNote is one relay step.
type RelayNote struct {
	Msg  string `json:"msg"`
	What string `json:"what"`
}

// PublishNote: the broker took a message (each publish, duplicates too).
type PublishNote struct {
	Msg  Message `json:"msg"`
	From string  `json:"from"`
	Seq  uint64  `json:"seq"`
}

// PushNote: the broker pushed a message.
type PushNote struct {
	Seq     uint64 `json:"seq"`
	Msg     string `json:"msg"`
	Attempt int    `json:"attempt"`
}

// Apply outcomes.
const (
	ApplyApplied   = "applied"
	ApplyDuplicate = "duplicate" // already applied: acknowledged, nothing done
)

// ApplyNote: the consumer's answer to a push.
type ApplyNote struct {
	Msg  string `json:"msg"`
	Seq  uint64 `json:"seq"`
	What string `json:"what"`
}
