package outbox

import (
	"fmt"

	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// BrokerConfig configures the broker.
type BrokerConfig struct {
	Design   Design
	Consumer network.Addr
}

type queued struct {
	Msg Message
}

// Broker is a durable queue with at-least-once delivery: it keeps every
// published message on disk (synced before the PUBACK) and pushes it to the
// consumer, in a process per message, until the consumer acknowledges it.
// It does not dedup: a message published twice is queued twice.
type Broker struct {
	cfg     BrokerConfig
	seq     uint64
	unacked map[uint64]Message // looked up by seq, never iterated
}

// NewBroker returns the broker's factory.
func NewBroker(cfg BrokerConfig) sim.Factory {
	return func(string, *sim.Disk) sim.Node {
		b := &Broker{cfg: cfg, unacked: map[uint64]Message{}}
		return sim.ProgramOf(b, b.main)
	}
}

func queueKey(seq uint64) string { return fmt.Sprintf("q/%020d", seq) }

// main restores the queue from the disk and pushes what is in it again, in
// seq order.
func (b *Broker) main(p *sim.Proc) {
	p.Handle(b.serve)
	disk := p.Disk()
	if v, ok := disk.Get("seq"); ok {
		b.seq = v.(uint64)
	}
	for _, k := range disk.Keys("q/") { // sorted: in seq order
		v, _ := disk.Get(k)
		var seq uint64
		fmt.Sscanf(k, "q/%d", &seq)
		b.unacked[seq] = v.(queued).Msg
		b.deliver(p, seq)
	}
}

func (b *Broker) serve(p *sim.Proc, m network.Message) {
	switch body := m.Body.(type) {
	case Publish:
		b.publish(p, m.From, body.Msg)
	case Ack:
		if _, ok := b.unacked[body.Seq]; ok {
			delete(b.unacked, body.Seq)
			p.Disk().Delete(queueKey(body.Seq))
		}
	}
}

// publish takes a message: on disk first, then the PUBACK, then the push.
func (b *Broker) publish(p *sim.Proc, from network.Addr, msg Message) {
	b.seq++
	p.Disk().Put("seq", b.seq)
	p.Disk().Put(queueKey(b.seq), queued{Msg: msg})
	p.Sync("publish")
	b.unacked[b.seq] = msg
	p.Note(hist.BPublish{Msg: msg.note(), From: string(from), Seq: b.seq})
	p.Send(from, PubAck{ID: msg.ID})
	b.deliver(p, b.seq)
}

// deliver pushes a message to the consumer, again every RedeliverAfter,
// until it is acknowledged.
func (b *Broker) deliver(p *sim.Proc, seq uint64) {
	p.Go(fmt.Sprintf("push seq=%d", seq), func(p *sim.Proc) {
		for attempt := 1; ; attempt++ {
			msg, ok := b.unacked[seq]
			if !ok {
				return
			}
			if attempt > 1 {
				p.Note(hist.BPush{Seq: seq, Msg: msg.ID, Attempt: attempt})
			}
			p.Send(b.cfg.Consumer, Push{Seq: seq, Attempt: attempt, Msg: msg})
			p.Sleep(b.cfg.Design.RedeliverAfter, "redeliver")
		}
	})
}

// Empty reports whether every message was acknowledged.
func (b *Broker) Empty() bool { return len(b.unacked) == 0 }
