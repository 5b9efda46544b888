// Package baseline runs the baseline matrix: the default design of every
// system in every world and at every fault level (and system A with batch
// claims), many seeds a cell. A correct design passes every cell: a
// failing baseline makes every user's verdict doubtful, since a change
// that fails a property the baseline also fails cannot be told from it.
package baseline

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/internal/systems"
)

// Cell is one cell of the matrix: a system's design in a world under a
// fault intensity.
type Cell struct {
	System string         `json:"system"`
	World  string         `json:"world"` // "" for a system with one world (its drawn one)
	Sets   []string       `json:"sets,omitempty"`
	Knobs  []string       `json:"knobs,omitempty"` // none in the matrix: its cells are the correct designs
	Faults systems.Faults `json:"faults"`
}

// Name is the cell's design as a short text ("default", "claim_batch=2").
func (c Cell) Name() string {
	parts := append(append([]string(nil), c.Knobs...), c.Sets...)
	if len(parts) == 0 {
		return "default"
	}
	return strings.Join(parts, ",")
}

// Cells returns the matrix, system by system, world by world, fault
// level by fault level.
func Cells() []Cell {
	var out []Cell
	levels := []systems.Faults{systems.None, systems.Moderate, systems.Heavy}
	for _, sys := range systems.All() {
		// The worlds a system's baseline covers are its world modes
		// (system A's three: the first version's fixed world, the drawn
		// one, the drawn one with its timing parameters drawn too); B and
		// C draw theirs and have one.
		worlds := sys.Supports().Worlds
		if worlds == nil {
			worlds = []string{""}
		}
		for _, w := range worlds {
			for _, f := range levels {
				out = append(out, Cell{System: sys.Name(), World: w, Faults: f})
			}
		}
		for _, sets := range sys.Supports().Variants {
			for _, f := range levels {
				out = append(out, Cell{System: sys.Name(), World: "drawn", Sets: sets, Faults: f})
			}
		}
	}
	return out
}

// Result is one cell's outcome.
type Result struct {
	Cell
	Runs   int                 `json:"runs"`
	Failed int                 `json:"failed"`
	Seeds  map[string][]uint64 `json:"failed_seeds,omitempty"` // per failing property, the first few seeds
	// Undecided counts the runs a check could not decide within its
	// bound (not failed, not judged by that check), as explore does;
	// UndecidedSeeds are the first few, per property.
	Undecided      int                 `json:"undecided,omitempty"`
	UndecidedSeeds map[string][]uint64 `json:"undecided_seeds,omitempty"`
	Elapsed        time.Duration       `json:"elapsed_ns"`
}

// keep is how many failing seeds a property lists.
const keep = 10

// Run plays seeds first..first+runs-1 of a cell on workers goroutines.
// It stops early when ctx ends (the result counts the runs that finished).
func Run(ctx context.Context, c Cell, first uint64, runs, workers int) (Result, error) {
	sys, err := systems.ByName(c.System)
	if err != nil {
		return Result{}, err
	}
	d, err := sys.NewDesign(c.Knobs, c.Sets, nil)
	if err != nil {
		return Result{}, fmt.Errorf("%s %s: %w", c.System, c.Name(), err)
	}
	if c.World != "" {
		if err := sys.Supports().WorldCheck(c.World); err != nil {
			return Result{}, err
		}
		d.World = c.World
	}
	start := time.Now()
	res := Result{Cell: c, Seeds: map[string][]uint64{}, UndecidedSeeds: map[string][]uint64{}}
	seeds := make(chan uint64)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range seeds {
				r := systems.Run(sys, d, seed, c.Faults, systems.Options{})
				mu.Lock()
				res.Runs++
				if ids := r.FailedIDs(); len(ids) > 0 {
					res.Failed++
					for _, id := range ids {
						res.Seeds[id] = append(res.Seeds[id], seed)
					}
				}
				var ids []string // the run's undecided properties, each once
				for _, v := range r.Verdicts {
					if id := systems.PropertyID(v.Property); checker.IsUndecided(v) && !slices.Contains(ids, id) {
						ids = append(ids, id)
						res.UndecidedSeeds[id] = append(res.UndecidedSeeds[id], seed)
					}
				}
				if len(ids) > 0 {
					res.Undecided++
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for s := first; s < first+uint64(runs); s++ {
		select {
		case seeds <- s:
		case <-ctx.Done():
			break feed
		}
	}
	close(seeds)
	wg.Wait()
	for _, m := range []map[string][]uint64{res.Seeds, res.UndecidedSeeds} {
		for id, ss := range m {
			sort.Slice(ss, func(i, j int) bool { return ss[i] < ss[j] })
			if len(ss) > keep {
				ss = ss[:keep]
			}
			m[id] = ss
		}
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// FailedText lists a failing cell's properties with their first seeds.
func (r Result) FailedText() string { return seedsText(r.Seeds, "") }

// UndecidedText lists the properties a cell's checks could not decide,
// with their first seeds.
func (r Result) UndecidedText() string { return seedsText(r.UndecidedSeeds, "undecided ") }

func seedsText(m map[string][]uint64, prefix string) string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += "; "
		}
		s += fmt.Sprintf("%s%s seeds %v", prefix, id, m[id])
	}
	return s
}
