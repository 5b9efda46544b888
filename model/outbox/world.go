package outbox

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
)

// Workload is what the senders do: events over a window, some delivered
// several times at once, some refunded, some browser requests without a
// key. Events, when given, replace the drawn plan (scenario tests write
// them by hand).
type Workload struct {
	Events    int           `json:"events"`
	Window    time.Duration `json:"window"`
	MaxCopies int           `json:"max_copies"` // concurrent first deliveries of one event: 1..MaxCopies
	MaxGap    time.Duration `json:"max_gap"`    // between those copies: 0..MaxGap
	Plan      []Event       `json:"plan,omitempty"`
}

// DefaultWorkload: 6 events within 10 s, up to 3 concurrent copies up to
// 20 ms apart.
func DefaultWorkload() Workload {
	return Workload{Events: 6, Window: 10 * time.Second, MaxCopies: 3, MaxGap: 20 * time.Millisecond}
}

// Validate reports an unusable workload.
func (wl Workload) Validate() error {
	if len(wl.Plan) > 0 {
		seen := map[string]bool{}
		for _, e := range wl.Plan {
			if e.Payload == "" || seen[e.Payload] {
				return fmt.Errorf("workload: event %+v needs a payload of its own", e)
			}
			seen[e.Payload] = true
		}
		return nil
	}
	switch {
	case wl.Events < 1:
		return fmt.Errorf("workload: events = %d, need at least 1", wl.Events)
	case wl.MaxCopies < 1:
		return fmt.Errorf("workload: max_copies = %d, need at least 1", wl.MaxCopies)
	case wl.Window < 0 || wl.MaxGap < 0:
		return fmt.Errorf("workload: window and max_gap must not be negative")
	}
	return nil
}

// DrawEvent draws the i-th event's time, amount, copies (and their gap)
// and who sends it: a provider's event id, a browser's key, or no key.
func (wl Workload) DrawEvent(r sim.Rand, i int) Event {
	e := Event{
		At:      time.Duration(r.Uint64n("event-at", uint64(wl.Window/time.Millisecond)+1)) * time.Millisecond,
		Amount:  int64(100 * (1 + r.Uint64n("amount", 5))),
		Copies:  1 + int(r.Uint64n("copies", uint64(wl.MaxCopies))),
		Payload: fmt.Sprintf("order-%d", i+1),
	}
	if e.Copies > 1 {
		e.Gap = time.Duration(r.Uint64n("gap", uint64(wl.MaxGap/time.Millisecond)+1)) * time.Millisecond
	}
	switch r.Uint64n("sender-kind", 8) {
	case 0, 1, 2, 3, 4:
		e.Event = fmt.Sprintf("evt-%d", i+1) // a provider's event id
	case 5, 6:
		e.Event = fmt.Sprintf("key-%d", i+1) // a browser's Idempotency-Key
	case 7:
		e.Event = "" // a browser that sends no key
	}
	return e
}

// Draw returns the events, drawn from r unless given. A zero draw is the
// plain case: a provider event delivered once, no refund.
func (wl Workload) Draw(r sim.Rand) []Event {
	if len(wl.Plan) > 0 {
		return wl.Plan
	}
	out := make([]Event, wl.Events)
	for i := range out {
		e := wl.DrawEvent(r, i)
		e.Refund = e.Event != "" && r.Uint64n("refund", 4) == 3
		out[i] = e
	}
	return out
}

// Names of a world's nodes.
type Names struct {
	Senders    []string // sender, sender-2, ...
	Handlers   []string
	DB         string
	Relays     []string // relay, relay-2, ...
	Broker     string
	Consumer   string
	ConsumerDB string
}

// NamesOf returns the node names of a design.
func NamesOf(d Design) Names {
	n := Names{DB: "db", Broker: "broker", Consumer: "consumer", ConsumerDB: "consumer-db"}
	n.Senders = numbered("sender", d.Senders)
	n.Relays = numbered("relay", d.Relays)
	for i := 1; i <= d.Handlers; i++ {
		n.Handlers = append(n.Handlers, fmt.Sprintf("handler-%d", i))
	}
	return n
}

// numbered names n instances: base, base-2, base-3, ...
func numbered(base string, n int) []string {
	var out []string
	for i := 1; i <= n; i++ {
		if i == 1 {
			out = append(out, base)
		} else {
			out = append(out, fmt.Sprintf("%s-%d", base, i))
		}
	}
	return out
}

// All returns every node name, in the order they are added.
func (n Names) All() []string {
	out := []string{n.DB, n.ConsumerDB}
	out = append(out, n.Handlers...)
	out = append(out, n.Relays...)
	out = append(out, n.Broker, n.Consumer)
	return append(out, n.Senders...)
}

// Crashable returns the nodes a fault may crash or pause: every node but
// the senders (the outside world).
func (n Names) Crashable() []string {
	all := n.All()
	return all[:len(all)-len(n.Senders)]
}

// World is a built world of system B with what it was built from.
type World struct {
	*sim.World
	Design   Design
	Workload Workload
	Plan     []Event
	Names    Names
}

// Build turns a design, a workload and a kernel configuration (entropy,
// network policy, fault schedule, limits, recorder) into a runnable world.
// The workload is drawn from the entropy's "workload" stream. The caller
// closes it (Close) when the run ends.
func Build(d Design, wl Workload, cfg sim.Config) (*World, error) {
	if cfg.Entropy == nil {
		cfg.Entropy = sim.NewPCG(0)
	}
	return BuildWith(d, wl, wl.Draw(cfg.Entropy.Stream("workload")), cfg)
}

// BuildWith builds a world with events drawn by the caller.
func BuildWith(d Design, wl Workload, events []Event, cfg sim.Config) (*World, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if err := wl.Validate(); err != nil {
		return nil, err
	}
	nodes, err := nodesOf(d, events)
	if err != nil {
		return nil, err
	}
	names := NamesOf(d)
	w := &World{World: sim.New(cfg), Design: d, Workload: wl, Plan: events, Names: names}
	w.Add(names.DB, db.New(Schema(d), db.Config{LockTimeout: d.LockTimeout}))
	w.Add(names.ConsumerDB, db.New(ConsumerSchema(), db.Config{}))
	for _, n := range nodes {
		w.Add(n.Name, n.Factory)
	}
	return w, nil
}

// NodesOf lists a world's nodes but its two databases, in the order
// BuildWith adds them (after the databases): the handlers, the relays, the
// broker, the consumer and the senders, each with the events it sends. The
// live world (internal/live) starts each as a process of its own.
func NodesOf(d Design, events []Event) ([]sim.Spec, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return nodesOf(d, events)
}

func nodesOf(d Design, events []Event) ([]sim.Spec, error) {
	names := NamesOf(d)
	bySender := make([][]Event, d.Senders)
	for _, e := range events {
		if e.Sender < 0 || e.Sender >= d.Senders {
			return nil, fmt.Errorf("workload: event %s is sent by sender %d, the design has %d sender(s)", e.Payload, e.Sender, d.Senders)
		}
		bySender[e.Sender] = append(bySender[e.Sender], e)
	}
	var out []sim.Spec
	add := func(name string, f sim.Factory) { out = append(out, sim.Spec{Name: name, Factory: f}) }
	var hs []network.Addr
	for _, h := range names.Handlers {
		add(h, NewHandler(HandlerConfig{Design: d, DB: network.Addr(names.DB), Broker: network.Addr(names.Broker)}))
		hs = append(hs, network.Addr(h))
	}
	for _, r := range names.Relays {
		add(r, NewRelay(RelayConfig{Design: d, DB: network.Addr(names.DB), Broker: network.Addr(names.Broker)}))
	}
	add(names.Broker, NewBroker(BrokerConfig{Design: d, Consumer: network.Addr(names.Consumer)}))
	add(names.Consumer, NewConsumer(ConsumerConfig{Design: d, DB: network.Addr(names.ConsumerDB), Broker: network.Addr(names.Broker)}))
	for i, sn := range names.Senders {
		calls := ""
		if i > 0 {
			calls = fmt.Sprintf("s%d.", i+1)
		}
		add(sn, NewSender(SenderConfig{Design: d, Handlers: hs, Events: bySender[i], Calls: calls}))
	}
	return out, nil
}

// DiskTypes are the values the nodes keep on their disks that are not
// basic types (the broker's queued messages), for a disk written to a file
// (gob, in the live world).
func DiskTypes() []any { return []any{queued{}} }

// WorkloadJSON encodes the workload with its events, for a trace header.
func (w *World) WorkloadJSON() json.RawMessage {
	wl := w.Workload
	wl.Plan = w.Plan
	b, err := json.Marshal(wl)
	if err != nil {
		panic(err)
	}
	return b
}

// Settled reports whether the run has nothing left to do: every sender has
// stopped on every event, every outbox row is marked sent, the broker holds
// nothing unacknowledged, and every node is up.
func (w *World) Settled() bool {
	for _, n := range w.Names.All() {
		if !w.Up(n) || w.Paused(n) {
			return false
		}
	}
	for _, sn := range w.Names.Senders {
		if s, ok := sim.State(w.Node(sn)).(*Sender); !ok || !s.Finished() {
			return false
		}
	}
	if b, ok := sim.State(w.Node(w.Names.Broker)).(*Broker); !ok || !b.Empty() {
		return false
	}
	dbn, ok := w.Node(w.Names.DB).(*db.Node)
	if !ok {
		return false
	}
	for _, r := range dbn.Rows(TOutbox) {
		if r["sent"] != true {
			return false
		}
	}
	return true
}

// FaultSpec is the fault generator's spec for a design: every node but the
// senders may crash; handlers, relay and consumer have crash points at every
// step; links may lose, duplicate, delay and stall messages; partitions and
// connection breaks. Clock faults are left out (no mechanism of B reads a
// clock for a decision).
func FaultSpec(d Design) sim.GenSpec {
	n := NamesOf(d)
	crashable := n.Crashable()
	var points []sim.PointSpec
	for _, h := range n.Handlers {
		points = append(points, sim.PointSpec{Node: h, Points: HandlerPoints})
	}
	// The generator picks a node's entry uniformly: the relays' points are
	// listed three times and the consumer's twice, so that a crash between
	// publish and mark is drawn about as often as a handler crash.
	for range 3 {
		for _, r := range n.Relays {
			points = append(points, sim.PointSpec{Node: r, Points: RelayPoints})
		}
	}
	consumer := sim.PointSpec{Node: n.Consumer, Points: ConsumerPoints}
	points = append(points, consumer, consumer, sim.PointSpec{Node: n.DB, Points: []string{db.PointCommit}})
	return sim.GenSpec{
		Nodes:      n.All(),
		Crashable:  crashable,
		Horizon:    10 * time.Second,
		MaxActions: 8,
		MaxDown:    4 * time.Second,
		Kinds:      []sim.Kind{sim.Crash, sim.Pause, sim.Partition, sim.Loss, sim.Dup, sim.Delay, sim.Stall, sim.Break},
		Points:     points,
	}
}

// HealAt is when a generated schedule ends every fault (heal-all): after
// the last fault the generator can draw and its undo.
func HealAt(g sim.GenSpec) clock.Time {
	return clock.Time(g.Horizon + g.MaxDown + time.Second)
}

// Faults draws a schedule from r and ends it with heal-all, so the run
// settles and the liveness halves of PB2, PB3 and PB5 can be judged.
func Faults(r sim.Rand, g sim.GenSpec) (sim.Schedule, sim.Profile) {
	s, p := sim.Generate(r, g)
	return append(s, sim.Action{At: HealAt(g), Kind: sim.HealAll}), p
}

// Network is the base network: 1-10 ms one-way, nothing lost.
func Network() network.Policy {
	return network.Policy{DelayMin: time.Millisecond, DelayMax: 10 * time.Millisecond}
}

// MaxTime bounds a run: the workload, the faults, and a whole retry span
// for the last event and its refund.
func MaxTime(d Design, wl Workload, g sim.GenSpec) clock.Time {
	last := wl.Window
	for _, e := range wl.Plan {
		if e.At > last {
			last = e.At
		}
	}
	if h := time.Duration(HealAt(g)); h > last {
		last = h
	}
	return clock.Time(last + 2*d.RetrySpan() + 10*time.Second)
}
