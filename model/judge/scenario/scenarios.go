package scenario

import (
	"fmt"
	"time"

	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/sim"
)

// All returns the scenarios in the source's order.
func All() []Scenario {
	return []Scenario{S1(), S2(), S3(), S4(), S5(), S6(), S7(), S8(), S9()}
}

func fixedJudging(d *judge.Design, t time.Duration) { d.JudgeMin, d.JudgeMax = t, t }

// firstAC returns the first submission id from 101 whose judging gives AC.
func firstAC() int64 {
	for id := int64(101); ; id++ {
		if judge.VerdictOf(id) == "AC" {
			return id
		}
	}
}

// ---- A-S1 ----

// S1: the arbiter crashes mid-claim, (a) before COMMIT, (b) after COMMIT
// before the reply, (c) after the reply; and (b) once more with the worker
// crashing too, so that nobody retries the claim and the unconfirmed lease
// is left to expire: the source's "one submission 10 s late". That case is
// played twice: with the source's start-up grace, which the restarted
// arbiter applies to the orphaned unconfirmed lease too (extending it to the
// full 60 s: the two fixes of the source interact), and with
// confirm_aware_grace, which keeps the 10 s.
func S1() Scenario {
	mk := func(point string, workerCrash, confirmAware bool) func(knobs ...judge.Knob) judge.Options {
		return func(knobs ...judge.Knob) judge.Options {
			d := design(1, 1, knobs...)
			d.ConfirmAwareGrace = confirmAware
			fixedJudging(&d, 10*sec)
			s := sim.Schedule{
				{At: 0, Kind: sim.CrashAt, Node: "arbiter-1", Point: point},
				{At: at(sec), Kind: sim.Restart, Node: "arbiter-1"},
			}
			if workerCrash {
				s = append(s, sim.Action{At: at(300 * time.Millisecond), Kind: sim.Crash, Node: "home-1"},
					sim.Action{At: at(sec), Kind: sim.Restart, Node: "home-1"})
			}
			return judge.Options{Design: d, Workload: judge.Workload{Arrivals: arrivals(101)}, Schedule: s.Sorted(), Until: 200 * sec}
		}
	}
	return Scenario{
		ID: "A-S1", Title: "arbiter crashes mid-claim: (a) before COMMIT, (b) after COMMIT before the reply, (c) after the reply",
		Guard:   "transaction atomicity; request_id makes claim idempotent; unconfirmed lease expires after 10 s",
		Promise: "one submission 10 s late",
		Cases: []Case{
			{"a: before COMMIT", mk(judge.PointBeforeCommit, false, false)},
			{"b: after COMMIT, before the reply", mk(judge.PointAfterCommit, false, false)},
			{"c: after the reply", mk(judge.PointAfterReply, false, false)},
			{"b, the worker gone too (source's grace)", mk(judge.PointAfterCommit, true, false)},
			{"b, the worker gone too (confirm-aware grace)", mk(judge.PointAfterCommit, true, true)},
		},
		Measure: func(os []*Outcome) Cost {
			var c Cost
			cost := make([]time.Duration, len(os))
			for i, o := range os {
				d := o.Options.Design
				c.expect(Terminal(o.Run.Final(101).Status), "case %d: 101 never got a verdict", i)
				grants := o.Transitions(101, "pending", "judging")
				cost[i] = o.Result.Metrics.ExtraLatency[101]
				orphan := d.UnconfirmedLease + d.SweepEvery + 2*d.DispatchEvery + 2*d.BackoffBase
				switch i {
				case 0, 1, 2:
					c.expect(len(grants) == 1, "case %d: 101 was granted %d leases, want 1 (the retry must get the same lease)", i, len(grants))
					c.expect(cost[i] <= orphan, "case %d: 101 was %v late", i, round(cost[i]))
				case 3:
					c.expect(len(grants) == 2, "case %d: the orphaned lease must expire and 101 be granted again", i)
					c.expect(cost[i] > d.Lease-orphan && cost[i] <= d.Grace+orphan,
						"case %d: with the source's grace the orphan should last about the full lease, was %v", i, round(cost[i]))
				case 4:
					c.expect(len(grants) == 2, "case %d: the orphaned lease must expire and 101 be granted again", i)
					c.expect(cost[i] <= orphan, "case %d: with confirm-aware grace the orphan must cost at most the unconfirmed lease + sweep (%v), was %v", i, orphan, round(cost[i]))
				}
			}
			c.Worst = cost[3]
			c.Text = fmt.Sprintf("a/b/c: %v/%v/%v late (the retry gets the same lease); orphaned lease: %v, over the promise (a finding: the restarted arbiter's start-up grace extends the unconfirmed 10 s lease to 60 s); with confirm-aware grace %v (not the default: a restart then leaves a worker's unconfirmed lease only 10 s, so A-S2's zero waste is no longer promised)",
				round(cost[0]), round(cost[1]), round(cost[2]), round(cost[3]), round(cost[4]))
			return c
		},
	}
}

// Terminal reports whether a status is terminal.
func Terminal(status string) bool { return judge.Terminal(status) }

// ---- A-S2 ----

// S2: the arbiter is down for 2 minutes while workers judge (the source's
// example), and a second case with three such outages during one long
// judging: without the grace every outage costs an attempt until
// system_error.
func S2() Scenario {
	one := func(knobs ...judge.Knob) judge.Options {
		d := design(2, 1, knobs...)
		fixedJudging(&d, 100*sec)
		return judge.Options{Design: d, Workload: judge.Workload{Arrivals: arrivals(101, 102, 103)},
			Schedule: sim.Schedule{{At: at(30 * sec), Kind: sim.Crash, Node: "arbiter-1"}, {At: at(150 * sec), Kind: sim.Restart, Node: "arbiter-1"}},
			Until:    400 * sec}
	}
	three := func(knobs ...judge.Knob) judge.Options {
		d := design(1, 0, knobs...)
		fixedJudging(&d, 300*sec)
		var s sim.Schedule
		for _, start := range []time.Duration{30 * sec, 200 * sec, 370 * sec} {
			s = append(s, sim.Action{At: at(start), Kind: sim.Crash, Node: "arbiter-1"}, sim.Action{At: at(start + 120*sec), Kind: sim.Restart, Node: "arbiter-1"})
		}
		return judge.Options{Design: d, Workload: judge.Workload{Arrivals: arrivals(101)}, Schedule: s, Until: 1200 * sec}
	}
	return Scenario{
		ID: "A-S2", Title: "arbiter down for a while, workers keep judging",
		Guard:   "results saved on worker disk and retried with backoff; start-up grace",
		Promise: "late by the arbiter's downtime; no double judging",
		Cases:   []Case{{"down 2 minutes", one}, {"down 3 times during one judging", three}},
		Measure: func(os []*Outcome) Cost {
			var c Cost
			var worst time.Duration
			for i, o := range os {
				d := o.Options.Design
				m := o.Result.Metrics
				c.expect(m.Wasted == 0, "case %d: %d judgings were thrown away although their workers were healthy (double judging)", i, m.Wasted)
				c.expect(m.FalseSystemErrors == 0, "case %d: %d submissions became system_error without genuine worker failures", i, m.FalseSystemErrors)
				for _, id := range o.Run.SubIDs() {
					c.expect(Terminal(o.Run.Final(id).Status), "case %d: %d never got a verdict", i, id)
					grants := o.Transitions(id, "pending", "judging")
					c.expect(len(grants) == 1, "case %d: %d was judged %d times", i, id, len(grants))
				}
				if i == 0 {
					_, late := m.MaxExtra()
					bound := 120*sec - (100*sec - 28*sec) + d.BackoffCap + d.RequestTimeout + d.SweepEvery
					c.expect(late <= bound, "verdicts %v late, beyond the downtime the results waited out plus the backoff cap (%v)", round(late), bound)
					worst = late
				}
			}
			c.Worst = worst
			c.Text = fmt.Sprintf("verdicts late by %v (results waited out the downtime, then the backoff), 0 double judgings", round(worst))
			return c
		},
	}
}

// ---- A-S3 ----

// S3: a worker drops mid-judging and never comes back. The other worker's
// submission must not be slowed (compared with the same run without the
// crash).
func S3() Scenario {
	opts := func(crash bool) func(knobs ...judge.Knob) judge.Options {
		return func(knobs ...judge.Knob) judge.Options {
			d := design(2, 0, knobs...)
			fixedJudging(&d, 40*sec)
			var s sim.Schedule
			if crash {
				s = sim.Schedule{{At: at(20 * sec), Kind: sim.Crash, Node: "home-1"}}
			}
			return judge.Options{Design: d, Workload: judge.Workload{Arrivals: arrivals(101, 102)}, Schedule: s, Until: 400 * sec}
		}
	}
	return Scenario{
		ID: "A-S3", Title: "worker drops mid-judging",
		Guard: "lease expires, sweep, re-queued", Promise: "60 s late, nobody else slowed",
		Cases: []Case{{"home-1 crashes at 20 s", opts(true)}, {"baseline without the crash", opts(false)}},
		Measure: func(os []*Outcome) Cost {
			var c Cost
			o, base := os[0], os[1]
			d := o.Options.Design
			crashAt := int64(at(20 * sec))
			var lost, other int64
			for _, id := range o.Run.SubIDs() {
				if g := o.Transitions(id, "pending", "judging"); len(g) > 0 && g[0].Worker == "home-1" {
					lost = id
				} else {
					other = id
				}
			}
			c.expect(lost != 0 && other != 0, "expected one submission on home-1 and one on home-2")
			if lost == 0 || other == 0 {
				return c
			}
			re := o.Transitions(lost, "judging", "pending")
			c.expect(len(re) == 1, "%d must be re-queued once by the sweep", lost)
			var stuck time.Duration
			if len(re) == 1 {
				stuck = time.Duration(re[0].T - crashAt)
				c.expect(stuck <= d.Lease+d.SweepEvery, "%d was stuck %v after the crash, beyond the lease + sweep period", lost, round(stuck))
			}
			c.expect(Terminal(o.Run.Final(lost).Status), "%d never got a verdict", lost)
			slowed := o.Latency(other) - base.Latency(other)
			c.expect(slowed <= 100*time.Millisecond, "the other submission was slowed by %v", slowed)
			c.Worst = stuck
			c.Text = fmt.Sprintf("%v late (reclaimed %v after the crash), the other submission slowed by %v", round(stuck), round(stuck), round(slowed))
			return c
		},
	}
}

// ---- A-S4 ----

// S4: the same result is submitted twice because the reply was lost; then
// the submission is rejudged and passes again. One history row per lease,
// one first-AC record, XP once.
func S4() Scenario {
	sub := firstAC()
	return Scenario{
		ID: "A-S4", Title: "same result submitted twice (reply lost)",
		Guard:   "UNIQUE (submission_id, lease_token); first-AC/XP ON CONFLICT DO NOTHING",
		Promise: "none",
		Cases: []Case{{"reply stalled, then rejudged", func(knobs ...judge.Knob) judge.Options {
			d := design(1, 0, knobs...)
			fixedJudging(&d, 10*sec)
			return judge.Options{Design: d, Workload: judge.Workload{Arrivals: []judge.Arrival{{At: Origin, ID: sub, User: 1, Problem: 1}}},
				Schedule: sim.Schedule{
					{At: at(10 * sec), Kind: sim.Stall, Node: "arbiter-1", Peer: "home-1", For: 10 * sec, Amount: 10 * sec},
					{At: at(60 * sec), Kind: sim.Do, Node: "arbiter-1", Point: "rejudge", Arg: fmt.Sprint(sub)},
				},
				Until: 200 * sec}
		}}},
		Measure: func(os []*Outcome) Cost {
			var c Cost
			o := os[0]
			grants := o.Transitions(sub, "pending", "judging")
			c.expect(len(grants) == 2, "%d must be judged in two generations (before and after the rejudge), got %d", sub, len(grants))
			if len(grants) > 0 {
				first := o.Ops("submit", grants[0].Token)
				answered := 0
				for _, op := range first {
					if op.Return != nil {
						answered++
						c.expect(op.Return.Code == 200, "the duplicate submit got %d, not 200", op.Return.Code)
					}
				}
				c.expect(len(first) >= 2, "the first result must be submitted more than once (got %d)", len(first))
				c.expect(answered >= 1, "the duplicate submit must be answered")
			}
			c.expect(len(o.Run.Accepted) == 2, "one history row per generation, got %d", len(o.Run.Accepted))
			c.expect(len(o.Run.FirstAC) == 1, "one first-AC record, got %d", len(o.Run.FirstAC))
			c.expect(o.Run.XP[1] == judge.XPPerFirstAC, "user 1 has %d XP, want %d", o.Run.XP[1], judge.XPPerFirstAC)
			c.Text = fmt.Sprintf("none: %d submits of one result, 1 history row, 1 first-AC record, XP %d", len(o.Ops("submit", "")), o.Run.XP[1])
			return c
		},
	}
}

// ---- A-S5 ----

// S5: the late stale result, on the source's timeline (see the doc of
// s5Options).
func S5() Scenario {
	return Scenario{
		ID: "A-S5", Title: "late stale result: home-1 claims 101 (token A) at 0 s, network stalls from 10 s, lease reclaimed at 70 s, home-1 claims 101 again at 71 s (token B), the token-A result arrives at 75 s",
		Guard:   "fencing token: token A is void, 0 rows, 410; state machine only moves forward",
		Promise: "none",
		Cases:   []Case{{"the source's timeline", S5Options}},
		Measure: func(os []*Outcome) Cost {
			var c Cost
			o := os[0]
			grants := o.Transitions(101, "pending", "judging")
			c.expect(len(grants) == 2, "101 must be claimed twice, got %d", len(grants))
			if len(grants) != 2 {
				return c
			}
			a, b := grants[0], grants[1]
			for _, op := range o.Ops("submit", a.Token) {
				if op.Return != nil {
					c.expect(op.Return.Code == 410, "the token-A result got %d, not 410", op.Return.Code)
				}
			}
			c.expect(len(o.Run.Accepted) == 1 && o.Run.Accepted[0].Token == b.Token, "only the token-B result may stand")
			c.Text = fmt.Sprintf("none: token-A result refused (410) at %v, token-B result stands", round(time.Duration(lastReturn(o, "submit", a.Token)-int64(Origin))))
			return c
		},
	}
}

func lastReturn(o *Outcome, op, token string) int64 {
	var t int64
	for _, x := range o.Ops(op, token) {
		if x.Return != nil && x.Response > t {
			t = x.Response
		}
	}
	return t
}

// S5Options is A-S5's run: one home worker, heartbeats every 10 s (so the
// last one before the stall lands at 10 s and the lease runs out at 70 s), a
// 1 s sweep, 40 s of judging, and the network between home-1 and the
// arbiter stalled from 10.1 s to 70.5 s, what was sent meanwhile arriving
// at 75 s. Times are relative to Origin.
func S5Options(knobs ...judge.Knob) judge.Options {
	d := design(1, 0, knobs...)
	d.Heartbeat = 10 * sec
	d.SweepEvery = sec
	fixedJudging(&d, 40*sec)
	stall := func(from, to string) sim.Action {
		return sim.Action{At: at(10*sec + 100*time.Millisecond), Kind: sim.Stall, Node: from, Peer: to, For: 60*sec + 400*time.Millisecond, Amount: 4500 * time.Millisecond}
	}
	return judge.Options{
		Design:   d,
		Workload: judge.Workload{Arrivals: arrivals(101)},
		Schedule: sim.Schedule{stall("home-1", "arbiter-1"), stall("arbiter-1", "home-1")},
		Until:    200 * sec,
	}
}

// ---- A-S6 ----

// S6: two arbiters alive. arbiter-2 comes up at 5 s (a rolling deploy,
// its clock 90 s ahead: expiry is judged by the database's now(), so that
// must change nothing) and waits for the leader lock; arbiter-1 stalls at
// 20 s, its database connections break at 21 s (the database releases the
// lock), arbiter-2 takes over and reclaims the leases whose heartbeats went
// to the stalled arbiter; arbiter-1 comes back at 120 s with the requests
// that queued up meanwhile, including results of leases reclaimed since.
func S6() Scenario {
	return Scenario{
		ID: "A-S6", Title: "two arbiters alive (rolling deploy, or a stalled old leader)",
		Guard:   "leader lock for efficiency; SKIP LOCKED and conditional writes for correctness",
		Promise: "scheduling worse for a while",
		Cases:   []Case{{"stalled old leader", S6Options}},
		Measure: func(os []*Outcome) Cost {
			var c Cost
			o := os[0]
			by := map[string]int{}
			for _, id := range o.Run.SubIDs() {
				c.expect(Terminal(o.Run.Final(id).Status), "%d never got a verdict", id)
				for _, g := range o.Transitions(id, "pending", "judging") {
					by[tokenArbiter(g.Token)]++
				}
			}
			c.expect(by["arbiter-2"] > 0, "arbiter-2 must take over dispatching (grants by arbiter: %v)", by)
			c.expect(o.Result.Metrics.Wasted == 0, "%d judgings thrown away although their workers were healthy", o.Result.Metrics.Wasted)
			_, late := o.Result.Metrics.MaxExtra()
			c.Worst = late
			c.Text = fmt.Sprintf("grants by arbiter %v, %d home-first misses, worst extra latency %v; no safety property failed",
				by, o.Result.Metrics.HomeFirstMisses, round(late))
			return c
		},
	}
}

func tokenArbiter(token string) string {
	for i := 0; i < len(token); i++ {
		if token[i] == '.' {
			return token[:i]
		}
	}
	return token
}

// S6Options is A-S6's run.
func S6Options(knobs ...judge.Knob) judge.Options {
	d := design(2, 1, knobs...)
	d.StandbyArbiters = 1
	d.JudgeMin, d.JudgeMax = 60*sec, 100*sec
	var arr []judge.Arrival
	for i := int64(0); i < 8; i++ {
		arr = append(arr, judge.Arrival{At: Origin + time.Duration(i)*10*sec, ID: 101 + i, User: 1 + i%3, Problem: 1 + i%2})
	}
	return judge.Options{Design: d, Workload: judge.Workload{Arrivals: arr},
		Schedule: sim.Schedule{
			{At: at(5 * sec), Kind: sim.Jump, Node: "arbiter-2", Amount: 90 * sec},
			{At: at(5 * sec), Kind: sim.Restart, Node: "arbiter-2"},
			{At: at(20 * sec), Kind: sim.Pause, Node: "arbiter-1"},
			{At: at(21 * sec), Kind: sim.Break, Node: "arbiter-1", Peer: "db"},
			{At: at(120 * sec), Kind: sim.Resume, Node: "arbiter-1"},
		},
		Until: 700 * sec}
}

// ---- A-S7 ----

// S7: the arbiter is alive but cannot reach the database for 3 minutes.
func S7() Scenario {
	return Scenario{
		ID: "A-S7", Title: "arbiter alive, database unreachable",
		Guard:   "503 and worker backoff; no reclaim possible; grace on recovery",
		Promise: "late by the outage",
		Cases:   []Case{{"3 minute partition", S7Options}},
		Measure: func(os []*Outcome) Cost {
			var c Cost
			o := os[0]
			d := o.Options.Design
			from, to := int64(at(20*sec)), int64(at(200*sec))
			for _, id := range o.Run.SubIDs() {
				c.expect(Terminal(o.Run.Final(id).Status), "%d never got a verdict", id)
				for _, v := range o.Transitions(id, "judging", "pending") {
					c.expect(v.T < from || v.T > to, "%d was reclaimed during the outage", id)
				}
			}
			m := o.Result.Metrics
			c.expect(m.Wasted == 0, "%d judgings thrown away", m.Wasted)
			_, late := m.MaxExtra()
			bound := 180*sec + d.BackoffCap + d.RequestTimeout + d.SweepEvery
			c.expect(late <= bound, "verdicts %v late, beyond the outage + backoff cap", round(late))
			maxLoad := 2 * PerMinute(d.Promised()) // two retry streams per worker, each backing off as promised

			c.expect(m.OutageLoad <= maxLoad, "a worker sent %d requests in a minute of the outage (bound %d: backoff capped at %v)", m.OutageLoad, maxLoad, d.BackoffCap)
			c.Worst = late
			c.Text = fmt.Sprintf("verdicts late by %v (outage 3m0s); at most %d requests per worker per minute during the outage; no reclaim during it", round(late), m.OutageLoad)
			return c
		},
	}
}

// S7Options is A-S7's run: 3 submissions, 60 s judgings, the arbiter cut
// off from the database from 20 s to 200 s.
func S7Options(knobs ...judge.Knob) judge.Options {
	d := design(2, 1, knobs...)
	fixedJudging(&d, 60*sec)
	return judge.Options{Design: d, Workload: judge.Workload{Arrivals: arrivals(101, 102, 103)},
		Schedule: sim.Schedule{
			{At: at(20 * sec), Kind: sim.Partition, Groups: [][]string{{"arbiter-1"}, {"db"}}},
			{At: at(200 * sec), Kind: sim.Heal},
		},
		Until: 500 * sec}
}

// ---- A-S8 ----

// S8: the arbiter is alive but stuck: its dispatch loop hangs for 2 minutes
// (a goroutine stuck on a slow query) while it still answers everything
// else, and claimable work and waiting workers pile up.
func S8() Scenario {
	opts := func(stall bool) func(knobs ...judge.Knob) judge.Options {
		return func(knobs ...judge.Knob) judge.Options {
			d := design(2, 1, knobs...)
			fixedJudging(&d, 5*sec)
			var arr []judge.Arrival
			for i := int64(0); i < 6; i++ {
				t := Origin
				if i >= 3 {
					t = Origin + 30*sec
				}
				arr = append(arr, judge.Arrival{At: t, ID: 101 + i, User: 1 + i%3, Problem: 1 + i%2})
			}
			var s sim.Schedule
			if stall {
				s = sim.Schedule{{At: at(10 * sec), Kind: sim.Do, Node: "arbiter-1", Point: "stall", Arg: "120s"}}
			}
			return judge.Options{Design: d, Workload: judge.Workload{Arrivals: arr}, Schedule: s, Until: 300 * sec}
		}
	}
	return Scenario{
		ID: "A-S8", Title: "arbiter alive but stuck (deadlock, slow query)",
		Guard:   "probe on the real dispatch path; \"waiting and unpaired > 30 s\" alert",
		Promise: "alert after 30 s",
		Cases:   []Case{{"dispatch loop stuck for 2 minutes", opts(true)}, {"healthy run", opts(false)}},
		Measure: func(os []*Outcome) Cost {
			var c Cost
			o, healthy := os[0], os[1]
			d := o.Options.Design
			m := o.Result.Metrics
			c.expect(len(m.DetectTimes) == 1, "one alert for the stuck arbiter, got %d", len(m.DetectTimes))
			var detect time.Duration
			if len(m.DetectTimes) > 0 {
				detect = m.DetectTimes[0]
				// Work became claimable at 30 s; the loop had been stuck
				// since 10 s.
				c.expect(detect <= 20*sec+d.ProbeThreshold+d.ProbeEvery, "the alert came %v after the loop got stuck", round(detect))
			}
			c.expect(len(healthy.Run.Alerts) == 0, "the healthy run raised %d alerts", len(healthy.Run.Alerts))
			c.Worst = detect
			rule := ""
			if len(o.Run.Alerts) > 0 {
				rule = fmt.Sprintf(" (%q)", o.Run.Alerts[0].Reason)
			}
			c.Text = fmt.Sprintf("alert %v after work became claimable with workers waiting (%v after the loop got stuck)%s; no alert in the healthy run", round(detect-20*sec), round(detect), rule)
			return c
		},
	}
}

// ---- A-S9 ----

// S9 is defined in migration.go.

// PerMinute is the most requests one retry stream sends in a minute when it
// backs off as a design says (the ramp from the base delay to the cap).
func PerMinute(d judge.Design) int {
	n, t := 1, time.Duration(0)
	for i := 0; ; i++ {
		t += d.Backoff(i)
		if t > time.Minute {
			return n
		}
		n++
	}
}
