package changecov

import (
	"fmt"
	"sync"
)

// Target is one line range counted per run: a hunk of a change, or any range.
type Target struct {
	ID   int    `json:"id"`             // index in Targets()
	File string `json:"file"`           // repository-relative, slash-separated, e.g. model/judge/sql.go
	From int    `json:"from"`           // first line, 1-based
	To   int    `json:"to"`             // last line, inclusive
	Func string `json:"func,omitempty"` // enclosing function(s), e.g. "(*Arbiter).sweep"
	// Stmts is how many statements the cover blocks overlapping the range
	// hold, set by Register: 0 for a range of declarations or comments,
	// which no run can execute.
	Stmts int `json:"stmts"`
}

// file is one instrumented file's counters (go tool cover's Count, Pos
// and NumStmt) and, per target of the file, the blocks overlapping it.
type file struct {
	count []uint32
	hits  []hit
}

// hit is a target and the indexes of the blocks overlapping it.
type hit struct {
	id     int
	blocks []int
}

var (
	mu      sync.Mutex
	targets []Target
	set     []bool // which IDs are registered
	files   []*file
)

// Register adds an instrumented file's targets and counters: count, pos
// and numStmt are go tool cover's arrays for the file (pos holds three
// values a block: start line, end line, packed columns). Each target's
// ID is its place in Targets(); an ID registered twice, or counters whose
// lengths disagree, are a broken build and panic.
func Register(name string, ts []Target, count []uint32, pos []uint32, numStmt []uint16) {
	if len(pos) != 3*len(count) || len(numStmt) != len(count) {
		panic(fmt.Sprintf("changecov: %s: %d counters, %d positions, %d statement counts", name, len(count), len(pos), len(numStmt)))
	}
	mu.Lock()
	defer mu.Unlock()
	f := &file{count: count}
	for _, t := range ts {
		if t.ID < 0 {
			panic(fmt.Sprintf("changecov: %s: target ID %d", name, t.ID))
		}
		for len(targets) <= t.ID {
			targets, set = append(targets, Target{ID: len(targets)}), append(set, false)
		}
		if set[t.ID] {
			panic(fmt.Sprintf("changecov: target %d registered twice (%s:%d-%d)", t.ID, t.File, t.From, t.To))
		}
		h := hit{id: t.ID}
		t.Stmts = 0
		for b := range count {
			start, end := int(pos[3*b]), int(pos[3*b+1])
			if start <= t.To && t.From <= end {
				h.blocks = append(h.blocks, b)
				t.Stmts += int(numStmt[b])
			}
		}
		f.hits = append(f.hits, h)
		targets[t.ID], set[t.ID] = t, true
	}
	files = append(files, f)
}

// Enabled reports whether any target is registered: the binary is a
// coverage build.
func Enabled() bool {
	mu.Lock()
	defer mu.Unlock()
	return len(targets) > 0
}

// Targets returns every registered target, by ID. An ID below the
// highest that no file registered (a target in a package the binary does
// not link) is a Target with that ID and no File.
func Targets() []Target {
	mu.Lock()
	defer mu.Unlock()
	return append([]Target(nil), targets...)
}

// Reset zeroes every registered counter.
func Reset() {
	mu.Lock()
	defer mu.Unlock()
	reset()
}

func reset() {
	for _, f := range files {
		clear(f.count)
	}
}

// Take returns, per target ID, how many times its code ran since the last
// Reset (the sum of the counts of the cover blocks overlapping the
// target's lines), and resets the counters.
func Take() []uint64 {
	mu.Lock()
	defer mu.Unlock()
	out := make([]uint64, len(targets))
	for _, f := range files {
		for _, h := range f.hits {
			for _, b := range h.blocks {
				out[h.id] += uint64(f.count[b])
			}
		}
	}
	reset()
	return out
}
