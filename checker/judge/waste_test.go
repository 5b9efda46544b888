package judge

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/traces/hist"
)

// MA2 where the source promises no waste: a healthy worker's judging
// thrown away around nothing but what the grace covers (an arbiter's
// restart, freeze or clock fault; the database out of reach) fails the
// run; around any other fault it is not judged.

// thrownAway: home-1 holds 101's lease A from 20 s and judges it from 21
// s; the sweep reclaims it at 90 s; its result, saved at 100 s, is refused
// (410) at 100.5 s. mid adds what happens meanwhile; the run ends at 200 s.
func thrownAway(mid func(b *h)) *h {
	b := &h{}
	b.on(10 * s).commit(ins("submissions", sub(101, "pending", "", 0, "")))
	b.on(19*s).call("c1", "home-1", "claim", 0, "", 0, "r1")
	b.on(20*s).move(sub(101, "pending", "", 0, ""), sub(101, "judging", "A", 1, "home-1"))
	b.ret("c1", "home-1", 200, 101, "A", 1)
	b.on(21*s).judge("home-1", 101, "A", hist.JudgeStart)
	b.move(sub(101, "judging", "A", 1, "home-1"), sub(101, "judging", "A", 1, "home-1")) // its heartbeat
	mid(b)
	b.on(90*s).move(sub(101, "judging", "A", 1, "home-1"), sub(101, "pending", "", 1, ""))
	b.on(100*s).judge("home-1", 101, "A", hist.JudgeEnd)
	b.add("home-1", hist.KindResult, hist.Result{Worker: "home-1", Sub: 101, Token: "A", Gen: 1, Verdict: "AC", Phase: hist.ResultSaved, Durable: true})
	b.call("s1", "home-1", "submit", 101, "A", 1, "")
	b.on(100*s+s/2).ret("s1", "home-1", 410, 101, "A", 0)
	b.add("home-1", hist.KindResult, hist.Result{Worker: "home-1", Sub: 101, Token: "A", Gen: 1, Verdict: "AC", Phase: hist.ResultAnswered, Code: 410})
	b.on(200*s).add("db", "state", hist.State{What: "idle"})
	return b
}

func fault(at int64, f map[string]any) func(b *h) { return func(b *h) { b.on(at).fault(f) } }

func node(at int64, n, kind string) func(b *h) { return func(b *h) { b.on(at).add(n, kind, nil) } }

func all(fs ...func(b *h)) func(b *h) {
	return func(b *h) {
		for _, f := range fs {
			f(b)
		}
	}
}

// restarted: arbiter-1 crashes at 40 s and is back at 85 s.
var restarted = all(fault(40*s, map[string]any{"kind": "crash", "node": "arbiter-1"}), node(40*s, "arbiter-1", "crash"),
	fault(85*s, map[string]any{"kind": "restart", "node": "arbiter-1"}), node(85*s, "arbiter-1", "restart"))

func TestPromisedWasteMustFailMA2(t *testing.T) {
	// The arbiter trouble A-S2 and A-S7 are about, each alone.
	cases := map[string]func(b *h){
		// A-S2 without grace: the arbiter restarts and sweeps at once.
		"an arbiter restart": restarted,
		// Crashed at one of its blocking calls: down, with no crash fault.
		"an arbiter down": all(node(40*s, "arbiter-1", "crash"), node(85*s, "arbiter-1", "restart")),
		// A-S7 with expiry by the arbiter's clock.
		"an arbiter's clock jump":                 fault(40*s, map[string]any{"kind": "jump", "node": "arbiter-1", "amount": 100 * s}),
		"an arbiter's clock drift":                fault(40*s, map[string]any{"kind": "drift", "node": "arbiter-1", "rate": 100000}),
		"an arbiter's drift from before":          fault(-30*s, map[string]any{"kind": "drift", "node": "arbiter-1", "rate": 100000}),
		"an arbiter's jump as the fate is sealed": fault(100*s+6*s/10, map[string]any{"kind": "jump", "node": "arbiter-1", "amount": s}),
		"an arbiter's jump at the grant":          fault(20*s, map[string]any{"kind": "jump", "node": "arbiter-1", "amount": s}),
		// An arbiter frozen (a GC pause, SIGSTOP): the late sweep owes the grace.
		"an arbiter paused": all(fault(40*s, map[string]any{"kind": "pause", "node": "arbiter-1"}), fault(60*s, map[string]any{"kind": "resume", "node": "arbiter-1"})),
		// Scenario 7: the database out of reach, by a crash, a freeze or
		// the arbiter's link; the grace runs after it.
		"a database crash":                 all(node(40*s, "db", "crash"), node(41*s, "db", "restart")),
		"a database crash in the schedule": all(fault(40*s, map[string]any{"kind": "crash", "node": "db"}), node(40*s, "db", "crash"), fault(50*s, map[string]any{"kind": "restart", "node": "db"}), node(50*s, "db", "restart")),
		"a database paused":                all(fault(40*s, map[string]any{"kind": "pause", "node": "db"}), fault(60*s, map[string]any{"kind": "resume", "node": "db"})),
		"a cut of the arbiter's link":      fault(40*s, map[string]any{"kind": "cut", "node": "arbiter-1", "peer": "db"}),
		"a stall of the database's link":   fault(40*s, map[string]any{"kind": "stall", "node": "db", "peer": "arbiter-1", "for": 10 * s}),
		"a break of the database's link":   fault(40*s, map[string]any{"kind": "break", "node": "db", "peer": "arbiter-1"}),
	}
	// An arbiter restart, and what leaves the worker, the arbiters and
	// the database alone.
	for name, mid := range map[string]func(b *h){
		"another worker's faults": all(node(40*s, "home-2", "crash"), fault(41*s, map[string]any{"kind": "cut", "node": "home-2", "peer": "prod-1"}),
			fault(42*s, map[string]any{"kind": "pause", "node": "prod-1"}), fault(43*s, map[string]any{"kind": "drift", "node": "home-2", "rate": 1000}),
			fault(44*s, map[string]any{"kind": "partition", "groups": [][]string{{"home-1", "arbiter-1", "db"}, {"home-2", "prod-1"}}})),
		"its own wall clock":    fault(40*s, map[string]any{"kind": "jump", "node": "home-1", "amount": 100 * s}),
		"a rejudge, an arming":  all(fault(40*s, map[string]any{"kind": "command", "node": "arbiter-1", "point": "rejudge", "arg": "102"}), fault(41*s, map[string]any{"kind": "crash-at", "node": "db", "point": "commit"}), fault(42*s, map[string]any{"kind": "message", "node": "db", "peer": "home-1"})),
		"a fault a lease early": fault(20*s-60*s-1, map[string]any{"kind": "stall", "node": "db", "peer": "arbiter-1", "for": 0}),
		"a burst over before":   fault(-50*s, map[string]any{"kind": "stall", "node": "db", "peer": "arbiter-1", "for": 4 * s, "amount": 6*s - 1}),
		"a database crash well before": all(fault(-50*s, map[string]any{"kind": "crash", "node": "db"}), node(-50*s, "db", "crash"),
			fault(-41*s, map[string]any{"kind": "restart", "node": "db"}), node(-41*s, "db", "restart")),
		"a database drift ended before": all(fault(-50*s, map[string]any{"kind": "drift", "node": "db", "rate": 1000}),
			fault(-41*s, map[string]any{"kind": "drift", "node": "db", "rate": 0})),
		"a database drift healed before": all(fault(-50*s, map[string]any{"kind": "drift", "node": "db", "rate": 1000}),
			fault(-41*s, map[string]any{"kind": "heal-all"})),
		"a partition healed before": all(fault(-50*s, map[string]any{"kind": "partition", "groups": [][]string{{"home-1", "arbiter-1"}, {"db"}}}),
			fault(-41*s, map[string]any{"kind": "heal"})),
		"a fault after the fate was sealed": fault(100*s+6*s/10+1, map[string]any{"kind": "crash", "node": "db"}),
		"an arming of a pause":              fault(40*s, map[string]any{"kind": "pause-yield", "node": "home-1", "count": 3, "for": 5 * s}),
		// What the grace covers, around the restart.
		"a fault within a lease before":              fault(20*s-60*s, map[string]any{"kind": "break", "node": "db", "peer": "arbiter-1"}),
		"a burst that lasts into the window":         fault(-50*s, map[string]any{"kind": "stall", "node": "db", "peer": "arbiter-1", "for": 10 * s}),
		"a burst released into the window":           fault(-50*s, map[string]any{"kind": "stall", "node": "db", "peer": "arbiter-1", "for": 4 * s, "amount": 6 * s}),
		"a database down until the window":           all(node(-50*s, "db", "crash"), node(-40*s, "db", "restart")),
		"a database down for good":                   node(-50*s, "db", "crash"),
		"a partition healed in the window":           all(fault(-50*s, map[string]any{"kind": "partition", "groups": [][]string{{"home-1", "arbiter-1"}, {"db"}}}), fault(-40*s, map[string]any{"kind": "heal"})),
		"a fault at the instant the fate was sealed": fault(100*s+6*s/10, map[string]any{"kind": "crash", "node": "db"}),
		"a standing cut, healed late":                all(fault(-100*s, map[string]any{"kind": "cut", "node": "db", "peer": "arbiter-1"}), fault(-39*s, map[string]any{"kind": "heal"})),
	} {
		cases["an arbiter restart, "+name] = all(restarted, mid)
	}
	for name, mid := range cases {
		v := verdictOf(t, thrownAway(mid).run(t), MA2)
		assert.False(t, v.OK, "%s: %s", name, v)
		assert.Equal(t, "submission 101: home-1's judging under lease A was thrown away although its worker stayed healthy and only what the grace covers happened around it (an arbiter's restart, freeze or clock fault, the database out of reach: A-S2, A-S7 and scenario 7 promise none)", v.Message, name)
		assert.Equal(t, []uint64{3, 5}, v.Events, "%s: the grant (not its heartbeat) and the judging", name)
	}
}

func TestUnpromisedWasteMustPassMA2(t *testing.T) {
	// No arbiter trouble while the lease lived: neither A-S2 nor A-S7.
	for name, mid := range map[string]func(b *h){
		"nothing at all":          func(*h) {},
		"another worker's faults": all(node(40*s, "home-2", "crash"), fault(41*s, map[string]any{"kind": "pause", "node": "prod-1"})),
		"an arbiter's drift ended before the grant": all(fault(-30*s, map[string]any{"kind": "drift", "node": "arbiter-1", "rate": 100000}),
			fault(20*s-1, map[string]any{"kind": "drift", "node": "arbiter-1", "rate": 0})),
		"an arbiter back before the grant":   all(node(-30*s, "arbiter-1", "crash"), node(20*s-1, "arbiter-1", "restart")),
		"an arbiter's jump before the grant": fault(20*s-1, map[string]any{"kind": "jump", "node": "arbiter-1", "amount": s}),
		"an arbiter's jump after the fate":   fault(100*s+6*s/10+1, map[string]any{"kind": "jump", "node": "arbiter-1", "amount": s}),
		"an arbiter's drift of rate 0":       fault(40*s, map[string]any{"kind": "drift", "node": "arbiter-1", "rate": 0}),
		"another node's clock jump":          fault(40*s, map[string]any{"kind": "jump", "node": "home-2", "amount": s}),
		"an arbiter's rejudge":               fault(40*s, map[string]any{"kind": "command", "node": "arbiter-1", "point": "rejudge", "arg": "102"}),
		"a database's clock jump":            fault(40*s, map[string]any{"kind": "jump", "node": "db", "amount": 100 * s}),
	} {
		v := verdictOf(t, thrownAway(mid).run(t), MA2)
		assert.Equal(t, checker.Pass(MA2), v, name)
	}
	// An arbiter restart, and another fault around the lease.
	for name, mid := range map[string]func(b *h){
		"a database's clock jump":       fault(40*s, map[string]any{"kind": "jump", "node": "db", "amount": 100 * s}),
		"its own clock drift":           fault(40*s, map[string]any{"kind": "drift", "node": "home-1", "rate": 1000}),
		"an arbiter stalled":            fault(40*s, map[string]any{"kind": "command", "node": "arbiter-1", "point": "stall", "arg": "20s"}),
		"a stall that began early":      fault(-50*s, map[string]any{"kind": "command", "node": "arbiter-1", "point": "stall", "arg": "20s"}),
		"a cut on every link":           fault(40*s, map[string]any{"kind": "loss", "for": 5 * s}),
		"a drift of the database":       fault(-10*s, map[string]any{"kind": "drift", "node": "db", "rate": 1000}),
		"a database drift that goes on": all(fault(-50*s, map[string]any{"kind": "drift", "node": "db", "rate": 1000}), fault(-45*s, map[string]any{"kind": "drift", "node": "arbiter-1", "rate": 0})),
		// The worker's own failure: not a waste at all.
		"its worker paused":  all(fault(40*s, map[string]any{"kind": "pause", "node": "home-1"}), fault(60*s, map[string]any{"kind": "resume", "node": "home-1"})),
		"its worker cut off": fault(40*s, map[string]any{"kind": "partition", "groups": [][]string{{"home-1"}, {"arbiter-1", "db"}}}),
	} {
		v := verdictOf(t, thrownAway(all(restarted, mid)).run(t), MA2)
		assert.True(t, v.OK, "%s: %s", name, v)
	}

	// The window ends with the judging's own result's answer, not
	// another's (another submission's, token's or worker's, answered
	// after a database crash).
	b0 := thrownAway(func(b *h) {
		restarted(b)
		for _, o := range []struct {
			worker string
			sub    int64
			token  string
		}{{"home-2", 101, "A"}, {"home-1", 102, "A"}, {"home-1", 101, "B"}} {
			b.add(o.worker, hist.KindResult, hist.Result{Worker: o.worker, Sub: o.sub, Token: o.token, Verdict: "AC", Phase: hist.ResultSaved, Durable: true})
		}
	})
	b0.on(120 * s).fault(map[string]any{"kind": "pause", "node": "home-1"})
	b0.on(121 * s).fault(map[string]any{"kind": "resume", "node": "home-1"})
	for _, o := range []struct {
		worker string
		sub    int64
		token  string
	}{{"home-2", 101, "A"}, {"home-1", 102, "A"}, {"home-1", 101, "B"}} {
		b0.on(130*s).add(o.worker, hist.KindResult, hist.Result{Worker: o.worker, Sub: o.sub, Token: o.token, Verdict: "AC", Phase: hist.ResultAnswered, Code: 200})
	}
	assert.False(t, verdictOf(t, b0.run(t), MA2).OK, "its own result answered before its worker paused")

	// A result never answered: the window lasts to the end of the run.
	b := thrownAway(restarted)
	b.evs = b.evs[:len(b.evs)-3]
	b.on(150 * s).fault(map[string]any{"kind": "pause", "node": "home-1"})
	b.on(200*s).add("db", "state", hist.State{What: "idle"})
	assert.True(t, verdictOf(t, b.run(t), MA2).OK, "its worker paused before the result's answer")
	b.evs = b.evs[:len(b.evs)-2]
	b.on(200*s).add("db", "state", hist.State{What: "idle"})
	assert.False(t, verdictOf(t, b.run(t), MA2).OK, "nothing until the end")

	// A legacy worker's judging: no lease, no grace.
	b = &h{}
	b.on(10 * s).commit(ins("submissions", sub(101, "pending", "", 0, "")))
	b.on(20*s).move(sub(101, "pending", "", 0, ""), sub(101, "judging", "", 0, "home-2"))
	b.judge("home-2", 101, "", hist.JudgeStart)
	b.judge("home-2", 101, "", hist.JudgeEnd)
	assert.True(t, verdictOf(t, b.run(t), MA2).OK)
}

// TestWastePromisedByTheDesignMA2: the promise needs one arbiter process,
// the source's grace, and a grace longer than a worker's longest silence
// (max(heartbeat 20 s, backoff cap 30 s) + request timeout 5 s = 35 s).
func TestWastePromisedByTheDesignMA2(t *testing.T) {
	b := thrownAway(restarted)
	for set, why := range map[string]string{
		`"confirm_aware_grace":true`: "not promised by this design: confirm-aware grace gives an unconfirmed lease only the unconfirmed lease again",
		`"grace":34999999999`:        "not promised by this design: grace 34.999999999s is shorter than a worker's longest silence, 35s",
		`"standby_arbiters":1`:       "not promised by this design: 2 arbiter processes: a second arbiter is A-S6, where the source promises only worse scheduling",
		`"arbiters":2`:               "not promised by this design: 2 arbiter processes: a second arbiter is A-S6, where the source promises only worse scheduling",
		`"heartbeat":55000000000`:    "not promised by this design: lease 1m0s is not longer than a heartbeat interval and a request timeout, 1m0s",
	} {
		v := verdictOf(t, b.runWith(t, set), MA2)
		assert.True(t, v.OK, set)
		assert.Equal(t, why, v.Message, set)
	}
	for _, set := range []string{`"grace":35000000000`, `"arbiters":1`, `"backoff_cap":20000000000,"grace":25000000000`} {
		assert.False(t, verdictOf(t, b.runWith(t, set), MA2).OK, set)
	}
}

// MA2 for a direct-mode worker (A-S9's old scheme, or a worker switched
// back to it): its row has no lease, and nothing may take it while the
// worker stays healthy. home-1 claims 101 directly at 20 s and judges it
// to 100 s; taken back meanwhile (the source's grace gave the lease-less
// row an expiry), its result is refused, and it claims and judges 101
// again, whose result is accepted: the first judging was thrown away,
// though a result of home-1's with no token was accepted.
func TestDirectJudgingThrownAwayMA2(t *testing.T) {
	build := func(takenBack bool) *h {
		b := &h{}
		b.on(10 * s).commit(ins("submissions", sub(101, "pending", "", 0, "")))
		b.on(20*s).move(sub(101, "pending", "", 0, ""), sub(101, "judging", "", 0, "home-1"))
		b.on(21*s).judge("home-1", 101, "", hist.JudgeStart)
		if takenBack {
			b.on(90*s).move(sub(101, "judging", "", 0, "home-1"), sub(101, "pending", "", 0, ""))
			b.on(100*s).judge("home-1", 101, "", hist.JudgeEnd)
			b.on(101*s).move(sub(101, "pending", "", 0, ""), sub(101, "judging", "", 0, "home-1"))
			b.on(102*s).judge("home-1", 101, "", hist.JudgeStart)
			b.on(180*s).judge("home-1", 101, "", hist.JudgeEnd)
		} else {
			b.on(100*s).judge("home-1", 101, "", hist.JudgeEnd)
		}
		b.on(181*s).commit(upd("submissions", sub(101, "judging", "", 0, "home-1"), sub(101, "AC", "", 0, "home-1")), ins("submission_judgings", judging(101, "", 0, "home-1", "AC", 1)))
		b.on(200*s).add("db", "state", hist.State{What: "idle"})
		return b
	}
	v := verdictOf(t, build(true).run(t), MA2)
	assert.False(t, v.OK, "%s", v)
	assert.Contains(t, v.Message, "submission 101: home-1 claimed it directly (no lease) and its judging was thrown away")
	assert.Equal(t, 1, Measure(build(true).run(t)).Wasted)
	v = verdictOf(t, build(false).run(t), MA2)
	assert.True(t, v.OK, "%s", v)
	assert.Equal(t, 0, Measure(build(false).run(t)).Wasted)
}
