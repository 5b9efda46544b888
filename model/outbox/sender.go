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
// own.
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
}

// SenderConfig configures the sender.
type SenderConfig struct {
	Design   Design
	Handlers []network.Addr
	Events   []Event
}

type (
	startEvent struct{ i int }
	sendCopy   struct{ i, copy int }
	waitTimer  struct {
		i   int
		gen int
	}
	retryTimer struct {
		i   int
		gen int
	}
)

func (t startEvent) String() string { return fmt.Sprintf("event %d", t.i) }
func (t sendCopy) String() string   { return fmt.Sprintf("event %d copy %d", t.i, t.copy) }
func (t waitTimer) String() string  { return fmt.Sprintf("event %d timeout gen %d", t.i, t.gen) }
func (t retryTimer) String() string { return fmt.Sprintf("event %d retry gen %d", t.i, t.gen) }

type evState struct {
	ev       Event
	base     int
	attempts int
	gen      int
	backoff  bool // a redelivery is scheduled
	done     bool
	started  bool
}

type call struct {
	i  int
	id string
}

// Sender is the payment provider, queue or browser in front of the
// handlers. It delivers each event, waits RequestTimeout for an answer, and
// redelivers the same event id with a new delivery timestamp after a 5xx
// or a timeout, with backoff, up to MaxAttempts attempts (its retry
// policy). A 2xx or 4xx answer stops it. It never crashes: it is the
// outside world.
type Sender struct {
	cfg    SenderConfig
	events []*evState
	no     uint64
	calls  map[uint64]call
}

var _ sim.Node = (*Sender)(nil)

// NewSender returns the sender's factory.
func NewSender(cfg SenderConfig) sim.Factory {
	return func(string, *sim.Disk) sim.Node {
		s := &Sender{cfg: cfg, calls: map[uint64]call{}}
		for _, ev := range cfg.Events {
			if ev.Op == "" {
				ev.Op = OpCharge
			}
			if ev.Copies < 1 {
				ev.Copies = 1
			}
			s.events = append(s.events, &evState{ev: ev})
		}
		return s
	}
}

// Step implements sim.Node.
func (s *Sender) Step(env *sim.Env, in sim.Input) {
	switch in.Kind {
	case sim.Start:
		for i, e := range s.events {
			env.After(e.ev.At, startEvent{i})
		}
	case sim.Timer:
		switch t := in.Tag.(type) {
		case startEvent:
			s.start(env, t.i)
		case sendCopy:
			e := s.events[t.i]
			if !e.done {
				s.deliver(env, t.i, 0, (e.base+t.copy)%len(s.cfg.Handlers))
			}
		case waitTimer:
			e := s.events[t.i]
			if !e.done && !e.backoff && e.gen == t.gen {
				s.failed(env, t.i)
			}
		case retryTimer:
			e := s.events[t.i]
			if e.done || e.gen != t.gen {
				return
			}
			e.backoff = false
			e.attempts++
			e.gen++
			s.deliver(env, t.i, e.attempts-1, (e.base+e.ev.Copies+e.attempts-2)%len(s.cfg.Handlers))
			env.After(s.cfg.Design.RequestTimeout, waitTimer{t.i, e.gen})
		}
	case sim.Deliver:
		if r, ok := in.Msg.Body.(Reply); ok {
			s.reply(env, r)
		}
	}
}

func (s *Sender) bound(ev Event) int { return ev.Copies + s.cfg.Design.MaxAttempts - 1 }

func (s *Sender) start(env *sim.Env, i int) {
	e := s.events[i]
	e.started = true
	e.base = int(env.Rand().Uint64n("handler", uint64(len(s.cfg.Handlers))))
	env.Note(KindEvent, fmt.Sprintf("%s %s payload=%s copies=%d", e.ev.Op, orNone(e.ev.Event), e.ev.Payload, e.ev.Copies),
		EventNote{Event: e.ev.Event, Payload: e.ev.Payload, Op: e.ev.Op, Copies: e.ev.Copies, Bound: s.bound(e.ev)})
	e.attempts = 1
	s.deliver(env, i, 0, e.base)
	for c := 1; c < e.ev.Copies; c++ {
		env.After(time.Duration(c)*e.ev.Gap, sendCopy{i, c})
	}
	env.After(s.cfg.Design.RequestTimeout+time.Duration(e.ev.Copies-1)*e.ev.Gap, waitTimer{i, e.gen})
}

func (s *Sender) deliver(env *sim.Env, i, attempt, h int) {
	e := s.events[i]
	s.no++
	id := fmt.Sprintf("d%d", s.no)
	s.calls[s.no] = call{i: i, id: id}
	to := s.cfg.Handlers[h]
	dl := Delivery{No: s.no, Op: e.ev.Op, Event: e.ev.Event, Ref: e.ev.Ref, Payload: e.ev.Payload, Amount: e.ev.Amount, DeliveredAt: env.Now()}
	env.Note(hist.KindCall, fmt.Sprintf("%s %s %s -> %s", id, e.ev.Op, orNone(e.ev.Event), to),
		hist.Call{ID: id, Client: string(env.Self()), Op: e.ev.Op, Key: e.ev.Event, RequestID: e.ev.Payload})
	env.Note(KindDelivery, fmt.Sprintf("%s attempt %d delivered_at %s", id, attempt, dl.DeliveredAt),
		DeliveryNote{Call: id, Event: e.ev.Event, Payload: e.ev.Payload, Handler: string(to), Attempt: attempt, DeliveredAt: dl.DeliveredAt})
	env.Send(to, dl)
}

func (s *Sender) reply(env *sim.Env, r Reply) {
	c, ok := s.calls[r.No]
	if !ok {
		return // a duplicated reply
	}
	delete(s.calls, r.No)
	env.Note(hist.KindReturn, fmt.Sprintf("%s %d %s", c.id, r.Code, r.Value), hist.Return{ID: c.id, Code: r.Code, Value: r.Value})
	e := s.events[c.i]
	if e.done {
		return
	}
	if r.Code < 500 {
		e.done = true
		env.Note(KindSender, fmt.Sprintf("%s %s done %d after %d attempts", e.ev.Op, orNone(e.ev.Event), r.Code, e.attempts),
			SenderNote{Event: e.ev.Event, Payload: e.ev.Payload, What: SenderDone, Code: r.Code, Attempts: e.attempts})
		if e.ev.Refund && r.Code == Code200 && e.ev.Op == OpCharge {
			s.events = append(s.events, &evState{ev: Event{Event: e.ev.Event + "/refund", Payload: e.ev.Payload + "/refund",
				Amount: e.ev.Amount, Copies: 1, Op: OpRefund, Ref: e.ev.Event}})
			env.After(0, startEvent{len(s.events) - 1})
		}
		return
	}
	if !e.backoff {
		s.failed(env, c.i)
	}
}

// failed: a 5xx or no answer in time. Redeliver after backoff, or give up.
func (s *Sender) failed(env *sim.Env, i int) {
	e := s.events[i]
	if e.attempts >= s.cfg.Design.MaxAttempts {
		e.done = true
		env.Note(KindSender, fmt.Sprintf("%s %s gives up after %d attempts", e.ev.Op, orNone(e.ev.Event), e.attempts),
			SenderNote{Event: e.ev.Event, Payload: e.ev.Payload, What: SenderGiveUp, Attempts: e.attempts})
		return
	}
	e.backoff = true
	e.gen++
	env.After(s.cfg.Design.Backoff(e.attempts-1), retryTimer{i, e.gen})
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
