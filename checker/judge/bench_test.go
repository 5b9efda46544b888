package judge

import (
	"fmt"
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// synthetic returns a history of about n operations over n/10 submissions:
// a claim, heartbeats, a submit, a duplicate submit and a lost heartbeat
// each, with overlapping intervals.
func synthetic(n int) []porcupine.Operation {
	var ops []porcupine.Operation
	subs := n / 10
	for s := 0; s < subs; s++ {
		base := int64(s) * 1000
		tok := fmt.Sprintf("T%d", s)
		add := func(in LeaseIn, code int, call, ret int64) {
			ops = append(ops, porcupine.Operation{ClientId: s % 7, Input: in, Output: LeaseOut{Code: code}, Call: base + call, Return: base + ret})
		}
		add(LeaseIn{Op: "claim", Client: "w", Token: tok, Gen: 1}, 200, 0, 10)
		for i := int64(0); i < 6; i++ {
			add(LeaseIn{Op: "heartbeat", Client: "w", Token: tok}, 200, 20+i*10, 35+i*10)
		}
		add(LeaseIn{Op: "heartbeat", Client: "w", Token: tok}, 0, 90, 1<<62)
		add(LeaseIn{Op: "submit", Client: "w", Token: tok, Verdict: "AC"}, 200, 100, 120)
		add(LeaseIn{Op: "submit", Client: "w", Token: tok, Verdict: "AC"}, 200, 110, 130)
	}
	return ops
}

// BenchmarkPorcupineLease: porcupine on the lease model, one partition per
// submission (as the checkers partition), for 1k and 10k operations.
func BenchmarkPorcupineLease(b *testing.B) {
	m := LeaseModel()
	m.Partition = func(h []porcupine.Operation) [][]porcupine.Operation {
		by := map[int64][]porcupine.Operation{}
		var keys []int64
		for _, op := range h {
			k := op.Call / 1000
			if _, ok := by[k]; !ok {
				keys = append(keys, k)
			}
			by[k] = append(by[k], op)
		}
		out := make([][]porcupine.Operation, len(keys))
		for i, k := range keys {
			out[i] = by[k]
		}
		return out
	}
	for _, n := range []int{1000, 10000} {
		h := synthetic(n)
		b.Run(fmt.Sprintf("ops=%d", len(h)), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if res, _ := porcupine.CheckOperationsVerbose(m, h, 0); res != porcupine.Ok {
					b.Fatalf("synthetic history must be linearizable, got %s", res)
				}
			}
			b.ReportMetric(float64(len(h)*b.N)/b.Elapsed().Seconds(), "ops/s")
		})
	}
}

// workload returns an in-memory trace of n submissions, as a run of the
// model hands it to the checkers (typed values, no JSON): each is claimed
// by one of three workers, heartbeated, judged, saved, submitted (with a
// lost reply and its duplicate on every fifth) and credited; every
// seventh has its first lease reclaimed and granted again; a worker
// crashes and restarts now and then, and a cut hits a link.
func workload(n int) (traces.Header, []traces.Event) {
	var evs []traces.Event
	t := int64(0)
	tx := uint64(0)
	add := func(node, kind string, v any) {
		t += s / 10
		evs = append(evs, traces.Event{Seq: uint64(len(evs) + 1), T: t, Node: node, Kind: kind, Value: v})
	}
	commit := func(changes ...hist.Change) {
		tx++
		add("db", hist.KindCommit, hist.CommitRecord{Seq: tx, Tx: tx, At: clock.Time(t), Changes: changes})
	}
	row := func(id int64, status, token string, gen int64, worker string) map[string]any {
		r := map[string]any{"id": id, "user_id": id, "problem_id": id % 3, "status": status, "lease_gen": gen, "judge_attempts": gen, "lease_expires_at": nil, "lease_token": nil, "worker_id": nil}
		if token != "" {
			r["lease_token"], r["worker_id"] = token, worker
		}
		return r
	}
	upd := func(b, a map[string]any) hist.Change {
		return hist.Change{Table: "submissions", Op: "update", Key: []any{a["id"]}, Before: b, After: a}
	}
	workers := []string{"home-1", "home-2", "prod-1"}
	for i := 0; i < n; i++ {
		id := int64(101 + i)
		w := workers[i%len(workers)]
		commit(hist.Change{Table: "submissions", Op: "insert", Key: []any{id}, After: row(id, "pending", "", 0, "")})
		gen := int64(0)
		grant := func(tok string) {
			req := fmt.Sprintf("%s-%d", w, id*10+gen)
			cid := "c" + req
			add(w, hist.KindCall, hist.Call{ID: cid, Client: w, Op: "claim", RequestID: req, Episode: req})
			gen++
			commit(upd(row(id, "pending", "", gen-1, ""), row(id, "judging", tok, gen, w)),
				hist.Change{Table: "claims", Op: "insert", Key: []any{w, req}, After: map[string]any{"worker_id": w, "request_id": req, "submission_id": id, "lease_token": tok}})
			add(w, hist.KindReturn, hist.Return{ID: cid, Code: 200, Sub: id, Token: tok, Gen: gen})
			add(w, hist.KindJudge, hist.Judge{Worker: w, Sub: id, Token: tok, Gen: gen, Phase: hist.JudgeStart})
			for k := 0; k < 3; k++ {
				hid := fmt.Sprintf("h%s.%d", tok, k)
				add(w, hist.KindCall, hist.Call{ID: hid, Client: w, Op: "heartbeat", Sub: id, Token: tok})
				add(w, hist.KindReturn, hist.Return{ID: hid, Code: 200, Sub: id, Token: tok})
			}
		}
		tok := fmt.Sprintf("arbiter-1.1.%d", id*2)
		grant(tok)
		if i%7 == 3 {
			add(w, "crash", nil)
			add(w, "restart", nil)
			commit(upd(row(id, "judging", tok, gen, w), row(id, "pending", "", gen, "")))
			tok = fmt.Sprintf("arbiter-1.1.%d", id*2+1)
			grant(tok)
		}
		if i%11 == 5 {
			add("", "fault", FaultAt{Kind: "cut", Node: w, Peer: "arbiter-1", For: int64(2 * s)})
		}
		v := "AC"
		if i%2 == 1 {
			v = "WA"
		}
		add(w, hist.KindJudge, hist.Judge{Worker: w, Sub: id, Token: tok, Gen: gen, Phase: hist.JudgeEnd, Verdict: v})
		res := hist.Result{Worker: w, Sub: id, Token: tok, Gen: gen, Verdict: v, Phase: hist.ResultSaved, Durable: true}
		add(w, hist.KindResult, res)
		sid := "s" + tok
		add(w, hist.KindCall, hist.Call{ID: sid, Client: w, Op: "submit", Sub: id, Token: tok, Gen: gen, Verdict: v})
		changes := []hist.Change{
			{Table: "submission_judgings", Op: "insert", Key: []any{int64(i + 1)}, After: map[string]any{"seq": int64(i + 1), "submission_id": id, "lease_token": tok, "lease_gen": gen, "worker_id": w, "verdict": v}},
			upd(row(id, "judging", tok, gen, w), row(id, v, tok, gen, w)),
		}
		if v == "AC" {
			changes = append(changes, hist.Change{Table: "first_ac", Op: "insert", Key: []any{id}, After: map[string]any{"user_id": id, "problem_id": id % 3, "submission_id": id}})
		}
		commit(changes...)
		if i%5 == 0 {
			// the reply is lost; the retry is a duplicate
			sid2 := sid + "'"
			add(w, hist.KindCall, hist.Call{ID: sid2, Client: w, Op: "submit", Sub: id, Token: tok, Gen: gen, Verdict: v})
			sid = sid2
		}
		add(w, hist.KindReturn, hist.Return{ID: sid, Code: 200, Sub: id, Token: tok})
		res.Phase, res.Code = hist.ResultAnswered, 200
		add(w, hist.KindResult, res)
		add("web", hist.KindCall, hist.Call{ID: fmt.Sprintf("r%d", id), Client: "web", Op: "read", Sub: id})
		add("web", hist.KindReturn, hist.Return{ID: fmt.Sprintf("r%d", id), Code: 200, Sub: id, Status: v, Gen: gen})
	}
	return traces.Header{Format: traces.Format, System: "arbiter", Entropy: "pcg", Design: design}, evs
}

// BenchmarkCheck: the whole checker (decode, every invariant, both
// porcupine views, the metrics) on an in-memory run of 12, 100 and 1000
// submissions (about 21 events each).
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{12, 100, 1000} {
		h, evs := workload(n)
		b.Run(fmt.Sprintf("subs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				r, err := Decode(h, evs)
				if err != nil {
					b.Fatal(err)
				}
				if res := Check(r); !res.OK() {
					b.Fatalf("the synthetic run must pass: %v", checker.Failed(res.Verdicts))
				}
			}
			b.ReportMetric(float64(len(evs)), "events")
		})
	}
}
