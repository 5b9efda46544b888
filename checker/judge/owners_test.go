package judge

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/traces/hist"
)

// PA1's ownership half: one lease token, one worker process, in the
// commit-log invariant and in both views of the lease model.

// as records a call of process client acting under worker_id id.
func (b *h) as(id, client, workerID, op string, sub int64, token string, gen int64, req, verdict string) {
	b.add(client, hist.KindCall, hist.Call{ID: id, Client: client, WorkerID: workerID, Op: op, Sub: sub, Token: token, Gen: gen, RequestID: req, Episode: req, Verdict: verdict})
}

// pa1 returns PA1's verdicts on a history: the invariant's, the oracle
// view's and the client view's.
func pa1(t *testing.T, b *h) (inv, oracle, client checker.Verdict) {
	t.Helper()
	r := b.run(t)
	oracle, _ = Linearizable(r, OracleView)
	client, _ = Linearizable(r, ClientView)
	return verdictOf(t, r, PA1), oracle, client
}

// TestSecondOwnerMustFailPA1: each way a second process comes to act
// under a lease token another process holds is caught, by the invariant
// and by the lease model where its view holds the evidence.
func TestSecondOwnerMustFailPA1(t *testing.T) {
	// claim: home-2's claim is answered with home-1's current lease A (a
	// claim keyed by its request id alone, ids colliding across workers).
	b := claimed()
	b.call("c2", "home-2", "claim", 0, "", 0, "r1")
	b.ret("c2", "home-2", 200, 101, "A", 1)
	inv, _, client := pa1(t, b)
	assert.False(t, inv.OK, "invariant: a claim answered with another process's token")
	assert.Contains(t, inv.Message, "lease token A is held by two processes: home-1 was answered a claim with it, then home-2 was answered a claim with it")
	assert.Equal(t, []uint64{4, 8}, inv.Events)
	assert.False(t, client.OK, "client view: the same grant announced to another process")

	for _, op := range []string{"heartbeat", "submit"} {
		for _, code := range []int{200, 410, 0} {
			b := claimed()
			b.add("home-2", hist.KindCall, hist.Call{ID: "x", Client: "home-2", Op: op, Sub: 101, Token: "A", Gen: 1, Verdict: "AC"})
			if code != 0 {
				b.ret("x", "home-2", code, 101, "A", 0)
			}
			inv, oracle, client := pa1(t, b)
			assert.False(t, inv.OK, "invariant: home-2's %s with home-1's token, answered %d", op, code)
			assert.Contains(t, inv.Message, "then home-2 "+map[string]string{"heartbeat": "heartbeated", "submit": "submitted"}[op]+" it")
			assert.False(t, client.OK, "client view: %s %d", op, code)
			if code != 0 { // the oracle drops an attempt it settles as having had no effect
				assert.False(t, oracle.OK, "oracle view: %s %d", op, code)
			}
		}
	}

	// Two judgings of one token by two processes (their notes only).
	b = claimed()
	b.judge("home-1", 101, "A", hist.JudgeStart)
	b.judge("home-2", 101, "A", hist.JudgeStart)
	inv, _, _ = pa1(t, b)
	assert.False(t, inv.OK, "two processes judging one token")
	assert.Contains(t, inv.Message, "then home-2 judged it")

	// A sandbox process of the same worker_id is another process: its
	// heartbeat of the first one's token is a second owner.
	b = claimed()
	b.as("x", "home-1.2", "home-1", "heartbeat", 101, "A", 0, "", "")
	b.ret("x", "home-1.2", 200, 101, "A", 0)
	inv, oracle, client := pa1(t, b)
	assert.False(t, inv.OK)
	assert.False(t, oracle.OK)
	assert.False(t, client.OK)

	// Each process at its earliest appearance: home-2's judging (#7)
	// came before its heartbeat (#8), found first among the calls.
	b = claimed()
	b.judge("home-2", 101, "A", hist.JudgeStart)
	b.call("x", "home-2", "heartbeat", 101, "A", 0, "")
	inv, _, _ = pa1(t, b)
	assert.Equal(t, "submission 101: lease token A is held by two processes: home-1 was answered a claim with it, then home-2 judged it", inv.Message)
	assert.Equal(t, []uint64{4, 7}, inv.Events)
	b = &h{}
	b.commit(ins("submissions", sub(101, "pending", "", 0, "")))
	b.judge("home-1", 101, "A", hist.JudgeStart)
	b.call("x", "home-1", "heartbeat", 101, "A", 0, "")
	b.call("y", "home-2", "heartbeat", 101, "A", 0, "")
	inv, _, _ = pa1(t, b)
	assert.Equal(t, "submission 101: lease token A is held by two processes: home-1 judged it, then home-2 heartbeated it", inv.Message)
	assert.Equal(t, []uint64{2, 4}, inv.Events)

	// A result saved by another process.
	b = claimed()
	b.add("home-2", hist.KindResult, hist.Result{Worker: "home-2", Sub: 101, Token: "A", Verdict: "AC", Phase: hist.ResultSaved, Durable: true})
	inv, _, _ = pa1(t, b)
	assert.Contains(t, inv.Message, "then home-2 saved a result of it")
}

// TestLeaseOfAnotherWorkerIDMustFailPA1: a lease the database granted to
// worker_id home-1 (its own claim's reply lost) in the hands of a process
// acting under home-2: the worker_id says whose it is.
func TestLeaseOfAnotherWorkerIDMustFailPA1(t *testing.T) {
	b := &h{}
	b.commit(ins("submissions", sub(101, "pending", "", 0, "")))
	b.call("c1", "home-1", "claim", 0, "", 0, "r1") // never answered
	b.commit(upd("submissions", sub(101, "pending", "", 0, ""), sub(101, "judging", "A", 1, "home-1")), ins("claims", row{"worker_id": "home-1", "request_id": "r1", "submission_id": 101, "lease_token": "A"}))
	b.as("c2", "home-2.2", "home-2", "claim", 0, "", 0, "r1", "")
	b.ret("c2", "home-2.2", 200, 101, "A", 1)
	inv, oracle, client := pa1(t, b)
	assert.False(t, inv.OK)
	assert.Equal(t, "submission 101: the lease A granted to worker_id home-1 was held by process home-2.2, which acts under worker_id home-2 (it was answered a claim with it)", inv.Message)
	assert.Equal(t, []uint64{3, 5}, inv.Events)
	assert.True(t, oracle.OK, "one process only: the lease model cannot tell worker_ids: %s", oracle)
	assert.True(t, client.OK, "%s", client)
}

// TestOwnersMustPassPA1: what the correct design does with several
// processes: two sandbox processes of one worker_id with a lease each; a
// claim retried by its process and answered again; a process that
// crashes, restarts under its name and re-submits the result it saved;
// a legacy worker (no token) beside the arbiter; a zombie that comes back
// to its own, reclaimed, lease while its replacement holds a new one.
func TestOwnersMustPassPA1(t *testing.T) {
	b := &h{}
	b.commit(ins("submissions", sub(101, "pending", "", 0, "")), ins("submissions", sub(102, "pending", "", 0, "")),
		ins("submissions", sub(103, "pending", "", 0, "")), ins("submissions", sub(104, "pending", "", 0, "")))
	// Two processes of worker_id home-1.
	for i, p := range []string{"home-1", "home-1.2"} {
		id, tok, req := int64(101+i), string(rune('A'+i)), p+"-r1"
		b.as("c"+tok, p, "home-1", "claim", 0, "", 0, req, "")
		b.commit(upd("submissions", sub(id, "pending", "", 0, ""), sub(id, "judging", tok, 1, "home-1")),
			ins("claims", row{"worker_id": "home-1", "request_id": req, "submission_id": id, "lease_token": tok}))
		if i == 1 {
			b.as("c"+tok+"'", p, "home-1", "claim", 0, "", 0, req, "") // retried: the same lease again
			b.add(p, hist.KindReturn, hist.Return{ID: "c" + tok + "'", Code: 200, Sub: id, Token: tok, Gen: 1})
		}
		b.add(p, hist.KindReturn, hist.Return{ID: "c" + tok, Code: 200, Sub: id, Token: tok, Gen: 1})
		b.as("h"+tok, p, "home-1", "heartbeat", id, tok, 0, "", "")
		b.ret("h"+tok, p, 200, id, tok, 0)
		b.add(p, hist.KindJudge, hist.Judge{Worker: p, WorkerID: "home-1", Sub: id, Token: tok, Gen: 1, Phase: hist.JudgeStart})
		b.add(p, hist.KindJudge, hist.Judge{Worker: p, WorkerID: "home-1", Sub: id, Token: tok, Gen: 1, Phase: hist.JudgeEnd, Verdict: "WA"})
		b.add(p, hist.KindResult, hist.Result{Worker: p, WorkerID: "home-1", Sub: id, Token: tok, Gen: 1, Verdict: "WA", Phase: hist.ResultSaved, Durable: true})
		if i == 1 {
			// home-1.2 crashes before its submit and re-submits after
			// its restart.
			b.add(p, "crash", nil)
			b.add(p, "restart", nil)
		}
		b.as("s"+tok, p, "home-1", "submit", id, tok, 1, "", "WA")
		b.commit(ins("submission_judgings", judging(id, tok, 1, "home-1", "WA", 1)), upd("submissions", sub(id, "judging", tok, 1, "home-1"), sub(id, "WA", tok, 1, "home-1")))
		b.ret("s"+tok, p, 200, id, tok, 0)
		b.add(p, hist.KindResult, hist.Result{Worker: p, WorkerID: "home-1", Sub: id, Token: tok, Gen: 1, Verdict: "WA", Phase: hist.ResultAnswered, Code: 200})
	}
	// A legacy worker claims 103 straight from the database.
	b.move(sub(103, "pending", "", 0, ""), sub(103, "judging", "", 0, "home-2"))
	b.judge("home-2", 103, "", hist.JudgeStart)
	b.add("home-2", hist.KindJudge, hist.Judge{Worker: "home-2", Sub: 103, Phase: hist.JudgeEnd, Verdict: "AC"})
	b.commit(ins("submission_judgings", judging(103, "", 0, "home-2", "AC", 1)), upd("submissions", sub(103, "judging", "", 0, "home-2"), sub(103, "AC", "", 0, "home-2")),
		ins("first_ac", row{"id": 1, "user_id": 1, "problem_id": 1, "submission_id": 103}), upd("users", row{"id": 1, "xp": 0}, row{"id": 1, "xp": 10}))
	// prod-1 holds 104's lease C, freezes; the lease is reclaimed and its
	// replacement prod-1.z gets D; prod-1 comes back to C, refused.
	b.call("cC", "prod-1", "claim", 0, "", 0, "p1")
	b.commit(upd("submissions", sub(104, "pending", "", 0, ""), sub(104, "judging", "C", 1, "prod-1")))
	b.ret("cC", "prod-1", 200, 104, "C", 1)
	b.fault(map[string]any{"kind": "pause", "node": "prod-1"})
	b.move(sub(104, "judging", "C", 1, "prod-1"), sub(104, "pending", "", 1, ""))
	b.as("cD", "prod-1.z", "prod-1", "claim", 0, "", 0, "pz1", "")
	b.commit(upd("submissions", sub(104, "pending", "", 1, ""), sub(104, "judging", "D", 2, "prod-1")))
	b.ret("cD", "prod-1.z", 200, 104, "D", 2)
	b.fault(map[string]any{"kind": "resume", "node": "prod-1"})
	b.call("hC", "prod-1", "heartbeat", 104, "C", 0, "")
	b.ret("hC", "prod-1", 410, 104, "C", 0)
	b.as("hD", "prod-1.z", "prod-1", "heartbeat", 104, "D", 0, "", "")
	b.ret("hD", "prod-1.z", 200, 104, "D", 0)

	r := b.runShaped(t, `{"shape":{"processes_per_worker":2,"zombies":1}}`)
	for _, v := range Check(r).Verdicts {
		assert.True(t, v.OK, "%s", v)
		assert.False(t, Unsupported(v), "%s", v)
	}
	require.Len(t, r.holdings(), 4, "A, B, C and D; the legacy worker holds no token")
	assert.Equal(t, use{"home-1.2", "home-1", "was answered a claim with", 17}, r.holdings()[subToken{102, "B"}].first)
}

// TestClaimsOfProcessesPA4: PA4 pairs the database's claims, keyed by
// worker_id, with the calls of the processes acting under it. A claim
// episode of a sandbox process granted twice is caught, whether the
// database recorded its request (the row's worker_id is home-1, the
// caller home-1.2) or not (no-request-id: the grant belongs to the claim
// answered with it, or to the one process of its worker_id with claims
// going); with two processes of home-1 claiming, an unrecorded grant
// nobody was answered with is not judged.
func TestClaimsOfProcessesPA4(t *testing.T) {
	twice := func(record, rival bool) *h {
		b := &h{}
		b.commit(ins("submissions", sub(102, "pending", "", 0, "")), ins("submissions", sub(103, "pending", "", 0, "")))
		if rival {
			b.as("f", "home-1", "home-1", "claim", 0, "", 0, "home-1-f1", "") // hangs, never answered
		}
		claims := func(req, tok string, id int64) map[string]any {
			if !record {
				return upd("users", row{"id": 9, "xp": 0}, row{"id": 9, "xp": 0}) // something else in the transaction
			}
			return ins("claims", row{"worker_id": "home-1", "request_id": req, "submission_id": id, "lease_token": tok})
		}
		// Episode e1 of home-1.2: its first request's reply is lost,
		// the retry (a new request id under no-request-id) is answered.
		b.add("home-1.2", hist.KindCall, hist.Call{ID: "q1", Client: "home-1.2", WorkerID: "home-1", Op: "claim", RequestID: "e1.0", Episode: "e1"})
		b.commit(upd("submissions", sub(102, "pending", "", 0, ""), sub(102, "judging", "X", 1, "home-1")), claims("e1.0", "X", 102))
		b.add("home-1.2", hist.KindCall, hist.Call{ID: "q2", Client: "home-1.2", WorkerID: "home-1", Op: "claim", RequestID: "e1.1", Episode: "e1"})
		b.commit(upd("submissions", sub(103, "pending", "", 0, ""), sub(103, "judging", "Y", 1, "home-1")), claims("e1.1", "Y", 103))
		b.ret("q2", "home-1.2", 200, 103, "Y", 1)
		return b
	}
	v := verdictOf(t, twice(true, true).run(t), PA4)
	assert.Equal(t, "home-1's claim e1 was granted leases by two transactions (X on 102, Y on 103): a retry left an orphan lease", v.Message, "recorded")
	v = verdictOf(t, twice(false, false).run(t), PA4)
	assert.Equal(t, "home-1's claim e1 was granted leases by two transactions (X on 102, Y on 103): a retry left an orphan lease", v.Message, "unrecorded, one process claiming")
	v = verdictOf(t, twice(false, true).run(t), PA4)
	assert.True(t, v.OK, "unrecorded, two processes of home-1 claiming: X is nobody's for sure: %s", v)
}

// TestFirstSecondOwnerReported: with several tokens held twice, the one
// reported is the smallest (submission, token), whatever the order they
// were found in: a report does not depend on map order.
func TestFirstSecondOwnerReported(t *testing.T) {
	b := &h{}
	for _, c := range []struct {
		sub   int64
		token string
	}{{103, "B"}, {102, "D"}, {102, "C"}, {104, "A"}} {
		b.judge("home-1", c.sub, c.token, hist.JudgeStart)
		b.judge("home-2", c.sub, c.token, hist.JudgeStart)
	}
	for i := 0; i < 5; i++ {
		v := verdictOf(t, b.run(t), PA1)
		assert.Equal(t, "submission 102: lease token C is held by two processes: home-1 judged it, then home-2 judged it", v.Message)
	}
}

// TestRetriedClaimOfAnOlderLease: a claim answered with an older
// generation's lease (a retry answered late) is its own process's lease
// announced again, and voids it; another process announcing it is a
// second owner.
func TestRetriedClaimOfAnOlderLease(t *testing.T) {
	late := func(who string) *h {
		b := claimed() // home-1 holds A, gen 1
		b.call("c2", "home-2", "claim", 0, "", 0, "q1")
		b.ret("c2", "home-2", 200, 101, "B", 2)
		b.call("c1b", who, "claim", 0, "", 0, "r1")
		b.ret("c1b", who, 200, 101, "A", 1) // gen 1, announced after gen 2
		b.call("h9", "home-1", "heartbeat", 101, "A", 0, "")
		b.ret("h9", "home-1", 410, 101, "A", 0)
		return b
	}
	assert.True(t, linearizable(t, late("home-1"), ClientView))
	assert.False(t, linearizable(t, late("home-3"), ClientView))
	b := late("home-1")
	b.evs = b.evs[:len(b.evs)-1]
	b.ret("h9", "home-1", 200, 101, "A", 0)
	assert.False(t, linearizable(t, b, ClientView), "a void lease renewed")
}
