package outbox

import (
	"fmt"

	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
)

// BrokerConfig configures the broker.
type BrokerConfig struct {
	Design   Design
	Consumer network.Addr
}

type redeliver struct {
	seq     uint64
	attempt int
}

func (r redeliver) String() string {
	return fmt.Sprintf("redeliver seq=%d attempt=%d", r.seq, r.attempt)
}

type queued struct {
	Msg     Message
	Attempt int
}

// Broker is a durable queue with at-least-once delivery: it keeps every
// published message on disk (synced before the PUBACK) and pushes it to the
// consumer until the consumer acknowledges it. It does not dedup: a message
// published twice is queued twice.
type Broker struct {
	cfg     BrokerConfig
	seq     uint64
	unacked map[uint64]*queued
}

var _ sim.Node = (*Broker)(nil)

// NewBroker returns the broker's factory.
func NewBroker(cfg BrokerConfig) sim.Factory {
	return func(string, *sim.Disk) sim.Node { return &Broker{cfg: cfg, unacked: map[uint64]*queued{}} }
}

func queueKey(seq uint64) string { return fmt.Sprintf("q/%020d", seq) }

// Step implements sim.Node.
func (b *Broker) Step(env *sim.Env, in sim.Input) {
	switch in.Kind {
	case sim.Start:
		if v, ok := env.Disk().Get("seq"); ok {
			b.seq = v.(uint64)
		}
		for _, k := range env.Disk().Keys("q/") { // sorted: in seq order
			v, _ := env.Disk().Get(k)
			q := v.(queued)
			var seq uint64
			fmt.Sscanf(k, "q/%d", &seq)
			b.unacked[seq] = &q
			b.push(env, seq)
		}
	case sim.Deliver:
		switch m := in.Msg.Body.(type) {
		case Publish:
			b.seq++
			env.Disk().Put("seq", b.seq)
			env.Disk().Put(queueKey(b.seq), queued{Msg: m.Msg})
			b.unacked[b.seq] = &queued{Msg: m.Msg}
			env.Note(KindPublish, fmt.Sprintf("seq=%d %s from %s", b.seq, m.Msg.ID, in.Msg.From), PublishNote{Msg: m.Msg, From: string(in.Msg.From), Seq: b.seq})
			env.Send(in.Msg.From, PubAck{ID: m.Msg.ID})
			b.push(env, b.seq)
		case Ack:
			if _, ok := b.unacked[m.Seq]; ok {
				delete(b.unacked, m.Seq)
				env.Disk().Delete(queueKey(m.Seq))
			}
		}
	case sim.Timer:
		if t, ok := in.Tag.(redeliver); ok {
			if q, ok := b.unacked[t.seq]; ok && q.Attempt == t.attempt {
				b.push(env, t.seq)
			}
		}
	}
}

func (b *Broker) push(env *sim.Env, seq uint64) {
	q := b.unacked[seq]
	q.Attempt++
	if q.Attempt > 1 {
		env.Note(KindPush, fmt.Sprintf("redeliver seq=%d %s attempt %d", seq, q.Msg.ID, q.Attempt), PushNote{Seq: seq, Msg: q.Msg.ID, Attempt: q.Attempt})
	}
	env.Send(b.cfg.Consumer, Push{Seq: seq, Attempt: q.Attempt, Msg: q.Msg})
	env.After(b.cfg.Design.RedeliverAfter, redeliver{seq: seq, attempt: q.Attempt})
}

// Empty reports whether every message was acknowledged.
func (b *Broker) Empty() bool { return len(b.unacked) == 0 }
