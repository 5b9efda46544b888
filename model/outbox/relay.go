package outbox

import (
	"fmt"

	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
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

type (
	pollTick   struct{}
	pubTimeout struct{ id string }
)

func (pollTick) String() string     { return "poll" }
func (t pubTimeout) String() string { return "publish-timeout " + t.id }

type relayStage uint8

const (
	rsIdle relayStage = iota
	rsPoll
	rsPublish
	rsMark
)

// Relay publishes the outbox (B.3): it reads unsent rows, publishes each to
// the broker, retrying until the broker acknowledges, then marks the row
// sent. A crash between the acknowledgement and the mark publishes the
// message again after the restart: at least once, never zero times. Under
// mark-sent-before-publish it marks first: a crash between the two loses
// the message.
type Relay struct {
	cfg   RelayConfig
	cl    timedClient
	stage relayStage
	queue []Message
	timer sim.TimerID
}

var _ sim.Node = (*Relay)(nil)

// NewRelay returns the relay's factory.
func NewRelay(cfg RelayConfig) sim.Factory {
	return func(string, *sim.Disk) sim.Node {
		return &Relay{cfg: cfg, cl: timedClient{Client: db.Client{DB: cfg.DB}, owner: "relay", timeout: cfg.Design.DBTimeout}}
	}
}

func (r *Relay) markFirst() bool { return r.cfg.Design.Has(MarkSentBeforePublish) }

// Step implements sim.Node.
func (r *Relay) Step(env *sim.Env, in sim.Input) {
	switch in.Kind {
	case sim.Start:
		env.After(r.cfg.Design.PollEvery, pollTick{})
		return
	case sim.Timer:
		switch t := in.Tag.(type) {
		case pollTick:
			if r.stage == rsIdle {
				r.stage = rsPoll
				r.cl.Exec(env, nil, UnsentMessages(r.cfg.Design.Batch))
			}
			env.After(r.cfg.Design.PollEvery, pollTick{})
		case pubTimeout:
			if r.stage == rsPublish && len(r.queue) > 0 && r.queue[0].ID == t.id {
				r.publish(env) // retry the publish: the relay may, the handler may not
			}
			return
		}
		if done, ok := r.cl.Expired(env, in); ok {
			for _, d := range done {
				r.dbDone(env, d)
			}
		}
		return
	case sim.Deliver:
		if a, ok := in.Msg.Body.(PubAck); ok {
			r.acked(env, a)
			return
		}
	}
	if done, ok := r.cl.Handle(in); ok {
		for _, d := range done {
			r.dbDone(env, d)
		}
	}
}

func (r *Relay) dbDone(env *sim.Env, d db.Done) {
	if d.Err() != nil {
		// Unreachable or unknown: start over at the next poll; unmarked
		// rows are read again.
		r.stage, r.queue = rsIdle, nil
		return
	}
	switch r.stage {
	case rsPoll:
		res := d.Resp.Results[len(d.Resp.Results)-1]
		r.queue = r.queue[:0]
		for _, row := range res.Rows {
			r.queue = append(r.queue, MessageOf(row))
		}
		r.next(env)
	case rsMark:
		m := r.queue[0]
		env.Note(KindRelay, "marked "+m.ID, RelayNote{Msg: m.ID, What: RelayMarked})
		if env.CrashPoint(PointAfterMark) {
			return
		}
		if r.markFirst() {
			r.publish(env)
			return
		}
		r.queue = r.queue[1:]
		r.next(env)
	}
}

func (r *Relay) next(env *sim.Env) {
	if len(r.queue) == 0 {
		r.stage = rsIdle
		return
	}
	if r.markFirst() {
		r.mark(env)
		return
	}
	r.publish(env)
}

func (r *Relay) publish(env *sim.Env) {
	r.stage = rsPublish
	m := r.queue[0]
	env.Send(r.cfg.Broker, Publish{Msg: m})
	r.timer = env.After(r.cfg.Design.PublishTimeout, pubTimeout{id: m.ID})
}

func (r *Relay) mark(env *sim.Env) {
	r.stage = rsMark
	r.cl.Exec(env, nil, MarkSent(r.queue[0].ID))
}

func (r *Relay) acked(env *sim.Env, a PubAck) {
	if r.stage != rsPublish || len(r.queue) == 0 || r.queue[0].ID != a.ID {
		return // a late or duplicate acknowledgement
	}
	env.Cancel(r.timer)
	env.Note(KindRelay, fmt.Sprintf("published %s", a.ID), RelayNote{Msg: a.ID, What: RelayPublished})
	if env.CrashPoint(PointAfterPublish) {
		return
	}
	if r.markFirst() {
		r.queue = r.queue[1:]
		r.next(env)
		return
	}
	r.mark(env)
}
