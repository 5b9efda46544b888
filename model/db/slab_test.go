package db

import (
	"testing"

	"github.com/fencesim/fencesim/traces"

	"github.com/stretchr/testify/assert"
)

// TestSlabsNeverShare: every value a slab hands out is its own, across
// chunks; a one-element list and a carved results list have capacity for
// what they were made for, so an append past it reallocates instead of
// writing into the next one.
func TestSlabsNeverShare(t *testing.T) {
	var s slab[txn]
	seen := map[*txn]bool{}
	for i := range 3 * slabChunk {
		x := s.new()
		assert.False(t, seen[x], "value %d handed out twice", i)
		assert.Zero(t, x.xid, "a fresh value is zero")
		x.xid = uint64(i + 1)
		seen[x] = true
	}

	var p ptrs[chain]
	a, b := &chain{id: 1}, &chain{id: 2}
	la, lb := p.one(a), p.one(b)
	assert.Equal(t, 1, cap(la))
	la = append(la, b)
	assert.Same(t, b, lb[0], "appending to one list leaves its neighbour")
	assert.Same(t, a, la[0])

	n := &Node{}
	r1, r2 := n.results(2), n.results(3)
	assert.Equal(t, 2, cap(r1))
	assert.Equal(t, 3, cap(r2))
	r2 = append(r2, Result{Tag: "second"})
	r1 = append(r1, Result{Tag: "a"}, Result{Tag: "b"}, Result{Tag: "c"})
	assert.Equal(t, "second", r2[0].Tag, "the first list's growth never reaches the second")
	assert.Len(t, r1, 3)
	big := n.results(slabChunk + 1)
	assert.Equal(t, slabChunk+1, cap(big))
}

// TestBodiesByValueOrPointer: the database's peers may send a request or a
// response as a value (a live run's driver, a test) or a pointer (the
// simulated clients and node); a nil pointer or another type is none.
func TestBodiesByValueOrPointer(t *testing.T) {
	req := Request{ID: 4, Stmts: []Stmt{Begin()}, Atomic: true}
	for _, body := range []any{req, &req} {
		got, ok := RequestOf(body)
		assert.True(t, ok)
		assert.Equal(t, req, got)
	}
	resp := Response{ID: 4, Results: []Result{{Tag: "BEGIN"}}}
	for _, body := range []any{resp, &resp} {
		got, ok := ResponseOf(body)
		assert.True(t, ok)
		assert.Equal(t, resp, got)
	}
	for _, body := range []any{nil, (*Request)(nil), "req", resp} {
		_, ok := RequestOf(body)
		assert.False(t, ok, "%T", body)
	}
	for _, body := range []any{nil, (*Response)(nil), req} {
		_, ok := ResponseOf(body)
		assert.False(t, ok, "%T", body)
	}
	// A trace renders either the same: the pointers changed no text.
	assert.Equal(t, string(traces.AppendValue(nil, req)), string(traces.AppendValue(nil, &req)))
	assert.Equal(t, string(traces.AppendValue(nil, resp)), string(traces.AppendValue(nil, &resp)))
}
