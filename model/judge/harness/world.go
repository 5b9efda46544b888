package harness

import (
	"fmt"
	"slices"
	"time"

	jc "github.com/fencesim/fencesim/checker/judge"
	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/model/judge/scenario"
	"github.com/fencesim/fencesim/sim"
)

// WorldMode says how much of a run's world is drawn per run.
type WorldMode string

// The world modes.
const (
	// WorldFixed is the design's own fleet and the default workload (12
	// submissions of 4 users over 3 problems): the world of the first
	// version, which the golden verdict lists were taken on.
	WorldFixed WorldMode = "fixed"
	// WorldDrawn draws the deployment and the workload per run, swarm
	// style: submissions (1 to 50), users and problems, home and
	// production machines, sandboxes per worker_id, a zombie, request ids
	// local to a machine, a poison submission, rejudges, one or two
	// arbiters (or a standby). The design's other parameters are kept,
	// and so are the fleet's numbers it pins (Design.Pinned).
	WorldDrawn WorldMode = "drawn"
	// WorldWide is WorldDrawn with the design's timing parameters drawn
	// too, each within its valid range (a zero draw keeps the design's),
	// but the pinned ones.
	WorldWide WorldMode = "wide"
)

// ParseWorld reads a world mode.
func ParseWorld(s string) (WorldMode, error) {
	switch WorldMode(s) {
	case WorldFixed, WorldDrawn, WorldWide:
		return WorldMode(s), nil
	case "":
		return WorldDrawn, nil
	}
	return "", fmt.Errorf("unknown world %q (fixed, drawn, wide)", s)
}

// World is a drawn world: the design it runs (fleet and, in the wide mode,
// parameters drawn), its workload with the arrivals planned, and the
// actions the world itself brings (a zombie's freeze and its
// replacement's start, rejudges), which are not faults to be shrunk away
// by the fault generator but part of the world.
type World struct {
	Design   judge.Design
	Workload judge.Workload
	Actions  sim.Schedule
}

// DrawWorld draws a world from r before the fault profile. Every draw is
// made so that zero is the smallest world (one submission, one home
// machine, one process per worker_id, no zombie, no poison, one arbiter,
// the design's parameters), so rapid shrinks toward it. A design that
// runs the old scheme (legacy workers or rules, A-S9) keeps its fleet: the
// migration's worlds are its own. A parameter the design pins (the ones a
// user set: fencesim --set, simtest.NewDesign) keeps the design's value in
// every world; its draws are made all the same, so a world that pins
// nothing is the one it always was, and a pinned world is the unpinned
// one of its seed but for the pinned values and what they force (a fleet
// large enough for pinned zombies, timings held within the rules against
// pinned ones: drawParams).
func DrawWorld(r sim.Rand, d judge.Design, mode WorldMode, f Faults) World {
	if mode == WorldFixed || mode == "" {
		wl := judge.DefaultWorkload()
		wl.Arrivals = wl.Plan(r)
		return World{Design: d, Workload: wl}
	}
	n := func(label string, count int) int { return int(r.Uint64n(label, uint64(count))) }
	// The workload: mostly small (1-12), one world in eight large (13-50).
	subs := 1 + n("world/submissions", 12)
	if n("world/large", 8) == 7 {
		subs = 13 + n("world/submissions-large", 38)
	}
	wl := judge.Workload{Submissions: subs, Users: 1 + n("world/users", min(subs, 5)), Problems: 1 + n("world/problems", 3),
		Window: time.Duration(n("world/window-s", 121)) * time.Second}
	if rr, ok := r.(*sim.Rapid); ok {
		// Under rapid each submission is one element of a drawn list, so
		// the shrinker deletes submissions one by one.
		var arr []judge.Arrival
		rr.Each("world/arrivals", subs, func(r sim.Rand) {
			one := judge.Workload{Submissions: 1, Users: wl.Users, Problems: wl.Problems, Window: wl.Window}.Plan(r)[0]
			one.ID = int64(101 + len(arr))
			arr = append(arr, one)
		})
		wl.Submissions, wl.Arrivals = len(arr), arr
	} else {
		wl.Arrivals = wl.Plan(r)
	}
	free := func(name string) bool { return !slices.Contains(d.Pinned, name) }
	if !(d.LegacyWorkers > 0 || d.LegacyRules) {
		// Each draw is made whether or not its parameter is pinned, so a
		// pinned world differs from the unpinned one in the pinned values
		// (and what they force) only.
		fleet := func(name string, p *int, v int) {
			if free(name) {
				*p = v
			}
		}
		fleet("home_workers", &d.HomeWorkers, 1+n("world/home", 3))
		fleet("prod_workers", &d.ProdWorkers, n("world/prod", 2))
		fleet("sandboxes", &d.Sandboxes, 1+n("world/sandboxes", 3))
		fleet("zombies", &d.Zombies, n("world/zombie", 2))
		if local := n("world/local-request-ids", 2) == 1; free("local_request_ids") {
			d.LocalRequestIDs = local
		}
		// One arbiter in half the worlds (where MA2 is promised), two or
		// one and a standby in the others.
		arbiters, standby := 1, 0
		switch n("world/arbiters", 4) {
		case 2:
			arbiters = 2
		case 3:
			standby = 1
		}
		fleet("arbiters", &d.Arbiters, arbiters)
		fleet("standby_arbiters", &d.StandbyArbiters, standby)
		// A drawn fleet holds what the pinned numbers need: a machine at
		// least (home_workers pinned at 0) and a worker_id per pinned
		// zombie. The home machines grow first, as the fleet is drawn.
		if need := max(1, d.Zombies); d.HomeWorkers+d.ProdWorkers < need {
			switch {
			case free("home_workers"):
				d.HomeWorkers = need - d.ProdWorkers
			case free("prod_workers"):
				d.ProdWorkers = need - d.HomeWorkers
			}
		}
	}
	// A poison submission in half the worlds: its attempts are what a
	// lease lost for nothing spends (MA3).
	if n("world/poison", 4) >= 2 {
		wl.Poison = []int64{wl.Arrivals[n("world/poison-sub", len(wl.Arrivals))].ID}
	}
	if mode == WorldWide {
		d = drawParams(r, d)
	}
	var acts sim.Schedule
	ms := func(label string, max time.Duration) clock.Time {
		return clock.Time(time.Duration(r.Uint64n(label, uint64(max/time.Millisecond)+1)) * time.Millisecond)
	}
	names := judge.NamesOf(d)
	if len(names.Replacements) > 0 {
		// The zombie: the old process of the first worker_id freezes
		// (stopped, swapped out, its VM migrated) long enough for its
		// supervisor to start a replacement, and comes back later still
		// holding what it held.
		rep := names.Replacements[0]
		old := judge.WorkerID(rep)
		t := ms("world/zombie-at", f.Horizon/2)
		start := t.Add(time.Duration(ms("world/zombie-replace", 10*time.Second)))
		back := t.Add(20*time.Second + time.Duration(ms("world/zombie-frozen", 130*time.Second)))
		acts = append(acts, sim.Action{At: t, Kind: sim.Pause, Node: old}, sim.Action{At: start, Kind: sim.Restart, Node: rep},
			sim.Action{At: back, Kind: sim.Resume, Node: old})
	}
	for i := n("world/rejudges", 3); i > 0; i-- {
		a := wl.Arrivals[n("world/rejudge-sub", len(wl.Arrivals))]
		at := min(clock.Time(a.At).Add(time.Duration(ms("world/rejudge-at", f.Horizon))), clock.Time(f.Horizon-time.Second))
		acts = append(acts, sim.Action{At: at, Kind: sim.Do, Node: names.Arbiters[0], Point: "rejudge", Arg: fmt.Sprint(a.ID)})
	}
	if d.Arbiters >= 2 && n("world/old-leader", 2) == 1 {
		// The stalled old leader (A-S6): the leader freezes at a claim's
		// COMMIT, its transaction open, and the database ends its idle
		// lock session meanwhile (an idle timeout, an operator's
		// pg_terminate_backend), so the other arbiter takes the lock and
		// dispatches; the old one thaws still believing it leads, and
		// commits.
		acts = append(acts, sim.Action{At: ms("world/old-leader-at", wl.Window), Kind: sim.PauseAt, Node: names.Arbiters[0], Peer: names.DB,
			Point: judge.PointBeforeCommit, Count: 1 + n("world/old-leader-claim", 3), For: 20*time.Second + time.Duration(ms("world/old-leader-frozen", 130*time.Second))})
	}
	b := GenericBounds(d)
	wl.Bounds = &judge.Bounds{OutageLoad: b.OutageLoad, HeartbeatLoad: b.HeartbeatLoad}
	return World{Design: d, Workload: wl, Actions: acts.Sorted()}
}

// Until is how long a drawn world's run goes on: Until's, and for each
// poison submission the attempts it takes to end in system_error (PA8's
// bound gives them too).
func (w World) Until(f Faults) time.Duration {
	p, err := jc.ParseParams(w.Design.JSON())
	if err != nil {
		panic(err)
	}
	return Until(w.Design, len(w.Workload.Arrivals), f) + time.Duration(len(w.Workload.Poison))*jc.PoisonBound(p)
}

// drawParams draws the timing parameters within their valid ranges (the
// rules of judge.Design.Validate hold); a zero draw keeps the design's
// value, so shrinking returns to it. A pinned parameter keeps the design's
// value (its draws are made all the same), and a drawn one is held within
// the rules against the pinned ones: see within.
func drawParams(r sim.Rand, d judge.Design) judge.Design {
	free := func(name string) bool { return !slices.Contains(d.Pinned, name) }
	pick := func(label string, keep time.Duration, lo, hi time.Duration) time.Duration {
		if r.Uint64n("param/"+label, 2) == 0 {
			return keep
		}
		// A range a pinned value leaves empty (judge_min pinned above
		// judge_max's range) is its lower end.
		hi = max(hi, lo)
		return lo + time.Duration(r.Uint64n("param/"+label+"-ms", uint64((hi-lo)/time.Millisecond)+1))*time.Millisecond
	}
	set := func(name string, p *time.Duration, v time.Duration) {
		if free(name) {
			*p = v
		}
	}
	// Within the numbers that let a healthy worker keep its lease (the
	// checkers' keepsLeases): a lease longer than a heartbeat and a
	// request timeout, a grace at least a worker's longest silence. A wide
	// world explores designs that claim the source's promises; a design
	// outside them is the user's to measure (--set, --unsafe).
	rt := d.RequestTimeout
	h := pick("heartbeat", d.Heartbeat, 2*time.Second, 30*time.Second)
	if !free("lease") {
		h = within(h, d.Heartbeat, d.Lease-rt-time.Second, d.Lease-time.Millisecond)
	}
	if !free("grace") {
		h = within(h, d.Heartbeat, d.Grace-rt)
	}
	set("heartbeat", &d.Heartbeat, h)
	least := d.Heartbeat + rt + time.Second
	lease := max(pick("lease", d.Lease, least, 4*d.Heartbeat+least), least)
	if !free("unconfirmed_lease") {
		lease = max(lease, d.UnconfirmedLease)
	}
	set("lease", &d.Lease, lease)
	set("unconfirmed_lease", &d.UnconfirmedLease, min(pick("unconfirmed_lease", d.UnconfirmedLease, time.Second, 20*time.Second), d.Lease))
	base := pick("backoff_base", d.BackoffBase, 100*time.Millisecond, 3*time.Second)
	if !free("backoff_cap") {
		base = within(base, d.BackoffBase, d.BackoffCap)
	}
	set("backoff_base", &d.BackoffBase, base)
	bcap := pick("backoff_cap", d.BackoffCap, 5*time.Second, 60*time.Second)
	if !free("grace") {
		bcap = within(bcap, d.BackoffCap, d.Grace-rt)
	}
	set("backoff_cap", &d.BackoffCap, max(bcap, d.BackoffBase))
	silence := max(d.Heartbeat, d.BackoffCap) + rt
	set("grace", &d.Grace, max(pick("grace", d.Grace, silence, 2*d.Lease+silence), silence))
	set("sweep_every", &d.SweepEvery, pick("sweep_every", d.SweepEvery, 500*time.Millisecond, 10*time.Second))
	jmin := pick("judge_min", d.JudgeMin, 100*time.Millisecond, 20*time.Second)
	if !free("judge_max") {
		jmin = within(jmin, d.JudgeMin, d.JudgeMax)
	}
	set("judge_min", &d.JudgeMin, jmin)
	set("judge_max", &d.JudgeMax, max(pick("judge_max", d.JudgeMax, d.JudgeMin, 300*time.Second), d.JudgeMin))
	count := func(name string, p *int, n uint64) {
		if r.Uint64n("param/"+name, 2) == 1 {
			if v := 1 + int(r.Uint64n("param/"+name+"-n", n)); free(name) {
				*p = v
			}
		}
	}
	count("max_attempts", &d.MaxAttempts, 5)
	count("claim_batch", &d.ClaimBatch, 3)
	count("pool", &d.Pool, 4)
	return d
}

// within holds a drawn duration v at most the first of bounds that is a
// valid duration (1ms or more). A pinned parameter's bounds go from the
// rule the wide world keeps so that the design claims the source's
// promises (keepsLeases) to the rule judge.Design.Validate holds. When
// none is valid, the pinned value leaves no room and v is the design's
// own value, keep: the design met the rules with it (or the user waived
// them, --unsafe).
func within(v, keep time.Duration, bounds ...time.Duration) time.Duration {
	for _, b := range bounds {
		if b >= time.Millisecond {
			return min(v, b)
		}
	}
	return keep
}

// GenericBounds are the promised worst costs that hold on every run of a
// drawn world, whatever its faults (the families bound the others per
// scenario): MA5, each worker process retries at most as often as its
// backoff allows while the arbiter or the database is down: a claim
// stream and an upload stream per lease of a claim (claim_batch), each
// backing off as the design says; and per lease, its heartbeats: the
// periodic ones of a minute and the confirming heartbeat's retries on the
// backoff, each heartbeat trying every arbiter address at most once.
func GenericBounds(d judge.Design) jc.Bounds {
	per := scenario.PerMinute(d.Promised())
	periodic := int(time.Minute/d.Heartbeat) + 1
	return jc.Bounds{OutageLoad: (1 + max(d.ClaimBatch, 1)) * per,
		HeartbeatLoad: (d.Arbiters + d.StandbyArbiters) * (periodic + per)}
}

// JudgeGeneric adds the generic bounds' verdicts to a drawn world's run.
func JudgeGeneric(res *jc.Result, d judge.Design) {
	res.Verdicts = append(res.Verdicts, GenericBounds(d).Check(res.Metrics)...)
}

// judgeBounds adds the verdicts of the bounds a trace's workload carries
// (a drawn world's generic bounds) to its replayed run.
func judgeBounds(res *jc.Result, b *judge.Bounds) {
	if b != nil {
		res.Verdicts = append(res.Verdicts, jc.Bounds{OutageLoad: b.OutageLoad, HeartbeatLoad: b.HeartbeatLoad}.Check(res.Metrics)...)
	}
}

// Protocol returns the fault spec of a drawn world: the generic faults,
// and faults timed by the protocol's own progress rather than by the
// clock: crash-yield and pause-yield at every arbiter and worker process
// (a crash between two statements, a pause right after a claim's reply,
// long enough for a lease to expire), crash-at and pause-at at the named
// points (an arbiter frozen between a claim's grant and its COMMIT, or
// after the COMMIT before its reply; a worker crashed right after its
// result went out), and message faults (the n-th message of a link
// dropped, duplicated or delivered late); half of the faults are of these
// kinds, and crashes, pauses and points pick their node's role first.
func (f Faults) Protocol(d judge.Design) Faults {
	if f.Kinds == nil {
		f.Kinds = append(append([]sim.Kind(nil), sim.GenericKinds...), sim.PauseYield, sim.Message, sim.CrashAt, sim.PauseAt, sim.Do)
	}
	f.ByRole, f.ByProgress = true, true
	if f.Yields == nil {
		n := judge.NamesOf(d)
		ws := n.Workers()
		for i := 0; i < len(ws); i++ {
			f.Yields = append(f.Yields, n.Arbiters[i%len(n.Arbiters)])
		}
		f.Yields = append(f.Yields, ws...)
	}
	if f.Landmarks == nil {
		// The deadlines a fault can outlast: a request's timeout, the
		// unconfirmed lease, the lease, the lease with the grace.
		f.Landmarks = []time.Duration{d.RequestTimeout, d.UnconfirmedLease, d.Lease, d.Lease + d.Grace}
	}
	return f
}

// Trim replays a failing run only up to its first violation: the run ends
// a second after the earliest event a failing verdict names, and the
// trimmed run is returned when it still fails the same property (a
// property decided by a prefix: PA1, PA2, PA4-PA6, PA9, MA1, MA3). A run
// whose failures name no event, or whose trimmed replay no longer fails
// them, is returned as it is. The trimmed run is the counterexample a
// reader wants: it stops where it went wrong.
func Trim(o *Outcome) *Outcome {
	bad := o.Failed()
	if len(bad) == 0 {
		return o
	}
	at := map[uint64]int64{}
	for i := range o.Events {
		at[o.Events[i].Seq] = o.Events[i].T
	}
	first, prop := int64(-1), ""
	for _, v := range bad {
		for _, e := range v.Events {
			if t, ok := at[e]; ok && (first < 0 || t < first) {
				first, prop = t, v.Property
			}
		}
	}
	if first < 0 {
		return bisect(o, bad[0].Property)
	}
	if t := replayUntil(o, time.Duration(first)+time.Second, prop); t != nil {
		return t
	}
	return o
}

// bisect finds, by replaying shorter prefixes, the shortest run (to half a
// second) that still fails prop: for a verdict that names no event (a
// history porcupine cannot linearize).
func bisect(o *Outcome, prop string) *Outcome {
	lo, hi := time.Duration(0), time.Duration(o.World.Now())
	best := o
	for hi-lo > 500*time.Millisecond {
		mid := lo + (hi-lo)/2
		if t := replayUntil(o, mid, prop); t != nil {
			best, hi = t, mid
		} else {
			lo = mid
		}
	}
	return best
}

// replayUntil replays a run's options up to until and returns the replay
// when it fails prop (nil otherwise).
func replayUntil(o *Outcome, until time.Duration, prop string) *Outcome {
	opts := o.Options
	opts.Until, opts.Settle = until, 0
	if opts.Schedule != nil {
		var s sim.Schedule
		for _, a := range opts.Schedule {
			if a.At <= clock.Time(opts.Until) {
				s = append(s, a)
			}
		}
		opts.Schedule = s
	}
	if r, ok := opts.Entropy.(*sim.Rapid); ok {
		opts.Entropy = sim.NewTape(r.Tape())
	}
	t, err := Play(opts)
	if err != nil {
		return nil
	}
	judgeBounds(&t.Result, opts.Workload.Bounds)
	for _, v := range t.Failed() {
		if v.Property == prop {
			t.Profile = o.Profile
			return t
		}
	}
	return nil
}

// Levers are system A's steered seeds' levers (sim.Steer): the drawn
// world's rarer choices (two arbiters, the stalled old leader, a zombie,
// a production machine, a large workload, a poison submission, two
// rejudges, three home machines), the most faults the intensity allows,
// and each fault kind on. Each is named as the feature it forces
// (drawn.Features, internal/directed.Features), so a directed search
// steers to a feature its rewarded runs had. The list is the seed format:
// a lever is appended, never moved or removed.
var Levers = slices.Clip(append([]sim.Lever{
	{Name: "arbiters=2", Label: "world/arbiters", Value: 2},
	{Name: "old-leader", Label: "world/old-leader", Value: 1},
	{Name: "zombies=1", Label: "world/zombie", Value: 1},
	{Name: "prod_workers=1", Label: "world/prod", Value: 1},
	{Name: "submissions>12", Label: "world/large", Value: 7},
	{Name: "poison=true", Label: "world/poison", Value: 3},
	{Name: "rejudges>=2", Label: "world/rejudges", Value: 2},
	{Name: "home_workers=3", Label: "world/home", Value: 2},
	{Name: "faults>=8", Label: "faults", Value: sim.LeverMax},
}, sim.KindLevers([]sim.Kind{sim.Crash, sim.Pause, sim.Partition, sim.Cut, sim.Loss, sim.Dup, sim.Delay, sim.Stall, sim.Break, sim.Jump, sim.Drift,
	sim.CrashYield, sim.PauseYield, sim.Message, sim.CrashAt, sim.PauseAt, sim.Do})...))
