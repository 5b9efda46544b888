package outbox

import (
	"fmt"
	"sort"
	"strings"
)

// Operation is one client operation with its invoke and return times, as
// porcupine (github.com/anishathalye/porcupine v1.3.1) defines it.
type Operation struct {
	ClientId int
	Input    any
	Call     int64
	Output   any
	Return   int64
}

// Model is a sequential specification with porcupine's contract: Partition
// splits a history into independent parts, Init is the initial state, Step
// says whether an operation with that output is legal in a state and
// returns the next state.
//
// This package carries a small checker of its own with the same contract
// (CheckLinearizable below: the Wing-Gong search with Lowe's memoisation, exhaustive,
// no wall-clock timeout) because the module does not require porcupine yet;
// porcupine.go (build tag "porcupine") converts the model with Porcupine(m)
// and checks with porcupine.CheckOperationsVerbose; its test shows both
// checkers agree on random histories. Drop the tag once go.mod requires
// porcupine.
type Model struct {
	Partition         func(history []Operation) [][]Operation
	Init              func() any
	Step              func(state, input, output any) (bool, any)
	Equal             func(state1, state2 any) bool
	DescribeOperation func(input, output any) string
	DescribeState     func(state any) string
}

// LinInput is a delivery of one key.
type LinInput struct {
	Key string
	Op  string
}

// LinOutput is the answer. Unknown: the reply never came, or a 5xx (the
// handler could not tell the outcome).
type LinOutput struct {
	Unknown bool
	Code    int
	Value   string
}

// KeyModel is PB1's sequential specification of one idempotency key: the
// first delivery that takes effect stores an answer; every delivery that
// returns a success returns exactly that answer; a 404 (a refund of
// nothing) changes nothing and is legal only before any effect; a delivery
// with an unknown outcome may or may not have taken effect (the first known
// answer names the stored one either way). Partitioned per key.
var KeyModel = Model{
	Partition: func(h []Operation) [][]Operation {
		by := map[string][]Operation{}
		for _, op := range h {
			k := op.Input.(LinInput).Key
			by[k] = append(by[k], op)
		}
		var out [][]Operation
		for _, k := range sortedKeys(by) {
			out = append(out, by[k])
		}
		return out
	},
	Init: func() any { return "" },
	Step: func(state, input, output any) (bool, any) {
		s, out := state.(string), output.(LinOutput)
		switch {
		case out.Unknown || out.Code >= 500:
			return true, s
		case out.Code >= 200 && out.Code < 300:
			if s == "" || s == out.Value {
				return true, out.Value
			}
			return false, s
		default: // 4xx: refused, nothing stored
			return s == "", s
		}
	},
	Equal: func(a, b any) bool { return a == b },
	DescribeOperation: func(input, output any) string {
		in, out := input.(LinInput), output.(LinOutput)
		if out.Unknown {
			return fmt.Sprintf("%s %s -> ?", in.Op, in.Key)
		}
		return fmt.Sprintf("%s %s -> %d %s", in.Op, in.Key, out.Code, out.Value)
	},
	DescribeState: func(state any) string {
		if state.(string) == "" {
			return "(no answer stored)"
		}
		return "stored: " + state.(string)
	},
}

// LinResult is the outcome of a check.
type LinResult struct {
	OK      bool
	Illegal []string // per illegal partition: its operations, described
}

// CheckLinearizable tells whether history is linearizable against m, partition by
// partition. It is exhaustive (no timeout); partitions must have at most 64
// operations.
func CheckLinearizable(m Model, history []Operation) LinResult {
	parts := [][]Operation{history}
	if m.Partition != nil {
		parts = m.Partition(history)
	}
	res := LinResult{OK: true}
	for _, p := range parts {
		if len(p) == 0 {
			continue
		}
		if !checkPart(m, p) {
			res.OK = false
			res.Illegal = append(res.Illegal, describePart(m, p))
		}
	}
	return res
}

func describePart(m Model, p []Operation) string {
	ops := append([]Operation(nil), p...)
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
	lines := make([]string, len(ops))
	for i, op := range ops {
		ret := "never"
		if op.Return != Never {
			ret = fmt.Sprintf("%.3fs", float64(op.Return)/1e9)
		}
		lines[i] = fmt.Sprintf("[%.3fs, %s] %s", float64(op.Call)/1e9, ret, m.DescribeOperation(op.Input, op.Output))
	}
	return strings.Join(lines, "; ")
}

// checkPart: depth-first search over linearization orders. At each point
// the candidates are the operations not yet linearized that were invoked
// before every remaining operation returned; (set linearized, state) pairs
// already explored are cached.
func checkPart(m Model, p []Operation) bool {
	if len(p) > 64 {
		panic(fmt.Sprintf("checker/outbox: a partition of %d operations is too large for the exhaustive checker", len(p)))
	}
	ops := append([]Operation(nil), p...)
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
	n := len(ops)
	full := uint64(1)<<uint(n) - 1
	if n == 64 {
		full = ^uint64(0)
	}
	type memoKey struct {
		done  uint64
		state string
	}
	seen := map[memoKey]bool{}
	var dfs func(done uint64, state any) bool
	dfs = func(done uint64, state any) bool {
		if done == full {
			return true
		}
		k := memoKey{done, fmt.Sprint(state)}
		if seen[k] {
			return false
		}
		seen[k] = true
		minRet := int64(Never)
		for i := 0; i < n; i++ {
			if done&(1<<uint(i)) == 0 && ops[i].Return < minRet {
				minRet = ops[i].Return
			}
		}
		for i := 0; i < n; i++ {
			if done&(1<<uint(i)) != 0 || ops[i].Call > minRet {
				continue
			}
			if ok, next := m.Step(state, ops[i].Input, ops[i].Output); ok && dfs(done|1<<uint(i), next) {
				return true
			}
		}
		return false
	}
	return dfs(0, m.Init())
}
