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
	// Stmts is how many statements the target's cover blocks hold, set by
	// Register: 0 for a range of declarations or comments, which no run
	// can execute.
	Stmts int `json:"stmts"`
	// Blocks, when the build names them, are the indexes of the cover
	// blocks that hold the target's code: its lines' own, and for a line
	// no block holds, the block its code runs in (a case's expressions:
	// their switch's, less Less; a signature: its body's first). Register then counts
	// these and no others. Without them, every block overlapping From-To.
	Blocks []int `json:"-"`
	// Less, when the build names it, is per part (in the order of Blocks)
	// the blocks whose counts are taken from the part's block's: a case
	// clause's expressions run as often as their switch, less the passes
	// in which an earlier clause matched (the bodies of those clauses), so
	// a case is counted only when the switch reached it. Nil: none.
	Less [][]int `json:"-"`
	// Parts are the target's code, block by block, in the order of
	// Blocks: each part's lines (the build's) and statements (Register's).
	// A run's mask (TakeParts) says which parts ran: a hunk that ran in
	// part says which of its lines never did. None when the build named no
	// blocks.
	Parts []Part `json:"parts,omitempty"`
	// Start: some of the target's code runs when the program starts (an
	// init function, a package variable's initializer), before any run,
	// and no run's count includes it. The body of a function literal a
	// package variable holds (and does not call) is not start-up code: it
	// runs when called, and is counted by its blocks.
	Start bool `json:"start,omitempty"`
}

// Part is the code of a target in one cover block: its lines, and the
// block's statements.
type Part struct {
	From  int `json:"from"`
	To    int `json:"to"`
	Stmts int `json:"stmts"`
}

// file is one instrumented file's counters (go tool cover's Count, Pos
// and NumStmt) and, per target of the file, the blocks overlapping it.
type file struct {
	count []uint32
	hits  []hit
}

// hit is a target and the indexes of the blocks overlapping it, and per
// block the blocks whose counts are taken from its count (Target.Less).
type hit struct {
	id     int
	blocks []int
	less   [][]int
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
		if t.Blocks != nil {
			if len(t.Parts) != len(t.Blocks) {
				panic(fmt.Sprintf("changecov: %s: target %d has %d blocks and %d parts", name, t.ID, len(t.Blocks), len(t.Parts)))
			}
			if t.Less != nil && len(t.Less) != len(t.Blocks) {
				panic(fmt.Sprintf("changecov: %s: target %d has %d blocks and %d lists of blocks to take", name, t.ID, len(t.Blocks), len(t.Less)))
			}
			t.Parts = append([]Part(nil), t.Parts...)
			for k, b := range t.Blocks {
				if b < 0 || b >= len(count) {
					panic(fmt.Sprintf("changecov: %s: target %d names block %d of %d", name, t.ID, b, len(count)))
				}
				if t.Less != nil {
					for _, l := range t.Less[k] {
						if l < 0 || l >= len(count) {
							panic(fmt.Sprintf("changecov: %s: target %d takes block %d of %d", name, t.ID, l, len(count)))
						}
					}
				}
				t.Parts[k].Stmts = int(numStmt[b])
				t.Stmts += int(numStmt[b])
			}
			h.blocks = append(h.blocks, t.Blocks...)
			h.less = t.Less
		} else {
			t.Parts = nil
			for b := range count {
				start, end := int(pos[3*b]), int(pos[3*b+1])
				if start <= t.To && t.From <= end {
					h.blocks = append(h.blocks, b)
					t.Stmts += int(numStmt[b])
				}
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
// Reset (the count of its most executed block: a straight run of lines
// counts once a pass, however many blocks it spans), and resets the
// counters.
func Take() []uint64 {
	counts, _ := TakeParts()
	return counts
}

// TakeParts is Take, with per target ID a mask of its Parts that ran: bit
// k for part k (the parts from the 64th on share bit 63).
func TakeParts() (counts, parts []uint64) {
	mu.Lock()
	defer mu.Unlock()
	counts, parts = make([]uint64, len(targets)), make([]uint64, len(targets))
	for _, f := range files {
		for _, h := range f.hits {
			for k, b := range h.blocks {
				n := uint64(f.count[b])
				if h.less != nil {
					for _, l := range h.less[k] {
						n -= min(n, uint64(f.count[l]))
					}
				}
				counts[h.id] = max(counts[h.id], n)
				if n > 0 {
					parts[h.id] |= 1 << min(k, 63)
				}
			}
		}
	}
	reset()
	return counts, parts
}
