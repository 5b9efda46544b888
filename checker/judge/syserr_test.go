package judge

import (
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/traces/hist"
)

// MA3 as a property: a system_error after max_attempts (3) leases lost to
// genuine worker failures passes; one lost any other way fails the run.

// lost builds submission 101's three leases (tokens A1, A2, A3, granted to
// worker_id home-1 at 100 s, 200 s, 300 s and reclaimed 60 s after each
// grant, the third to system_error); before(i) writes what happens before
// the i-th grant (a claim in flight), after(i) what happens while it is
// held. The run ends at end (0: at the last commit).
func lost(before, after func(b *h, i int, tok string), end int64) *h {
	b := &h{}
	b.on(s).commit(ins("submissions", sub(101, "pending", "", 0, "")))
	prev := sub(101, "pending", "", 0, "")
	for i := 1; i <= 3; i++ {
		tok := fmt.Sprintf("A%d", i)
		at := int64(i) * 100 * s
		b.on(at - 5*s)
		before(b, i, tok)
		cur := sub(101, "judging", tok, int64(i), "home-1")
		b.on(at).move(prev, cur)
		after(b, i, tok)
		next := sub(101, "pending", "", int64(i), "")
		if i == 3 {
			next = sub(101, "system_error", "", int64(i), "")
		}
		b.on(at+60*s).move(cur, next)
		prev = next
	}
	if end > 0 {
		b.on(end).add("db", "state", hist.State{What: "idle"})
	}
	return b
}

// claim is home-1's claim for the i-th lease, called before the grant.
func claim(b *h, i int, _ string) {
	b.call(fmt.Sprintf("c%d", i), "home-1", "claim", 0, "", 0, fmt.Sprintf("r%d", i))
}

// answered is the claim's answer, and the judging's start, after the grant.
func answered(b *h, i int, tok string) {
	b.ret(fmt.Sprintf("c%d", i), "home-1", 200, 101, tok, int64(i))
	b.judge("home-1", 101, tok, hist.JudgeStart)
}

func nothing(*h, int, string) {}

func ma3Of(t *testing.T, b *h) (ok bool, msg string) {
	t.Helper()
	v := verdictOf(t, b.run(t), MA3)
	return v.OK, v.Message
}

func TestFalseSystemErrorsMustFailMA3(t *testing.T) {
	// Seed 1960's shape: each lease is dead on arrival (the arbiter stalled
	// inside the claim transaction); the healthy worker's first heartbeat
	// is refused and it drops the judging.
	doa := lost(claim, func(b *h, i int, tok string) {
		answered(b, i, tok)
		b.call(fmt.Sprintf("h%d", i), "home-1", "heartbeat", 101, tok, 0, "")
		b.ret(fmt.Sprintf("h%d", i), "home-1", 410, 101, tok, 0)
		b.judge("home-1", 101, tok, hist.JudgeAbandon)
	}, 0)
	v := verdictOf(t, doa.run(t), MA3)
	assert.False(t, v.OK)
	assert.Equal(t, "1 system_error verdicts without 3 genuine worker failures (first: submission 101, 0 of its 3 leases since the last rejudge lost to a worker failure)", v.Message)
	assert.Len(t, v.Events, 4, "the three grants and the system_error")

	// The arbiter crashed after each grant's COMMIT, before its reply: the
	// lease nobody heard of is lost by the arbiter, not by the worker.
	orphans := lost(claim, func(b *h, i int, _ string) {
		b.add("arbiter-1", "crash", nil)
		b.add("arbiter-1", "restart", nil)
	}, 0)
	ok, _ := ma3Of(t, orphans)
	assert.False(t, ok, "orphans of the arbiter's crashes")

	// Two leases lost to worker crashes, the third to a healthy worker.
	two := lost(claim, func(b *h, i int, tok string) {
		answered(b, i, tok)
		if i < 3 {
			b.add("home-1", "crash", nil)
			b.add("home-1", "restart", nil)
		}
	}, 0)
	ok, msg := ma3Of(t, two)
	assert.False(t, ok)
	assert.Contains(t, msg, "2 of its 3 leases")

	// Another process of the worker_id, its own claim in flight, crashed
	// while home-1 held the lease: not the lease's failure.
	sandbox := lost(func(b *h, i int, tok string) {
		claim(b, i, tok)
		b.as(fmt.Sprintf("d%d", i), "home-1.2", "home-1", "claim", 0, "", 0, fmt.Sprintf("s%d", i), "")
	}, func(b *h, i int, tok string) {
		answered(b, i, tok)
		b.add("home-1.2", "crash", nil)
		b.add("home-1.2", "restart", nil)
	}, 0)
	ok, _ = ma3Of(t, sandbox)
	assert.False(t, ok, "a sandbox's crash")

	// Crashes that do not count: the worker's after the reclaim; another
	// process of its worker_id (a sandbox) while it held the lease; an
	// arbiter's.
	for name, fail := range map[string]func(b *h){
		"after the reclaim": func(b *h) {
			at := b.t
			b.on(at+61*s).add("home-1", "crash", nil)
			b.on(at+62*s).add("home-1", "restart", nil)
		},
		"another process":           func(b *h) { b.add("home-1.2", "crash", nil) },
		"an arbiter, while judging": func(b *h) { b.add("arbiter-1", "crash", nil) },
		// Clocks that cost the worker nothing: its own running fast (its
		// heartbeats come early), the arbiter's running slow, its own slow
		// drift ended before the grant.
		"its clock fast": func(b *h) { b.fault(map[string]any{"kind": "drift", "node": "home-1", "rate": 200_000}) },
		"the arbiter's clock slow": func(b *h) {
			b.fault(map[string]any{"kind": "drift", "node": "arbiter-1", "rate": -200_000})
		},
		"its slow clock before": func(b *h) {
			at := b.t
			b.on(at - 20*s).fault(map[string]any{"kind": "drift", "node": "home-1", "rate": -200_000})
			b.on(at - 10*s).fault(map[string]any{"kind": "drift", "node": "home-1", "rate": 0})
			b.on(at)
		},
	} {
		b := lost(claim, func(b *h, i int, tok string) {
			answered(b, i, tok)
			fail(b)
		}, 0)
		ok, _ := ma3Of(t, b)
		assert.False(t, ok, name)
	}
	// The worker's clock ran slow before each claim, and was right again
	// by the grant.
	slowBefore := lost(func(b *h, i int, tok string) {
		b.fault(map[string]any{"kind": "drift", "node": "home-1", "rate": -200_000})
		b.fault(map[string]any{"kind": "drift", "node": "home-1", "rate": 0})
		claim(b, i, tok)
	}, answered, 0)
	ok, _ = ma3Of(t, slowBefore)
	assert.False(t, ok, "a slow clock healed before the grant")

	// A judging that never ended is no evidence while the run ended
	// before judge_max (150 s) after it started.
	hung := lost(claim, answered, 300*s+s/5+150*s-1) // the last judging started at 300.2 s
	ok, _ = ma3Of(t, hung)
	assert.False(t, ok, "the last judging could still be going on")
}

func TestTrueSystemErrorsMustPassMA3(t *testing.T) {
	cases := map[string]*h{
		// The worker crashed while it held each lease, before it judged.
		"crashed holding": lost(claim, func(b *h, i int, tok string) {
			b.ret(fmt.Sprintf("c%d", i), "home-1", 200, 101, tok, int64(i))
			b.add("home-1", "crash", nil)
			b.add("home-1", "restart", nil)
		}, 0),
		// Paused during each judging.
		"paused": lost(claim, func(b *h, i int, tok string) {
			answered(b, i, tok)
			b.fault(map[string]any{"kind": "pause", "node": "home-1"})
			b.fault(map[string]any{"kind": "resume", "node": "home-1"})
		}, 0),
		// Its links cut, stalled, or one of its messages' fates forced.
		"links": lost(claim, func(b *h, i int, tok string) {
			answered(b, i, tok)
			b.fault([]map[string]any{
				{"kind": "cut", "node": "home-1", "peer": "arbiter-1", "for": 5 * s},
				{"kind": "stall", "node": "arbiter-1", "peer": "home-1", "for": 5 * s},
				{"kind": "message-fate", "node": "home-1", "peer": "arbiter-1", "arg": "drop"},
			}[i-1])
		}, 0),
		// The last lease's links delayed (up to 20 s late, for 30 s); the
		// run ends before that judging could have ended on its own, so
		// only the delay excuses it (the first two judgings died).
		"delayed": lost(claim, func(b *h, i int, tok string) {
			answered(b, i, tok)
			if i == 3 {
				b.fault(map[string]any{"kind": "delay", "node": "home-1", "peer": "arbiter-1", "for": 30 * s, "amount": 20 * s})
			}
		}, 300*s+s/5+150*s-1),
		// A poison submission: each judging crashes its worker (a crash of
		// the worker's node, with a note).
		"poison": lost(claim, func(b *h, i int, tok string) {
			answered(b, i, tok)
			b.text("home-1", "note", "poison: the sandbox died judging 101")
			b.add("home-1", "crash", nil)
			b.add("home-1", "restart", nil)
		}, 0),
		// Leases nobody heard of: the claim in flight when each was
		// granted, its worker crashed (A-S1's orphan) or its link stalled.
		"orphans": lost(func(b *h, i int, tok string) {
			claim(b, i, tok)
			if i == 2 {
				b.fault(map[string]any{"kind": "stall", "node": "arbiter-1", "peer": "home-1", "for": 10 * s})
			}
		}, func(b *h, i int, _ string) {
			if i != 2 {
				b.add("home-1", "crash", nil)
			}
		}, 0),
		// Judgings that never ended although the run went on judge_max
		// after them: their worker died.
		"died": lost(claim, answered, 300*s+s/5+150*s),
		// The sandbox process home-1.2 of worker_id home-1 held the leases
		// and crashed.
		"sandbox": lost(func(b *h, i int, _ string) {
			b.as(fmt.Sprintf("c%d", i), "home-1.2", "home-1", "claim", 0, "", 0, fmt.Sprintf("r%d", i), "")
		}, func(b *h, i int, tok string) {
			b.add("home-1.2", hist.KindReturn, hist.Return{ID: fmt.Sprintf("c%d", i), Code: 200, Sub: 101, Token: tok, Gen: int64(i)})
			b.add("home-1.2", "crash", nil)
		}, 0),
		// Each claim held up by a stall of its worker's link that ended
		// before the grant: the answer came too late for the lease.
		"claims held up": lost(func(b *h, i int, tok string) {
			claim(b, i, tok)
			b.fault(map[string]any{"kind": "stall", "node": "arbiter-1", "peer": "home-1", "for": 3 * s})
		}, func(b *h, i int, tok string) {
			b.on(b.t + 15*s)
			answered(b, i, tok)
		}, 0),
		// No calls in the history: the worker_id's node failed.
		"no calls": lost(nothing, func(b *h, _ int, _ string) { b.add("home-1", "crash", nil) }, 0),
		// The worker's clock ran 20% slow while it held each lease: its
		// heartbeats came late (a heartbeat of 30 s every 37.5 s against a
		// lease of 37 s), its node's fault.
		"slow clock": lost(claim, func(b *h, i int, tok string) {
			answered(b, i, tok)
			b.fault(map[string]any{"kind": "drift", "node": "home-1", "rate": -200_000})
			b.fault(map[string]any{"kind": "drift", "node": "home-1", "rate": 0})
		}, 0),
	}
	for name, b := range cases {
		ok, msg := ma3Of(t, b)
		assert.True(t, ok, "%s: %s", name, msg)
	}
}

// TestLegacyLeasesMA3: a legacy worker's claim (no token) is one of the
// attempts: lost when the process that judged it failed.
func TestLegacyLeasesMA3(t *testing.T) {
	legacy := func(crash bool) *h {
		b := &h{}
		b.on(s).commit(ins("submissions", sub(101, "pending", "", 0, "")))
		prev := sub(101, "pending", "", 0, "")
		gen := int64(0)
		for i := 1; i <= 3; i++ {
			at := int64(i) * 100 * s
			w, tok := "home-1", fmt.Sprintf("A%d", i)
			if i == 2 {
				w, tok = "home-2", "" // a legacy claim: no token, no new generation
			} else {
				gen++
			}
			cur := sub(101, "judging", tok, gen, w)
			b.on(at).move(prev, cur)
			b.judge(w, 101, tok, hist.JudgeStart)
			if i != 2 || crash {
				b.add(w, "crash", nil)
				b.add(w, "restart", nil)
			} else {
				b.judge(w, 101, tok, hist.JudgeEnd) // its result refused: the worker was fine
			}
			next := sub(101, "pending", "", gen, "")
			if i == 3 {
				next = sub(101, "system_error", "", gen, "")
			}
			b.on(at+60*s).move(cur, next)
			prev = next
		}
		return b
	}
	ok, msg := ma3Of(t, legacy(true))
	assert.True(t, ok, msg)
	ok, msg = ma3Of(t, legacy(false))
	assert.False(t, ok)
	assert.Contains(t, msg, "2 of its 3 leases")
}

// TestSystemErrorsCountFromTheRejudgeMA3: after a rejudge the attempts
// count again; failures before it are not the new system_error's.
func TestSystemErrorsCountFromTheRejudgeMA3(t *testing.T) {
	b := lost(claim, func(b *h, i int, tok string) {
		answered(b, i, tok)
		b.add("home-1", "crash", nil)
		b.add("home-1", "restart", nil)
	}, 0)
	ok, _ := ma3Of(t, b)
	assert.True(t, ok)
	b.on(400*s).move(sub(101, "system_error", "", 3, ""), sub(101, "pending", "", 4, ""))
	b.on(410*s).move(sub(101, "pending", "", 4, ""), sub(101, "judging", "B1", 5, "home-1"))
	b.on(470*s).move(sub(101, "judging", "B1", 5, "home-1"), sub(101, "system_error", "", 5, ""))
	r := b.run(t)
	v := verdictOf(t, r, MA3)
	assert.False(t, v.OK)
	assert.Contains(t, v.Message, "0 of its 1 leases since the last rejudge")
	m := Measure(r)
	assert.Equal(t, 2, m.SystemErrors)
	assert.Equal(t, 1, m.FalseSystemErrors)
}

// TestInstantNetFaults: a break, and a message's forced fate, touch a
// node at their instant (a delayed message until it arrives), not until
// the next heal as a cut without a length does: seed 1960's break of
// db->home-1, 18 s before home-1's lease, is no failure of that lease. A
// delay burst touches it while its messages may be late.
func TestInstantNetFaults(t *testing.T) {
	b := &h{}
	b.on(10 * s).fault(map[string]any{"kind": "break", "node": "db", "peer": "home-1"})
	b.on(20 * s).fault(map[string]any{"kind": "message-fate", "node": "home-2", "peer": "arbiter-1", "arg": "delay", "amount": 5 * s})
	b.on(30 * s).fault(map[string]any{"kind": "cut", "node": "home-3", "peer": "arbiter-1"})
	b.on(40 * s).fault(map[string]any{"kind": "delay", "node": "home-4", "peer": "arbiter-1", "for": 10 * s, "amount": 5 * s})
	b.on(100 * s).fault(map[string]any{"kind": "heal"})
	r := b.run(t)
	for _, c := range []struct {
		node string
		a, b int64
		want bool
	}{
		{"home-1", 10 * s, 10 * s, true}, {"home-1", 10*s + 1, 50 * s, false}, {"home-1", 0, 10*s - 1, false},
		{"home-2", 25 * s, 30 * s, true}, {"home-2", 25*s + 1, 30 * s, false},
		{"home-3", 99 * s, 99 * s, true}, {"home-3", 100 * s, 120 * s, true}, {"home-3", 100*s + 1, 120 * s, false},
		// A delay burst: from its start until its last message may arrive
		// (For, then Amount), no longer.
		{"home-4", 0, 40 * s, true}, {"home-4", 55 * s, 80 * s, true}, {"home-4", 55*s + 1, 80 * s, false}, {"home-4", 0, 40*s - 1, false},
	} {
		assert.Equal(t, c.want, r.netFaulted(c.node, c.a, c.b), "%s in [%v, %v]", c.node, c.a, c.b)
	}
}

// TestDatabaseClockAheadMA3: leases lost while the database's own clock
// ran ahead (a jump forward within them, a fast drift over them) are not
// judged; the arbiter's clock, a jump back, a jump before the first lease
// or a drift healed before it excuse nothing.
func TestDatabaseClockAheadMA3(t *testing.T) {
	doa := func(fault func(b *h)) *h {
		b := &h{}
		b.on(50 * s)
		fault(b)
		b.evs = append(lost(claim, answered, 0).evs, b.evs...)
		sort.SliceStable(b.evs, func(i, j int) bool { return b.evs[i].T < b.evs[j].T })
		for i := range b.evs {
			b.evs[i].Seq = uint64(i + 1)
		}
		return b
	}
	at := func(t int64, f map[string]any) func(b *h) { return func(b *h) { b.on(t).fault(f) } }
	for name, c := range map[string]struct {
		fault   func(b *h)
		excused bool
	}{
		"db jumps ahead":           {at(150*s, map[string]any{"kind": "jump", "node": "db", "amount": 100 * s}), true},
		"db jumps at the grant":    {at(100*s, map[string]any{"kind": "jump", "node": "db", "amount": s}), true},
		"db jumps at the end":      {at(360*s, map[string]any{"kind": "jump", "node": "db", "amount": s}), true},
		"db drifts fast":           {at(90*s, map[string]any{"kind": "drift", "node": "db", "rate": 100000}), true},
		"db jumps back":            {at(150*s, map[string]any{"kind": "jump", "node": "db", "amount": -100 * s}), false},
		"db jumped before":         {at(100*s-1, map[string]any{"kind": "jump", "node": "db", "amount": 100 * s}), false},
		"db jumps after":           {at(360*s+1, map[string]any{"kind": "jump", "node": "db", "amount": 100 * s}), false},
		"the arbiter jumps":        {at(150*s, map[string]any{"kind": "jump", "node": "arbiter-1", "amount": 100 * s}), false},
		"db drifts slow":           {at(90*s, map[string]any{"kind": "drift", "node": "db", "rate": -100000}), false},
		"the arbiter drifts fast":  {at(90*s, map[string]any{"kind": "drift", "node": "arbiter-1", "rate": 100000}), false},
		"db drifts after the last": {at(360*s+1, map[string]any{"kind": "drift", "node": "db", "rate": 100000}), false},
		"db drift healed before": {func(b *h) {
			b.on(50 * s).fault(map[string]any{"kind": "drift", "node": "db", "rate": 100000})
			b.on(99 * s).fault(map[string]any{"kind": "heal-all"})
		}, false},
		"db drift healed at the first grant": {func(b *h) {
			b.on(50 * s).fault(map[string]any{"kind": "drift", "node": "db", "rate": 100000})
			b.on(100 * s).fault(map[string]any{"kind": "heal-all"})
		}, true},
		"db drift, another node's drift between": {func(b *h) {
			b.on(50 * s).fault(map[string]any{"kind": "drift", "node": "db", "rate": 100000})
			b.on(60 * s).fault(map[string]any{"kind": "drift", "node": "arbiter-1", "rate": 0})
		}, true},
		"db drift ended before": {func(b *h) {
			b.on(50 * s).fault(map[string]any{"kind": "drift", "node": "db", "rate": 100000})
			b.on(60 * s).fault(map[string]any{"kind": "drift", "node": "db", "rate": 0})
			b.on(70 * s).fault(map[string]any{"kind": "drift", "node": "arbiter-1", "rate": 5})
		}, false},
	} {
		r := doa(c.fault).run(t)
		v := verdictOf(t, r, MA3)
		assert.Equal(t, c.excused, v.OK, "%s: %s", name, v)
		if c.excused {
			assert.Equal(t, "1 system_error verdicts not judged: the database's clock ran ahead while their leases lived", v.Message, name)
			assert.Equal(t, 0, Measure(r).FalseSystemErrors, name)
		}
	}
	// A system_error without a lease at all is no lease lost to the clock.
	b := &h{}
	b.on(10 * s).commit(ins("submissions", sub(101, "pending", "", 0, "")))
	b.on(20 * s).fault(map[string]any{"kind": "jump", "node": "db", "amount": 100 * s})
	b.on(30*s).move(sub(101, "pending", "", 0, ""), sub(101, "system_error", "", 0, ""))
	v := verdictOf(t, b.run(t), MA3)
	assert.Contains(t, v.Message, "0 of its 0 leases")
}

// TestLeaseLivesMA3: a lease lives from its grant to the commit that takes
// it out of judging, through its heartbeats' rewrites and up to a lease
// handed straight to another token: a crash after its last heartbeat but
// before its reclaim is in it; a lease's own window, not the next one's,
// is the one looked at.
func TestLeaseLivesMA3(t *testing.T) {
	b := &h{}
	b.on(s).commit(ins("submissions", sub(101, "pending", "", 0, "")))
	prev := sub(101, "pending", "", 0, "")
	for i := 1; i <= 3; i++ {
		at := int64(i) * 100 * s
		tok := fmt.Sprintf("A%d", i)
		cur := sub(101, "judging", tok, int64(i), "home-1")
		b.on(at).move(prev, cur)
		b.judge("home-1", 101, tok, hist.JudgeStart)
		b.on(at+10*s).move(cur, cur) // a heartbeat
		b.on(at+20*s).move(cur, cur)
		b.on(at+50*s).add("home-1", "crash", nil) // after its last heartbeat
		b.on(at+51*s).add("home-1", "restart", nil)
		next := sub(101, "pending", "", int64(i), "")
		if i == 3 {
			next = sub(101, "system_error", "", int64(i), "")
		}
		b.on(at+60*s).move(cur, next)
		prev = next
	}
	ok, msg := ma3Of(t, b)
	assert.True(t, ok, msg)

	// A lease handed to another token without going back to pending
	// (PA2's business) ends the first one there.
	b = &h{}
	b.on(s).commit(ins("submissions", sub(101, "pending", "", 0, "")))
	b.on(100*s).move(sub(101, "pending", "", 0, ""), sub(101, "judging", "A1", 1, "home-1"))
	b.judge("home-1", 101, "A1", hist.JudgeStart)
	b.on(110*s).move(sub(101, "judging", "A1", 1, "home-1"), sub(101, "judging", "B1", 2, "home-2"))
	b.judge("home-2", 101, "B1", hist.JudgeStart)
	b.on(120*s).add("home-1", "crash", nil) // A1 had ended: not its failure
	b.on(121*s).add("home-1", "restart", nil)
	b.on(130*s).add("home-2", "crash", nil)
	b.on(131*s).add("home-2", "restart", nil)
	b.on(170*s).move(sub(101, "judging", "B1", 2, "home-2"), sub(101, "system_error", "", 2, ""))
	v := verdictOf(t, b.run(t), MA3)
	assert.Contains(t, v.Message, "1 of its 2 leases")
}

// TestClaimsInFlightMA3: a lease nobody heard of is its worker's loss
// when a claim of its worker_id was in flight at the grant (invoked by
// then, answered from then on, or never) and its process failed; a claim
// of another worker_id, one invoked after the grant, and one answered
// before it are not the lease's.
func TestClaimsInFlightMA3(t *testing.T) {
	orphans := func(claimer, wid string, invoke, ret int64) *h {
		return lost(nothing, func(b *h, i int, _ string) {
			at := int64(i) * 100 * s
			id := fmt.Sprintf("c%d", i)
			b.on(at+invoke).add(claimer, hist.KindCall, hist.Call{ID: id, Client: claimer, WorkerID: wid, Op: "claim", RequestID: id, Episode: id})
			if ret != 0 {
				b.on(at+ret).add(claimer, hist.KindReturn, hist.Return{ID: id, Code: 204})
			}
			b.on(at+ret+s).add(claimer, "crash", nil)
			b.on(at+ret+2*s).add(claimer, "restart", nil)
		}, 0)
	}
	for name, c := range map[string]struct {
		b    *h
		lost bool
	}{
		"invoked before, never answered":    {orphans("home-1", "", -5*s, 0), true},
		"invoked at the grant":              {orphans("home-1", "", 0, 0), true},
		"answered at the grant":             {orphans("home-1", "", -5*s, 0+1), true},
		"a sandbox of the worker_id":        {orphans("home-1.2", "home-1", -5*s, 0), true},
		"another worker_id's claim":         {orphans("home-2", "", -5*s, 0), false},
		"invoked after the grant":           {orphans("home-1", "", 1, 0), false},
		"answered (204) before the grant":   {orphans("home-1", "", -5*s, -1), false},
		"another worker_id's sandbox claim": {orphans("home-2.2", "home-2", -5*s, 0), false},
	} {
		ok, msg := ma3Of(t, c.b)
		assert.Equal(t, c.lost, ok, "%s: %s", name, msg)
	}
}

// TestLegacyJudgingsInTheirLeaseMA3: a legacy claim's loss is read from
// the judgings of its own lease, not an earlier one's.
func TestLegacyJudgingsInTheirLeaseMA3(t *testing.T) {
	b := &h{}
	b.on(s).commit(ins("submissions", sub(101, "pending", "", 0, "")))
	// 1: a legacy claim whose judging died with its crashed worker.
	b.on(100*s).move(sub(101, "pending", "", 0, ""), sub(101, "judging", "", 0, "home-2"))
	b.judge("home-2", 101, "", hist.JudgeStart)
	b.add("home-2", "crash", nil)
	b.add("home-2", "restart", nil)
	b.on(160*s).move(sub(101, "judging", "", 0, "home-2"), sub(101, "pending", "", 0, ""))
	// 2: another legacy claim, judged to the end by a healthy worker.
	b.on(200*s).move(sub(101, "pending", "", 0, ""), sub(101, "judging", "", 0, "home-2"))
	b.judge("home-2", 101, "", hist.JudgeStart)
	b.judge("home-2", 101, "", hist.JudgeEnd)
	b.on(260*s).move(sub(101, "judging", "", 0, "home-2"), sub(101, "pending", "", 0, ""))
	// 3: a lease whose worker crashed.
	b.on(300*s).move(sub(101, "pending", "", 0, ""), sub(101, "judging", "A3", 1, "home-1"))
	b.judge("home-1", 101, "A3", hist.JudgeStart)
	b.add("home-1", "crash", nil)
	b.add("home-1", "restart", nil)
	b.on(360*s).move(sub(101, "judging", "A3", 1, "home-1"), sub(101, "system_error", "", 1, ""))
	b.on(1000*s).add("db", "state", hist.State{What: "idle"}) // the first judging died long ago
	ok, msg := ma3Of(t, b)
	assert.False(t, ok)
	assert.Contains(t, msg, "2 of its 3 leases")
}

// TestPassesSayNothingMA3: a run without a false system_error passes
// with no message; one with none at all, too.
func TestPassesSayNothingMA3(t *testing.T) {
	v := verdictOf(t, happy().run(t), MA3)
	assert.Equal(t, checker.Pass(MA3), v)
	v = verdictOf(t, lost(claim, func(b *h, i int, tok string) {
		answered(b, i, tok)
		b.add("home-1", "crash", nil)
		b.add("home-1", "restart", nil)
	}, 0).run(t), MA3)
	assert.Equal(t, checker.Pass(MA3), v)
}

// TestFalseSystemErrorsPromisedByTheDesignMA3: with a grace shorter than
// a worker's longest silence (max(heartbeat 20 s, backoff cap 30 s) +
// request timeout 5 s = 35 s), or a lease no longer than a heartbeat
// interval and a request timeout (25 s), the design itself loses healthy
// workers' leases: MA3 fails as for any design (--unsafe measures that).
func TestFalseSystemErrorsPromisedByTheDesignMA3(t *testing.T) {
	doa := lost(claim, answered, 0)
	// MA3 is judged whatever the design's numbers: a grace shorter than a
	// worker's silence, a lease no longer than a heartbeat and a request
	// timeout (what --unsafe runs) break the promise like any design.
	for _, d := range []string{`"grace":34999999999`, `"grace":35000000000`, `"lease":25000000000`, `"lease":25000000001`} {
		assert.False(t, verdictOf(t, doa.runWith(t, d), MA3).OK, "%s", d)
	}
}

// TestCutOffFromTheDatabase: a partition that leaves a worker with an
// arbiter but not the database cuts it off as surely as one that leaves it
// with no arbiter (found in the wide world, seed 78: home-1.2's heartbeats
// reached only arbiter-2, which could not reach the database); one that
// leaves it with an arbiter and the database does not.
func TestCutOffFromTheDatabase(t *testing.T) {
	b := &h{}
	b.commit(ins("submissions", sub(101, "pending", "", 0, ""))) // db is the database
	b.on(10 * s).fault(map[string]any{"kind": "partition", "groups": [][]string{{"arbiter-2", "home-1.2"}, {"db", "arbiter-1", "home-1"}}})
	b.on(20 * s).fault(map[string]any{"kind": "heal"})
	r := b.run(t)
	assert.True(t, r.netFaulted("home-1.2", 15*s, 16*s), "with an arbiter, without the database")
	assert.False(t, r.netFaulted("home-1", 15*s, 16*s), "with an arbiter and the database")
	assert.True(t, r.netFaulted("arbiter-2", 15*s, 16*s))
	assert.False(t, r.netFaulted("prod-1", 15*s, 16*s), "in no group")
}
