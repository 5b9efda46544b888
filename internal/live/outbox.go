package live

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/fencesim/fencesim/model/outbox"
	outboxharness "github.com/fencesim/fencesim/model/outbox/harness"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// System B live: the handlers, relays, broker, consumer and senders of
// outbox.NodesOf, each a process; the service's database (db) and the
// consumer's (consumer-db) each a schema on one real PostgreSQL server.

func init() {
	systems[outboxharness.Name] = system{plan: outboxPlan, wiring: outboxWiring}
}

// OutboxWorkload is a live run's workload: the simulator's default sizes
// (6 events, up to 3 concurrent copies 20 ms apart), its events drawn as
// the drawn world draws them (DrawEvents), arriving within the first half of the run
// (at most a minute): at --duration 20s, the simulator's own 10 s window.
// The faults of the default schedule fall within it.
func OutboxWorkload(d time.Duration) outbox.Workload {
	wl := outbox.DefaultWorkload()
	wl.Window = min(d/2, time.Minute).Truncate(time.Millisecond)
	return wl
}

func outboxPlan(o Options) (*plan, error) {
	d, err := outbox.ParseDesign(o.Design)
	if err != nil {
		return nil, usagef("the design: %v", err)
	}
	if err := d.Validate(); err != nil {
		return nil, usagef("%v", err)
	}
	wl := OutboxWorkload(o.Duration)
	// Drawn as the simulator's drawn world draws its events (refunds as
	// events of their own, possibly before their charge or a second one
	// for it; keys sent again), from the "workload" stream of the seed's
	// entropy, over the design's senders: the refusals a drawn world's
	// runs record, a live run records too.
	events := outboxharness.DrawEvents(wl, sim.NewPCG(o.Seed).Stream("workload"), d.Senders)
	nodes, err := outbox.NodesOf(d, events)
	if err != nil {
		return nil, usagef("%v", err)
	}
	names := outbox.NamesOf(d)
	wlp := wl
	wlp.Plan = events
	wlJSON, err := json.Marshal(wlp)
	if err != nil {
		return nil, err
	}
	// Both databases on one server, each a schema of its own (a crash of
	// either restarts the server: both crash).
	return &plan{
		nodes: nodes,
		dbs: []dbPlan{
			{Name: names.DB, Schema: outbox.Schema(d), LockTimeout: d.LockTimeout},
			{Name: names.ConsumerDB, Schema: outbox.ConsumerSchema()},
		},
		header:   outboxharness.Header(d, wl, events, o.Seed, nil),
		workload: wlJSON,
		settled: func(ctx context.Context, w *Inspect) (bool, error) {
			return outboxSettled(ctx, w, names, events)
		},
		settle: 30 * time.Second,
	}, nil
}

// outboxSettled is the model's Settled (World.Settled) as far as a live
// world can read it: every outbox row is marked sent (the database), the
// broker holds no unacknowledged message (its disk: a message leaves it
// when the consumer acknowledged it, applied or applied before), and every
// sender has stopped on every event it started, every planned event and
// every refund its charge's success starts among them (the senders' notes:
// a sender keeps its events in memory only). Every node being up is the
// run's end note, not a condition of the work.
func outboxSettled(ctx context.Context, w *Inspect, names outbox.Names, events []outbox.Event) (bool, error) {
	conn, err := w.DB(ctx, names.DB)
	if err != nil {
		return false, err
	}
	var unsent int
	err = conn.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM %s WHERE NOT sent", outbox.TOutbox)).Scan(&unsent)
	conn.Close(context.Background())
	if err != nil || unsent > 0 {
		return false, err
	}
	disk, err := w.Disk(names.Broker)
	if err != nil {
		return false, err
	}
	for k := range disk {
		if strings.HasPrefix(k, "q/") {
			return false, nil
		}
	}
	started := map[string]bool{}
	stopped := map[string]hist.BSender{}
	for _, sn := range names.Senders {
		evs, err := w.Notes(sn)
		if err != nil {
			return false, err
		}
		for _, e := range evs {
			switch e.Kind {
			case hist.KindBEvent:
				var n hist.BEvent
				if json.Unmarshal(e.Data, &n) == nil {
					started[n.Payload] = true
				}
			case hist.KindBSender:
				var n hist.BSender
				if json.Unmarshal(e.Data, &n) == nil {
					stopped[n.Payload] = n
				}
			}
		}
	}
	want := map[string]bool{}
	for _, e := range events {
		want[e.Payload] = true
		if s, ok := stopped[e.Payload]; ok && e.Refund && e.Event != "" && s.What == hist.SenderDone && s.Code == outbox.Code200 {
			want[e.Payload+"/refund"] = true
		}
	}
	for p := range started {
		want[p] = true
	}
	for p := range want {
		if _, ok := stopped[p]; !ok {
			return false, nil
		}
	}
	return true, nil
}

func outboxWiring(cfg NodeConfig) (Wiring, error) {
	d, err := outbox.ParseDesign(cfg.Design)
	if err != nil {
		return Wiring{}, err
	}
	var wl outbox.Workload
	if err := json.Unmarshal(cfg.Workload, &wl); err != nil {
		return Wiring{}, fmt.Errorf("the workload: %w", err)
	}
	nodes, err := outbox.NodesOf(d, wl.Plan)
	if err != nil {
		return Wiring{}, err
	}
	for _, n := range nodes {
		if n.Name == cfg.Name {
			return Wiring{Factory: n.Factory,
				Codec:     NewCodec(outbox.Delivery{}, outbox.Reply{}, outbox.Publish{}, outbox.PubAck{}, outbox.Push{}, outbox.Ack{}),
				DiskTypes: outbox.DiskTypes()}, nil
		}
	}
	return Wiring{}, fmt.Errorf("the outbox world has no node %q", cfg.Name)
}
