package systems

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/fencesim/fencesim/model/contract"
)

// RunExhaustive runs a system's bounded exhaustive mode
// (Support.Exhaustive) for a design on workers goroutines: every job of its
// space, at most maxPairs pairs (0: all of them). keep failures are kept,
// in enumeration order.
func RunExhaustive(sys System, d Design, maxPairs, workers, keep int) (*Exhaustive, error) {
	space := sys.Supports().Exhaustive
	if space == nil {
		return nil, fmt.Errorf("system %s has no exhaustive mode", sys.Name())
	}
	t0 := time.Now()
	x, err := space(d, maxPairs)
	if err != nil {
		return nil, err
	}
	type failure struct {
		i     int
		f     ExhaustiveFailure
		props []string // every property the run failed
	}
	var (
		mu    sync.Mutex
		fails []failure
		next  int
		first error
		wg    sync.WaitGroup
	)
	for w := 0; w < max(workers, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(x.Jobs) {
					return
				}
				j := x.Jobs[i]
				bad, played, err := j.Run()
				if err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("run %v: %w", j.Faults, err)
					}
					mu.Unlock()
					continue
				}
				if len(bad) > 0 {
					var props []string
					for _, v := range bad {
						props = append(props, v.Property)
					}
					mu.Lock()
					fails = append(fails, failure{i, ExhaustiveFailure{World: j.World, Schedule: played, Property: bad[0].Property, Message: bad[0].Message}, props})
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	sort.Slice(fails, func(a, b int) bool { return fails[a].i < fails[b].i })
	r := &contract.Exhaustive{Worlds: x.Worlds, FaultFree: x.FaultFree, Failed: len(fails), ByProperty: map[string]int{}, Elapsed: time.Since(t0)}
	for _, f := range fails {
		for _, p := range f.props {
			r.ByProperty[p]++
		}
		if len(r.Failures) < keep {
			r.Failures = append(r.Failures, f.f)
		}
	}
	return r, nil
}
