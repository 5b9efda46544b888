package systems

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/model/judge/harness"
	"github.com/fencesim/fencesim/sim"
)

// Exhaustive is the result of the bounded exhaustive mode of system A
// (harness.Space): every single fault of the small world, the old
// leader's freezes in it with two arbiters, then pairs in the smaller one.
type Exhaustive struct {
	Singles    string // what the single-fault world holds
	Leaders    string // what the old leader's world holds
	PairWorld  string // what the pair world holds
	NSingles   int    // single-fault runs
	NLeaders   int    // old-leader runs
	NPairs     int    // pair runs made
	PairsTotal int    // pairs there are (NPairs < PairsTotal: an even spread of them)
	Failed     int    // runs where a property failed
	ByProperty map[string]int
	Failures   []ExhaustiveFailure // the first few, in enumeration order
	Elapsed    time.Duration
}

// ExhaustiveFailure is one failing run: its world, its whole schedule and
// the first failed property.
type ExhaustiveFailure struct {
	World    string // "singles", "old-leader" or "pairs"
	Schedule sim.Schedule
	Property string
	Message  string
}

// RunExhaustive runs system A's exhaustive mode for a design of it on
// workers goroutines: every single fault, every freeze of the old leader,
// then at most maxPairs pairs (0: all of them). keep failures are kept.
func RunExhaustive(dd Design, maxPairs, workers, keep int) (*Exhaustive, error) {
	d, ok := dd.v.(judge.Design)
	if !ok {
		return nil, fmt.Errorf("the exhaustive mode supports system %s only, not %s", judge.System, dd.System)
	}
	t0 := time.Now()
	ss, err := harness.SingleSpace(d)
	if err != nil {
		return nil, err
	}
	ls, err := harness.LeaderSpace(d)
	if err != nil {
		return nil, err
	}
	ps, err := harness.PairSpace(d)
	if err != nil {
		return nil, err
	}
	pairs, total := ps.Pairs(maxPairs)
	type job struct {
		s      *harness.Space
		world  string
		faults []sim.Action
	}
	jobs := make([]job, 0, len(ss.Faults)+len(ls.Faults)+len(pairs)+3)
	jobs = append(jobs, job{ss, "singles", nil}, job{ls, "old-leader", nil}, job{ps, "pairs", nil}) // the fault-free runs
	for _, f := range ss.Faults {
		jobs = append(jobs, job{ss, "singles", []sim.Action{f}})
	}
	for _, f := range ls.Faults {
		jobs = append(jobs, job{ls, "old-leader", []sim.Action{f}})
	}
	for _, p := range pairs {
		jobs = append(jobs, job{ps, "pairs", []sim.Action{p[0], p[1]}})
	}
	type failure struct {
		i int
		f ExhaustiveFailure
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
				if i >= len(jobs) {
					return
				}
				j := jobs[i]
				o, err := j.s.Run(j.faults...)
				if err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("run %v: %w", sim.Schedule(j.faults), err)
					}
					mu.Unlock()
					continue
				}
				if bad := o.Failed(); len(bad) > 0 {
					mu.Lock()
					fails = append(fails, failure{i, ExhaustiveFailure{j.world, o.Options.Schedule, bad[0].Property, bad[0].Message}})
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
	r := &Exhaustive{Singles: ss.Describe(), Leaders: ls.Describe(), PairWorld: ps.Describe(), NSingles: len(ss.Faults), NLeaders: len(ls.Faults), NPairs: len(pairs), PairsTotal: total,
		Failed: len(fails), ByProperty: map[string]int{}, Elapsed: time.Since(t0)}
	for _, f := range fails {
		r.ByProperty[f.f.Property]++
		if len(r.Failures) < keep {
			r.Failures = append(r.Failures, f.f)
		}
	}
	return r, nil
}
