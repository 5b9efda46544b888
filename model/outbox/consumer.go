package outbox

import (
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// PointAfterApply is the consumer's crash point: applied and committed, not
// acknowledged (the broker will push the message again).
const PointAfterApply = "consumer/after-apply"

// ConsumerPoints lists the consumer's crash points.
var ConsumerPoints = []string{PointAfterApply}

// ConsumerConfig configures the consumer.
type ConsumerConfig struct {
	Design Design
	DB     network.Addr // its own database
	Broker network.Addr
}

// Consumer is the downstream service (the email sender): it receives
// messages at least once and applies each once, recording the message id
// with the effect in one transaction of its own database (PB3). Each push
// is applied in a process of its own; their requests are pipelined on the
// consumer's one session. It acknowledges a push only when the message is
// applied (or was before).
type Consumer struct {
	cfg ConsumerConfig
	db  *db.Conn
}

// NewConsumer returns the consumer's factory.
func NewConsumer(cfg ConsumerConfig) sim.Factory {
	return func(string, *sim.Disk) sim.Node {
		c := &Consumer{cfg: cfg, db: &db.Conn{DB: cfg.DB, Timeout: cfg.Design.DBTimeout}}
		return sim.Program(c.main)
	}
}

func (c *Consumer) main(p *sim.Proc) {
	p.Handle(func(p *sim.Proc, m network.Message) {
		if push, ok := m.Body.(Push); ok {
			c.apply(p, push)
		}
	})
}

// apply applies one message: the dedup row and the effect in one
// transaction (Design.Apply), then the ACK. A unique violation on the dedup
// row means it was applied before: acknowledged, nothing done.
func (c *Consumer) apply(p *sim.Proc, push Push) {
	_, err := c.db.Atomic(p, c.cfg.Design.Apply(push.Msg)...)
	switch {
	case err == nil:
		p.Note(hist.BApply{Msg: push.Msg.ID, Seq: push.Seq, What: hist.ApplyApplied})
		p.Point(PointAfterApply)
		p.Send(c.cfg.Broker, Ack{Seq: push.Seq})
	case db.Code(err) == db.CodeUniqueViolation:
		p.Note(hist.BApply{Msg: push.Msg.ID, Seq: push.Seq, What: hist.ApplyDuplicate})
		p.Send(c.cfg.Broker, Ack{Seq: push.Seq})
	default:
		// Unknown or failed: no ACK; the broker pushes it again.
	}
}
