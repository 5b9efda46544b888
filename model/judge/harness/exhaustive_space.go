package harness

import (
	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/model/contract"
	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/sim"
)

// ExhaustiveSpace is system A's bounded exhaustive mode as the contract
// runs it (Support.Exhaustive): every single fault of the small world
// (SingleSpace), the old leader's freezes in it with two arbiters
// (LeaderSpace), then at most maxPairs pairs in the smaller one
// (PairSpace; 0: every pair), each world's fault-free run first.
func ExhaustiveSpace(dd contract.Design, maxPairs int) (*contract.ExhaustiveSpace, error) {
	d := dd.Value().(judge.Design)
	ss, err := SingleSpace(d)
	if err != nil {
		return nil, err
	}
	ls, err := LeaderSpace(d)
	if err != nil {
		return nil, err
	}
	ps, err := PairSpace(d)
	if err != nil {
		return nil, err
	}
	pairs, total := ps.Pairs(maxPairs)
	x := &contract.ExhaustiveSpace{
		Worlds: []contract.ExhaustiveWorld{
			{Title: "single faults", Describe: ss.Describe(), Label: "singles", Runs: len(ss.Faults), Total: len(ss.Faults)},
			{Title: "the old leader (A-S6)", Describe: ls.Describe(), Label: "old-leader freezes", Runs: len(ls.Faults), Total: len(ls.Faults)},
			{Title: "pairs", Describe: ps.Describe(), Label: "pairs", Runs: len(pairs), Total: total},
		},
		FaultFree: 3,
	}
	job := func(s *Space, world string, faults ...sim.Action) contract.ExhaustiveJob {
		return contract.ExhaustiveJob{World: world, Faults: faults, Run: func() ([]checker.Verdict, sim.Schedule, error) {
			o, err := s.Run(faults...)
			if err != nil {
				return nil, faults, err
			}
			return o.Failed(), o.Options.Schedule, nil
		}}
	}
	x.Jobs = append(x.Jobs, job(ss, "singles"), job(ls, "old-leader"), job(ps, "pairs")) // the fault-free runs
	for _, f := range ss.Faults {
		x.Jobs = append(x.Jobs, job(ss, "singles", f))
	}
	for _, f := range ls.Faults {
		x.Jobs = append(x.Jobs, job(ls, "old-leader", f))
	}
	for _, p := range pairs {
		x.Jobs = append(x.Jobs, job(ps, "pairs", p[0], p[1]))
	}
	return x, nil
}
