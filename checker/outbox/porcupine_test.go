//go:build porcupine

package outbox

import (
	"testing"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"
)

// TestPorcupineAgrees: on random small histories of one key, porcupine and
// CheckLinearizable give the same answer.
func TestPorcupineAgrees(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 7).Draw(t, "ops")
		var ops []Operation
		for i := 0; i < n; i++ {
			call := rapid.Int64Range(0, 20).Draw(t, "call")
			var ret int64 = Never
			if !rapid.Bool().Draw(t, "lost") {
				ret = call + rapid.Int64Range(0, 20).Draw(t, "dur")
			}
			out := LinOutput{Unknown: ret == Never}
			if !out.Unknown {
				out.Code = rapid.SampledFrom([]int{200, 200, 404, 503}).Draw(t, "code")
				if out.Code == 200 {
					out.Value = rapid.SampledFrom([]string{"a", "b"}).Draw(t, "value")
				}
			}
			ops = append(ops, Operation{ClientId: i, Input: LinInput{Key: "k", Op: OpCharge}, Call: call, Output: out, Return: ret})
		}
		ours := CheckLinearizable(KeyModel, ops).OK
		res, _ := CheckPorcupine(KeyModel, ops)
		if ours != (res == porcupine.Ok) {
			t.Fatalf("ours %v, porcupine %v on %+v", ours, res, ops)
		}
	})
}
