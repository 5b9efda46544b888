package judge

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/traces/hist"
)

// The clause table of system A (docs/clauses.md): each row breaks one
// clause of a property's definition in docs/properties.md and asserts the
// property fails with a message naming it, next to its passing neighbour,
// the same history without the break. Rows whose clause an older test
// already pins that way are cited in docs/clauses.md instead of repeated
// here.

// clause is one row: the property's verdict on two runs.
type clause struct {
	id    string // the row's id in docs/clauses.md
	judge func(r *Run) checker.Verdict
	pass  func(t *testing.T) *Run // the neighbour: must hold, and be judged
	fail  func(t *testing.T) *Run // the break: must fail
	want  string                  // what the failure's message must say
	// says: what the neighbour's message must say, when it holds because
	// the clause exempts it (empty: it holds with no exemption).
	says string
}

// inv judges a run by the named invariant (gated, as Check runs it).
func inv(name string) func(r *Run) checker.Verdict {
	return func(r *Run) checker.Verdict {
		for _, i := range Invariants {
			if i.Name == name {
				return i.Check(r)
			}
		}
		panic("no invariant " + name)
	}
}

// lin judges a run by the lease model in one view.
func lin(view View) func(r *Run) checker.Verdict {
	return func(r *Run) checker.Verdict {
		v, _ := Linearizable(r, view)
		return v
	}
}

// outageBound judges a run's MA5 against a bound of n requests a minute.
func outageBound(n int) func(r *Run) checker.Verdict {
	return func(r *Run) checker.Verdict { return Bounds{OutageLoad: n}.Check(Measure(r))[0] }
}

// decoded returns the run of a history, under the test design with set
// (JSON members) added.
func decoded(build func() *h, set string) func(t *testing.T) *Run {
	return func(t *testing.T) *Run {
		if set == "" {
			return build().run(t)
		}
		return build().runWith(t, set)
	}
}

func of(build func() *h) func(t *testing.T) *Run { return decoded(build, "") }

// then returns a builder: base's history with more appended.
func then(base func() *h, more func(b *h)) func() *h {
	return func() *h {
		b := base()
		more(b)
		return b
	}
}

// decide commits home-1's result verdict for lease (token, gen), its
// history row beside the row's change from before to after.
func (b *h) decide(before, after row, token string, gen int64, verdict string, seq int64) {
	b.commit(ins("submission_judgings", judging(101, token, gen, "home-1", verdict, seq)), upd("submissions", before, after))
}

// reclaimed: claimed(), then the sweep takes lease A back.
func reclaimed() *h {
	b := claimed()
	b.move(sub(101, "judging", "A", 1, "home-1"), sub(101, "pending", "", 1, ""))
	return b
}

// rejudged: happy(), then 101 is rejudged and decided again under lease
// B. raise: the rejudge and the claim each raise the generation (to 2,
// then 3), as in the correct design; otherwise both keep generation 1.
func rejudged(raise bool) func() *h {
	return func() *h {
		b := happy()
		pending, lease := int64(1), int64(1)
		if raise {
			pending, lease = 2, 3
		}
		b.move(sub(101, "AC", "A", 1, "home-1"), sub(101, "pending", "", pending, ""))
		b.move(sub(101, "pending", "", pending, ""), sub(101, "judging", "B", lease, "home-1"))
		b.decide(sub(101, "judging", "B", lease, "home-1"), sub(101, "WA", "B", lease, "home-1"), "B", lease, "WA", 2)
		return b
	}
}

// second: claimed(), then process p uses home-1's token A by op.
func second(p, op string) func() *h {
	return func() *h {
		b := claimed()
		switch op {
		case "claim":
			b.call("x", p, "claim", 0, "", 0, "r1")
			b.ret("x", p, 200, 101, "A", 1)
		case "heartbeat":
			b.call("x", p, "heartbeat", 101, "A", 0, "")
			b.ret("x", p, 200, 101, "A", 0)
		case "submit":
			b.as("x", p, "", "submit", 101, "A", 1, "", "AC")
		case "judge":
			b.judge("home-1", 101, "A", hist.JudgeStart)
			if p != "home-1" {
				b.judge(p, 101, "A", hist.JudgeStart)
			}
		case "save":
			b.add(p, hist.KindResult, hist.Result{Worker: p, Sub: 101, Token: "A", Verdict: "AC", Phase: hist.ResultSaved, Durable: true})
		}
		return b
	}
}

// otherWorkerID: home-1's claim's reply is lost; process p, acting under
// worker_id wid, is answered with its lease.
func otherWorkerID(p, wid string) func() *h {
	return func() *h {
		b := &h{}
		b.commit(ins("submissions", sub(101, "pending", "", 0, "")))
		b.call("c1", "home-1", "claim", 0, "", 0, "r1")
		b.commit(upd("submissions", sub(101, "pending", "", 0, ""), sub(101, "judging", "A", 1, "home-1")), ins("claims", row{"worker_id": "home-1", "request_id": "r1", "submission_id": 101, "lease_token": "A"}))
		b.as("c2", p, wid, "claim", 0, "", 0, "r1", "")
		b.ret("c2", p, 200, 101, "A", 1)
		return b
	}
}

// regranted: reclaimed(), then lease B (gen 2) is granted to home-2,
// whose claim's reply is lost; home-2 heartbeats token tok, answered 200.
func regranted(tok string) func() *h {
	return then(reclaimed, func(b *h) {
		b.call("c2", "home-2", "claim", 0, "", 0, "q1")
		b.move(sub(101, "pending", "", 1, ""), sub(101, "judging", "B", 2, "home-2"))
		b.call("h2", "home-2", "heartbeat", 101, tok, 0, "")
		b.ret("h2", "home-2", 200, 101, tok, 0)
	})
}

// overlapping: happy(), then 101 is rejudged (gen 2) while the web front
// reads it twice at once: r1 sees the rejudge, r2 the verdict before it,
// and r2's answer comes last; then (third) a read called after both.
func overlapping(third bool) func() *h {
	return then(happy, func(b *h) {
		b.call("r1", "web", "read", 101, "", 0, "")
		b.call("r2", "web", "read", 101, "", 0, "")
		b.move(sub(101, "AC", "A", 1, "home-1"), sub(101, "pending", "", 2, ""))
		b.add("web", hist.KindReturn, hist.Return{ID: "r1", Code: 200, Sub: 101, Status: "pending", Gen: 2})
		b.add("web", hist.KindReturn, hist.Return{ID: "r2", Code: 200, Sub: 101, Status: "AC", Gen: 1})
		if third {
			b.read("r3", 101, 200, "AC", 1)
		}
	})
}

// hb appends home-1's heartbeat of token A, answered code.
func hb(id string, code int) func(b *h) {
	return func(b *h) {
		b.call(id, "home-1", "heartbeat", 101, "A", 0, "")
		b.ret(id, "home-1", code, 101, "A", 0)
	}
}

// submitA appends home-1's submit of token A (verdict AC), answered code
// (0: no answer).
func submitA(id string, code int) func(b *h) {
	return func(b *h) {
		b.as(id, "home-1", "", "submit", 101, "A", 1, "", "AC")
		if code != 0 {
			b.ret(id, "home-1", code, 101, "A", 0)
		}
	}
}

// newerClaim: claimed(), then home-2's claim is answered with lease B of
// generation 2 (A's lease was reclaimed, unseen by the clients).
func newerClaim() *h {
	b := claimed()
	b.call("c2", "home-2", "claim", 0, "", 0, "q1")
	b.ret("c2", "home-2", 200, 101, "B", 2)
	return b
}

// claims2: 101 and 102 arrive; home-1's claim r1 is answered with both,
// granted by its transaction (102's lease recorded for request r0 when
// split) or, when lost, by one transaction that has no answer.
func claims2(split, answered bool) func() *h {
	return func() *h {
		b := &h{}
		b.commit(ins("submissions", sub(101, "pending", "", 0, "")), ins("submissions", sub(102, "pending", "", 0, "")))
		b.call("c1", "home-1", "claim", 0, "", 0, "r1")
		grantA := upd("submissions", sub(101, "pending", "", 0, ""), sub(101, "judging", "A", 1, "home-1"))
		grantB := upd("submissions", sub(102, "pending", "", 0, ""), sub(102, "judging", "B", 1, "home-1"))
		recA := ins("claims", row{"worker_id": "home-1", "request_id": "r1", "submission_id": 101, "lease_token": "A"})
		if split {
			b.commit(grantA, recA)
			b.commit(grantB, ins("claims", row{"worker_id": "home-1", "request_id": "r0", "submission_id": 102, "lease_token": "B"}))
		} else {
			b.commit(grantA, grantB, recA, ins("claims", row{"worker_id": "home-1", "request_id": "r1", "submission_id": 102, "lease_token": "B"}))
		}
		if answered {
			b.add("home-1", hist.KindReturn, hist.Return{ID: "c1", Code: 200, Sub: 101, Token: "A", Gen: 1,
				Leases: []hist.Lease{{Sub: 101, Token: "A", Gen: 1}, {Sub: 102, Token: "B", Gen: 1}}})
		}
		return b
	}
}

// retried: home-1's claim r1 (its reply lost) is retried with the same
// request id; the retry is answered with lease A again, or (orphan) a
// second transaction grants it B on 102. beside: another process of
// worker_id home-1 has a claim going from the start, and the retry's
// answer is lost too: only the database's claims rows say whose claim the
// grants were.
func retried(orphan, beside bool) func() *h {
	return func() *h {
		b := &h{}
		if beside {
			b.as("f", "home-1.2", "home-1", "claim", 0, "", 0, "home-1.2-f1", "") // hangs, never answered
		}
		b.commit(ins("submissions", sub(101, "pending", "", 0, "")), ins("submissions", sub(102, "pending", "", 0, "")))
		b.call("c1", "home-1", "claim", 0, "", 0, "r1")
		b.commit(upd("submissions", sub(101, "pending", "", 0, ""), sub(101, "judging", "A", 1, "home-1")), ins("claims", row{"worker_id": "home-1", "request_id": "r1", "submission_id": 101, "lease_token": "A"}))
		b.call("c1b", "home-1", "claim", 0, "", 0, "r1")
		tok, id := "A", int64(101)
		if orphan {
			tok, id = "B", 102
			b.commit(upd("submissions", sub(102, "pending", "", 0, ""), sub(102, "judging", "B", 1, "home-1")), ins("claims", row{"worker_id": "home-1", "request_id": "r1", "submission_id": 102, "lease_token": "B"}))
		}
		if !beside {
			b.ret("c1b", "home-1", 200, id, tok, 1)
		}
		return b
	}
}

// claimEpisode: under no-request-id, home-1.2's claim episode e1 sends q1
// (e1.0), whose grant X of 102 the database does not record; its retry
// q2 (e1.1) is answered with X again, or (orphan) with Y of 103 from a
// second transaction. late: q1's reply arrives after q2 was sent, and
// another process of worker_id home-1 has a claim going, so only the
// answers say whose claim X was; otherwise nobody heard of X, and home-1.2
// is the one process of home-1 claiming.
func claimEpisode(orphan, late bool) func() *h {
	return func() *h {
		b := &h{}
		b.commit(ins("submissions", sub(102, "pending", "", 0, "")), ins("submissions", sub(103, "pending", "", 0, "")))
		if late {
			b.as("f", "home-1", "home-1", "claim", 0, "", 0, "home-1-f1", "") // hangs, never answered
		}
		other := upd("users", row{"id": 9, "xp": 0}, row{"id": 9, "xp": 0}) // no claims row
		b.add("home-1.2", hist.KindCall, hist.Call{ID: "q1", Client: "home-1.2", WorkerID: "home-1", Op: "claim", RequestID: "e1.0", Episode: "e1"})
		b.commit(upd("submissions", sub(102, "pending", "", 0, ""), sub(102, "judging", "X", 1, "home-1")), other)
		b.add("home-1.2", hist.KindCall, hist.Call{ID: "q2", Client: "home-1.2", WorkerID: "home-1", Op: "claim", RequestID: "e1.1", Episode: "e1"})
		if late {
			b.add("home-1.2", hist.KindReturn, hist.Return{ID: "q1", Code: 200, Sub: 102, Token: "X", Gen: 1})
		}
		if !orphan {
			b.add("home-1.2", hist.KindReturn, hist.Return{ID: "q2", Code: 200, Sub: 102, Token: "X", Gen: 1})
			return b
		}
		b.commit(upd("submissions", sub(103, "pending", "", 0, ""), sub(103, "judging", "Y", 1, "home-1")), other)
		b.add("home-1.2", hist.KindReturn, hist.Return{ID: "q2", Code: 200, Sub: 103, Token: "Y", Gen: 1})
		return b
	}
}

// duplicate: happy(), then home-1 submits token A again, answered code.
func duplicate(code int) func() *h { return then(happy, submitA("s2", code)) }

// saved: happy(), then home-1 saves a result (durable or not), answered
// 200 or never; the run ends 600 s later.
func saved(durable, answered bool) func() *h {
	return then(happy, func(b *h) {
		b.add("home-1", hist.KindResult, hist.Result{Worker: "home-1", Sub: 101, Token: "A", Verdict: "AC", Phase: hist.ResultSaved, Durable: durable})
		if answered {
			b.add("home-1", hist.KindResult, hist.Result{Worker: "home-1", Sub: 101, Token: "A", Verdict: "AC", Phase: hist.ResultAnswered, Code: 200})
		}
		b.at(b.t+600*s).add("db", "state", hist.State{What: "idle"})
	})
}

// preloaded: the first row of 101 the log shows is lease X (gen 4) with
// attempts made already, unconfirmed; then its worker confirms it.
func preloaded(attempts int64) func() *h {
	return func() *h {
		b := &h{}
		x := sub(101, "judging", "X", 4, "home-1")
		x["judge_attempts"] = attempts
		b.commit(upd("submissions", sub(101, "pending", "", 3, ""), x))
		b.move(x, confirmed(x))
		return b
	}
}

// outage: the database is down from 1000 s to 1300 s; each worker sends
// its claims one second apart from 1100 s.
func outage(claims map[string]int) func() *h {
	return func() *h {
		b := &h{}
		b.on(1000*s).add("db", "crash", nil)
		for i := 0; i < 10; i++ {
			for _, w := range checker.SortedKeys(claims) {
				if i < claims[w] {
					b.on(int64(1100+i)*s).call(fmt.Sprintf("%s-c%d", w, i), w, "claim", 0, "", 0, "")
				}
			}
		}
		b.on(1300*s).add("db", "restart", nil)
		return b
	}
}

var clauses = []clause{
	// PA1, on the commit log and the workers' notes.
	{id: "PA1.1a", judge: inv(PA1), pass: of(happy),
		fail: of(then(claimed, func(b *h) {
			// reclaim-keeps-token: the sweep re-queues the row with its token.
			b.move(sub(101, "judging", "A", 1, "home-1"), sub(101, "pending", "A", 1, "home-1"))
			submitA("s1", 0)(b)
			b.decide(sub(101, "pending", "A", 1, "home-1"), sub(101, "AC", "A", 1, "home-1"), "A", 1, "AC", 1)
		})),
		want: `accepted while the lease was token "A" gen 1 (status pending)`},
	{id: "PA1.1b", judge: inv(PA1), pass: of(happy),
		fail: of(then(claimed, func(b *h) {
			b.move(sub(101, "judging", "A", 1, "home-1"), sub(101, "judging", "B", 1, "home-2"))
			submitA("s1", 0)(b)
			b.decide(sub(101, "judging", "B", 1, "home-2"), sub(101, "AC", "B", 1, "home-2"), "A", 1, "AC", 1)
		})),
		want: `judged under token A gen 1 was accepted while the lease was token "B" gen 1`},
	{id: "PA1.1c", judge: inv(PA1), pass: of(happy),
		fail: of(then(claimed, func(b *h) {
			b.move(sub(101, "judging", "A", 1, "home-1"), sub(101, "judging", "A", 2, "home-1"))
			submitA("s1", 0)(b)
			b.decide(sub(101, "judging", "A", 2, "home-1"), sub(101, "AC", "A", 2, "home-1"), "A", 1, "AC", 1)
		})),
		want: `judged under token A gen 1 was accepted while the lease was token "A" gen 2`},
	{id: "PA1.1d", judge: inv(PA1), pass: of(happy),
		fail: of(then(claimed, func(b *h) {
			submitA("s1", 0)(b)
			b.commit(ins("submission_judgings", judging(101, "A", 1, "home-1", "AC", 1)))
		})),
		want: "result AC (token A) recorded without deciding the submission"},
	{id: "PA1.2", judge: inv(PA1), pass: of(rejudged(true)), fail: of(rejudged(false)),
		want: "two results accepted in generation 1"},
	{id: "PA1.3", judge: inv(PA1), pass: of(happy),
		fail: of(then(claimed, func(b *h) {
			submitA("s1", 0)(b)
			b.move(sub(101, "judging", "A", 1, "home-1"), sub(101, "AC", "A", 1, "home-1"))
		})),
		want: "verdict AC written without a judging-history row in the same transaction"},
	{id: "PA1.3b", judge: inv(PA1), pass: of(happy),
		fail: of(then(claimed, func(b *h) {
			submitA("s1", 0)(b)
			b.decide(sub(101, "judging", "A", 1, "home-1"), sub(101, "WA", "A", 1, "home-1"), "A", 1, "AC", 1)
		})),
		want: "history row of token A records AC, but its transaction left the submission WA"},
	{id: "PA1.4a", judge: inv(PA1), pass: of(second("home-1", "claim")), fail: of(second("home-2", "claim")),
		want: "lease token A is held by two processes: home-1 was answered a claim with it, then home-2 was answered a claim with it"},
	{id: "PA1.4b", judge: inv(PA1), pass: of(second("home-1", "heartbeat")), fail: of(second("home-2", "heartbeat")),
		want: "then home-2 heartbeated it"},
	{id: "PA1.4c", judge: inv(PA1), pass: of(second("home-1", "submit")), fail: of(second("home-2", "submit")),
		want: "then home-2 submitted it"},
	{id: "PA1.4d", judge: inv(PA1), pass: of(second("home-1", "judge")), fail: of(second("home-2", "judge")),
		want: "then home-2 judged it"},
	{id: "PA1.4e", judge: inv(PA1), pass: of(second("home-1", "save")), fail: of(second("home-2", "save")),
		want: "then home-2 saved a result of it"},
	{id: "PA1.5", judge: inv(PA1), pass: of(otherWorkerID("home-1.2", "home-1")), fail: of(otherWorkerID("home-2.2", "home-2")),
		want: "the lease A granted to worker_id home-1 was held by process home-2.2, which acts under worker_id home-2"},
	// PA1's oracle view: the lease specification, with grants and sweeps
	// from the commit log.
	{id: "PA1.6a", judge: lin(OracleView), pass: of(then(happy, hb("h2", 410))), fail: of(then(happy, hb("h2", 200))),
		want: "home-1 heartbeat(A) -> 200"},
	// A grant whose claim's reply was lost: the log says whose token B is.
	{id: "PA1.6c", judge: lin(OracleView), pass: of(regranted("B")), fail: of(regranted("C")),
		want: "home-2 heartbeat(C) -> 200"},
	{id: "PA1.6d", judge: lin(OracleView), pass: of(then(reclaimed, hb("h2", 410))), fail: of(then(reclaimed, hb("h2", 200))),
		want: "home-1 heartbeat(A) -> 200"},

	// PA2
	{id: "PA2.1", judge: NoRegression,
		pass: of(reclaimed),
		fail: of(then(claimed, func(b *h) {
			b.move(sub(101, "judging", "A", 1, "home-1"), sub(101, "pending", "", 0, ""))
		})),
		want: "lease_gen went back from 1 to 0"},
	{id: "PA2.2a", judge: NoRegression,
		pass: of(then(inserted, func(b *h) { b.move(sub(101, "pending", "", 0, ""), sub(101, "judging", "A", 1, "home-1")) })),
		fail: of(then(inserted, func(b *h) { b.move(sub(101, "pending", "", 0, ""), sub(101, "judging", "A", 0, "home-1")) })),
		want: "claimed without a new generation (gen 0 -> 0)"},
	{id: "PA2.2b", judge: NoRegression, pass: of(happy),
		fail: of(then(claimed, func(b *h) {
			submitA("s1", 0)(b)
			b.decide(sub(101, "judging", "A", 1, "home-1"), sub(101, "AC", "A", 2, "home-1"), "A", 1, "AC", 1)
		})),
		want: "decided in generation 2 from generation 1"},
	{id: "PA2.2c", judge: NoRegression, pass: of(reclaimed),
		fail: of(then(reclaimed, func(b *h) { b.move(sub(101, "pending", "", 1, ""), sub(101, "AC", "", 1, "")) })),
		want: "moved from pending to AC"},
	{id: "PA2.2d", judge: NoRegression,
		pass: of(then(happy, func(b *h) { b.move(sub(101, "AC", "A", 1, "home-1"), sub(101, "pending", "", 2, "")) })),
		fail: of(then(happy, func(b *h) { b.move(sub(101, "AC", "A", 1, "home-1"), sub(101, "pending", "", 1, "")) })),
		want: "left terminal state AC without a new generation"},
	{id: "PA2.3", judge: NoRegression,
		pass: of(then(reclaimed, func(b *h) { b.move(sub(101, "pending", "", 1, ""), sub(101, "judging", "B", 2, "home-2")) })),
		fail: of(then(claimed, func(b *h) {
			b.move(sub(101, "judging", "A", 1, "home-1"), sub(101, "judging", "B", 2, "home-2"))
		})),
		want: "lease changed hands from token A to B without going back to pending"},
	{id: "PA2.4", judge: NoRegression,
		pass: of(then(happy, func(b *h) { b.move(sub(101, "AC", "A", 1, "home-1"), sub(101, "AC", "A", 1, "home-1")) })),
		fail: of(then(happy, func(b *h) { b.move(sub(101, "AC", "A", 1, "home-1"), sub(101, "WA", "A", 1, "home-1")) })),
		want: "verdict AC overwritten by WA in the same generation 1"},
	// The history is append-only: a history row rewritten or deleted.
	{id: "PA2.7a", judge: NoRegression,
		pass: of(then(happy, func(b *h) {
			b.commit(ins("submission_judgings", judging(101, "A", 1, "home-1", "AC", 2)))
		})),
		fail: of(then(happy, func(b *h) {
			b.commit(upd("submission_judgings", judging(101, "A", 1, "home-1", "AC", 1), judging(101, "A", 1, "home-1", "WA", 1)))
		})),
		want: "submission 101: history row seq 1 was updated: the judging history (submission_judgings) is append-only"},
	{id: "PA2.7b", judge: NoRegression,
		pass: of(happy),
		fail: of(then(happy, func(b *h) {
			b.commit(map[string]any{"table": "submission_judgings", "op": "delete", "key": []any{int64(1)}, "before": judging(101, "A", 1, "home-1", "AC", 1)})
		})),
		want: "submission 101: history row seq 1 was deleted: the judging history (submission_judgings) is append-only"},
	{id: "PA2.6", judge: NoRegression,
		pass: of(then(happy, func(b *h) {
			b.read("r1", 101, 200, "AC", 1)
			b.move(sub(101, "AC", "A", 1, "home-1"), sub(101, "pending", "", 2, ""))
			b.read("r2", 101, 200, "pending", 2)
		})),
		fail: of(then(happy, func(b *h) {
			b.read("r1", 101, 200, "AC", 1)
			b.move(sub(101, "AC", "A", 1, "home-1"), sub(101, "pending", "", 2, ""))
			b.read("r2", 101, 200, "pending", 2)
			b.read("r3", 101, 200, "AC", 1)
		})),
		want: "web read AC (gen 1) after reading pending (gen 2)"},

	// Two reads overlap (r2 was called before r1's answer came): either
	// order is theirs; a third read, called after both returned, must not
	// show a generation older than r1's.
	{id: "PA2.6b", judge: NoRegression, pass: of(overlapping(false)), fail: of(overlapping(true)),
		want: "web read AC (gen 1) after reading pending (gen 2)"},

	// PA3: the client's view.
	{id: "PA3.1a", judge: lin(ClientView), pass: of(second("home-1", "claim")),
		fail: of(then(claimed, func(b *h) {
			b.call("c2", "home-2", "claim", 0, "", 0, "q1")
			b.ret("c2", "home-2", 200, 101, "B", 1)
		})),
		want: "home-2 claim -> token B gen 1 (200)"},
	{id: "PA3.1b", judge: lin(ClientView), pass: of(then(newerClaim, hb("h2", 410))), fail: of(then(newerClaim, hb("h2", 200))),
		want: "home-1 heartbeat(A) -> 200"},
	{id: "PA3.1c", judge: lin(ClientView), pass: of(then(newerClaim, submitA("s1", 410))), fail: of(then(newerClaim, submitA("s1", 200))),
		want: "home-1 submit(A, AC) -> 200"},
	{id: "PA3.1d", judge: lin(ClientView),
		pass: of(then(happy, func(b *h) {
			b.call("j1", "operator", "rejudge", 101, "", 0, "")
			b.ret("j1", "operator", 200, 101, "", 0)
		})),
		fail: of(then(happy, func(b *h) {
			b.call("j1", "operator", "rejudge", 101, "", 0, "")
			b.ret("j1", "operator", 410, 101, "", 0)
		})),
		want: "operator rejudge() -> 410"},
	// A lost reply: the submit may have applied (a heartbeat then
	// refused, the retry answered as a duplicate)...
	{id: "PA3.2a", judge: lin(ClientView),
		pass: of(then(claimed, all(submitA("s1", 0), hb("h2", 410), submitA("s2", 200)))),
		fail: of(then(claimed, all(submitA("s1", 410), hb("h2", 410), submitA("s2", 200)))),
		want: "home-1 submit(A, AC) -> 200"},
	// ... or not: a submit of a token already refused, its reply lost,
	// is legal (it applied nothing); answered 200 it is not.
	{id: "PA3.2b", judge: lin(ClientView),
		pass: of(then(claimed, all(hb("h2", 410), submitA("s1", 0)))),
		fail: of(then(claimed, all(hb("h2", 410), submitA("s1", 200)))),
		want: "home-1 submit(A, AC) -> 200"},
	// A 503 alike (its outcome known to come before what follows it).
	{id: "PA3.2c", judge: lin(ClientView),
		pass: of(then(claimed, all(submitA("s1", 503), hb("h2", 200)))),
		fail: of(then(claimed, all(submitA("s1", 200), hb("h2", 200)))),
		want: "home-1 heartbeat(A) -> 200"},
	// A 410 is legal where the client cannot tell (a sweep it does not
	// see); the one refusal the specification forbids is a duplicate of
	// the deciding submit (PA5's).
	{id: "PA3.3", judge: lin(ClientView), pass: of(then(claimed, hb("h2", 410))), fail: of(duplicate(410)),
		want: "home-1 submit(A, AC) -> 410"},
	{id: "PA3.4", judge: lin(ClientView), pass: of(then(claimed, all(hb("h2", 410), hb("h3", 410)))),
		fail: of(then(claimed, all(hb("h2", 410), hb("h3", 200)))),
		want: "home-1 heartbeat(A) -> 200"},

	// PA4
	{id: "PA4.2a", judge: inv(PA4), pass: decoded(claims2(true, true), `"claim_batch":2`), fail: decoded(claims2(true, true), `"claim_batch":1`),
		want: "home-1's claim r1 was answered with 2 leases; claim_batch is 1"},
	{id: "PA4.2b", judge: inv(PA4), pass: decoded(claims2(false, false), `"claim_batch":2`), fail: decoded(claims2(false, false), `"claim_batch":1`),
		want: "home-1's claim r1 was granted 2 leases in one transaction; claim_batch is 1"},
	{id: "PA4.3a", judge: inv(PA4), pass: of(retried(false, false)), fail: of(retried(true, false)),
		want: "home-1's claim r1 was granted leases by two transactions (A on 101, B on 102): a retry left an orphan lease"},
	{id: "PA4.3b", judge: inv(PA4), pass: of(retried(false, true)), fail: of(retried(true, true)),
		want: "home-1's claim r1 was granted leases by two transactions (A on 101, B on 102)"},
	{id: "PA4.3c", judge: inv(PA4), pass: of(claimEpisode(false, true)), fail: of(claimEpisode(true, true)),
		want: "home-1's claim e1 was granted leases by two transactions (X on 102, Y on 103)"},
	{id: "PA4.3d", judge: inv(PA4), pass: of(claimEpisode(false, false)), fail: of(claimEpisode(true, false)),
		want: "home-1's claim e1 was granted leases by two transactions (X on 102, Y on 103)"},

	// PA5
	{id: "PA5.1a", judge: inv(PA5), pass: of(duplicate(200)), fail: of(duplicate(410)),
		want: "home-1's submit of submission 101 with the deciding token A got 410, not the success answer"},
	{id: "PA5.1b", judge: inv(PA5), pass: of(duplicate(503)), fail: of(duplicate(500)),
		want: "with the deciding token A got 500"},
	{id: "PA5.2", judge: inv(PA5), pass: of(happy),
		fail: of(then(happy, func(b *h) { b.commit(ins("submission_judgings", judging(101, "A", 1, "home-1", "AC", 2))) })),
		want: "submission 101 has two history rows for token A"},

	// PA6
	{id: "PA6.1", judge: inv(PA6), pass: of(happy),
		fail: of(then(happy, func(b *h) {
			b.commit(ins("first_ac", row{"id": 2, "user_id": 1, "problem_id": 1, "submission_id": 101}))
		})),
		want: "user 1 has 2 first-AC records for problem 1"},
	{id: "PA6.2", judge: inv(PA6), pass: of(happy),
		fail: of(func() *h {
			b := happy()
			b.evs = b.evs[:7]
			b.decide(sub(101, "judging", "A", 1, "home-1"), sub(101, "AC", "A", 1, "home-1"), "A", 1, "AC", 1)
			return b
		}),
		want: "user 1's AC on problem 1 (submission 101) has no first-AC record"},
	{id: "PA6.3", judge: inv(PA6), pass: of(happy),
		fail: of(then(happy, func(b *h) { b.commit(upd("users", row{"id": 1, "xp": 10}, row{"id": 1, "xp": 20})) })),
		want: "user 1 has 20 XP for 1 first ACs (want 10)"},

	// PA7
	{id: "PA7.1a", judge: inv(PA7), pass: of(saved(true, true)), fail: of(saved(true, false)),
		want: "home-1's result AC for submission 101 (token A), kept on disk, was never answered"},
	{id: "PA7.1b", judge: inv(PA7), pass: of(saved(false, true)), fail: of(saved(false, false)),
		want: "kept in memory only, was never answered"},

	// PA8
	{id: "PA8.4", judge: inv(PA8),
		pass: of(then(inserted, func(b *h) { b.at(b.t+2000*s).add("db", "state", hist.State{What: "idle"}) })),
		fail: of(then(inserted, func(b *h) {
			b.fault(map[string]any{"kind": "heal-all"})
			b.at(b.t+2000*s).add("db", "state", hist.State{What: "idle"})
		})),
		want: "submission 101 is pending"},

	// PA9
	{id: "PA9.1", judge: inv(PA9), pass: of(preloaded(2)), fail: of(preloaded(3)),
		want: "submission 101: attempt 4 (lease X, gen 4) since its last rejudge; max_attempts is 3"},

	// MA1: the unconfirmed lease, plus 1 s, after the grant's commit.
	{id: "MA1.2", judge: UnconfirmedFirst,
		pass: func(*testing.T) *Run { return freshRun(15*time.Second + freshSlack) },
		fail: func(*testing.T) *Run { return freshRun(15*time.Second + freshSlack + 1) },
		want: "expires 11s after its commit, beyond the unconfirmed lease 10s"},

	// MA2 where it is promised.
	{id: "MA2.3", judge: inv(MA2),
		pass: of(func() *h {
			return thrownAway(all(restarted, func(b *h) {
				b.on(86 * s).commit(ins("submission_judgings", judging(101, "A", 1, "home-1", "AC", 1)))
			}))
		}),
		fail: of(func() *h { return thrownAway(restarted) }),
		want: "home-1's judging under lease A was thrown away although its worker stayed healthy"},
	{id: "MA2.8", judge: inv(MA2),
		pass: decoded(func() *h { return thrownAway(restarted) }, `"heartbeat":55000000000`),
		fail: decoded(func() *h { return thrownAway(restarted) }, `"heartbeat":54999999999`),
		want: "was thrown away although its worker stayed healthy",
		says: "not promised by this design: lease 1m0s is not longer than a heartbeat interval and a request timeout, 1m0s"},

	// MA5: per worker process.
	{id: "MA5.2", judge: outageBound(4),
		pass: of(outage(map[string]int{"home-1": 4, "home-2": 4})),
		fail: of(outage(map[string]int{"home-1": 5, "home-2": 4})),
		want: "a worker sent 5 requests in one minute of an outage (bound 4)"},
}

// TestClauses: every row's break fails its property with a message naming
// the clause; its neighbour holds, and is judged (not "unsupported", not
// "not checked").
func TestClauses(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range clauses {
		require.False(t, seen[c.id], "row %s twice", c.id)
		seen[c.id] = true
		t.Run(c.id, func(t *testing.T) {
			ok := c.judge(c.pass(t))
			assert.True(t, ok.OK, "the neighbour must hold: %s", ok)
			assert.False(t, Unsupported(ok), "the neighbour must be judged: %s", ok)
			if c.says != "" {
				assert.Contains(t, ok.Message, c.says)
			} else {
				assert.Empty(t, ok.Message, "the neighbour holds with no exemption")
			}
			bad := c.judge(c.fail(t))
			assert.False(t, bad.OK, "the break must fail")
			assert.Contains(t, bad.Message, c.want)
		})
	}
}

// TestUnjudgedLeasesSaySoMA1: a new lease MA1 cannot judge (no expiry in
// its row, or the database's clock went back between its grant and its
// commit) is not passed in silence: the verdict holds and says how many.
func TestUnjudgedLeasesSaySoMA1(t *testing.T) {
	v := UnconfirmedFirst(happy().run(t))
	assert.True(t, v.OK)
	assert.Equal(t, "1 new leases not judged: 1 without an expiry, 0 excused by the database's clock going back between the grant and its commit", v.Message)

	r := freshRun(65 * time.Second)
	r.Commits[0].Node = "db"
	r.Faults = []FaultAt{{Kind: "jump", Node: "db", T: int64(5 * time.Second), Amount: -int64(50 * time.Second)}}
	v = UnconfirmedFirst(r)
	assert.True(t, v.OK)
	assert.Equal(t, "1 new leases not judged: 0 without an expiry, 1 excused by the database's clock going back between the grant and its commit", v.Message)

	assert.Equal(t, checker.Pass(MA1), UnconfirmedFirst(freshRun(15*time.Second)), "a lease judged: nothing to say")
}
