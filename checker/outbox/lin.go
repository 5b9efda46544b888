package outbox

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
)

// PB1's answers are checked for linearizability by porcupine
// (github.com/anishathalye/porcupine): one operation per keyed delivery,
// partitioned per idempotency key, checked with CheckOperationsVerbose and
// no timeout (a timeout would make the verdict depend on the machine). A
// delivery whose reply never came keeps its unknown outcome: it returns at
// Never (math.MaxInt64) and the model accepts its output either way.

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

// KeyModel is PB1's sequential specification of one idempotency key, as a
// porcupine model: the first delivery that is answered definitively stores
// its answer, a success (2xx: the work done) or a refusal (4xx: a refund
// of nothing, or of a charge already refunded, recorded with the key and
// doing nothing); every later answered delivery returns exactly that
// answer, its code and its body. A delivery with an unknown outcome (no
// reply, or a 5xx) may or may not have taken effect. Treating it as a no-op
// is the most permissive choice, so the model stays deterministic: an
// effect nobody saw can only agree with the first known answer, which
// stores it either way. Partitioned per key, in key order. The state is
// the stored answer ("" before any; "<code> <body>" after).
var KeyModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		for _, op := range h {
			k := op.Input.(LinInput).Key
			by[k] = append(by[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(by))
		for _, k := range sortedKeys(by) {
			out = append(out, by[k])
		}
		return out
	},
	Init: func() any { return "" },
	Step: func(state, input, output any) (bool, any) {
		s, out := state.(string), output.(LinOutput)
		if out.Unknown || out.Code >= 500 {
			return true, s
		}
		// 2xx or 4xx: the answer stored with the key.
		a := fmt.Sprintf("%d %s", out.Code, out.Value)
		if s == "" || s == a {
			return true, a
		}
		return false, s
	},
	Equal: func(a, b any) bool { return a.(string) == b.(string) },
	Hash: func(state any) uint64 {
		h := fnv.New64a()
		h.Write([]byte(state.(string)))
		return h.Sum64()
	},
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
	DescribeOperationMetadata: func(m any) string {
		s, _ := m.(string)
		return s
	},
}

// PB1Operations returns the porcupine history PB1 checks: one operation
// per delivery that carried a key, in call order. ClientId numbers the
// deliveries of one key from 0 (one row each in the visualisation); the
// metadata names the call and its handler.
func PB1Operations(h *History) []porcupine.Operation {
	var ops []porcupine.Operation
	perKey := map[string]int{}
	for _, c := range h.Calls {
		if c.Key == "" {
			continue
		}
		meta := c.ID
		if c.Handler != "" {
			meta += " via " + c.Handler
		}
		ops = append(ops, porcupine.Operation{
			ClientId: perKey[c.Key],
			Input:    LinInput{Key: c.Key, Op: c.Op},
			Call:     c.Invoke,
			Output:   LinOutput{Unknown: !c.Answered(), Code: c.Code, Value: c.Value},
			Return:   c.Return,
			Metadata: meta,
		})
		perKey[c.Key]++
	}
	return ops
}

// linCheck is porcupine's answer on a PB1 history.
type linCheck struct {
	ok      bool
	illegal []string // per illegal key, in key order: its operations, described
	info    porcupine.LinearizationInfo
}

// checkKeys checks ops against KeyModel with porcupine, without a timeout.
// The illegal keys are the partitions whose longest partial linearization
// falls short of the partition (porcupine returns the partitions in
// KeyModel.Partition's order).
func checkKeys(ops []porcupine.Operation) linCheck {
	res, info := porcupine.CheckOperationsVerbose(KeyModel, ops, 0)
	c := linCheck{ok: res == porcupine.Ok, info: info}
	if c.ok {
		return c
	}
	parts := KeyModel.Partition(ops)
	partials := info.PartialLinearizations()
	for i, p := range parts {
		longest := 0
		if i < len(partials) {
			for _, l := range partials[i] {
				longest = max(longest, len(l))
			}
		}
		if longest < len(p) {
			c.illegal = append(c.illegal, fmt.Sprintf("%s (longest linearizable prefix: %d of %d)", describePart(p), longest, len(p)))
		}
	}
	if len(c.illegal) == 0 { // not Ok without an illegal partition: cannot happen without a timeout
		c.illegal = append(c.illegal, fmt.Sprintf("porcupine answered %q", res))
	}
	return c
}

func describePart(p []porcupine.Operation) string {
	ops := append([]porcupine.Operation(nil), p...)
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
	lines := make([]string, len(ops))
	for i, op := range ops {
		ret := "never"
		if op.Return != Never {
			ret = fmt.Sprintf("%.3fs", float64(op.Return)/1e9)
		}
		lines[i] = fmt.Sprintf("[%.3fs, %s] %s", float64(op.Call)/1e9, ret, KeyModel.DescribeOperation(op.Input, op.Output))
	}
	return strings.Join(lines, "; ")
}

// PB1Info returns porcupine's LinearizationInfo for PB1's answers in h, and
// whether they are not linearizable (then CheckPB1 fails and the info shows
// the partial linearizations and where they stop). Write it next to a
// failing trace with porcupine.Visualize(KeyModel, info, w).
func PB1Info(h *History) (info porcupine.LinearizationInfo, illegal bool) {
	c := checkKeys(PB1Operations(h))
	return c.info, !c.ok
}
