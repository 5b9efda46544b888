//go:build porcupine

package outbox

// Built with -tags porcupine once go.mod requires
// github.com/anishathalye/porcupine v1.3.1: the same model, checked by
// porcupine itself (and visualised on failure).

import "github.com/anishathalye/porcupine"

// Porcupine returns m as a porcupine.Model.
func Porcupine(m Model) porcupine.Model {
	return porcupine.Model{
		Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
			ours := make([]Operation, len(h))
			for i, op := range h {
				ours[i] = Operation{ClientId: op.ClientId, Input: op.Input, Call: op.Call, Output: op.Output, Return: op.Return}
			}
			var out [][]porcupine.Operation
			for _, p := range m.Partition(ours) {
				q := make([]porcupine.Operation, len(p))
				for i, op := range p {
					q[i] = toPorcupine(op)
				}
				out = append(out, q)
			}
			return out
		},
		Init:              m.Init,
		Step:              m.Step,
		Equal:             m.Equal,
		DescribeOperation: m.DescribeOperation,
		DescribeState:     m.DescribeState,
	}
}

// CheckPorcupine checks a history with porcupine, without a timeout.
func CheckPorcupine(m Model, history []Operation) (porcupine.CheckResult, porcupine.LinearizationInfo) {
	ops := make([]porcupine.Operation, len(history))
	for i, op := range history {
		ops[i] = toPorcupine(op)
	}
	return porcupine.CheckOperationsVerbose(Porcupine(m), ops, 0)
}

func toPorcupine(op Operation) porcupine.Operation {
	return porcupine.Operation{ClientId: op.ClientId, Input: op.Input, Call: op.Call, Output: op.Output, Return: op.Return}
}
