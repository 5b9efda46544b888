package judge

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
)

// explanation says why a submission's history is not linearizable.
type explanation struct {
	short string   // one clause: the operation that cannot be placed
	long  string   // the prefix, the state it leaves, the operation
	seqs  []uint64 // the trace events of that operation (call, return)
}

// explain finds the shortest prefix of a submission's history (its
// operations by call time) that is already not linearizable, and the
// operation that cannot be placed after the others: the prefix's last. It
// says so in words, with the states the lease can be in after the rest
// (a linearization of them: porcupine's). ok is false when no prefix
// fails on its own (the history fails only whole) or the search is too
// large.
func (r *Run) explain(view View, sub int64, ops []porcupine.Operation) (explanation, bool) {
	// The same operations, with their trace events.
	var seqs [][2]uint64
	decidedAt, rejudged := r.settled(view)
	r.history(view, decidedAt, rejudged, func(s int64, _ string, _ LeaseIn, _ LeaseOut, _, _ int64, ev [2]uint64) {
		if s == sub {
			seqs = append(seqs, ev)
		}
	})
	if len(seqs) != len(ops) {
		return explanation{}, false
	}
	order := make([]int, len(ops))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return ops[order[a]].Call < ops[order[b]].Call })
	prefix := func(k int) []porcupine.Operation {
		out := make([]porcupine.Operation, k)
		for i := 0; i < k; i++ {
			out[i] = ops[order[i]]
		}
		return out
	}
	k := 0
	for n := 1; n <= len(ops); n++ {
		model, over := boundedModel(SearchLimit)
		res := porcupine.CheckOperations(model, prefix(n))
		if *over {
			return explanation{}, false
		}
		if !res {
			k = n
			break
		}
	}
	if k == 0 {
		return explanation{}, false
	}
	bad := ops[order[k-1]]
	before := prefix(k - 1)
	model, over := boundedModel(SearchLimit)
	res, info := porcupine.CheckOperationsVerbose(model, before, 0)
	if *over || res != porcupine.Ok {
		return explanation{}, false
	}
	// The states after a linearization of the operations before it.
	var lin []int
	if parts := info.PartialLinearizations(); len(parts) > 0 && len(parts[0]) > 0 {
		lin = parts[0][0]
	}
	states := leaseModel.Init()
	var steps []string
	for _, i := range lin {
		var next []any
		for _, s := range states {
			next = append(next, leaseModel.Step(s, before[i].Input, before[i].Output)...)
		}
		states = next
		steps = append(steps, leaseModel.DescribeOperation(before[i].Input, before[i].Output))
	}
	op := leaseModel.DescribeOperation(bad.Input, bad.Output)
	when := fmt.Sprintf("called at %s", secs(bad.Call))
	if bad.Return != math.MaxInt64 {
		when += ", returned at " + secs(bad.Return)
	} else {
		when += ", no reply"
	}
	var st []string
	for _, s := range states {
		st = append(st, leaseWords(s.(leaseState)))
	}
	e := explanation{
		short: fmt.Sprintf("%s (%s) cannot be placed among the %d operations called before it", op, when, k-1),
		seqs:  nonzero(seqs[order[k-1]][:]),
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The first %d of the %d operations (by call time) are already not linearizable: the first %d are, in this order:\n", k, len(ops), k-1)
	from := max(0, len(steps)-8)
	if from > 0 {
		fmt.Fprintf(&b, "  ... %d earlier operations\n", from)
	}
	for _, s := range steps[from:] {
		fmt.Fprintf(&b, "  %s\n", s)
	}
	fmt.Fprintf(&b, "leaving the lease %s;\nthen %s (%s) cannot be placed: the specification refuses it there, and in every other order of the operations before it.", strings.Join(st, " or "), op, when)
	e.long = b.String()
	return e, true
}

// leaseWords is a lease state in words.
func leaseWords(s leaseState) string {
	w := s.Status
	if s.Token != "" {
		w += fmt.Sprintf(" under token %s gen %d", s.Token, s.Gen)
		if o := s.owner(s.Token); o != "" {
			w += " (owned by " + o + ")"
		}
	}
	if s.Void != "" {
		w += ", void tokens " + strings.Trim(strings.ReplaceAll(s.Void, "|", " "), " ")
	}
	return w
}

func secs(ns int64) string { return fmt.Sprintf("%d.%03ds", ns/1e9, (ns%1e9)/1e6) }

func nonzero(xs []uint64) []uint64 {
	var out []uint64
	for _, x := range xs {
		if x != 0 {
			out = append(out, x)
		}
	}
	return out
}
