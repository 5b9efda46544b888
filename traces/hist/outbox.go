package hist

import (
	"fmt"

	"github.com/fencesim/fencesim/clock"
)

// System B's notes (model/outbox writes them, checker/outbox reads them),
// besides KindCall and KindReturn (the sender's deliveries) and the
// databases' KindCommit. Times are simulated nanoseconds.
const (
	KindBEvent    = "b-event"    // BEvent: the sender starts an event
	KindBDelivery = "b-delivery" // BDelivery: one delivery sent
	KindBSender   = "b-sender"   // BSender: the sender stops (done or give-up)
	KindBHandle   = "b-handle"   // BHandle: a handler starts or ends a delivery
	KindBRelay    = "b-relay"    // BRelay: the relay published or marked a message
	KindBPublish  = "b-publish"  // BPublish: the broker accepted a message
	KindBPush     = "b-push"     // BPush: the broker pushed a message to the consumer again
	KindBApply    = "b-apply"    // BApply: the consumer applied or skipped a message
)

// BEvent is written when the sender starts an event.
type BEvent struct {
	Event   string `json:"event"`   // "" for a keyless request
	Payload string `json:"payload"` // unique per event
	Op      string `json:"op"`
	Copies  int    `json:"copies"` // concurrent first deliveries
	Bound   int    `json:"bound"`  // most deliveries the sender's policy allows
}

// Kind returns KindBEvent.
func (BEvent) Kind() string { return KindBEvent }

// String is the event's text in a trace.
func (e BEvent) String() string {
	return fmt.Sprintf("%s %s payload=%s copies=%d", e.Op, orNone(e.Event), e.Payload, e.Copies)
}

// BDelivery is one delivery (its hist.Call is written just before).
type BDelivery struct {
	Call        string `json:"call"` // the Call's id
	Event       string `json:"event"`
	Payload     string `json:"payload"`
	Handler     string `json:"handler"`
	Attempt     int    `json:"attempt"`
	DeliveredAt int64  `json:"delivered_at"`
}

// Kind returns KindBDelivery.
func (BDelivery) Kind() string { return KindBDelivery }

// String is the delivery's text in a trace.
func (d BDelivery) String() string {
	return fmt.Sprintf("%s attempt %d delivered_at %s", d.Call, d.Attempt, clock.Time(d.DeliveredAt))
}

// Sender outcomes.
const (
	SenderDone   = "done"    // an answer that stops it (2xx, 4xx)
	SenderGiveUp = "give-up" // attempts exhausted without such an answer
)

// BSender is written once per event when the sender stops.
type BSender struct {
	Event    string `json:"event"`
	Payload  string `json:"payload"`
	What     string `json:"what"`
	Code     int    `json:"code,omitempty"`
	Attempts int    `json:"attempts"`

	// Op is the event's operation (text only: the trace's data leaves it
	// out, the event's text carries it).
	Op string `json:"-"`
}

// Kind returns KindBSender.
func (BSender) Kind() string { return KindBSender }

// String is the sender's stop in a trace.
func (s BSender) String() string {
	if s.What == SenderGiveUp {
		return fmt.Sprintf("%s %s gives up after %d attempts", s.Op, orNone(s.Event), s.Attempts)
	}
	return fmt.Sprintf("%s %s done %d after %d attempts", s.Op, orNone(s.Event), s.Code, s.Attempts)
}

// Handle phases.
const (
	HandleStart = "start"
	HandleEnd   = "end"
)

// BHandle marks a handler's work on one delivery.
type BHandle struct {
	Handler string `json:"handler"`
	Event   string `json:"event"`
	Key     string `json:"key"` // the key the handler derived
	Phase   string `json:"phase"`
	Code    int    `json:"code,omitempty"`
	Path    string `json:"path,omitempty"` // first, duplicate, refused, aborted, unknown, error

	// Op is the delivery's operation (text only: the trace's data leaves
	// it out, the event's text carries it).
	Op string `json:"-"`
}

// Kind returns KindBHandle.
func (BHandle) Kind() string { return KindBHandle }

// String is the handler's step in a trace.
func (h BHandle) String() string {
	if h.Phase == HandleStart {
		return fmt.Sprintf("%s %s start", h.Op, orNone(h.Event))
	}
	return fmt.Sprintf("%s %s end %d %s", h.Op, orNone(h.Event), h.Code, h.Path)
}

// orNone names an empty event key.
func orNone(key string) string {
	if key == "" {
		return "(no key)"
	}
	return key
}

// Relay steps.
const (
	RelayPublished = "published" // the broker acknowledged the publish
	RelayMarked    = "marked"    // the outbox row is marked sent
)

// BRelay is one relay step.
type BRelay struct {
	Msg  string `json:"msg"`
	What string `json:"what"`
}

// Kind returns KindBRelay.
func (BRelay) Kind() string { return KindBRelay }

// String is the relay's step in a trace.
func (r BRelay) String() string { return r.What + " " + r.Msg }

// BMessage is an outgoing message as the notes carry it.
type BMessage struct {
	ID     string `json:"id"`     // msg-<op id>: the consumer dedups by it
	Event  string `json:"event"`  // the event id that caused it
	OpID   string `json:"op"`     // the operation (business row) it belongs to
	Kind   string `json:"kind"`   // charge or refund
	Amount int64  `json:"amount"` // for the email's text
}

// BPublish: the broker took a message (each publish, duplicates too).
type BPublish struct {
	Msg  BMessage `json:"msg"`
	From string   `json:"from"`
	Seq  uint64   `json:"seq"`
}

// Kind returns KindBPublish.
func (BPublish) Kind() string { return KindBPublish }

// String is the publish in a trace.
func (p BPublish) String() string { return fmt.Sprintf("seq=%d %s from %s", p.Seq, p.Msg.ID, p.From) }

// BPush: the broker pushed a message again (attempt 2 and later).
type BPush struct {
	Seq     uint64 `json:"seq"`
	Msg     string `json:"msg"`
	Attempt int    `json:"attempt"`
}

// Kind returns KindBPush.
func (BPush) Kind() string { return KindBPush }

// String is the redelivery in a trace.
func (p BPush) String() string {
	return fmt.Sprintf("redeliver seq=%d %s attempt %d", p.Seq, p.Msg, p.Attempt)
}

// Apply outcomes.
const (
	ApplyApplied   = "applied"
	ApplyDuplicate = "duplicate" // already applied: acknowledged, nothing done
)

// BApply: the consumer's answer to a push.
type BApply struct {
	Msg  string `json:"msg"`
	Seq  uint64 `json:"seq"`
	What string `json:"what"`
}

// Kind returns KindBApply.
func (BApply) Kind() string { return KindBApply }

// String is the consumer's answer in a trace.
func (a BApply) String() string { return fmt.Sprintf("%s %s seq=%d", a.What, a.Msg, a.Seq) }
