package toy

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/design"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// Name is the system's name in traces and on the command line.
const Name = "toy"

// Knob is a design knob.
type Knob string

// LeaseFromReceipt counts the client's lease from the pong's receipt, not
// from the ping's send.
const LeaseFromReceipt Knob = "lease-from-receipt"

// Knobs is the knob registry.
var Knobs = design.Registry[Knob]{
	{Knob: LeaseFromReceipt, Removes: "counting the lease from the ping's send", Harmful: true, CaughtBy: []string{"TL1"}, Faults: "a delayed pong or a paused client"},
}

// Params are the design's parameters.
type Params struct {
	Lease     time.Duration `json:"lease"`
	PingEvery time.Duration `json:"ping_every"`
	Tick      time.Duration `json:"tick"`
}

// Design is the toy's design: parameters, knobs, and the parameters the
// user set (kept by DrawWorld).
type Design struct {
	Params
	Knobs  []Knob   `json:"knobs,omitempty"`
	Pinned []string `json:"pinned,omitempty"`
}

// Default is the correct design.
func Default() Design {
	return Design{Params: Params{Lease: 2 * time.Second, PingEvery: 500 * time.Millisecond, Tick: 100 * time.Millisecond}}
}

func (d *Design) params() []design.Param {
	p := &d.Params
	return []design.Param{
		design.Dur("lease", &p.Lease, time.Millisecond).Means("how long a lease lasts"),
		design.Dur("ping_every", &p.PingEvery, time.Millisecond).Means("how often the client pings for a lease"),
		design.Dur("tick", &p.Tick, time.Millisecond).Means("how often the client acts while it holds a lease"),
	}
}

var spec = design.Spec[Design, Knob]{System: "the toy", What: "toy design", Default: Default,
	Params: (*Design).params, Knobs: Knobs.Keys, KnobsOf: func(d *Design) *[]Knob { return &d.Knobs },
	Rules: rules}

// rules: the client must be able to act within a lease.
func rules(d Design) error {
	if d.Tick >= d.Lease {
		return fmt.Errorf("tick %s must be shorter than lease %s (the client would never act)", d.Tick, d.Lease)
	}
	return design.CheckPinned(d.Pinned, design.Names(d.params()))
}

// Has reports whether a knob is on.
func (d Design) Has(k Knob) bool { return slices.Contains(d.Knobs, k) }

// JSON is the design as trace headers hold it.
func (d Design) JSON() json.RawMessage { return design.Encode(d) }

// DrawWorld draws a run's design from r: the lease and the ping interval
// (the pinned ones kept). A zero draw is the default design.
func DrawWorld(r sim.Rand, base Design) Design {
	d := base
	if !slices.Contains(d.Pinned, "lease") {
		d.Lease = base.Lease + time.Duration(r.Uint64n("lease", 5))*500*time.Millisecond
	}
	if !slices.Contains(d.Pinned, "ping_every") {
		d.PingEvery = base.PingEvery + time.Duration(r.Uint64n("ping_every", 4))*100*time.Millisecond
	}
	return d
}

// The world's nodes.
const (
	Lessor = "lessor"
	Client = "client"
)

// Nodes are the world's nodes.
var Nodes = []string{Lessor, Client}

// Ping asks for a lease.
type Ping struct{ ID int }

// Pong grants one.
type Pong struct {
	Ping  int
	Lease time.Duration
}

// Grant is the lessor's note of a lease it granted (the lease counted in
// the trace's true time from the note).
type Grant struct {
	Ping  int           `json:"ping"`
	Lease time.Duration `json:"lease"`
}

// Act is the client's note of an act under its lease.
type Act struct {
	Until clock.Time `json:"until"` // the client's lease end, on its clock
}

// Kind implements sim.Note.
func (Grant) Kind() string { return KindGrant }

func (g Grant) String() string { return fmt.Sprintf("grant ping=%d lease=%s", g.Ping, g.Lease) }

// Kind implements sim.Note.
func (Act) Kind() string { return KindAct }

func (a Act) String() string { return fmt.Sprintf("act until=%d", a.Until) }

// Note kinds.
const (
	KindGrant = "toy-grant"
	KindAct   = "toy-act"
)

func lessor(d Design) sim.Factory {
	return func(string, *sim.Disk) sim.Node {
		return sim.Program(func(p *sim.Proc) {
			p.Handle(func(p *sim.Proc, m network.Message) {
				ping, ok := m.Body.(Ping)
				if !ok {
					return
				}
				p.Note(Grant{Ping: ping.ID, Lease: d.Lease})
				p.Send(m.From, Pong{Ping: ping.ID, Lease: d.Lease})
			})
		})
	}
}

// client pings every ping_every and acts every tick while its lease holds.
type client struct {
	d     Design
	sent  map[int]clock.Time // when each ping was sent, on the client's clock
	until clock.Time         // the lease's end, on the client's clock
}

func newClient(d Design) sim.Factory {
	return func(string, *sim.Disk) sim.Node {
		c := &client{d: d, sent: map[int]clock.Time{}}
		return sim.Program(c.main)
	}
}

func (c *client) main(p *sim.Proc) {
	p.Handle(func(p *sim.Proc, m network.Message) {
		pong, ok := m.Body.(Pong)
		if !ok {
			return
		}
		until := c.sent[pong.Ping].Add(pong.Lease) // the lessor granted it after the send
		if c.d.Has(LeaseFromReceipt) {
			until = p.Now().Add(pong.Lease)
		}
		if until > c.until {
			c.until = until
		}
	})
	for id := 1; ; id++ {
		c.sent[id] = p.Now()
		p.Send(Lessor, Ping{ID: id})
		for end := p.Now().Add(c.d.PingEvery); p.Now() < end; {
			if p.Now() < c.until {
				p.Note(Act{Until: c.until})
			}
			p.Sleep(c.d.Tick, "tick")
		}
	}
}

// Timing of a run: faults in the first 20 s, heal-all at 20 s.
const (
	horizon = 20 * time.Second
	healAt  = clock.Time(horizon)
)

// limits are a run's limits: it ends once TL2's bound has passed, 2 s
// later.
func limits(d Design) sim.Limits {
	return sim.Limits{MaxTime: healAt.Add(2*d.PingEvery + 3*time.Second), MaxEvents: 1_000_000, MaxPending: sim.DefaultMaxPending}
}

// network is every link's base policy: 1-5 ms.
func policy() network.Policy {
	return network.Policy{DelayMin: time.Millisecond, DelayMax: 5 * time.Millisecond}
}

// faults draws a fault schedule: crashes, pauses, partitions, loss,
// duplicates and delays (no clock faults: the properties read true time),
// heal-all at 20 s. n bounds the faults (0: none).
func faults(r sim.Rand, n int) (sim.Schedule, sim.Profile) {
	var s sim.Schedule
	var prof sim.Profile
	if n > 0 {
		s, prof = sim.Generate(r, sim.GenSpec{Nodes: Nodes, Horizon: horizon, MaxActions: n, MaxDown: 5 * time.Second,
			Kinds: []sim.Kind{sim.Crash, sim.Pause, sim.Partition, sim.Loss, sim.Dup, sim.Delay}})
	}
	return append(s, sim.Action{At: healAt, Kind: sim.HealAll}), prof
}

// simulate runs a design under a schedule and records every event.
func simulate(d Design, s sim.Schedule, ent sim.Entropy) ([]traces.Event, error) {
	mem := &traces.Memory{}
	w := sim.New(sim.Config{Entropy: ent, Network: policy(), Schedule: s, Limits: limits(d), Recorder: mem})
	w.Add(Lessor, lessor(d))
	w.Add(Client, newClient(d))
	err := w.Run()
	w.Close()
	return mem.Events, err
}
