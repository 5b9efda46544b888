package outbox

import (
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// Crash points of the relay.
const (
	PointAfterPublish = "relay/after-publish" // the broker acknowledged the publish; the row is not marked
	PointAfterMark    = "relay/after-mark"    // the row is marked sent
)

// RelayPoints lists the relay's crash points.
var RelayPoints = []string{PointAfterPublish, PointAfterMark}

// RelayConfig configures the relay.
type RelayConfig struct {
	Design Design
	DB     network.Addr
	Broker network.Addr
}

// Relay publishes the outbox (B.3): a loop that reads unsent rows,
// publishes each to the broker, retrying until the broker acknowledges, then
// marks the row sent. A crash between the acknowledgement and the mark
// publishes the message again after the restart: at least once, never zero
// times. Under mark-sent-before-publish it marks first: a crash between the
// two loses the message.
type Relay struct {
	cfg RelayConfig
	db  *db.Conn
	// publishing is the message whose PUBACK the loop waits for ("" when
	// it waits for none); acks hands it over.
	publishing string
	acks       sim.Queue[PubAck]
	ticks      sim.Queue[struct{}] // the ticker's ticks, taken by the loop
	unsent     db.Stmt             // UnsentMessages of the design's batch, built once
}

// NewRelay returns the relay's factory.
func NewRelay(cfg RelayConfig) sim.Factory {
	return func(string, *sim.Disk) sim.Node {
		r := &Relay{cfg: cfg, db: &db.Conn{DB: cfg.DB, Timeout: cfg.Design.DBTimeout},
			unsent: UnsentMessages(cfg.Design.Batch).Named("unsent")}
		return sim.Program(r.main)
	}
}

// main polls at every tick it is free for.
func (r *Relay) main(p *sim.Proc) {
	p.Handle(r.serve)
	p.Go("ticker", r.tick)
	for {
		r.ticks.Get(p, 0, "tick")
		r.poll(p)
	}
}

// tick ticks every PollEvery. A tick the loop is too busy to take (a poll
// still running) is dropped, as a select with a default case drops it.
func (r *Relay) tick(p *sim.Proc) {
	for {
		p.Sleep(r.cfg.Design.PollEvery, "poll every")
		if r.ticks.Waiting() > 0 {
			r.ticks.Put(struct{}{})
		}
	}
}

// poll relays one batch of unsent outbox rows, oldest first. A database
// error ends the batch: the rows not marked are read again at the next
// poll.
func (r *Relay) poll(p *sim.Proc) {
	res, err := r.db.Exec(p, r.unsent)
	if err != nil {
		return
	}
	for _, row := range res.Rows {
		if !r.relay(p, MessageOf(row)) {
			return
		}
	}
}

// relay publishes one message and marks it sent, in that order (B.3: the
// relay may publish twice, never zero times); mark-sent-before-publish
// swaps the two. It reports whether the mark succeeded.
func (r *Relay) relay(p *sim.Proc, m Message) bool {
	if r.cfg.Design.Has(MarkSentBeforePublish) {
		if !r.mark(p, m) {
			return false
		}
		r.publish(p, m)
		return true
	}
	r.publish(p, m)
	return r.mark(p, m)
}

// publish sends the message to the broker until the broker acknowledges
// it: the relay may retry a publish (the handler must never retry the
// charge).
func (r *Relay) publish(p *sim.Proc, m Message) {
	r.publishing = m.ID
	for {
		p.Send(r.cfg.Broker, Publish{Msg: m})
		if _, err := r.acks.Get(p, r.cfg.Design.PublishTimeout, "puback "+m.ID); err == nil {
			break
		}
	}
	r.publishing = ""
	p.Note(hist.BRelay{Msg: m.ID, What: hist.RelayPublished})
	p.Point(PointAfterPublish)
}

// mark marks the message's outbox row sent.
func (r *Relay) mark(p *sim.Proc, m Message) bool {
	if _, err := r.db.Exec(p, MarkSent(m.ID).Named("mark-sent")); err != nil {
		return false
	}
	p.Note(hist.BRelay{Msg: m.ID, What: hist.RelayMarked})
	p.Point(PointAfterMark)
	return true
}

// serve takes the broker's acknowledgements: the one the loop waits for is
// handed over; a late or duplicate one is dropped.
func (r *Relay) serve(p *sim.Proc, msg network.Message) {
	if a, ok := msg.Body.(PubAck); ok && a.ID == r.publishing {
		r.acks.Put(a)
	}
}
