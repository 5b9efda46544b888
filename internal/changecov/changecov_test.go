package changecov

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// forget empties the registry (the tests register their own files).
func forget(t *testing.T) {
	mu.Lock()
	targets, set, files = nil, nil, nil
	mu.Unlock()
	t.Cleanup(func() {
		mu.Lock()
		targets, set, files = nil, nil, nil
		mu.Unlock()
	})
}

// cover is a file as go tool cover instruments it: three blocks, lines
// 10-12 (2 statements), 14-14 (1) and 15-20 (3).
func cover() (count []uint32, pos []uint32, numStmt []uint16) {
	return make([]uint32, 3),
		[]uint32{10, 12, 0x50002, 14, 14, 0x100002, 15, 20, 0x20003},
		[]uint16{2, 1, 3}
}

// TestTake: a target counts the most executed of the blocks its lines
// overlap; a target no block overlaps stays 0 and has no statements; Take
// resets.
func TestTake(t *testing.T) {
	forget(t)
	assert.False(t, Enabled(), "nothing registered")
	assert.Empty(t, Take())
	count, pos, num := cover()
	Register("model/x/a.go", []Target{
		{ID: 0, File: "model/x/a.go", From: 12, To: 14, Func: "f"}, // blocks 0 and 1
		{ID: 2, File: "model/x/a.go", From: 13, To: 13},            // between blocks: a comment
		{ID: 1, File: "model/x/a.go", From: 20, To: 25},            // block 2's last line
	}, count, pos, num)
	require.True(t, Enabled())
	ts := Targets()
	require.Len(t, ts, 3)
	for i, tg := range ts {
		assert.Equal(t, i, tg.ID, "by ID")
	}
	assert.Equal(t, []int{3, 3, 0}, []int{ts[0].Stmts, ts[1].Stmts, ts[2].Stmts}, "statements of the overlapping blocks")
	assert.Equal(t, "f", ts[0].Func)

	count[0], count[1], count[2] = 4, 7, 1 // what a run's instrumented code did
	assert.Equal(t, []uint64{7, 1, 0}, Take(), "the most executed overlapping block; the comment stays 0")
	assert.Equal(t, []uint64{0, 0, 0}, Take(), "Take resets")
	assert.Equal(t, []uint32{0, 0, 0}, count, "the counters themselves are zeroed")

	count[2] = 5
	Reset()
	assert.Equal(t, []uint64{0, 0, 0}, Take(), "Reset zeroes")
}

// TestTwoFiles: targets of two files are counted from each file's own
// counters.
func TestTwoFiles(t *testing.T) {
	forget(t)
	c1, p1, n1 := cover()
	c2, p2, n2 := cover()
	Register("a.go", []Target{{ID: 1, File: "a.go", From: 10, To: 10}}, c1, p1, n1)
	Register("b.go", []Target{{ID: 0, File: "b.go", From: 10, To: 10}}, c2, p2, n2)
	c1[0], c2[0] = 2, 9
	assert.Equal(t, []uint64{9, 2}, Take())
	assert.Equal(t, "b.go", Targets()[0].File)
}

// TestRegisterBroken: a target registered twice, or counters of
// different lengths, are a broken build.
func TestRegisterBroken(t *testing.T) {
	forget(t)
	c, p, n := cover()
	assert.Panics(t, func() { Register("a.go", nil, c, p[:3], n) })
	Register("a.go", []Target{{ID: 0, File: "a.go", From: 1, To: 1}}, c, p, n)
	assert.Panics(t, func() { Register("b.go", []Target{{ID: 0, File: "b.go", From: 1, To: 1}}, c, p, n) })
}

// TestParts: a target whose blocks the build names counts those blocks
// only, whatever its lines overlap, and TakeParts says which of its parts
// ran: a hunk that ran in part names the part that never did.
func TestParts(t *testing.T) {
	forget(t)
	count, pos, num := cover()
	Register("model/x/a.go", []Target{
		// lines 12-15: the comment on 13 is in no part; block 1 is named
		// although no line of the range is in it (a case's switch).
		{ID: 0, File: "model/x/a.go", From: 12, To: 15, Blocks: []int{0, 2, 1}, Parts: []Part{{From: 12, To: 12}, {From: 15, To: 15}, {From: 14, To: 14}}},
		{ID: 1, File: "model/x/a.go", From: 11, To: 11, Blocks: []int{}, Parts: []Part{}, Start: true},
	}, count, pos, num)
	ts := Targets()
	require.Len(t, ts, 2)
	assert.Equal(t, []Part{{12, 12, 2}, {15, 15, 3}, {14, 14, 1}}, ts[0].Parts, "each part's statements are its block's")
	assert.Equal(t, 6, ts[0].Stmts)
	assert.Zero(t, ts[1].Stmts, "no block named: nothing to count in a run")
	assert.True(t, ts[1].Start)

	count[0], count[1], count[2] = 4, 0, 2
	counts, parts := TakeParts()
	assert.Equal(t, []uint64{4, 0}, counts)
	assert.Equal(t, []uint64{0b011, 0}, parts, "blocks 0 and 2 ran (parts 0 and 1), block 1 (part 2) did not")
	count[1] = 1
	counts, parts = TakeParts()
	assert.Equal(t, []uint64{1, 0}, counts)
	assert.Equal(t, []uint64{0b100, 0}, parts)

	assert.Panics(t, func() {
		Register("model/x/b.go", []Target{{ID: 2, File: "model/x/b.go", From: 1, To: 1, Blocks: []int{0}}}, count, pos, num)
	}, "a block without its part")
	assert.Panics(t, func() {
		Register("model/x/c.go", []Target{{ID: 3, File: "model/x/c.go", From: 1, To: 1, Blocks: []int{3}, Parts: []Part{{From: 1, To: 1}}}}, count, pos, num)
	}, "a block the file does not have")
}

// TestLess: a part whose build names blocks to take (a case clause:
// its switch's passes less the earlier clauses' matches) counts its
// block's count less theirs, never below 0, and ran only when that is
// positive; a list of the wrong length, or a block the file does not
// have, is a broken build.
func TestLess(t *testing.T) {
	forget(t)
	count, pos, num := cover()
	Register("model/x/a.go", []Target{
		{ID: 0, File: "model/x/a.go", From: 12, To: 14, Blocks: []int{0, 0}, Less: [][]int{nil, {1, 2}}, Parts: []Part{{From: 12, To: 12}, {From: 13, To: 13}}},
	}, count, pos, num)
	count[0], count[1], count[2] = 5, 2, 3 // the switch ran 5 times; earlier clauses matched 2 and 3
	counts, parts := TakeParts()
	assert.Equal(t, []uint64{5}, counts)
	assert.Equal(t, []uint64{0b01}, parts, "the case was never reached")
	count[0], count[1], count[2] = 5, 1, 3
	counts, parts = TakeParts()
	assert.Equal(t, []uint64{5}, counts)
	assert.Equal(t, []uint64{0b11}, parts, "reached once")
	count[0], count[1], count[2] = 1, 4, 0
	_, parts = TakeParts()
	assert.Equal(t, []uint64{0b01}, parts, "never below 0")
	assert.Equal(t, 2*2, Targets()[0].Stmts, "each part has its block's statements")

	assert.Panics(t, func() {
		Register("model/x/b.go", []Target{{ID: 1, File: "model/x/b.go", From: 1, To: 1, Blocks: []int{0}, Less: [][]int{nil, nil}, Parts: []Part{{From: 1, To: 1}}}}, count, pos, num)
	}, "a list of blocks to take a part does not have")
	assert.Panics(t, func() {
		Register("model/x/c.go", []Target{{ID: 2, File: "model/x/c.go", From: 1, To: 1, Blocks: []int{0}, Less: [][]int{{7}}, Parts: []Part{{From: 1, To: 1}}}}, count, pos, num)
	}, "a block to take the file does not have")
}
