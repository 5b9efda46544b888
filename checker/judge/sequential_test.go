package judge

import (
	"testing"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"
)

// TestSequentialMatchesPorcupine: on histories whose operations do not
// overlap, the shortcut's answer is porcupine's (Ok, without the search
// limit), and it takes none that overlap.
func TestSequentialMatchesPorcupine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 12).Draw(t, "n")
		overlap := rapid.Bool().Draw(t, "overlap")
		ops := make([]porcupine.Operation, n)
		at := int64(0)
		for i := range ops {
			in := LeaseIn{
				Op:      rapid.SampledFrom([]string{"claim", "heartbeat", "submit", "rejudge", "read", "expire", "fail", "hold", "settle"}).Draw(t, "op"),
				Client:  rapid.SampledFrom([]string{"w1", "w2", "db"}).Draw(t, "client"),
				Token:   rapid.SampledFrom([]string{"", "a", "b", "c"}).Draw(t, "token"),
				Gen:     rapid.Int64Range(0, 3).Draw(t, "gen"),
				Verdict: rapid.SampledFrom([]string{"", "AC", "WA"}).Draw(t, "verdict"),
				Unseen:  rapid.Bool().Draw(t, "unseen"),
			}
			out := LeaseOut{Code: rapid.SampledFrom([]int{0, 200, 404, 410, 503}).Draw(t, "code")}
			if in.Op == "read" {
				out.Status = rapid.SampledFrom([]string{"pending", "judging", "AC"}).Draw(t, "status")
				out.Gen = rapid.Int64Range(0, 3).Draw(t, "rgen")
			}
			call := at + rapid.Int64Range(1, 3).Draw(t, "gap")
			ret := call + rapid.Int64Range(0, 3).Draw(t, "len")
			if overlap && i > 0 && rapid.Bool().Draw(t, "back") {
				call = at // touches the previous return: concurrent for porcupine
			}
			at = ret
			ops[i] = porcupine.Operation{ClientId: i % 3, Input: in, Output: boxOut(out), Call: call, Return: ret}
		}
		// Shuffled: History does not sort its operations.
		for i := len(ops) - 1; i > 0; i-- {
			j := rapid.IntRange(0, i).Draw(t, "swap")
			ops[i], ops[j] = ops[j], ops[i]
		}
		model, over := boundedModel(SearchLimit)
		res := porcupine.CheckOperations(model, ops)
		sequential := true
		byCall := append([]porcupine.Operation(nil), ops...)
		for i := range byCall {
			for j := range byCall {
				if i != j && byCall[i].Call <= byCall[j].Call && byCall[i].Return >= byCall[j].Call {
					sequential = false
				}
			}
		}
		ok, _ := sequentialOK(ops, nil)
		if ok && (!res || *over) {
			t.Fatalf("the shortcut passed a history porcupine rejects (over %v)", *over)
		}
		if sequential && res && !*over && !ok {
			t.Fatalf("the shortcut missed a sequential history porcupine accepts")
		}
		if ok && !sequential {
			t.Fatalf("the shortcut took an overlapping history")
		}
	})
}
