package judge

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// h builds hand-made traces of system A: commits of submission rows and
// history rows, client calls and returns, worker notes.
type h struct {
	evs []traces.Event
	t   int64
	tx  uint64
}

const s = int64(time.Second)

func (b *h) add(node, kind string, data any) uint64 {
	raw, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	b.t += s / 10
	b.evs = append(b.evs, traces.Event{Seq: uint64(len(b.evs) + 1), T: b.t, Node: node, Kind: kind, Data: raw})
	return uint64(len(b.evs))
}

func (b *h) at(t int64) *h { b.t = t; return b }

type row = map[string]any

func sub(id int64, status, token string, gen int64, worker string) row {
	return row{"id": id, "user_id": 1, "problem_id": 1, "status": status, "lease_token": token, "lease_gen": gen, "worker_id": worker,
		"lease_expires_at": nil, "judge_attempts": gen}
}

// commit records one transaction's changes: pairs of (before, after) for
// submissions, and inserted rows of other tables.
func (b *h) commit(changes ...map[string]any) {
	b.tx++
	b.add("db", hist.KindCommit, map[string]any{"seq": b.tx, "tx": b.tx, "at": b.t, "changes": changes})
}

func ins(table string, r row) map[string]any {
	return map[string]any{"table": table, "op": "insert", "key": []any{r["id"]}, "after": r}
}

func upd(table string, before, after row) map[string]any {
	return map[string]any{"table": table, "op": "update", "key": []any{after["id"]}, "before": before, "after": after}
}

func judging(id int64, token string, gen int64, worker, verdict string, seq int64) row {
	return row{"seq": seq, "submission_id": id, "lease_token": token, "lease_gen": gen, "worker_id": worker, "verdict": verdict}
}

func (b *h) call(id, client, op string, sub int64, token string, gen int64, req string) {
	b.add(client, hist.KindCall, hist.Call{ID: id, Client: client, Op: op, Sub: sub, Token: token, Gen: gen, RequestID: req, Episode: req})
}

func (b *h) ret(id, client string, code int, sub int64, token string, gen int64) {
	b.add(client, hist.KindReturn, hist.Return{ID: id, Code: code, Sub: sub, Token: token, Gen: gen})
}

var design = json.RawMessage(`{"unconfirmed_lease":10000000000,"lease":60000000000,"heartbeat":20000000000,"backoff_base":1000000000,` +
	`"backoff_cap":30000000000,"grace":60000000000,"max_attempts":3,"sweep_every":5000000000,"probe_threshold":30000000000,` +
	`"probe_every":5000000000,"dispatch_every":1000000000,"claim_hold":25000000000,"request_timeout":5000000000,"judge_max":150000000000,` +
	`"home_workers":2,"prod_workers":1}`)

func (b *h) run(t *testing.T) *Run {
	r, err := Decode(traces.Header{Format: traces.Format, System: "arbiter", Entropy: "pcg", Design: design}, b.evs)
	require.NoError(t, err)
	return r
}

// happy: 101 arrives, is claimed by home-1 with token A, decided AC.
func happy() *h {
	b := &h{}
	b.commit(ins("submissions", sub(101, "pending", "", 0, "")))
	b.call("c1", "home-1", "claim", 0, "", 0, "r1")
	b.commit(upd("submissions", sub(101, "pending", "", 0, ""), sub(101, "judging", "A", 1, "home-1")), ins("claims", row{"worker_id": "home-1", "request_id": "r1", "submission_id": 101, "lease_token": "A"}))
	b.ret("c1", "home-1", 200, 101, "A", 1)
	b.call("h1", "home-1", "heartbeat", 101, "A", 0, "")
	b.ret("h1", "home-1", 200, 101, "A", 0)
	b.add("home-1", hist.KindCall, hist.Call{ID: "s1", Client: "home-1", Op: "submit", Sub: 101, Token: "A", Gen: 1, Verdict: "AC"})
	b.commit(ins("submission_judgings", judging(101, "A", 1, "home-1", "AC", 1)), upd("submissions", sub(101, "judging", "A", 1, "home-1"), sub(101, "AC", "A", 1, "home-1")),
		ins("first_ac", row{"id": 1, "user_id": 1, "problem_id": 1, "submission_id": 101}), upd("users", row{"id": 1, "xp": 0}, row{"id": 1, "xp": 10}))
	b.ret("s1", "home-1", 200, 101, "A", 0)
	return b
}

func verdictOf(t *testing.T, r *Run, name string) checker.Verdict {
	for _, inv := range Invariants {
		if inv.Name == name {
			return inv.Check(r)
		}
	}
	t.Fatalf("no invariant %s", name)
	return checker.Verdict{}
}

func TestHappyHistoryPassesEverything(t *testing.T) {
	r := happy().run(t)
	res := Check(r)
	for _, v := range res.Verdicts {
		assert.True(t, v.OK, "%s", v)
	}
}

// Each invariant: a hand-made history that must pass, one that must fail.
func TestInvariantsMustPassAndMustFail(t *testing.T) {
	cases := []struct {
		prop string
		pass func() *h
		fail func() *h
	}{
		{PA1, happy, func() *h {
			// A stale token-A result accepted while token B holds the lease.
			b := happy()
			b.evs = b.evs[:7]
			b.commit(upd("submissions", sub(101, "judging", "A", 1, "home-1"), sub(101, "pending", "", 1, "")))
			b.commit(upd("submissions", sub(101, "pending", "", 1, ""), sub(101, "judging", "B", 2, "home-1")))
			b.commit(ins("submission_judgings", judging(101, "A", 1, "home-1", "WA", 1)), upd("submissions", sub(101, "judging", "B", 2, "home-1"), sub(101, "WA", "B", 2, "home-1")))
			return b
		}},
		{PA2, happy, func() *h {
			// A verdict overwritten without a rejudge.
			b := happy()
			b.commit(upd("submissions", sub(101, "AC", "A", 1, "home-1"), sub(101, "WA", "A", 1, "home-1")))
			return b
		}},
		{PA4, happy, func() *h {
			// One claim (request r1, retried) granted two leases.
			b := happy()
			b.commit(ins("submissions", sub(102, "pending", "", 0, "")))
			b.call("c2", "home-1", "claim", 0, "", 0, "r2")
			b.commit(upd("submissions", sub(102, "pending", "", 0, ""), sub(102, "judging", "C", 1, "home-1")), ins("claims", row{"worker_id": "home-1", "request_id": "r2", "submission_id": 102, "lease_token": "C"}))
			b.commit(ins("submissions", sub(103, "pending", "", 0, "")))
			b.commit(upd("submissions", sub(103, "pending", "", 0, ""), sub(103, "judging", "D", 1, "home-1")), ins("claims", row{"worker_id": "home-1", "request_id": "r2", "submission_id": 103, "lease_token": "D"}))
			return b
		}},
		{PA5, func() *h {
			b := happy()
			b.call("s2", "home-1", "submit", 101, "A", 1, "")
			b.ret("s2", "home-1", 200, 101, "A", 0) // a duplicate answered as the first
			return b
		}, func() *h {
			b := happy()
			b.call("s2", "home-1", "submit", 101, "A", 1, "")
			b.ret("s2", "home-1", 410, 101, "A", 0) // a duplicate refused
			return b
		}},
		{PA6, happy, func() *h {
			b := happy()
			b.commit(upd("users", row{"id": 1, "xp": 10}, row{"id": 1, "xp": 20})) // XP credited twice
			return b
		}},
		{PA7, func() *h {
			b := happy()
			b.add("home-1", hist.KindResult, hist.Result{Worker: "home-1", Sub: 101, Token: "A", Verdict: "AC", Phase: hist.ResultSaved, Durable: true})
			b.add("home-1", hist.KindResult, hist.Result{Worker: "home-1", Sub: 101, Token: "A", Verdict: "AC", Phase: hist.ResultAnswered, Code: 200})
			b.at(b.t+600*s).add("db", "state", hist.State{What: "idle"})
			return b
		}, func() *h {
			b := happy()
			b.add("home-1", hist.KindResult, hist.Result{Worker: "home-1", Sub: 101, Token: "A", Verdict: "AC", Phase: hist.ResultSaved})
			b.at(b.t+600*s).add("db", "state", hist.State{What: "idle"}) // never answered
			return b
		}},
		{PA8, func() *h {
			b := happy()
			b.add("", "fault", map[string]any{"kind": "heal-all"})
			b.at(b.t+2000*s).add("db", "state", hist.State{What: "idle"})
			return b
		}, func() *h {
			b := &h{}
			b.commit(ins("submissions", sub(101, "pending", "", 0, "")))
			b.add("", "fault", map[string]any{"kind": "heal-all"})
			b.at(b.t+2000*s).add("db", "state", hist.State{What: "idle"}) // never judged
			return b
		}},
	}
	for _, c := range cases {
		t.Run(c.prop, func(t *testing.T) {
			ok := verdictOf(t, c.pass().run(t), c.prop)
			assert.True(t, ok.OK, "must pass: %s", ok)
			bad := verdictOf(t, c.fail().run(t), c.prop)
			assert.False(t, bad.OK, "must fail")
			t.Logf("must-fail caught: %s", bad)
		})
	}
}

// The lease model, both views: the happy history is linearizable; a 200 for
// a heartbeat of a token that a newer claim voided is not.
func TestLeaseModelMustPassAndMustFail(t *testing.T) {
	for _, view := range []View{ClientView, OracleView} {
		v, _ := Linearizable(happy().run(t), view)
		assert.True(t, v.OK, "view %d: %s", view, v)
	}
	b := happy()
	b.evs = b.evs[:7] // up to home-1's confirmed lease A
	b.commit(upd("submissions", sub(101, "judging", "A", 1, "home-1"), sub(101, "pending", "", 1, "")))
	b.call("c2", "home-2", "claim", 0, "", 0, "q1")
	b.commit(upd("submissions", sub(101, "pending", "", 1, ""), sub(101, "judging", "B", 2, "home-2")))
	b.ret("c2", "home-2", 200, 101, "B", 2)
	b.call("h2", "home-1", "heartbeat", 101, "A", 0, "")
	b.ret("h2", "home-1", 200, 101, "A", 0) // the old token heartbeats successfully: two owners
	for _, view := range []View{ClientView, OracleView} {
		v, info := Linearizable(b.run(t), view)
		assert.False(t, v.OK, "view %d must catch the second owner", view)
		assert.NotNil(t, info, "porcupine's info for the visualisation")
		// The explanation names the operation that cannot be placed (the
		// old token's successful heartbeat) and its trace events.
		assert.Contains(t, v.Message, "home-1 heartbeat(A) -> 200 (called at ", "view %d: %s", view, v.Message)
		assert.Contains(t, v.Message, "cannot be placed among the ", "view %d", view)
		assert.Contains(t, v.Detail, "leaving the lease judging under token B gen 2", "view %d: %s", view, v.Detail)
		assert.Len(t, v.Events, 2, "its call and its return")
	}
	// An unknown outcome (no return) may or may not have applied.
	u := happy()
	u.evs = u.evs[:8] // the submit call without its return
	v, _ := Linearizable(u.run(t), ClientView)
	assert.True(t, v.OK, "an unknown outcome is accepted: %s", v)
}

func TestBoundsMustPassAndMustFail(t *testing.T) {
	m := Metrics{ExtraLatency: map[int64]time.Duration{101: 12 * time.Second}, Wasted: 1, WastedSubs: []int64{101}, FalseSystemErrors: 1, OutageLoad: 30}
	vs := Bounds{ExtraLatency: 10 * time.Second, OutageLoad: 14}.Check(m)
	require.Len(t, vs, 2, "MA2 and MA3 are invariants: their bounds check nothing")
	for _, v := range vs {
		assert.False(t, v.OK, "%s must fail", v.Property)
	}
	vs = Bounds{ExtraLatency: 20 * time.Second, OutageLoad: 40}.Check(m)
	for _, v := range vs {
		assert.True(t, v.OK, "%s must pass", v)
	}
}

func TestDecodeRejectsForeignDesign(t *testing.T) {
	_, err := Decode(traces.Header{System: "x", Design: json.RawMessage(`{"participants":2}`)}, nil)
	assert.ErrorContains(t, err, "not an arbiter design")
}

// Found by the soak (seeds 958 and 9421): an attempt answered 503 long
// before a later retry's commit recorded the result must not be settled as
// the one that applied it.
func TestOracleSettlesOnlyWithinTheAttempt(t *testing.T) {
	b := &h{}
	b.commit(ins("submissions", sub(101, "pending", "", 0, "")))
	b.call("c1", "home-1", "claim", 0, "", 0, "r1")
	b.commit(upd("submissions", sub(101, "pending", "", 0, ""), sub(101, "judging", "A", 1, "home-1")))
	b.ret("c1", "home-1", 200, 101, "A", 1)
	b.call("s1", "home-1", "submit", 101, "A", 1, "")
	b.ret("s1", "home-1", 503, 101, "A", 0) // the database was down
	b.call("h1", "home-1", "heartbeat", 101, "A", 0, "")
	b.ret("h1", "home-1", 200, 101, "A", 0) // still judging: the 503 did not apply
	b.call("s2", "home-1", "submit", 101, "A", 1, "")
	b.commit(ins("submission_judgings", judging(101, "A", 1, "home-1", "WA", 1)), upd("submissions", sub(101, "judging", "A", 1, "home-1"), sub(101, "WA", "A", 1, "home-1")))
	b.ret("s2", "home-1", 200, 101, "A", 0)
	for _, view := range []View{ClientView, OracleView} {
		v, _ := Linearizable(b.run(t), view)
		assert.True(t, v.OK, "view %d: %s", view, v)
	}
}

// Found by review: a rejudge after a sweep to system_error, and after a
// legacy worker's verdict, are correct (both views must accept them); a
// refused rejudge of a system_error row is not (the oracle view sees it).
func TestRejudgeAfterUnseenTransitions(t *testing.T) {
	sweep := func(code int) *h {
		b := &h{}
		b.commit(ins("submissions", sub(101, "pending", "", 0, "")))
		b.call("c1", "home-1", "claim", 0, "", 0, "r1")
		b.commit(upd("submissions", sub(101, "pending", "", 0, ""), sub(101, "judging", "A", 1, "home-1")))
		b.ret("c1", "home-1", 200, 101, "A", 1)
		b.commit(upd("submissions", sub(101, "judging", "A", 1, "home-1"), sub(101, "system_error", "", 1, "")))
		b.call("j1", "operator", "rejudge", 101, "", 0, "")
		if code == 200 {
			b.commit(upd("submissions", sub(101, "system_error", "", 1, ""), sub(101, "pending", "", 2, "")))
		}
		b.ret("j1", "operator", code, 101, "", 0)
		return b
	}
	legacy := &h{}
	legacy.commit(ins("submissions", sub(101, "pending", "", 0, "")))
	legacy.commit(upd("submissions", sub(101, "pending", "", 0, ""), sub(101, "judging", "", 0, "home-2")))
	legacy.commit(ins("submission_judgings", judging(101, "", 0, "home-2", "AC", 1)), upd("submissions", sub(101, "judging", "", 0, "home-2"), sub(101, "AC", "", 0, "home-2")))
	legacy.call("j1", "operator", "rejudge", 101, "", 0, "")
	legacy.commit(upd("submissions", sub(101, "AC", "", 0, "home-2"), sub(101, "pending", "", 1, "")))
	legacy.ret("j1", "operator", 200, 101, "", 0)
	for _, view := range []View{ClientView, OracleView} {
		for name, b := range map[string]*h{"rejudge after system_error": sweep(200), "rejudge after a legacy verdict": legacy} {
			v, _ := Linearizable(b.run(t), view)
			assert.True(t, v.OK, "%s, view %d: %s", name, view, v)
		}
	}
	v, _ := Linearizable(sweep(410).run(t), OracleView)
	assert.False(t, v.OK, "a refused rejudge of a system_error row is caught in the oracle view")
}

func (b *h) read(id string, sub int64, code int, status string, gen int64) {
	b.call(id, "web", "read", sub, "", 0, "")
	b.add("web", hist.KindReturn, hist.Return{ID: id, Code: code, Sub: sub, Status: status, Gen: gen})
}

// Status reads: what a user sees must be the current state (oracle view),
// and a reader never goes back to an older generation's verdict (PA2).
func TestStatusReadsMustPassAndMustFail(t *testing.T) {
	good := happy()
	good.read("r1", 101, 200, "AC", 1)
	good.call("j1", "operator", "rejudge", 101, "", 0, "")
	good.commit(upd("submissions", sub(101, "AC", "A", 1, "home-1"), sub(101, "pending", "", 2, "")))
	good.ret("j1", "operator", 200, 101, "", 0)
	good.read("r2", 101, 200, "pending", 2)
	r := good.run(t)
	v, _ := Linearizable(r, OracleView)
	assert.True(t, v.OK, "%s", v)
	assert.True(t, NoRegression(r).OK)

	stale := happy()
	stale.call("j1", "operator", "rejudge", 101, "", 0, "")
	stale.commit(upd("submissions", sub(101, "AC", "A", 1, "home-1"), sub(101, "pending", "", 2, "")))
	stale.ret("j1", "operator", 200, 101, "", 0)
	stale.read("r1", 101, 200, "pending", 2)
	stale.read("r2", 101, 200, "AC", 1) // the old generation's verdict, after the new state
	r = stale.run(t)
	v, _ = Linearizable(r, OracleView)
	assert.False(t, v.OK, "a stale read is not linearizable")
	bad := NoRegression(r)
	assert.False(t, bad.OK, "a reader went back to an older generation")
	t.Logf("caught: %s", bad)
}

// batch: 101 and 102 arrive; one claim of home-1 leases both in one
// transaction (claim_batch 2), both are heartbeated and decided.
func batch() *h {
	b := &h{}
	b.commit(ins("submissions", sub(101, "pending", "", 0, "")), ins("submissions", sub(102, "pending", "", 0, "")))
	b.call("c1", "home-1", "claim", 0, "", 0, "r1")
	b.commit(upd("submissions", sub(101, "pending", "", 0, ""), sub(101, "judging", "A", 1, "home-1")),
		upd("submissions", sub(102, "pending", "", 0, ""), sub(102, "judging", "B", 1, "home-1")),
		ins("claims", row{"worker_id": "home-1", "request_id": "r1", "submission_id": 101, "lease_token": "A"}),
		ins("claims", row{"worker_id": "home-1", "request_id": "r1", "submission_id": 102, "lease_token": "B"}))
	b.add("home-1", hist.KindReturn, hist.Return{ID: "c1", Code: 200, Sub: 101, Token: "A", Gen: 1,
		Leases: []hist.Lease{{Sub: 101, Token: "A", Gen: 1}, {Sub: 102, Token: "B", Gen: 1}}})
	for i, l := range []struct {
		sub   int64
		token string
	}{{101, "A"}, {102, "B"}} {
		hb, sb := "h"+l.token, "s"+l.token
		b.call(hb, "home-1", "heartbeat", l.sub, l.token, 0, "")
		b.ret(hb, "home-1", 200, l.sub, l.token, 0)
		b.add("home-1", hist.KindCall, hist.Call{ID: sb, Client: "home-1", Op: "submit", Sub: l.sub, Token: l.token, Gen: 1, Verdict: "WA"})
		b.commit(ins("submission_judgings", judging(l.sub, l.token, 1, "home-1", "WA", int64(i+1))),
			upd("submissions", sub(l.sub, "judging", l.token, 1, "home-1"), sub(l.sub, "WA", l.token, 1, "home-1")))
		b.ret(sb, "home-1", 200, l.sub, l.token, 0)
	}
	return b
}

func (b *h) runWith(t *testing.T, set string) *Run {
	d := append(append(json.RawMessage{}, design[:len(design)-1]...), []byte(","+set+"}")...)
	r, err := Decode(traces.Header{Format: traces.Format, System: "arbiter", Entropy: "pcg", Design: d}, b.evs)
	require.NoError(t, err)
	return r
}

// TestClaimBatches (claim_batch): every lease of a batch answer is a lease
// of its own in the lease model (PA1-PA3 per lease), and PA4 accepts one
// transaction granting up to claim_batch leases, but not more, and not two
// transactions for one claim.
func TestClaimBatches(t *testing.T) {
	res := Check(batch().runWith(t, `"claim_batch":2`))
	for _, v := range res.Verdicts {
		assert.True(t, v.OK, "a batch of 2 under claim_batch 2: %s", v)
	}
	v := verdictOf(t, batch().runWith(t, `"claim_batch":1`), PA4)
	assert.False(t, v.OK, "two leases in one answer under claim_batch 1")
	assert.Contains(t, v.Message, "claim_batch is 1")
	// The same claim granted a third lease by a second transaction.
	b := batch()
	b.commit(ins("submissions", sub(103, "pending", "", 0, "")))
	b.commit(upd("submissions", sub(103, "pending", "", 0, ""), sub(103, "judging", "C", 1, "home-1")),
		ins("claims", row{"worker_id": "home-1", "request_id": "r1", "submission_id": 103, "lease_token": "C"}))
	v = verdictOf(t, b.runWith(t, `"claim_batch":3`), PA4)
	assert.False(t, v.OK, "a claim granted leases by two transactions")
	assert.Contains(t, v.Message, "two transactions")
	// Without the batch rule in the lease model, the second lease's
	// heartbeat and submit would be unknown tokens: PA3 checks them.
	b = batch()
	b.evs[3].Data, _ = json.Marshal(hist.Return{ID: "c1", Code: 200, Sub: 101, Token: "A", Gen: 1})
	v, _ = Linearizable(b.runWith(t, `"claim_batch":2`), ClientView)
	assert.False(t, v.OK, "an answer that hides the second lease makes its use illegal")
}

// TestSearchLimitEndsUndecided: a linearizability search past its bound
// ends with an "undecided: search limit" verdict, which holds (no violation
// was found) and says so, never a hang and never a claimed violation.
func TestSearchLimitEndsUndecided(t *testing.T) {
	for _, view := range []View{ClientView, OracleView} {
		v, _ := Linearizable(happy().run(t), view)
		require.True(t, v.OK, "within the bound the happy history passes: %s", v)
	}
	defer func(n int) { SearchLimit = n }(SearchLimit)
	SearchLimit = 2
	v, info := Linearizable(happy().run(t), OracleView)
	assert.True(t, v.OK, "a search that gave up fails no run")
	assert.True(t, checker.IsUndecided(v), "and says it did not decide: %s", v)
	assert.Contains(t, v.Message, "undecided: search limit")
	assert.Contains(t, v.String(), ": ok (undecided: search limit")
	assert.NotContains(t, v.Message, "not linearizable", "a search that gave up claims no violation")
	assert.Nil(t, info, "no visualisation of a linearization that was not decided")
}

// TestLivenessOfQuietRuns: a run that ends soon after healing (it was
// quiet) is judged from its decision times: checked and passing when every
// submission was decided, "not checked" (and not a violation) only when one
// was still undecided, and still a violation when a decision came after the
// bound.
func TestLivenessOfQuietRuns(t *testing.T) {
	quiet := happy()
	quiet.add("", "fault", map[string]any{"kind": "heal-all"})
	quiet.at(quiet.t+40*s).add("db", "state", hist.State{What: "idle"})
	v := verdictOf(t, quiet.run(t), PA8)
	assert.True(t, v.OK, "%s", v)
	assert.NotContains(t, v.Message, "not checked")

	open := &h{}
	open.commit(ins("submissions", sub(101, "pending", "", 0, "")))
	open.add("", "fault", map[string]any{"kind": "heal-all"})
	open.at(open.t+40*s).add("db", "state", hist.State{What: "idle"})
	v = verdictOf(t, open.run(t), PA8)
	assert.True(t, v.OK, "an undecided submission before the bound is not a violation: %s", v)
	assert.Contains(t, v.Message, "not checked")
	assert.Contains(t, v.Message, "submission 101 undecided")

	late := &h{}
	late.commit(ins("submissions", sub(101, "pending", "", 0, "")))
	late.add("", "fault", map[string]any{"kind": "heal-all"})
	late.at(late.t + 2000*s).commit(upd("submissions", sub(101, "pending", "", 0, ""), sub(101, "AC", "", 0, "")))
	v = verdictOf(t, late.run(t), PA8)
	assert.False(t, v.OK, "a decision after the bound is a violation")
}

// TestStaleCachedReadFailsPA3: status reads are part of PA3's history in
// the client's view too. A read served from a stale cache, after the
// client saw the verdict accepted (its submit answered 200), still says
// "judging": no transition the client cannot see explains it, so PA3
// (the client's view) fails, as the oracle's view does. Its neighbours
// pass: the read that says AC; a read that overlaps the submit (it may
// come before it); and, in the client's view alone, a read that sees what
// the client cannot (a sweep back to pending, a later generation from a
// grant whose answer it never had).
func TestStaleCachedReadFailsPA3(t *testing.T) {
	stale := happy()
	stale.read("r1", 101, 200, "judging", 1)
	for _, view := range []View{ClientView, OracleView} {
		v, _ := Linearizable(stale.run(t), view)
		assert.False(t, v.OK, "view %d: a stale cached read after the verdict", view)
	}

	fresh := happy()
	fresh.read("r1", 101, 200, "AC", 1)
	v, _ := Linearizable(fresh.run(t), ClientView)
	assert.True(t, v.OK, "%s", v)

	overlapping := &h{}
	overlapping.evs = happy().evs
	overlapping.evs = overlapping.evs[:len(overlapping.evs)-1] // the submit's answer comes after the read
	overlapping.t = overlapping.evs[len(overlapping.evs)-1].T
	overlapping.read("r1", 101, 200, "judging", 1)
	overlapping.ret("s1", "home-1", 200, 101, "A", 0)
	v, _ = Linearizable(overlapping.run(t), ClientView)
	assert.True(t, v.OK, "a read within the submit's interval may precede it: %s", v)

	// Unseen by the client: the lease swept back to pending (its
	// heartbeat said nothing of it), then granted to a claim whose answer
	// never came (generation 2).
	unseen := &h{}
	unseen.commit(ins("submissions", sub(101, "pending", "", 0, "")))
	unseen.call("c1", "home-1", "claim", 0, "", 0, "r1")
	unseen.commit(upd("submissions", sub(101, "pending", "", 0, ""), sub(101, "judging", "A", 1, "home-1")))
	unseen.ret("c1", "home-1", 200, 101, "A", 1)
	unseen.commit(upd("submissions", sub(101, "judging", "A", 1, "home-1"), sub(101, "pending", "", 1, "")))
	unseen.read("r1", 101, 200, "pending", 1)
	unseen.call("c2", "home-2", "claim", 0, "", 0, "r2")
	unseen.commit(upd("submissions", sub(101, "pending", "", 1, ""), sub(101, "judging", "B", 2, "home-2")))
	unseen.read("r2", 101, 200, "judging", 2)
	for _, view := range []View{ClientView, OracleView} {
		v, _ := Linearizable(unseen.run(t), view)
		assert.True(t, v.OK, "view %d: %s", view, v)
	}
}

// TestManyUnansweredSubmitsDecide: a worker retried its result for minutes
// and none of 30 attempts was answered, though one of them carried the
// commit that decided it (explore --world wide --faults heavy, seed 531).
// In the oracle view only that attempt applied; the others are duplicates
// that changed nothing and are left out, so porcupine decides the history
// at once instead of ordering 30 open attempts against each other (which
// ran past its search limit: "unknown"). A stale token's verdict among
// them is still caught.
func TestManyUnansweredSubmitsDecide(t *testing.T) {
	retried := func(stale bool) *h {
		b := &h{}
		b.commit(ins("submissions", sub(101, "pending", "", 0, "")))
		b.call("c1", "home-1", "claim", 0, "", 0, "r1")
		b.commit(upd("submissions", sub(101, "pending", "", 0, ""), sub(101, "judging", "A", 1, "home-1")))
		b.ret("c1", "home-1", 200, 101, "A", 1)
		b.read("r0", 101, 200, "judging", 1)
		for i := range 30 {
			b.add("home-1", hist.KindCall, hist.Call{ID: fmt.Sprintf("s%d", i), Client: "home-1", Op: "submit", Sub: 101, Token: "A", Gen: 1, Verdict: "AC"})
			if i == 20 {
				b.commit(ins("submission_judgings", judging(101, "A", 1, "home-1", "AC", 1)), upd("submissions", sub(101, "judging", "A", 1, "home-1"), sub(101, "AC", "A", 1, "home-1")))
			}
		}
		if stale {
			b.read("r1", 101, 200, "judging", 1) // after the verdict's commit, every attempt since open
		} else {
			b.read("r1", 101, 200, "AC", 1)
		}
		return b
	}
	v, _ := Linearizable(retried(false).run(t), OracleView)
	assert.True(t, v.OK, "%s", v)
	assert.False(t, checker.IsUndecided(v), "decided, not given up on: %s", v)
	v, _ = Linearizable(retried(true).run(t), OracleView)
	assert.False(t, v.OK, "a read of the decided row as judging")
	assert.NotContains(t, v.Message, "unknown")
}
