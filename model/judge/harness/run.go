package harness

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/checker"
	jc "github.com/fencesim/fencesim/checker/judge"
	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/sim"
)

// Faults says how a run's faults are drawn.
type Faults struct {
	Horizon    time.Duration // faults start in [0, Horizon); heal-all at Horizon
	MaxActions int           // at most this many drawn faults
	MaxDown    time.Duration // longest downtime, pause, partition or burst
	Kinds      []sim.Kind    // nil: every generic kind; a list without crash-at or command draws no crash points or commands
	// Yields are the nodes (arbiters, workers) that crash-yield faults may
	// hit: the node crashes at its N-th blocking call (N drawn; zero is no
	// crash, so shrinking removes it). The trace names the call the crash
	// hit. Nil: none.
	Yields   []string
	MaxYield int // largest N (0: 200)
	// Landmarks are durations that fault lengths cluster around (see
	// sim.GenSpec.Landmarks); nil: none.
	Landmarks []time.Duration
	// ByRole draws the node a crash, a pause or a crash-yield hits by its
	// role first (the database, an arbiter, a worker process), so that a
	// fleet of many worker processes does not make the arbiter's crash rare.
	ByRole bool
	// ByProgress draws half of the faults among the kinds timed by the
	// protocol's progress (sim.GenSpec.ByProgress).
	ByProgress bool
}

// byRole lists the database, the arbiters and the worker processes so
// that a uniform pick from it picks each role about equally often.
func byRole(n judge.Names) []string {
	ws := n.Workers()
	out := []string{}
	for i := 0; i < max(len(ws), 1); i++ {
		out = append(out, n.DB)
	}
	for i := 0; i < max(len(ws), 1); i++ {
		out = append(out, n.Arbiters[i%len(n.Arbiters)])
	}
	return append(out, ws...)
}

// Moderate is the default fault intensity: up to 8 faults in the first
// 3 minutes, each at most 90 s long, every kind on the menu.
func Moderate() Faults {
	return Faults{Horizon: 3 * time.Minute, MaxActions: 8, MaxDown: 90 * time.Second}
}

// Heavy is more and longer faults.
func Heavy() Faults {
	return Faults{Horizon: 4 * time.Minute, MaxActions: 16, MaxDown: 2 * time.Minute}
}

// Intensity returns a named fault intensity.
func Intensity(name string) (Faults, error) {
	switch name {
	case "none":
		return Faults{Horizon: time.Second}, nil
	case "moderate", "":
		return Moderate(), nil
	case "heavy":
		return Heavy(), nil
	}
	return Faults{}, fmt.Errorf("unknown fault intensity %q (none, moderate, heavy)", name)
}

// Spec is the generic fault generator's spec for a design: every node can
// be partitioned, have its clock jump or drift, or lose or stall messages;
// arbiters, workers and the database can crash and pause; the arbiters'
// claim crash points and the database's commit crash point can be armed;
// the operator can rejudge a submission or stall an arbiter's dispatch loop.
func Spec(d judge.Design, wl []judge.Arrival, f Faults) sim.GenSpec {
	n := judge.NamesOf(d)
	nodes := append([]string{n.DB}, n.Arbiters...)
	nodes = append(nodes, n.Workers()...)
	crashable := append([]string(nil), nodes...)
	if f.ByRole {
		crashable = byRole(n)
	}
	var points []sim.PointSpec
	for _, a := range n.Arbiters {
		// After COMMIT, before the reply is the moment A-S1 is about:
		// drawn twice as often as the others.
		points = append(points, sim.PointSpec{Node: a, Points: []string{judge.PointBeforeCommit, judge.PointAfterCommit, judge.PointAfterCommit, judge.PointAfterReply}})
	}
	points = append(points, sim.PointSpec{Node: n.DB, Points: []string{db.PointCommit}})
	if f.ByRole {
		// Each worker process's calls are named moments too (a crash
		// right after a result went out, a freeze right after a claim):
		// the arbiters', the database's and the workers' points each a
		// third of the picks, as a crash's node is picked by its role.
		ws := n.Workers()
		var byRole []sim.PointSpec
		for i := 0; i < max(len(ws), 1); i++ {
			byRole = append(byRole, points[i%len(n.Arbiters)])
		}
		for i := 0; i < max(len(ws), 1); i++ {
			byRole = append(byRole, points[len(n.Arbiters)])
		}
		for _, w := range ws {
			byRole = append(byRole, sim.PointSpec{Node: w, Points: []string{judge.OpClaim.Path(), judge.OpHeartbeat.Path(), judge.OpSubmit.Path()}})
		}
		points = byRole
	}
	var ids []string
	for _, a := range wl {
		ids = append(ids, fmt.Sprint(a.ID))
	}
	cmds := []sim.CmdSpec{{Node: n.Arbiters[0], Name: "rejudge", Args: ids}, {Node: n.Arbiters[0], Name: "stall", Args: []string{"20s", "45s"}}}
	if f.Kinds != nil && !slices.Contains(f.Kinds, sim.CrashAt) {
		points = nil
	}
	if f.Kinds != nil && !slices.Contains(f.Kinds, sim.Do) {
		cmds = nil
	}
	// Message faults hit the HTTP exchanges (claim, heartbeat, submit),
	// whose callers time out; the database's connections are TCP, where a
	// lost segment is sent again (their faults are loss, stall and break).
	var links [][2]string
	for _, w := range n.Workers() {
		for _, a := range n.AllArbiters() {
			links = append(links, [2]string{w, a}, [2]string{a, w})
		}
	}
	return sim.GenSpec{Nodes: nodes, Crashable: crashable, Horizon: f.Horizon, MaxActions: f.MaxActions, MaxDown: f.MaxDown,
		MaxJump: 2 * time.Minute, MaxDrift: 200_000, Kinds: f.Kinds, Points: points, Commands: cmds, Yields: f.Yields, MaxYield: f.MaxYield, Links: links, Landmarks: f.Landmarks, ByProgress: f.ByProgress}
}

// Schedule draws a schedule and ends it with heal-all at the horizon (the
// healed phase in which PA8 is checked). A standby arbiter is started at a
// drawn time (a rolling deploy).
func Schedule(r sim.Rand, d judge.Design, wl []judge.Arrival, f Faults) (sim.Schedule, sim.Profile) {
	s, prof := sim.Generate(r, Spec(d, wl, f))
	for _, a := range judge.NamesOf(d).Standby {
		at := clock.Time(r.Uint64n("standby-start", uint64(f.Horizon/time.Millisecond)+1)) * clock.Time(time.Millisecond)
		s = append(s, sim.Action{At: at, Kind: sim.Restart, Node: a})
	}
	s = append(s, sim.Action{At: clock.Time(f.Horizon), Kind: sim.HealAll})
	return s.Sorted(), prof
}

// Until is how long a run must go on for PA8 to be checked: the healing
// time plus the liveness bound, plus a margin.
func Until(d judge.Design, submissions int, f Faults) time.Duration {
	p, err := jc.ParseParams(d.JSON())
	if err != nil {
		panic(err)
	}
	return f.Horizon + jc.BoundOf(p, submissions) + time.Minute
}

// CheckerKinds are the event kinds the checkers read. Explorations record
// only these (the rest is not even formatted); a failing run is replayed
// with everything for its report.
var CheckerKinds = map[string]bool{
	"commit": true, "call": true, "return": true, "judge": true, "result": true, "alert": true, "state": true,
	"fault": true, "crash": true, "restart": true, "start": true,
}

// CheckerFilter records the checker kinds only (CheckerKinds, as a switch:
// it runs for every event).
func CheckerFilter(kind string) bool {
	switch kind {
	case "commit", "call", "return", "judge", "result", "alert", "state", "fault", "crash", "restart", "start":
		return true
	}
	return false
}

// RunSeed runs one seeded run: the schedule from the seed's "faults"
// stream, everything else from the seed's other streams.
func RunSeed(d judge.Design, wl judge.Workload, f Faults, seed uint64) (*Outcome, error) {
	opts, prof := SeedOptions(d, wl, f, seed)
	o, err := Play(opts)
	if o != nil {
		o.Profile = prof
	}
	return o, err
}

// SeedOptions are the options of a seeded run (what RunSeed and fencesim
// explore play): the schedule from the seed's "faults" stream, everything
// else from its other streams, the checker's kinds recorded, and an early
// end once the world is quiet after healing (judge.SettleOf).
func SeedOptions(d judge.Design, wl judge.Workload, f Faults, seed uint64) (judge.Options, sim.Profile) {
	if wl.Submissions == 0 && len(wl.Arrivals) == 0 {
		return SeedOptionsIn(d, WorldDrawn, f, seed)
	}
	ent := sim.NewPCG(seed)
	arr := wl.Plan(ent.Stream("workload"))
	s, prof := Schedule(sim.Steer(ent.Stream("faults"), seed, Levers), d, arr, f)
	return judge.Options{Design: d, Workload: wl, Schedule: s, Seed: seed, Entropy: ent, Until: Until(d, len(arr), f),
		Settle: judge.SettleOf(d), Filter: CheckerFilter}, prof
}

// SeedOptionsIn are the options of a seeded run in a world mode: in the
// fixed world those of SeedOptions with the default workload (the same
// runs, bit for bit); otherwise the world is drawn first from the seed's
// "world" stream (DrawWorld), then the schedule from its "faults" stream
// with the protocol-timed faults on (Faults.Protocol), and the world's own
// actions added.
func SeedOptionsIn(d judge.Design, mode WorldMode, f Faults, seed uint64) (judge.Options, sim.Profile) {
	if mode == WorldFixed || mode == "" {
		return SeedOptions(d, judge.DefaultWorkload(), f, seed)
	}
	ent := sim.NewPCG(seed)
	wd := DrawWorld(sim.Steer(ent.Stream("world"), seed, Levers), d, mode, f)
	s, prof := worldSchedule(sim.Steer(ent.Stream("faults"), seed, Levers), wd, f)
	return judge.Options{Design: wd.Design, Workload: wd.Workload, Schedule: s, Seed: seed, Entropy: ent, Until: wd.Until(f),
		Settle: judge.SettleOf(wd.Design), Filter: CheckerFilter}, prof
}

// worldSchedule draws a drawn world's fault schedule (protocol-timed
// faults on) and adds the world's own actions.
func worldSchedule(r sim.Rand, wd World, f Faults) (sim.Schedule, sim.Profile) {
	s, prof := Schedule(r, wd.Design, wd.Workload.Arrivals, f.Protocol(wd.Design))
	return append(s, wd.Actions...).Sorted(), prof
}

// Replay re-runs a trace's header: the same design, workload, schedule,
// network and entropy (a seed, or a rapid run's tape).
func Replay(h HeaderInputs) (*Outcome, error) {
	d, err := judge.ParseDesign(h.Design)
	if err != nil {
		return nil, err
	}
	var wl judge.Workload
	if err := json.Unmarshal(h.Workload, &wl); err != nil {
		return nil, fmt.Errorf("the trace header's workload: %w", err)
	}
	s, err := sim.ParseSchedule(h.Schedule, judge.NamesOf(d).All())
	if err != nil {
		return nil, err
	}
	var lim judge.Limits
	if err := json.Unmarshal(h.Limits, &lim); err != nil {
		return nil, fmt.Errorf("the trace header's limits: %w", err)
	}
	o := judge.Options{Design: d, Workload: wl, Schedule: s, Seed: h.Seed, Until: time.Duration(lim.MaxTime), MaxEvents: lim.MaxEvents, Settle: lim.Settle}
	if h.Entropy == "tape" {
		o.Entropy = sim.NewTape(h.Tape)
	}
	if len(h.Network) > 0 {
		var p judge.NetworkPolicy
		if err := json.Unmarshal(h.Network, &p); err != nil {
			return nil, fmt.Errorf("the trace header's network: %w", err)
		}
		o.Network = &p
	}
	out, err := Play(o)
	if err == nil {
		// A drawn world's run is held to the generic bounds (MA5), as
		// explore held it: its header says so.
		judgeBounds(&out.Result, wl.Bounds)
	}
	return out, err
}

// Property returns the rapid property of system A under a design: draw a
// fault schedule (profile first), run with rapid-backed entropy, check
// everything. failed is called with the failing outcome (the last call is
// rapid's replay of the shrunk case) before the property fails.
func Property(d judge.Design, wl judge.Workload, f Faults, failed func(*Outcome)) func(*rapid.T) {
	if wl.Submissions == 0 && len(wl.Arrivals) == 0 {
		return PropertyIn(d, WorldDrawn, f, failed)
	}
	return func(t *rapid.T) {
		arr := wl.Plan(sim.NewPCG(1).Stream("workload"))
		wl := wl
		wl.Arrivals = arr
		s, prof := Schedule(sim.NewRapid(t), d, arr, f)
		ent := sim.NewRapid(t)
		o, err := Play(judge.Options{Design: d, Workload: wl, Schedule: s, Entropy: ent, Until: Until(d, len(arr), f), Settle: judge.SettleOf(d), Filter: CheckerFilter})
		if err != nil {
			t.Fatalf("run: %v (profile %s, schedule:\n%s)", err, prof, s)
		}
		o.Profile = prof
		if bad := o.Failed(); len(bad) > 0 {
			if failed != nil {
				failed(o)
			}
			t.Fatalf("%s\nprofile: %s\nschedule (%d faults):\n%s", bad[0], prof, s.Faults(), s)
		}
	}
}

// PropertyIn is the rapid property of system A in a world mode: the world
// is drawn first (DrawWorld, shrinking toward the smallest world), then the
// fault schedule with the protocol-timed faults on, then the run's own
// entropy. The fixed world is Property with the default workload.
func PropertyIn(d judge.Design, mode WorldMode, f Faults, failed func(*Outcome)) func(*rapid.T) {
	return PropertyOf(d, mode, f, nil, failed)
}

// PropertyOf is PropertyIn that fails only when one of the properties
// named (by id: "PA1", "MA3") fails; nil: any. A hunt for a knob's damage
// shrinks toward the damage the registry names, not toward another cost
// the same run also pays.
func PropertyOf(d judge.Design, mode WorldMode, f Faults, props []string, failed func(*Outcome)) func(*rapid.T) {
	if mode == WorldFixed || mode == "" {
		return Property(d, judge.DefaultWorkload(), f, failed)
	}
	named := func(o *Outcome) []checker.Verdict {
		bad := o.Failed()
		if props == nil {
			return bad
		}
		var out []checker.Verdict
		for _, v := range bad {
			for _, p := range props {
				if strings.HasPrefix(v.Property, p+" ") {
					out = append(out, v)
				}
			}
		}
		return out
	}
	return func(t *rapid.T) {
		// The world and its faults are drawn evenly over their ranges (a
		// fault's time over the horizon, its length up to minutes), still
		// shrinking toward the smallest world and the mildest faults.
		wd := DrawWorld(sim.NewRapidUniform(t), d, mode, f)
		s, prof := worldSchedule(sim.NewRapidUniform(t), wd, f)
		o, err := Play(judge.Options{Design: wd.Design, Workload: wd.Workload, Schedule: s, Entropy: sim.NewRapid(t),
			Until: wd.Until(f), Settle: judge.SettleOf(wd.Design), Filter: CheckerFilter})
		if err != nil {
			t.Fatalf("run: %v (profile %s, schedule:\n%s)", err, prof, s)
		}
		o.Profile = prof
		judgeBounds(&o.Result, wd.Workload.Bounds)
		if bad := named(o); len(bad) > 0 {
			// The counterexample stops at its violation when a prefix of
			// the run shows it.
			o = Trim(o)
			if b := named(o); len(b) > 0 {
				bad = b
			}
			if failed != nil {
				failed(o)
			}
			t.Fatalf("%s\nworld: %s\nprofile: %s\nends at %v\nschedule (%d faults):\n%s", bad[0], DescribeWorld(wd.Design, wd.Workload), prof,
				time.Duration(o.World.Now()).Round(time.Millisecond), o.Options.Schedule.Faults(), o.Options.Schedule)
		}
	}
}

// DescribeWorld is a drawn world in one line: what a counterexample's
// reader needs first.
func DescribeWorld(d judge.Design, wl judge.Workload) string {
	s := fmt.Sprintf("%d submissions, %d home + %d production machines", len(wl.Arrivals), d.HomeWorkers, d.ProdWorkers)
	if d.Sandboxes > 1 {
		s += fmt.Sprintf(", %d processes per worker_id", d.Sandboxes)
	}
	if d.Zombies > 0 {
		s += fmt.Sprintf(", %d zombie", d.Zombies)
	}
	if d.LocalRequestIDs {
		s += ", request ids local to each machine"
	}
	if len(wl.Poison) > 0 {
		s += fmt.Sprintf(", poison %v", wl.Poison)
	}
	s += fmt.Sprintf(", %d arbiters", d.Arbiters)
	if d.StandbyArbiters > 0 {
		s += fmt.Sprintf(" + %d standby", d.StandbyArbiters)
	}
	return s
}
