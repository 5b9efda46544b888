package twopc

import (
	"fmt"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
)

// System is the system's name in trace headers.
const System = "twopc"

// PointStep is the crash point every coordinator and participant passes
// before it acts on each input (its start, a command, a message, a timeout,
// a broken connection): a crash-at on it with Count k crashes the node at
// its k-th input, so that crash injection can be enumerated at every step of
// every node. A coordinator's processes pass it when an input wakes them
// (coordinator.go); a database node, a state machine the kernel steps, is
// wrapped in Stepped.
const PointStep = "step"

// Stepped wraps a database node (model/db's state machine) with PointStep.
type Stepped struct{ Node sim.Node }

// Step implements sim.Node.
func (s *Stepped) Step(env *sim.Env, in sim.Input) {
	if env.CrashPoint(PointStep) {
		return
	}
	s.Node.Step(env, in)
}

func stepped(f sim.Factory) sim.Factory {
	return func(name string, d *sim.Disk) sim.Node { return &Stepped{Node: f(name, d)} }
}

// Names of a world's nodes.
type Names struct {
	Started      []string // coordinators running from 0
	Standby      []string // coordinators added down (takeover)
	Participants []string // databases: orders, inventory, inventory-2, ...
	Agents       []string // the participants' agents (timeout-abort or cooperative only)
}

// NamesOf returns the node names of a design.
func NamesOf(d Design) Names {
	var n Names
	for i := 1; i <= d.Coordinators+d.Standby; i++ {
		name := "coordinator"
		if i > 1 {
			name = fmt.Sprintf("coordinator-%d", i)
		}
		if i <= d.Coordinators {
			n.Started = append(n.Started, name)
		} else {
			n.Standby = append(n.Standby, name)
		}
	}
	for i := 0; i < d.Participants; i++ {
		n.Participants = append(n.Participants, ParticipantName(i))
		if d.Has(TimeoutAbort) || d.Cooperative {
			n.Agents = append(n.Agents, ParticipantName(i)+"-agent")
		}
	}
	return n
}

// Coordinators returns every coordinator, started and standby.
func (n Names) Coordinators() []string {
	return append(append([]string(nil), n.Started...), n.Standby...)
}

// All returns every node name.
func (n Names) All() []string {
	return append(append(n.Coordinators(), n.Participants...), n.Agents...)
}

// World is a built world of system C with what it was built from.
type World struct {
	*sim.World
	Design Design
	Names  Names
	Plan   []TxnAt
	// Log is the decision log: the disk every coordinator instance shares
	// (one log, as the source's SQLite file; a crash of any instance drops
	// what was not fsync'd).
	Log *sim.Disk
}

// DBConfig is a participant's database configuration.
func DBConfig(d Design, i int) (db.Schema, db.Config) {
	sc, seed := Schema(d, i)
	return sc, db.Config{MaxPreparedTransactions: d.MaxPrepared, LockTimeout: d.LockTimeout, Seed: seed}
}

// Build turns a design and a kernel configuration (entropy, network policy,
// fault schedule, limits, recorder) into a runnable world. The workload's
// transaction requests are added to the schedule as "txn" commands.
func Build(d Design, cfg sim.Config) (*World, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	names := NamesOf(d)
	plan := d.Plan()
	sched := append(sim.Schedule(nil), cfg.Schedule...)
	for _, t := range plan {
		c := t.Coordinator
		if c == "" {
			c = names.Started[0]
		}
		sched = append(sched, sim.Action{At: clock.Time(t.At), Kind: sim.Do, Node: c, Point: CmdTxn, Arg: t.GID})
	}
	cfg.Schedule = sched
	if err := sched.Validate(names.All()); err != nil {
		return nil, err
	}
	w := sim.New(cfg)
	parts := make([]network.Addr, len(names.Participants))
	for i, p := range names.Participants {
		parts[i] = network.Addr(p)
		sc, dc := DBConfig(d, i)
		w.Add(p, stepped(db.New(sc, dc)))
	}
	log := sim.NewDisk()
	for _, c := range names.Started {
		w.Add(c, NewCoordinator(d, parts), sim.WithDisk(log))
	}
	for _, c := range names.Standby {
		w.Add(c, NewCoordinator(d, parts), sim.WithDisk(log), sim.Down())
	}
	for i, a := range names.Agents {
		var peers []network.Addr
		for j, b := range names.Agents {
			if j != i {
				peers = append(peers, network.Addr(b))
			}
		}
		w.Add(a, NewAgent(d, parts[i], peers))
	}
	return &World{World: w, Design: d, Names: names, Plan: plan, Log: log}, nil
}

// DB returns a participant's database node, or nil while it is down.
func (w *World) DB(name string) *db.Node {
	if s, ok := w.Node(name).(*Stepped); ok {
		n, _ := s.Node.(*db.Node)
		return n
	}
	return nil
}

// Decision returns the decision log's record of a gid ("" for none).
func (w *World) Decision(gid string) string {
	if v, ok := w.Log.Get(logKey(gid)); ok {
		return v.(string)
	}
	return ""
}

// Spec is the generic fault generator's description of a world: crashes and
// crash-at points of every coordinator and participant, broken connections.
func Spec(d Design, horizon, maxDown time.Duration) sim.GenSpec {
	n := NamesOf(d)
	var points []sim.PointSpec
	crashable := append(append([]string(nil), n.Started...), n.Participants...)
	for _, c := range n.Started {
		points = append(points, sim.PointSpec{Node: c, Points: CoordinatorPoints(d)})
	}
	for _, p := range n.Participants {
		points = append(points, sim.PointSpec{Node: p, Points: ParticipantPoints()})
	}
	return sim.GenSpec{
		Nodes:      append(append([]string(nil), n.Started...), n.Participants...),
		Horizon:    horizon,
		MaxActions: 3,
		Kinds:      []sim.Kind{sim.Crash, sim.Break},
		MaxDown:    maxDown,
		Points:     points,
		Crashable:  crashable,
	}
}

// ParticipantPoints lists a participant database's crash points.
func ParticipantPoints() []string {
	return append([]string{PointStep}, db.Points...)
}
