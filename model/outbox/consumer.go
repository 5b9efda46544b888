package outbox

import (
	"fmt"

	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
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
// with the effect in one transaction of its own database (PB3). It
// acknowledges a push only when the message is applied (or was before).
type Consumer struct {
	cfg ConsumerConfig
	cl  timedClient
}

var _ sim.Node = (*Consumer)(nil)

// NewConsumer returns the consumer's factory.
func NewConsumer(cfg ConsumerConfig) sim.Factory {
	return func(string, *sim.Disk) sim.Node {
		return &Consumer{cfg: cfg, cl: timedClient{Client: db.Client{DB: cfg.DB}, owner: "consumer", timeout: cfg.Design.DBTimeout}}
	}
}

// Step implements sim.Node.
func (c *Consumer) Step(env *sim.Env, in sim.Input) {
	if in.Kind == sim.Deliver {
		if p, ok := in.Msg.Body.(Push); ok {
			c.cl.ExecAtomic(env, p, c.cfg.Design.Apply(p.Msg)...)
			return
		}
	}
	done, ok := c.cl.Handle(in)
	if !ok {
		done, ok = c.cl.Expired(env, in)
	}
	if !ok {
		return
	}
	for _, d := range done {
		p := d.Tag.(Push)
		switch err := d.Err(); {
		case err == nil:
			env.Note(KindApply, fmt.Sprintf("applied %s seq=%d", p.Msg.ID, p.Seq), ApplyNote{Msg: p.Msg.ID, Seq: p.Seq, What: ApplyApplied})
			if env.CrashPoint(PointAfterApply) {
				return
			}
			env.Send(c.cfg.Broker, Ack{Seq: p.Seq})
		case err.Code == db.CodeUniqueViolation:
			env.Note(KindApply, fmt.Sprintf("duplicate %s seq=%d", p.Msg.ID, p.Seq), ApplyNote{Msg: p.Msg.ID, Seq: p.Seq, What: ApplyDuplicate})
			env.Send(c.cfg.Broker, Ack{Seq: p.Seq})
		default:
			// Unknown or failed: no ACK; the broker pushes it again.
		}
	}
}
