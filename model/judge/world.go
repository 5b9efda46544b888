package judge

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// Workload is what users do: submissions of several users over several
// problems arriving over a window of time. Arrivals, when given, replace the
// drawn plan (scenario tests write them by hand).
type Workload struct {
	Submissions int           `json:"submissions"`
	Users       int           `json:"users"`
	Problems    int           `json:"problems"`
	Window      time.Duration `json:"window"`
	Arrivals    []Arrival     `json:"arrivals,omitempty"`
	// Poison are submissions whose judging takes the worker that judges it
	// down (see WorkerConfig.Poison): each lease of one ends in a crash,
	// until the attempt cap makes it system_error.
	Poison []int64 `json:"poison,omitempty"`
	// Shape is the world's shape as the checkers read it: written into a
	// trace header by WorkloadJSON (derived from the design, never read
	// back by the model).
	Shape *hist.Shape `json:"shape,omitempty"`
	// Bounds are the worst costs the run is held to besides the
	// properties: a drawn world's generic bounds (MA5), written into the
	// trace's header so that a replay holds the run to them too (never
	// read by the model).
	Bounds *Bounds `json:"bounds,omitempty"`
}

// Bounds are a run's promised worst costs (the checkers' judge.Bounds that
// a trace header carries).
type Bounds struct {
	OutageLoad    int `json:"outage_load,omitempty"`    // MA5: the most requests one worker process sends in a minute of an outage
	HeartbeatLoad int `json:"heartbeat_load,omitempty"` // MA5: the most heartbeats it sends for one lease in such a minute
}

// DefaultWorkload is a small busy judge: 12 submissions of 4 users over 3
// problems within the first minute (users resubmit the same problem, so
// first-AC credit is exercised).
func DefaultWorkload() Workload {
	return Workload{Submissions: 12, Users: 4, Problems: 3, Window: time.Minute}
}

// Validate reports an unusable workload.
func (wl Workload) Validate() error {
	if len(wl.Arrivals) > 0 {
		seen := map[int64]bool{}
		for _, a := range wl.Arrivals {
			if a.ID <= 0 || a.User <= 0 || a.Problem <= 0 || a.At < 0 {
				return fmt.Errorf("workload: arrival %+v needs positive id, user, problem and a non-negative time", a)
			}
			if seen[a.ID] {
				return fmt.Errorf("workload: submission %d arrives twice", a.ID)
			}
			seen[a.ID] = true
		}
		return nil
	}
	switch {
	case wl.Submissions < 1:
		return fmt.Errorf("workload: submissions = %d, need at least 1", wl.Submissions)
	case wl.Users < 1 || wl.Problems < 1:
		return fmt.Errorf("workload: need at least one user and one problem, got %d users, %d problems", wl.Users, wl.Problems)
	case wl.Window < 0:
		return fmt.Errorf("workload: window %v is negative", wl.Window)
	}
	return nil
}

// Plan returns the arrivals, drawn from r unless given. Submission ids count
// from 101, as in the source's examples.
func (wl Workload) Plan(r sim.Rand) []Arrival {
	if len(wl.Arrivals) > 0 {
		return wl.Arrivals
	}
	out := make([]Arrival, wl.Submissions)
	for i := range out {
		at := time.Duration(r.Uint64n("arrival", uint64(wl.Window/time.Millisecond)+1)) * time.Millisecond
		out[i] = Arrival{
			At:      at,
			ID:      int64(101 + i),
			User:    int64(1 + r.Uint64n("user", uint64(wl.Users))),
			Problem: int64(1 + r.Uint64n("problem", uint64(wl.Problems))),
		}
	}
	return out
}

// Names of a world's nodes.
type Names struct {
	DB       string
	Arbiters []string // started at 0
	Standby  []string // added down (a rolling deploy starts them)
	Home     []string // every home worker process: machines home-1, ..., then their further sandboxes home-1.2, ...
	Prod     []string
	// Replacements are the worker processes added down, each ready to
	// replace the process of its worker_id (<id>.z): a zombie's schedule
	// starts one while the old process is frozen.
	Replacements []string
	Monitor      string
	Web          string
}

// WorkerID returns the worker_id a worker process acts under: its machine's
// name (home-1 for home-1, home-1.2 and home-1.z).
func WorkerID(process string) string {
	if i := strings.IndexByte(process, '.'); i >= 0 {
		return process[:i]
	}
	return process
}

// Replacement returns the name of the process that replaces a worker_id's.
func Replacement(workerID string) string { return workerID + ".z" }

// NamesOf returns the node names of a design.
func NamesOf(d Design) Names {
	n := Names{DB: "db", Monitor: "monitor", Web: "web"}
	for i := 1; i <= d.Arbiters+d.StandbyArbiters; i++ {
		name := fmt.Sprintf("arbiter-%d", i)
		if i <= d.Arbiters {
			n.Arbiters = append(n.Arbiters, name)
		} else {
			n.Standby = append(n.Standby, name)
		}
	}
	for i := 1; i <= d.HomeWorkers; i++ {
		n.Home = append(n.Home, fmt.Sprintf("home-%d", i))
	}
	for i := 1; i <= d.ProdWorkers; i++ {
		n.Prod = append(n.Prod, fmt.Sprintf("prod-%d", i))
	}
	machines := append(append([]string(nil), n.Home...), n.Prod...)
	for k := 2; k <= d.Sandboxes; k++ {
		for i, m := range machines {
			if i < d.HomeWorkers {
				n.Home = append(n.Home, fmt.Sprintf("%s.%d", m, k))
			} else {
				n.Prod = append(n.Prod, fmt.Sprintf("%s.%d", m, k))
			}
		}
	}
	for i := 0; i < d.Zombies && i < len(machines); i++ {
		n.Replacements = append(n.Replacements, Replacement(machines[i]))
	}
	return n
}

// All returns every node name.
func (n Names) All() []string {
	out := append([]string{n.DB}, n.AllArbiters()...)
	out = append(out, n.AllWorkers()...)
	return append(out, n.Monitor, n.Web)
}

// Workers returns every worker process that starts at 0 (home, then
// production).
func (n Names) Workers() []string { return append(append([]string(nil), n.Home...), n.Prod...) }

// AllWorkers returns every worker process, replacements included.
func (n Names) AllWorkers() []string { return append(n.Workers(), n.Replacements...) }

// Home reports whether a worker process runs on a home machine.
func (n Names) IsHome(process string) bool { return slices.Contains(n.Home, WorkerID(process)) }

// AllArbiters returns started and standby arbiters.
func (n Names) AllArbiters() []string {
	return append(append([]string(nil), n.Arbiters...), n.Standby...)
}

// World is a built world of system A with what it was built from.
type World struct {
	*sim.World
	Design   Design
	Workload Workload
	Arrivals []Arrival
	Names    Names
}

// Plan is what a world of system A is made of, for the simulator (Build)
// and the live world alike: the database's schema and seed rows, and every
// other node with its factory.
type Plan struct {
	Arrivals []Arrival
	Names    Names
	Schema   db.Schema
	Seed     map[string][]db.Row
	Nodes    []sim.Spec // the arbiters, workers, monitor and web front (not the database)
}

// PlanOf lists a world's nodes; the arrivals are drawn from r unless the
// workload gives them.
func PlanOf(d Design, wl Workload, r sim.Rand) (Plan, error) {
	if err := d.Validate(); err != nil {
		return Plan{}, err
	}
	if err := wl.Validate(); err != nil {
		return Plan{}, err
	}
	arrivals := wl.Plan(r)
	names := NamesOf(d)
	users := map[int64]bool{}
	var seedUsers []db.Row
	for _, a := range arrivals {
		if !users[a.User] {
			users[a.User] = true
			seedUsers = append(seedUsers, db.Row{"id": a.User, "xp": int64(0)})
		}
	}
	seed := map[string][]db.Row{TUsers: seedUsers}
	if d.LegacyRules || d.LegacyWorkers > 0 {
		// The old scheme's shared round row; step 4 of the migration
		// deletes it with the global lock.
		seed[TDispatch] = []db.Row{{"id": int64(1), "round": int64(0)}}
	}
	pl := Plan{Arrivals: arrivals, Names: names, Schema: Schema(d), Seed: seed}
	add := func(name string, f sim.Factory, down bool) {
		pl.Nodes = append(pl.Nodes, sim.Spec{Name: name, Factory: f, Down: down})
	}
	var arbs []network.Addr
	for _, a := range names.AllArbiters() {
		arbs = append(arbs, network.Addr(a))
	}
	for _, a := range names.Arbiters {
		add(a, NewArbiter(ArbiterConfig{Design: d, DB: network.Addr(names.DB)}), false)
	}
	for _, a := range names.Standby {
		add(a, NewArbiter(ArbiterConfig{Design: d, DB: network.Addr(names.DB)}), true)
	}
	all := names.Workers()
	poison := map[int64]bool{}
	for _, id := range wl.Poison {
		poison[id] = true
	}
	for i, name := range names.AllWorkers() {
		cfg := WorkerConfig{Design: d, ID: WorkerID(name), Home: names.IsHome(name), Arbiters: arbs,
			Direct: i < len(all) && i >= len(all)-d.LegacyWorkers, DB: network.Addr(names.DB), Poison: poison}
		add(name, NewWorker(cfg), i >= len(all))
	}
	add(names.Monitor, NewMonitor(d, arbs), false)
	add(names.Web, NewWeb(network.Addr(names.DB), arrivals), false)
	return pl, nil
}

// Build turns a design, a workload and a kernel configuration (entropy,
// network policy, fault schedule, limits, recorder) into a runnable world.
func Build(d Design, wl Workload, cfg sim.Config) (*World, error) {
	if cfg.Entropy == nil {
		cfg.Entropy = sim.NewPCG(0)
	}
	pl, err := PlanOf(d, wl, cfg.Entropy.Stream("workload"))
	if err != nil {
		return nil, err
	}
	w := sim.New(cfg)
	w.Add(pl.Names.DB, db.New(pl.Schema, db.Config{Seed: pl.Seed}))
	for _, n := range pl.Nodes {
		if n.Down {
			w.Add(n.Name, n.Factory, sim.Down())
		} else {
			w.Add(n.Name, n.Factory)
		}
	}
	return &World{World: w, Design: d, Workload: wl, Arrivals: pl.Arrivals, Names: pl.Names}, nil
}

// ShapeOf returns the shape of a design's worlds, as the checkers read it:
// zero in each dimension where the world is the smallest.
func ShapeOf(d Design) hist.Shape {
	var s hist.Shape
	if d.Sandboxes > 1 {
		s.ProcessesPerWorker = d.Sandboxes
	}
	s.Zombies = d.Zombies
	if d.ClaimBatch > 1 {
		s.LeasesPerClaim = d.ClaimBatch
	}
	s.SharedRequestIDs = d.LocalRequestIDs && d.HomeWorkers+d.ProdWorkers > 1
	if n := d.Arbiters + d.StandbyArbiters; n > 1 {
		s.Arbiters = n
	}
	return s
}

// WorkloadJSON encodes the workload with its planned arrivals, for a trace
// header, and the world's shape when it is not the smallest.
func (w *World) WorkloadJSON() json.RawMessage {
	wl := w.Workload
	wl.Arrivals = w.Arrivals
	wl.Shape = nil
	if s := ShapeOf(w.Design); s != (hist.Shape{}) {
		wl.Shape = &s
	}
	b, err := json.Marshal(wl)
	if err != nil {
		panic(err)
	}
	return b
}

// Quiet reports whether the world has nothing left to do: every node is up
// and running (a standby that never started excepted), every submission
// has arrived and is terminal, no worker holds a result on disk or in
// memory, no arbiter is stalled, and no message is in flight. A run that
// is quiet after its last fault only ticks its timers from then on.
func (w *World) Quiet() bool { return len(w.Net().InFlight()) == 0 && w.Idle() }

// Idle is Quiet but for messages in flight: what the nodes and the
// database hold says nothing is left to do.
func (w *World) Idle() bool {
	// The database first: until the end, a submission is most often what
	// is left to do.
	dbn, ok := w.Node(w.Names.DB).(*db.Node)
	if !ok || dbn.AnyCommitted(TSubmissions, "status", StatusPending) || dbn.AnyCommitted(TSubmissions, "status", StatusJudging) {
		return false
	}
	up := func(n string) bool { return w.Up(n) && !w.Paused(n) }
	if !up(w.Names.DB) || !up(w.Names.Monitor) || !up(w.Names.Web) {
		return false
	}
	for _, names := range [...][]string{w.Names.Arbiters, w.Names.Home, w.Names.Prod} {
		for _, n := range names {
			if !up(n) {
				return false
			}
		}
	}
	for _, n := range append(append([]string(nil), w.Names.Standby...), w.Names.Replacements...) {
		if w.Paused(n) {
			return false
		}
	}
	for _, names := range [...][]string{w.Names.Arbiters, w.Names.Standby} {
		for _, n := range names {
			if a, ok := sim.State(w.Node(n)).(*Arbiter); ok && a.Stalled() {
				return false
			}
		}
	}
	for _, n := range w.Names.AllWorkers() {
		if !w.Up(n) && slices.Contains(w.Names.Replacements, n) {
			continue // a replacement never started
		}
		wk, ok := sim.State(w.Node(n)).(*Worker)
		if !ok || wk.Holding() || len(w.Disk(n).Keys("result/")) > 0 {
			return false
		}
	}
	return dbn.CountCommitted(TSubmissions) >= len(w.Arrivals)
}
