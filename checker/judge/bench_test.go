package judge

import (
	"fmt"
	"testing"

	"github.com/anishathalye/porcupine"
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
