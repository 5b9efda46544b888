package outbox

import (
	"fmt"
	"time"

	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// Event is one thing the sender must get across: a provider's event (a
// stable event id), or a browser's POST with an Idempotency-Key, or without
// one (Event ""). Copies > 1 sends that many first deliveries Gap apart to
// different handlers (a provider delivering twice, a double click). With
// Refund, a successful charge is followed by its refund, an event of its
// own. Sender is the index of the sender node that sends it (0: the first,
// "sender"): an event whose key an earlier event already used is the same
// key sent again, by the same sender or by another.
type Event struct {
	At      time.Duration `json:"at"`
	Event   string        `json:"event"`
	Payload string        `json:"payload"`
	Amount  int64         `json:"amount"`
	Copies  int           `json:"copies"`
	Gap     time.Duration `json:"gap,omitempty"`
	Refund  bool          `json:"refund,omitempty"`
	Op      string        `json:"op,omitempty"` // "" is OpCharge
	Ref     string        `json:"ref,omitempty"`
	Sender  int           `json:"sender,omitempty"`
}

// SenderConfig configures a sender.
type SenderConfig struct {
	Design   Design
	Handlers []network.Addr
	Events   []Event // this sender's events
	// Calls prefixes the ids of its deliveries, so that they stay unique
	// among several senders ("" for the first: d1, d2, ...; "s2." for the
	// second: s2.d1, ...).
	Calls string
}

// Sender is the payment provider, queue or browser in front of the
// handlers. Each event runs in a process of its own (send): it delivers the
// event, waits RequestTimeout for an answer, and redelivers the same event
// id with a new delivery timestamp after a 5xx or a timeout, with backoff,
// up to MaxAttempts attempts (its retry policy). A 2xx or 4xx answer stops
// it. It never crashes: it is the outside world.
type Sender struct {
	cfg    SenderConfig
	events []*event
	no     uint64
	calls  map[uint64]call // deliveries awaiting their reply, by request number
}

// event is one event's state, shared by its process and the reply handler.
type event struct {
	i        int
	ev       Event
	base     int // the handler of the first delivery
	attempts int
	done     bool
	replies  sim.Queue[Reply] // replies to its deliveries, in arrival order
}

type call struct {
	e  *event
	id string
}

// NewSender returns the sender's factory.
func NewSender(cfg SenderConfig) sim.Factory {
	return func(string, *sim.Disk) sim.Node {
		s := newSender(cfg)
		return sim.ProgramOf(s, s.main)
	}
}

func newSender(cfg SenderConfig) *Sender {
	s := &Sender{cfg: cfg, calls: map[uint64]call{}}
	for _, ev := range cfg.Events {
		if ev.Op == "" {
			ev.Op = OpCharge
		}
		if ev.Copies < 1 {
			ev.Copies = 1
		}
		s.add(ev)
	}
	return s
}

func (s *Sender) add(ev Event) *event {
	e := &event{i: len(s.events), ev: ev}
	s.events = append(s.events, e)
	return e
}

func (s *Sender) main(p *sim.Proc) {
	p.Handle(s.reply)
	for _, e := range s.events {
		s.start(p, e)
	}
}

func (s *Sender) start(p *sim.Proc, e *event) {
	p.Go(fmt.Sprintf("event %d", e.i), func(p *sim.Proc) { s.send(p, e) })
}

func (s *Sender) bound(ev Event) int { return ev.Copies + s.cfg.Design.MaxAttempts - 1 }

// send gets one event across, as the sender's retry policy says: the first
// delivery and its concurrent copies, then a redelivery after every 5xx or
// timeout, with backoff, until an answer stops it or the attempts run out.
func (s *Sender) send(p *sim.Proc, e *event) {
	d := s.cfg.Design
	n := len(s.cfg.Handlers)
	p.Sleep(e.ev.At, "start")
	e.base = int(p.Rand().Uint64n("handler", uint64(n)))
	p.Note(hist.BEvent{Event: e.ev.Event, Payload: e.ev.Payload, Op: e.ev.Op, Copies: e.ev.Copies, Bound: s.bound(e.ev)})
	e.attempts = 1
	s.deliver(p, e, 0, e.base)
	for c := 1; c < e.ev.Copies; c++ {
		// The same event again, Gap later, to the next handler (a provider
		// delivering twice, a double click), unless an answer came first.
		p.Go(fmt.Sprintf("event %d copy %d", e.i, c), func(p *sim.Proc) {
			p.Sleep(time.Duration(c)*e.ev.Gap, "copy")
			if !e.done {
				s.deliver(p, e, 0, (e.base+c)%n)
			}
		})
	}
	wait := d.RequestTimeout + time.Duration(e.ev.Copies-1)*e.ev.Gap
	for {
		r, err := e.replies.Get(p, wait, "answer")
		if err == nil && r.Code < 500 {
			s.stop(p, e, r.Code)
			return
		}
		// A 5xx, or no answer in time: redeliver after backoff, or give up.
		if e.attempts >= d.MaxAttempts {
			e.done = true
			p.Note(hist.BSender{Event: e.ev.Event, Payload: e.ev.Payload, What: hist.SenderGiveUp, Attempts: e.attempts, Op: e.ev.Op})
			return
		}
		if s.backoff(p, e, d.Backoff(e.attempts-1)) {
			return
		}
		e.attempts++
		s.deliver(p, e, e.attempts-1, (e.base+e.ev.Copies+e.attempts-2)%n)
		wait = d.RequestTimeout
	}
}

// backoff waits d before the next attempt. An answer to an earlier delivery
// may still arrive meanwhile: one that stops the sender ends the event
// (true); another 5xx changes nothing.
func (s *Sender) backoff(p *sim.Proc, e *event, d time.Duration) bool {
	until := p.Mono().Add(d)
	for {
		left := until.Sub(p.Mono())
		if left <= 0 {
			return false
		}
		r, err := e.replies.Get(p, left, "backoff")
		if err != nil {
			return false
		}
		if r.Code < 500 {
			s.stop(p, e, r.Code)
			return true
		}
	}
}

// stop ends an event on an answer that stops the sender (2xx, 4xx). A
// charge answered 200 that is to be refunded starts its refund, an event
// of its own.
func (s *Sender) stop(p *sim.Proc, e *event, code int) {
	e.done = true
	p.Note(hist.BSender{Event: e.ev.Event, Payload: e.ev.Payload, What: hist.SenderDone, Code: code, Attempts: e.attempts, Op: e.ev.Op})
	if e.ev.Refund && code == Code200 && e.ev.Op == OpCharge {
		s.start(p, s.add(Event{Event: e.ev.Event + "/refund", Payload: e.ev.Payload + "/refund",
			Amount: e.ev.Amount, Copies: 1, Op: OpRefund, Ref: e.ev.Event}))
	}
}

func (s *Sender) deliver(p *sim.Proc, e *event, attempt, h int) {
	s.no++
	id := fmt.Sprintf("%sd%d", s.cfg.Calls, s.no)
	s.calls[s.no] = call{e: e, id: id}
	to := s.cfg.Handlers[h]
	dl := Delivery{No: s.no, Op: e.ev.Op, Event: e.ev.Event, Ref: e.ev.Ref, Payload: e.ev.Payload, Amount: e.ev.Amount, DeliveredAt: p.Now()}
	p.Note(hist.Call{ID: id, Client: string(p.Self()), Op: e.ev.Op, Key: e.ev.Event, RequestID: e.ev.Payload, To: string(to)})
	p.Note(hist.BDelivery{Call: id, Event: e.ev.Event, Payload: e.ev.Payload, Handler: string(to), Attempt: attempt, DeliveredAt: int64(dl.DeliveredAt)})
	p.Send(to, dl)
}

// reply serves an answer: it is recorded, and handed to its event's process
// unless the event has stopped.
func (s *Sender) reply(p *sim.Proc, m network.Message) {
	r, ok := m.Body.(Reply)
	if !ok {
		return
	}
	c, ok := s.calls[r.No]
	if !ok {
		return // a duplicated reply
	}
	delete(s.calls, r.No)
	p.Note(hist.Return{ID: c.id, Code: r.Code, Value: r.Value})
	if !c.e.done {
		c.e.replies.Put(r)
	}
}

// Finished reports whether every event has stopped (done or given up).
func (s *Sender) Finished() bool {
	for _, e := range s.events {
		if !e.done {
			return false
		}
	}
	return true
}
