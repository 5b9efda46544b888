package contract

import (
	"time"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/sim"
)

// Exhaustive is the result of a system's bounded exhaustive mode
// (Support.Exhaustive): its small worlds, each with every fault (or pair
// of faults) of a kind played once, plus each world's fault-free run.
type Exhaustive struct {
	Worlds     []ExhaustiveWorld
	FaultFree  int                 // fault-free runs (one per world)
	Failed     int                 // runs where a property failed
	ByProperty map[string]int      // runs where each property failed (a run counts under each it failed)
	Failures   []ExhaustiveFailure // the first few, in enumeration order
	Elapsed    time.Duration
}

// ExhaustiveWorld is one world of the exhaustive mode.
type ExhaustiveWorld struct {
	Title    string // a heading ("single faults")
	Describe string // what the world holds
	Label    string // what its runs are, in the count ("singles")
	Runs     int    // schedules run
	Total    int    // schedules there are (Runs < Total: an even spread of them)
}

// Runs is every run made, fault-free ones included.
func (x *Exhaustive) Runs() int {
	n := x.FaultFree
	for _, w := range x.Worlds {
		n += w.Runs
	}
	return n
}

// ExhaustiveSpace is what a system's exhaustive mode will run: its
// worlds and one job per schedule, in enumeration order. The registry runs
// the jobs on a pool of workers (internal/systems.RunExhaustive).
type ExhaustiveSpace struct {
	Worlds    []ExhaustiveWorld
	FaultFree int
	Jobs      []ExhaustiveJob
}

// ExhaustiveJob is one run of the exhaustive mode.
type ExhaustiveJob struct {
	World string // the world's short name
	// Run plays the schedule and returns its failed verdicts (none when
	// every property held) and the schedule as played.
	Run func() ([]checker.Verdict, sim.Schedule, error)
	// Faults are the job's faults, for the error of a run that could not
	// be played.
	Faults sim.Schedule
}

// ExhaustiveFailure is one failing run: its world, its whole schedule and
// the first failed property.
type ExhaustiveFailure struct {
	World    string // the world's short name ("singles", "old-leader", "pairs")
	Schedule sim.Schedule
	Property string
	Message  string
}
