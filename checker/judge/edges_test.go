package judge

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fencesim/fencesim/traces/hist"
)

// Must-pass and must-fail histories at the edges of what each property
// promises: one step on either side of a boundary.

// TestVerdictNeedsItsHistoryRowPA1: a verdict written without a judging
// history row in its transaction breaks PA1; a sweep to system_error has
// none and is fine.
func TestVerdictNeedsItsHistoryRowPA1(t *testing.T) {
	b := happy()
	b.evs = b.evs[:7]
	b.move(sub(101, "judging", "A", 1, "home-1"), sub(101, "AC", "A", 1, "home-1"))
	v := verdictOf(t, b.run(t), PA1)
	assert.False(t, v.OK, "a verdict with no history row")
	assert.Contains(t, v.Message, "without a judging-history row")

	b = happy()
	b.evs = b.evs[:7]
	b.move(sub(101, "judging", "A", 1, "home-1"), sub(101, "system_error", "", 1, ""))
	assert.True(t, verdictOf(t, b.run(t), PA1).OK)
}

// TestGenerationsMustRisePA2: a claim, and a rejudge, must raise lease_gen
// (the same generation again is a regression); history seq must grow.
func TestGenerationsMustRisePA2(t *testing.T) {
	b := &h{}
	b.commit(ins("submissions", sub(101, "pending", "", 1, "")))
	b.move(sub(101, "pending", "", 1, ""), sub(101, "judging", "A", 1, "home-1"))
	assert.False(t, NoRegression(b.run(t)).OK, "claimed in the same generation")

	b = happy()
	b.move(sub(101, "AC", "A", 1, "home-1"), sub(101, "pending", "", 1, ""))
	assert.False(t, NoRegression(b.run(t)).OK, "left AC without a new generation")

	rejudged := func(seq int64) *h {
		b := happy()
		b.move(sub(101, "AC", "A", 1, "home-1"), sub(101, "pending", "", 2, ""))
		b.move(sub(101, "pending", "", 2, ""), sub(101, "judging", "B", 3, "home-1"))
		b.commit(ins("submission_judgings", judging(101, "B", 3, "home-1", "WA", seq)), upd("submissions", sub(101, "judging", "B", 3, "home-1"), sub(101, "WA", "B", 3, "home-1")))
		return b
	}
	assert.True(t, NoRegression(rejudged(2).run(t)).OK)
	v := NoRegression(rejudged(1).run(t))
	assert.False(t, v.OK, "history seq 1 again")
	assert.Contains(t, v.Message, "history seq went from 1 to 1")
}

// TestReadsWithinAGenerationPA2: a reader may see a generation move on
// (pending, then judging by a legacy worker, of gen 2) and the same verdict twice; two reads
// that overlap (the second invoked at the instant the first returned) may
// be ordered either way.
func TestReadsWithinAGenerationPA2(t *testing.T) {
	b := happy()
	b.read("r1", 101, 200, "AC", 1)
	b.read("r2", 101, 200, "AC", 1)
	b.move(sub(101, "AC", "A", 1, "home-1"), sub(101, "pending", "", 2, ""))
	b.read("r3", 101, 200, "pending", 2)
	b.move(sub(101, "pending", "", 2, ""), sub(101, "judging", "", 2, "home-2")) // a legacy worker's claim
	b.read("r4", 101, 200, "judging", 2)
	assert.True(t, NoRegression(b.run(t)).OK, "%s", NoRegression(b.run(t)))

	b = happy()
	b.move(sub(101, "AC", "A", 1, "home-1"), sub(101, "pending", "", 2, ""))
	b.call("r1", "web", "read", 101, "", 0, "")
	b.add("web", hist.KindReturn, hist.Return{ID: "r1", Code: 200, Sub: 101, Status: "pending", Gen: 2})
	b.t -= s / 10 // r2 is invoked at the instant r1 returned
	b.call("r2", "web", "read", 101, "", 0, "")
	b.add("web", hist.KindReturn, hist.Return{ID: "r2", Code: 200, Sub: 101, Status: "AC", Gen: 1})
	assert.True(t, NoRegression(b.run(t)).OK, "concurrent reads")
}

// TestClaimAnswersPA4: the same claim answered 200 twice must carry the
// same leases; a refused claim carries none; grants from requests whose
// calls are not in the history are claims of their own.
func TestClaimAnswersPA4(t *testing.T) {
	b := happy()
	b.call("c1b", "home-1", "claim", 0, "", 0, "r1")
	b.ret("c1b", "home-1", 200, 101, "A", 1)
	assert.True(t, verdictOf(t, b.run(t), PA4).OK, "the same lease again")

	b = happy()
	b.call("c1b", "home-1", "claim", 0, "", 0, "r1")
	b.ret("c1b", "home-1", 503, 102, "Z", 1)
	assert.True(t, verdictOf(t, b.run(t), PA4).OK, "a 503 carries no lease")

	b = happy()
	b.call("c1b", "home-1", "claim", 0, "", 0, "r1")
	b.ret("c1b", "home-1", 200, 102, "Z", 1)
	v := verdictOf(t, b.run(t), PA4)
	assert.False(t, v.OK, "the same claim answered with another lease")
	assert.Contains(t, v.Message, "different leases")

	b = &h{}
	for i, req := range []string{"r8", "r9"} {
		id := int64(201 + i)
		tok := string(rune('P' + i))
		b.commit(ins("submissions", sub(id, "pending", "", 0, "")))
		b.commit(upd("submissions", sub(id, "pending", "", 0, ""), sub(id, "judging", tok, 1, "home-1")),
			ins("claims", row{"worker_id": "home-1", "request_id": req, "submission_id": id, "lease_token": tok}))
	}
	assert.True(t, verdictOf(t, b.run(t), PA4).OK, "two requests, two claims")
}

// TestCreditPA6: two first-AC records for one (user, problem) break PA6;
// a user with two first ACs has 20 XP.
func TestCreditPA6(t *testing.T) {
	b := happy()
	b.commit(ins("first_ac", row{"id": 2, "user_id": 1, "problem_id": 1, "submission_id": 101}))
	v := verdictOf(t, b.run(t), PA6)
	assert.False(t, v.OK)
	assert.Contains(t, v.Message, "2 first-AC records")

	two := func(xp int) *h {
		b := happy()
		b.commit(ins("first_ac", row{"id": 2, "user_id": 1, "problem_id": 2, "submission_id": 102}), upd("users", row{"id": 1, "xp": 10}, row{"id": 1, "xp": xp}))
		return b
	}
	assert.True(t, verdictOf(t, two(20).run(t), PA6).OK)
	assert.False(t, verdictOf(t, two(10).run(t), PA6).OK, "the second first AC not credited")
}

// TestSettleTimePA7: a result saved at least settle (2 x backoff cap + 2 x
// request timeout + claim hold = 95 s here) before the end of the run must
// have been answered; one saved later may still be on its way.
func TestSettleTimePA7(t *testing.T) {
	saved := func(end int64) *h {
		b := happy()
		b.on(100*s).add("home-1", hist.KindResult, hist.Result{Worker: "home-1", Sub: 101, Token: "A", Verdict: "AC", Phase: hist.ResultSaved})
		b.on(end).add("db", "state", hist.State{What: "idle"})
		return b
	}
	v := verdictOf(t, saved(195*s).run(t), PA7)
	assert.False(t, v.OK, "saved 95 s before the end, never answered")
	assert.Contains(t, v.Message, "in memory only")
	assert.True(t, verdictOf(t, saved(195*s-1).run(t), PA7).OK, "saved 1 ns less than 95 s before the end")
}

// TestDroppedResultPA7: a saved result is settled only by a 200 (recorded)
// or a 410 (stale); a worker that drops it on a 503 (the database away) or
// a 500 fails PA7, however early it was saved.
func TestDroppedResultPA7(t *testing.T) {
	answered := func(code int) *h {
		b := happy()
		b.on(100*s).add("home-1", hist.KindResult, hist.Result{Worker: "home-1", Sub: 101, Token: "A", Verdict: "AC", Phase: hist.ResultSaved, Durable: true})
		b.on(101*s).add("home-1", hist.KindResult, hist.Result{Worker: "home-1", Sub: 101, Token: "A", Verdict: "AC", Phase: hist.ResultAnswered, Code: code})
		b.on(400*s).add("db", "state", hist.State{What: "idle"})
		return b
	}
	for _, code := range []int{200, 410} {
		assert.True(t, verdictOf(t, answered(code).run(t), PA7).OK, "answered %d", code)
	}
	for _, code := range []int{503, 500, 0} {
		v := verdictOf(t, answered(code).run(t), PA7)
		assert.False(t, v.OK, "answered %d", code)
		assert.Contains(t, v.Message, fmt.Sprintf("was dropped on a %d answer", code))
	}
}

// TestBoundOf: PA8's bound from the design (grace 60 + lease 60 + sweep 5
// + 2 x backoff cap 30 + claim hold 25 + request timeout 5 = 215 s, plus a
// job of judge_max 150 + dispatch 1 + 2 x request timeout 5 + backoff cap
// 30 = 191 s per submission a worker has queued, plus one).
func TestBoundOf(t *testing.T) {
	p, err := ParseParams(design)
	if err != nil {
		t.Fatal(err)
	}
	for subs, want := range map[int]time.Duration{0: 406, 1: 597, 3: 597, 4: 788, 7: 979} {
		assert.Equal(t, want*time.Second, BoundOf(p, subs), "%d submissions, 3 workers", subs)
	}
	p.HomeWorkers, p.ProdWorkers = 0, 0
	assert.Equal(t, 788*time.Second, BoundOf(p, 2), "no workers counts as one")
	p.ProdWorkers = 1
	assert.Equal(t, 979*time.Second, BoundOf(p, 3))
}

// TestLivenessAtTheBoundPA8: a verdict exactly at the bound after healing
// is in time, one nanosecond later is not; a run that ends exactly at the
// bound with a submission undecided (or judging under a lease) is checked
// and fails; one held by a legacy worker is not the arbiter's to reclaim.
func TestLivenessAtTheBoundPA8(t *testing.T) {
	const bound = 597 * s // one submission
	decided := func(after int64) *h {
		b := &h{}
		b.commit(ins("submissions", sub(101, "pending", "", 0, "")))
		b.on(10 * s).fault(map[string]any{"kind": "heal-all"})
		b.on(10*s+after).move(sub(101, "pending", "", 0, ""), sub(101, "AC", "", 0, ""))
		return b
	}
	assert.True(t, verdictOf(t, decided(bound).run(t), PA8).OK)
	assert.False(t, verdictOf(t, decided(bound+1).run(t), PA8).OK)
	// Decided in time, the verdict row rewritten unchanged after the
	// bound: decided when it first became terminal.
	b := decided(bound - s)
	b.on(10*s+bound+s).move(sub(101, "AC", "", 0, ""), sub(101, "AC", "", 0, ""))
	assert.True(t, verdictOf(t, b.run(t), PA8).OK, "%s", verdictOf(t, b.run(t), PA8))

	open := func(token string) *h {
		b := &h{}
		b.commit(ins("submissions", sub(101, "pending", "", 0, "")))
		b.move(sub(101, "pending", "", 0, ""), sub(101, "judging", token, 1, "home-1"))
		b.on(10 * s).fault(map[string]any{"kind": "heal-all"})
		b.on(10*s+bound).add("db", "state", hist.State{What: "idle"})
		return b
	}
	v := verdictOf(t, open("A").run(t), PA8)
	assert.False(t, v.OK, "the run reached the bound: checked")
	assert.Contains(t, v.Message, "submission 101 is judging 9m57s after healing")
	v = verdictOf(t, open("").run(t), PA8)
	assert.True(t, v.OK, "%s", v)
	assert.Contains(t, v.Message, "1 submissions held by legacy workers")

	b = open("A")
	b.evs = b.evs[:len(b.evs)-1]
	b.on(50*s).add("db", "state", hist.State{What: "idle"})
	v = verdictOf(t, b.run(t), PA8)
	assert.Contains(t, v.Message, "the run ended 40s after healing")
}

// TestDesignNeedsLeaseAndAttempts: a design with no positive lease or
// max_attempts is not an arbiter design.
func TestDesignNeedsLeaseAndAttempts(t *testing.T) {
	for _, d := range []string{`{"lease":0,"max_attempts":3}`, `{"lease":1,"max_attempts":0}`, `{"lease":-1,"max_attempts":3}`} {
		_, err := ParseParams(json.RawMessage(d))
		assert.ErrorContains(t, err, "not an arbiter design", d)
	}
	p, err := ParseParams(json.RawMessage(`{"lease":1,"max_attempts":1}`))
	assert.NoError(t, err)
	assert.Equal(t, 1, p.Batch(), "no claim_batch: one lease per claim")
}

// TestEmptyRunPasses: a run with no events breaks nothing.
func TestEmptyRunPasses(t *testing.T) {
	r := (&h{}).run(t)
	assert.Zero(t, r.End)
	assert.True(t, Check(r).OK())
}

// TestOneTransactionTwoSubmissions: a transaction that records 101's
// result and also rewrites 102's row is judged on 101's own row.
func TestOneTransactionTwoSubmissions(t *testing.T) {
	b := batch()
	b.evs = b.evs[:4] // both leased
	b.commit(ins("submission_judgings", judging(101, "A", 1, "home-1", "WA", 1)),
		upd("submissions", sub(101, "judging", "A", 1, "home-1"), sub(101, "WA", "A", 1, "home-1")),
		upd("submissions", sub(102, "judging", "B", 1, "home-1"), sub(102, "judging", "B", 1, "home-1")))
	r := b.runWith(t, `"claim_batch":2`)
	assert.True(t, AtMostOneOwner(r).OK, "%s", AtMostOneOwner(r))
	assert.True(t, NoRegression(r).OK)
}
