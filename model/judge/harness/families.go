package harness

import (
	"fmt"
	"strings"
	"time"

	jc "github.com/fencesim/fencesim/checker/judge"
	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/model/judge/scenario"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// A Family is a scenario of docs/systems.md A.5 with its parameters drawn: the
// schedule's shape is the scenario's, the times, lengths and sizes come
// from the entropy, so rapid shrinks toward the mildest case. Each family
// states the metric bounds the correct design keeps on every run of it
// (the promised worst costs), and the knobs whose damage it shows.
type Family struct {
	Name    string
	About   string
	Options func(r sim.Rand, d judge.Design) judge.Options
	Bounds  func(d judge.Design) jc.Bounds
}

const sec = time.Second

// origin: the world is up (leader lock, grace) by then.
const origin = 2 * sec

func between(r sim.Rand, label string, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(r.Uint64n(label, uint64((hi-lo)/time.Millisecond)+1))*time.Millisecond
}

func at(d time.Duration) clock.Time { return clock.Time(origin + d) }

func subs(n int, spread time.Duration) []judge.Arrival {
	out := make([]judge.Arrival, n)
	for i := range out {
		out[i] = judge.Arrival{At: origin + time.Duration(i)*spread, ID: int64(101 + i), User: 1 + int64(i)%3, Problem: 1 + int64(i)%2}
	}
	return out
}

func fleet(d judge.Design, home, prod int) judge.Design {
	d.HomeWorkers, d.ProdWorkers = home, prod
	return d
}

// Families are the fault families of system A.
var Families = []Family{
	{
		Name: "random", About: "generic faults of every kind (moderate), the default workload",
		Options: func(r sim.Rand, d judge.Design) judge.Options {
			wl := judge.DefaultWorkload()
			arr := wl.Plan(r)
			wl.Arrivals = arr
			s, _ := Schedule(r, d, arr, Moderate())
			return judge.Options{Design: d, Workload: wl, Schedule: s, Until: Until(d, len(arr), Moderate()), Settle: judge.SettleOf(d)}
		},
		Bounds: func(judge.Design) jc.Bounds { return jc.Bounds{} },
	},
	{
		Name: "drawn", About: "the generic search: a drawn world (fleet, sandboxes, a zombie, poison, rejudges, arbiters) and protocol-timed faults (moderate)",
		Options: func(r sim.Rand, d judge.Design) judge.Options {
			f := Moderate()
			if rr, ok := r.(*sim.Rapid); ok {
				r = rr.Uniform() // as PropertyIn draws them
			}
			wd := DrawWorld(r, d, WorldDrawn, f)
			s, _ := worldSchedule(r, wd, f)
			return judge.Options{Design: wd.Design, Workload: wd.Workload, Schedule: s, Until: wd.Until(f), Settle: judge.SettleOf(wd.Design)}
		},
		Bounds: GenericBounds,
	},
	{
		Name: "orphan-last", About: "A-S1's orphan lease without a worker failure, made by A-S6's stalled old leader: arbiter-1 freezes at a claim's COMMIT, its idle lock session ended, while arbiter-2 leads; thawed, it commits a grant already past its unconfirmed lease, which arbiter-2's sweep reclaims at once; the submission has one attempt (max_attempts 1), which a lease nobody heard of must not spend",
		Options: func(r sim.Rand, d judge.Design) judge.Options {
			d = fleet(d, 1, 0)
			d.Arbiters, d.StandbyArbiters = 2, 0
			d.MaxAttempts = 1
			d.JudgeMin, d.JudgeMax = 10*sec, 10*sec
			seed := 1 + r.Uint64n("seed", 1<<20)
			frozen := between(r, "frozen", d.UnconfirmedLease+d.SweepEvery+d.LeaderRetry, d.ClaimHold+d.RequestTimeout+d.Lease)
			s := sim.Schedule{{At: 0, Kind: sim.PauseAt, Node: "arbiter-1", Peer: "db", Point: judge.PointBeforeCommit, Count: 1, For: frozen, FromStart: true}}
			return judge.Options{Design: d, Workload: judge.Workload{Arrivals: subs(1, 0)}, Schedule: s, Until: 400 * sec, Seed: seed, Entropy: sim.NewPCG(seed)}
		},
		Bounds: func(judge.Design) jc.Bounds { return jc.Bounds{} },
	},
	{
		Name: "twice", About: "A-S6: two arbiters dispatch at once (as an old leader that has not noticed it lost the lock does); the first one's claim transaction is held up past the worker's timeout, the retry with the same request_id reaches the second",
		Options: func(r sim.Rand, d judge.Design) judge.Options {
			d = fleet(d, 1, 0)
			d.Arbiters = 2
			if !d.Has(judge.NoLeaderLock) {
				d = d.MustWith(judge.NoLeaderLock)
			}
			d.JudgeMin, d.JudgeMax = 20*sec, 20*sec
			seed := 1 + r.Uint64n("seed", 1<<20)
			o := judge.Options{Design: d, Workload: judge.Workload{Arrivals: subs(2, 0)}, Until: 400 * sec, Seed: seed, Entropy: sim.NewPCG(seed)}
			if n := nthSend(o, "arbiter-1", "db", grantStatement); n > 0 {
				late := between(r, "grant-late", d.ClaimHold+d.RequestTimeout+sec, d.ClaimHold+d.RequestTimeout+15*sec)
				o.Schedule = sim.Schedule{{At: 0, Kind: sim.Message, Node: "arbiter-1", Peer: "db", Arg: sim.FateDelay, Count: n, Amount: late, FromStart: true}}
			}
			return o
		},
		Bounds: func(judge.Design) jc.Bounds { return jc.Bounds{} },
	},
	{
		Name: "late-retry", About: "A-S1's retried claim answered late: a short freeze of the arbiter (shorter than the grace is owed for) between a claim's COMMIT and its reply outlasts its worker's wait, and the worker's retry with the same request_id comes after a long backoff, when the unconfirmed lease has run out and the sweep has taken it back; the look-up must not send the worker a lease that is no longer the submission's",
		Options: func(r sim.Rand, d judge.Design) judge.Options {
			d = fleet(d, 1, 0)
			d.JudgeMin, d.JudgeMax = 10*sec, 10*sec
			// A short hold: the claim hangs again every 2 s, so a freeze
			// longer than a hold and a request's timeout (3 s) outlasts the
			// worker's wait wherever the grant falls in it, yet stays a
			// second short of the absence that owes the grace (Away, 5 s: a
			// late wake, or a sweep's statement answered that late). The
			// retry comes after the unconfirmed lease and two sweep
			// periods. (The default numbers; a design whose are far from
			// them draws from a range upside down.)
			d.ClaimHold, d.RequestTimeout = 2*sec, sec
			d.BackoffBase = between(r, "backoff", d.UnconfirmedLease+2*d.SweepEvery, d.BackoffCap)
			frozen := between(r, "frozen", d.ClaimHold+d.RequestTimeout+100*time.Millisecond, d.Away()-sec)
			// The worker's first claim comes before the arbiter is up (503)
			// and backs off as long: the submission comes once it claims again.
			arrive := between(r, "arrival", d.BackoffCap+5*sec, d.BackoffCap+15*sec)
			s := sim.Schedule{{At: 0, Kind: sim.PauseAt, Node: "arbiter-1", Point: judge.PointAfterCommit, Count: 1, For: frozen, FromStart: true}}
			wl := judge.Workload{Arrivals: []judge.Arrival{{At: origin + arrive, ID: 101, User: 1, Problem: 1}}}
			return judge.Options{Design: d, Workload: wl, Schedule: s, Until: 300 * sec}
		},
		Bounds: func(judge.Design) jc.Bounds { return jc.Bounds{} },
	},
	{
		Name: "stale", About: "A-S5: one worker's link stalls while it judges, its lease is reclaimed, it claims again, the stale result arrives late",
		Options: func(r sim.Rand, d judge.Design) judge.Options {
			d = fleet(d, 1, 0)
			d.Heartbeat, d.SweepEvery = 10*sec, sec
			j := between(r, "judging", 30*sec, 60*sec)
			d.JudgeMin, d.JudgeMax = j, j
			start := between(r, "stall-start", sec, j)
			length := between(r, "stall-length", 50*sec, 80*sec)
			late := between(r, "release-delay", 0, 10*sec)
			stall := func(from, to string) sim.Action {
				return sim.Action{At: at(start), Kind: sim.Stall, Node: from, Peer: to, For: length, Amount: late}
			}
			return judge.Options{Design: d, Workload: judge.Workload{Arrivals: subs(1, 0)},
				Schedule: sim.Schedule{stall("home-1", "arbiter-1"), stall("arbiter-1", "home-1")}, Until: 400 * sec}
		},
		Bounds: func(judge.Design) jc.Bounds { return jc.Bounds{} },
	},
	{
		Name: "sandbox", About: "A-S5 on a machine running two sandboxes under one worker_id: the first process's link stalls while it judges, its lease is reclaimed and granted to the second process, the first comes back and heartbeats its old token",
		Options: func(r sim.Rand, d judge.Design) judge.Options {
			d = fleet(d, 1, 0)
			d.Sandboxes = 2
			d.Heartbeat, d.SweepEvery = 10*sec, sec
			j := between(r, "judging", 90*sec, 150*sec)
			d.JudgeMin, d.JudgeMax = j, j
			// The second sandbox comes up once the first holds the lease,
			// and waits for work.
			start := between(r, "stall-start", sec, 20*sec)
			length := between(r, "stall-length", 65*sec, 80*sec)
			stall := func(from, to string) sim.Action {
				return sim.Action{At: at(start), Kind: sim.Stall, Node: from, Peer: to, For: length}
			}
			return judge.Options{Design: d, Workload: judge.Workload{Arrivals: subs(1, 0)},
				Schedule: sim.Schedule{{At: 0, Kind: sim.Pause, Node: "home-1.2"}, {At: at(start), Kind: sim.Resume, Node: "home-1.2"},
					stall("home-1", "arbiter-1"), stall("arbiter-1", "home-1")}.Sorted(), Until: 900 * sec}
		},
		Bounds: func(judge.Design) jc.Bounds { return jc.Bounds{} },
	},
	{
		Name: "collide", About: "A-S1's idempotent claim with request ids local to each machine: two workers send the same request_id, with a lost claim reply to retry",
		Options: func(r sim.Rand, d judge.Design) judge.Options {
			d = fleet(d, 2, 0)
			d.LocalRequestIDs = true
			d.JudgeMin, d.JudgeMax = 20*sec, 40*sec
			held := between(r, "reply-held", 0, 8*sec)
			var s sim.Schedule
			if held > 0 {
				s = sim.Schedule{{At: at(-sec), Kind: sim.Stall, Node: "arbiter-1", Peer: "home-2", For: held + sec}}
			}
			return judge.Options{Design: d, Workload: judge.Workload{Arrivals: subs(3, sec)}, Schedule: s, Until: 600 * sec}
		},
		Bounds: func(judge.Design) jc.Bounds { return jc.Bounds{} },
	},
	{
		Name: "orphan", About: "A-S1: the claim's reply is held up and the worker dies before it arrives; the lease nobody heard of must expire after the unconfirmed lease",
		Options: orphanOptions,
		Bounds: func(d judge.Design) jc.Bounds {
			return jc.Bounds{ExtraLatency: d.UnconfirmedLease + d.SweepEvery + 2*d.DispatchEvery + 2*d.BackoffBase}
		},
	},
	{
		Name: "outage", About: "A-S2: the arbiter is down longer than a lease while workers judge",
		Options: func(r sim.Rand, d judge.Design) judge.Options {
			d = fleet(d, 2, 1)
			d.JudgeMin, d.JudgeMax = 60*sec, 120*sec
			c := between(r, "crash", 10*sec, 40*sec)
			down := between(r, "down", 61*sec, 150*sec)
			var s sim.Schedule
			n := 1 + int(r.Uint64n("outages", 3))
			for i := 0; i < n; i++ {
				t := c + time.Duration(i)*(down+60*sec)
				s = append(s, sim.Action{At: at(t), Kind: sim.Crash, Node: "arbiter-1"}, sim.Action{At: at(t + down), Kind: sim.Restart, Node: "arbiter-1"})
			}
			return judge.Options{Design: d, Workload: judge.Workload{Arrivals: subs(3, 0)}, Schedule: s, Until: 1500 * sec}
		},
		Bounds: func(judge.Design) jc.Bounds { return jc.Bounds{} },
	},
	{
		Name: "rollback", About: "A-S9's rollback after step 3 or 4: a home worker is switched back to direct-to-database while the others stay on the arbiter, and the arbiter restarts while the direct worker judges rows it claimed without a lease; the grace must leave them alone (the source: any step rolls back by configuration)",
		Options: func(r sim.Rand, d judge.Design) judge.Options {
			d = fleet(d, 2, 1)
			d.LegacyWorkers = int(r.Uint64n("step-3", 2)) // 1: step 3 (prod-1 direct, the old rules); 0: step 4
			d.LegacyRules = d.LegacyWorkers > 0
			d.JudgeMin, d.JudgeMax = 60*sec, 120*sec
			back := between(r, "back-at", 1*sec, 20*sec)
			c := between(r, "crash", back+5*sec, back+40*sec)
			down := between(r, "down", 2*sec, 30*sec)
			s := sim.Schedule{
				{At: at(back), Kind: sim.Do, Node: "home-1", Point: "mode", Arg: "direct"},
				{At: at(c), Kind: sim.Crash, Node: "arbiter-1"},
				{At: at(c + down), Kind: sim.Restart, Node: "arbiter-1"},
			}
			return judge.Options{Design: d, Workload: judge.Workload{Arrivals: subs(6, 10*sec)}, Schedule: s, Until: 1500 * sec}
		},
		Bounds: func(judge.Design) jc.Bounds { return jc.Bounds{} },
	},
	{
		Name: "freeze", About: "A-S2 and scenario 7 without a restart: the arbiter (a GC pause, SIGSTOP) or the database freezes past a lease while workers judge; no heartbeat lands meanwhile, and the sweep that runs after the thaw must give the grace first",
		Options: func(r sim.Rand, d judge.Design) judge.Options {
			d = fleet(d, 2, 1)
			d.JudgeMin, d.JudgeMax = 60*sec, 120*sec
			t := between(r, "freeze-at", 10*sec, 40*sec)
			frozen := between(r, "frozen", d.Lease+d.SweepEvery, 2*d.Lease)
			node := []string{"arbiter-1", "db"}[r.Uint64n("frozen-node", 2)]
			s := sim.Schedule{{At: at(t), Kind: sim.Pause, Node: node}, {At: at(t + frozen), Kind: sim.Resume, Node: node}}
			return judge.Options{Design: d, Workload: judge.Workload{Arrivals: subs(3, 0)}, Schedule: s, Until: 900 * sec}
		},
		Bounds: func(judge.Design) jc.Bounds { return jc.Bounds{} },
	},
	{
		Name: "clock", About: "A-S7: a node's clock (the arbiter's, a worker's) jumps or drifts, ahead or behind, while leases are in flight; expiry is the database's business",
		Options: func(r sim.Rand, d judge.Design) judge.Options {
			d = fleet(d, 2, 1)
			d.JudgeMin, d.JudgeMax = 60*sec, 120*sec
			t := between(r, "jump-at", 5*sec, 30*sec)
			node := []string{"arbiter-1", "home-1", "prod-1"}[r.Uint64n("clock-node", 3)]
			behind := r.Uint64n("clock-behind", 2) == 1
			var a sim.Action
			if r.Uint64n("clock-drift", 2) == 0 {
				by := between(r, "jump-by", 70*sec, 180*sec)
				if behind {
					by = -by
				}
				a = sim.Action{At: at(t), Kind: sim.Jump, Node: node, Amount: by}
			} else {
				// Fast enough to gain or lose more than a lease within the
				// run: 25-50% (a broken clock source, not NTP's slew).
				rate := int64(250_000 + r.Uint64n("drift-ppm", 249_001))
				if behind {
					rate = -rate
				}
				a = sim.Action{At: at(t), Kind: sim.Drift, Node: node, Rate: rate}
			}
			return judge.Options{Design: d, Workload: judge.Workload{Arrivals: subs(3, 0)},
				Schedule: sim.Schedule{a}, Until: 600 * sec}
		},
		Bounds: func(judge.Design) jc.Bounds { return jc.Bounds{} },
	},
	{
		Name: "inflight", About: "A-S2: results are ready while the arbiter is down, and the worker holding them restarts",
		Options: func(r sim.Rand, d judge.Design) judge.Options {
			d = fleet(d, 1, 1)
			j := between(r, "judging", 10*sec, 30*sec)
			d.JudgeMin, d.JudgeMax = j, j
			c := between(r, "arbiter-crash", sec, j-sec)
			wc := j + between(r, "worker-crash", sec, 20*sec)
			return judge.Options{Design: d, Workload: judge.Workload{Arrivals: subs(2, 0)},
				Schedule: sim.Schedule{
					{At: at(c), Kind: sim.Crash, Node: "arbiter-1"}, {At: at(c + 60*sec), Kind: sim.Restart, Node: "arbiter-1"},
					{At: at(wc), Kind: sim.Crash, Node: "home-1"}, {At: at(wc + 2*sec), Kind: sim.Restart, Node: "home-1"},
				}.Sorted(), Until: 600 * sec}
		},
		Bounds: func(judge.Design) jc.Bounds { return jc.Bounds{} },
	},
	{
		Name: "dboutage", About: "A-S7: the arbiter cannot reach the database for minutes; workers back off",
		Options: func(r sim.Rand, d judge.Design) judge.Options {
			d = fleet(d, 2, 1)
			d.JudgeMin, d.JudgeMax = 30*sec, 90*sec
			t := between(r, "cut-at", 10*sec, 30*sec)
			length := between(r, "cut-for", 120*sec, 240*sec)
			return judge.Options{Design: d, Workload: judge.Workload{Arrivals: subs(3, 0)},
				Schedule: sim.Schedule{{At: at(t), Kind: sim.Partition, Groups: [][]string{{"arbiter-1"}, {"db"}}}, {At: at(t + length), Kind: sim.Heal}}, Until: 900 * sec}
		},
		Bounds: func(d judge.Design) jc.Bounds {
			// Each worker has at most two retry streams (a claim, a result
			// upload), each backing off as the design says.
			return jc.Bounds{OutageLoad: 2 * scenario.PerMinute(d.Promised())}
		},
	},
	{
		Name: "dual", About: "A-S6: a second arbiter comes up, the leader stalls and loses its connections, the home workers cannot reach the new one, the old one comes back with requests queued up",
		Options: func(r sim.Rand, d judge.Design) judge.Options {
			d = fleet(d, 2, 1)
			d.StandbyArbiters = 1
			d.JudgeMin, d.JudgeMax = 40*sec, 100*sec
			up := between(r, "standby-start", sec, 9*sec)
			p := between(r, "pause-at", 10*sec, 30*sec)
			back := p + between(r, "paused-for", 100*sec, 200*sec)
			// The home workers cannot reach the new arbiter meanwhile: their
			// leases expire there and are granted again, while their results
			// wait for the old leader.
			s := sim.Schedule{
				{At: at(up), Kind: sim.Restart, Node: "arbiter-2"},
				{At: at(p), Kind: sim.Pause, Node: "arbiter-1"},
				{At: at(p + sec), Kind: sim.Break, Node: "arbiter-1", Peer: "db"},
				{At: at(back), Kind: sim.Resume, Node: "arbiter-1"},
			}
			for _, w := range []string{"home-1", "home-2"} {
				s = append(s, sim.Action{At: at(p), Kind: sim.Cut, Node: w, Peer: "arbiter-2"}, sim.Action{At: at(p), Kind: sim.Cut, Node: "arbiter-2", Peer: w})
			}
			s = append(s, sim.Action{At: at(back + 30*sec), Kind: sim.Heal})
			return judge.Options{Design: d, Workload: judge.Workload{Arrivals: subs(8, 10*sec)}, Schedule: s.Sorted(), Until: 900 * sec}
		},
		Bounds: func(judge.Design) jc.Bounds { return jc.Bounds{} },
	},
}

// orphanOptions is A-S1's orphan: one submission, the claim's reply to
// home-1 held up 2-5 s, home-1 crashing before it arrives.
func orphanOptions(r sim.Rand, d judge.Design) judge.Options {
	d = fleet(d, 1, 1)
	d.JudgeMin, d.JudgeMax = 10*sec, 10*sec
	held := between(r, "reply-held", 2*sec, 5*sec)
	c := between(r, "crash", 500*time.Millisecond, held-500*time.Millisecond)
	return judge.Options{Design: d, Workload: judge.Workload{Arrivals: subs(1, 0)},
		Schedule: sim.Schedule{
			{At: at(-sec), Kind: sim.Stall, Node: "arbiter-1", Peer: "home-1", For: held + sec},
			{At: at(c), Kind: sim.Crash, Node: "home-1"}, {At: at(c + sec), Kind: sim.Restart, Node: "home-1"},
		}.Sorted(), Until: 300 * sec}
}

// faultFree plays a run's options without faults, recording everything,
// with a fresh copy of its entropy (a seed's), and returns its events.
func faultFree(o judge.Options) ([]traces.Event, bool) {
	o.Schedule, o.Filter = nil, nil
	if o.Entropy != nil {
		o.Entropy = sim.NewPCG(o.Seed)
	}
	mem := &traces.Memory{}
	o.Recorder = mem
	if _, err := judge.Simulate(o); err != nil {
		return nil, false
	}
	return mem.Events, true
}

// grantCommitAt returns the world time of the first commit that grants a
// lease in a run's fault-free play.
func grantCommitAt(o judge.Options) (clock.Time, bool) {
	evs, ok := faultFree(o)
	for i := range evs {
		if e := &evs[i]; ok && e.Kind == "commit" && strings.Contains(e.Desc(), "update submissions") && strings.Contains(e.Desc(), "claims") {
			return clock.Time(e.T), true
		}
	}
	return 0, false
}

// nthSend returns the number (from 1) of the first message from -> to
// whose text contains what in a run's fault-free play, as a message fault
// counts them from the start (0: none). The timers that pace the messages
// are fixed, so the number holds for other entropies too.
func nthSend(o judge.Options, from, to, what string) int {
	evs, ok := faultFree(o)
	if !ok {
		return 0
	}
	link := from + "->" + to
	n := 0
	for i := range evs {
		e := &evs[i]
		if e.Kind != "send" || e.Node != from {
			continue
		}
		d := e.Desc()
		if !strings.Contains(d, link) {
			continue
		}
		n++
		if strings.Contains(d, what) {
			return n
		}
	}
	return 0
}

// FamilyByName returns a family.
func FamilyByName(name string) (Family, error) {
	for _, f := range Families {
		if f.Name == name {
			return f, nil
		}
	}
	return Family{}, fmt.Errorf("unknown fault family %q", name)
}

// KnobFamilies is where each knob's damage shows: the families a hunt for
// it draws from (the registry names the property, the source's scenario
// names the situation).
var KnobFamilies = map[judge.Knob][]string{
	judge.FenceByWorkerID:         {"stale"},
	judge.UnconditionalWrites:     {"stale"},
	judge.NoRequestID:             {"random"},
	judge.LongFirstLease:          {"orphan"},
	judge.NoGrace:                 {"outage"},
	judge.ArbiterClock:            {"clock"},
	judge.DuplicateIsError:        {"random"},
	judge.NoUniqueHistory:         {"random"},
	judge.CreditWithoutOnConflict: {"random"},
	judge.ReclaimKeepsToken:       {"stale"},
	judge.MemoryFacts:             {"dual"},
	judge.WorkerNoDisk:            {"inflight"},
	judge.NoBackoffCap:            {"dboutage"},
	judge.NoLeaderLock:            {"dual", "random"},
	judge.HeartbeatByWorkerID:     {"sandbox"},
	judge.ClaimByRequestIDOnly:    {"collide"},
	judge.AttemptsAtGrant:         {"orphan-last"},
	judge.ClaimLookupOnly:         {"twice"},
	judge.BlindSweep:              {"freeze"},
	judge.ResendAsFound:           {"late-retry"},
	judge.GraceAllJudging:         {"rollback"},
	judge.LeaderOnlyServes:        {"dual", "random"},
	judge.RejudgeClearsHistory:    {"drawn"},
}

// Judged plays a family's run and judges it: the properties and the
// family's bounds.
func (f Family) Judged(r sim.Rand, d judge.Design, ent sim.Entropy) (*Outcome, error) {
	o := f.Options(r, d)
	if o.Entropy == nil { // a family may pick its run's entropy itself
		o.Entropy = ent
	}
	o.Filter = CheckerFilter
	out, err := Play(o)
	if err != nil {
		return nil, err
	}
	out.Result.Verdicts = append(out.Result.Verdicts, f.Bounds(o.Design).Check(out.Result.Metrics)...)
	return out, nil
}
