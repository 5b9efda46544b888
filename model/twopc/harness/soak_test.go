package harness

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/twopc"
)

func soakRuns(t *testing.T, def int) int {
	if v := os.Getenv("FENCESIM_SOAK_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "FENCESIM_SOAK_RUNS=%q is not a number", v)
		return n
	}
	return def
}

// TestSoakSeeds runs FENCESIM_SOAK_RUNS seeds (200 under plain go test) of
// the default design (its world drawn per seed) and of a larger one (4
// participants, 3 transactions, cooperative agents, the rest drawn) with
// seeded faults; every property must hold.
func TestSoakSeeds(t *testing.T) {
	n := soakRuns(t, 200)
	large := twopc.Default()
	large.Participants, large.Txns, large.Cooperative = 4, 3, true
	large.Pinned = []string{"participants", "txns", "cooperative"}
	for name, d := range map[string]twopc.Design{"default": twopc.Default(), "large": large} {
		runs := n
		if name == "large" {
			runs = n / 10
		}
		bad := 0
		for seed := uint64(1); seed <= uint64(runs); seed++ {
			o := RunSeed(d, seed)
			if !o.OK() {
				bad++
				if bad <= 3 {
					t.Errorf("%s seed %d failed %v (err %v) under\n%s\n%s", name, seed, o.Failed(), o.Err, o.Schedule, o.Tail(20))
				}
			}
		}
		t.Logf("%s: %d seeds, %d failed", name, runs, bad)
	}
}

// TestSoakEnumerate extends the exhaustive enumeration (one and two
// crashes at every step) to cooperative termination, two coordinators
// running concurrent transactions on one log, and three overlapping
// transactions (lock waits, lock_timeout votes). About 25 s: only under
// make soak (FENCESIM_SOAK_RUNS set).
func TestSoakEnumerate(t *testing.T) {
	if os.Getenv("FENCESIM_SOAK_RUNS") == "" {
		t.Skip("set FENCESIM_SOAK_RUNS (make soak) to run the extended enumeration")
	}
	coop := twopc.Default()
	coop.Cooperative = true
	two := twopc.Default()
	two.Coordinators = 2
	two.Schedule = []twopc.TxnAt{{At: 100 * time.Millisecond, GID: "a"}, {At: 100 * time.Millisecond, GID: "b", Coordinator: "coordinator-2"}}
	three := twopc.Default()
	three.Txns, three.TxnEvery = 3, 2*time.Millisecond
	for name, d := range map[string]twopc.Design{"cooperative": coop, "two coordinators": two, "three transactions": three} {
		cov := DefaultHarness().Enumerate(d, true, 3)
		t.Logf("%s: %d sites, %d single-crash runs, %d two-crash runs, %d failed", name, len(cov.Sites), cov.Singles, cov.Pairs, len(cov.Failures))
		for _, f := range cov.Failures {
			t.Errorf("%s: %v failed %v\n%s", name, f.Schedule, f.Failed(), f.Tail(30))
		}
	}
}
