package harness

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fencesim/fencesim/internal/hunt"
	"github.com/fencesim/fencesim/model/judge"
)

// genericBudget is the number of rapid runs within which the generic
// generator alone (no family: the drawn world, protocol-timed faults)
// must catch a harmful knob, and the default design must pass.
const genericBudget = 200

// notYetGeneric are the harmful knobs the generic route does not catch yet,
// and why (the costs the source promises everywhere, MA1's fresh lease, MA2
// where promised, MA3, MA5's backoff, are judged on every drawn world's
// run; one knob's damage is too rare in the drawn worlds).
var notYetGeneric = map[judge.Knob]string{
	// Its damage needs a claim's retry answered after the sweep took the
	// claim's lease back, with a freeze of the arbiter in that lease's
	// life (the same retry after a reply lost on the worker's own link is
	// a fault of the worker's, not MA2's business): 0 of 3,000 drawn seeds
	// at moderate faults and 0 of 3,000 at heavy; a steered seed found it
	// (9254907748326310764) and family late-retry catches it on each of its
	// seeds 1-200 (the default design: none).
	judge.ResendAsFound: "0 of 3,000 drawn seeds at moderate and at heavy faults; found by a steered seed, caught by family late-retry",
	// Its damage needs a worker in direct mode (A-S9's old scheme, or a
	// rollback to it), which the drawn worlds do not have; A-S9's rollback
	// cases and family rollback catch it.
	judge.GraceAllJudging: "the drawn worlds have no direct-mode workers; caught by A-S9's rollback cases and family rollback",
}

// genericSeeds is the PCG route's budget: what fencesim explore --runs 500
// plays.
const genericSeeds = 500

// firstFailingSeed plays seeds 1..n of the drawn world and returns the
// first that fails (0: none) and its outcome; with want, the first that
// fails by one of those properties.
func firstFailingSeed(t *testing.T, d judge.Design, n int, want ...string) (uint64, *Outcome) {
	t.Helper()
	for s := uint64(1); s <= uint64(n); s++ {
		opts, _ := SeedOptionsIn(d, WorldDrawn, Moderate(), s)
		o, err := Play(opts)
		if err != nil {
			t.Fatalf("seed %d: %v", s, err)
		}
		JudgeGeneric(&o.Result, opts.Design)
		if len(o.Failed()) == 0 {
			continue
		}
		if _, ok := caughtBy(o, want); ok || len(want) == 0 {
			return s, o
		}
	}
	return 0, nil
}

func caughtBy(o *Outcome, want []string) ([]string, bool) {
	var by []string
	caught := false
	for _, v := range o.Failed() {
		p := propertyID(v)
		by = append(by, p)
		for _, w := range want {
			caught = caught || p == w
		}
	}
	return by, caught
}

// pcgMisses and rapidMisses are the harmful knobs a route does not catch
// within its budget, and why; their families do (TestDesignKnobs).
// claim-lookup-only is caught since the drawn world has the stalled old
// leader of A-S6 (DrawWorld).
var pcgMisses = map[judge.Knob]string{
	// Seed 492 was its first failure, under the budget by 8; since a
	// heartbeat that timed out goes to the next arbiter at once (the
	// default design's fix for wide heavy seed 20009551) it is seed 580
	// (fencesim mutants --knob attempts-at-grant --budget 3000: "runs to
	// detect 580"). Its family, orphan-last, catches it.
	judge.AttemptsAtGrant: "PCG: first failing seed 580 of the moderate drawn world (492 before the timed-out heartbeat's retry)",
}

var rapidMisses = map[judge.Knob]string{
	// Since the late sweep owes the grace ([trust]), a frozen arbiter no
	// longer reclaims healthy workers' leases, the stale caches and lost
	// results these knobs need are rarer, and rapid seed 1 finds none of
	// the three within 200 runs. Measured, rapid seeds 1-6 of 200 runs:
	// memory-facts 1 of 6 (seed 3, 71 runs); worker-no-disk 5 of 6 (28 to
	// 194 runs); claim-lookup-only 5 of 6 (62 to 150 runs). The PCG route
	// still must catch each within 500 seeds.
	judge.MemoryFacts:     "rapid seeds 1-6: 1 of 6 catches it in 200 runs",
	judge.WorkerNoDisk:    "rapid seeds 1-6: 5 of 6 catch it in 200 runs, not seed 1",
	judge.ClaimLookupOnly: "rapid seeds 1-6: 5 of 6 catch it in 200 runs, not seed 1",
	// Since a retried claim no longer sends a lease the sweep took back
	// (resend-as-found is the old look-up), the MA2 these two knobs were
	// caught by on rapid seeds 1, 4 and 5 (no-grace) and 1, 2, 4 and 8
	// (blind-sweep) is gone: those wasted judgings were the dead leases'.
	// With resend-as-found added, rapid seeds 1-8 give exactly the runs
	// they gave before. Measured, rapid seeds 1-8 of 200 runs: no-grace 6
	// of 8 (9 to 144 runs), blind-sweep 2 of 8 (44 and 90 runs). The PCG
	// route still catches both at the seeds it did (22 and 176).
	judge.NoGrace:    "rapid seeds 1-8: 6 of 8 catch it in 200 runs, not seed 1",
	judge.BlindSweep: "rapid seeds 1-8: 2 of 8 catch it in 200 runs, not seed 1",
}

// TestGenericFindsEveryKnob: the generic generator alone (no family: the
// drawn world, protocol-timed faults) catches every harmful knob of system
// A within 200 runs of rapid's route (the world and faults drawn evenly,
// sim.NewRapidUniform) and within 500 seeds of the PCG route (what
// fencesim explore plays, but those in pcgMisses), by a property the
// registry names, but the knobs listed in notYetGeneric; the default design
// passes both budgets.
func TestGenericFindsEveryKnob(t *testing.T) {
	seed, o := firstFailingSeed(t, judge.Default(), genericSeeds)
	if !assert.Zero(t, seed, "the default design must pass %d generic seeds", genericSeeds) {
		t.Logf("seed %d: %s", seed, o.Failed()[0])
	}
	res := hunt.Run(t.Name(), genericBudget, 1, PropertyIn(judge.Default(), WorldDrawn, Moderate(), nil))
	assert.False(t, res.Found, "the default design must pass %d rapid runs:\n%s", genericBudget, res.Output)
	for _, k := range judge.Knobs {
		k := k
		t.Run(string(k.Knob), func(t *testing.T) {
			d := judge.Default().MustWith(k.Knob)
			seed, o := firstFailingSeed(t, d, genericSeeds, k.CaughtBy...)
			var last *Outcome
			rres := hunt.RunShrink(t.Name(), genericBudget, 1, time.Second, PropertyOf(d, WorldDrawn, Moderate(), k.CaughtBy, func(o *Outcome) { last = o }))
			rapidRuns := "not within 200"
			if rres.Found {
				rapidRuns = fmt.Sprintf("%d", rres.Runs)
			}
			if !k.Harmful {
				// the registry calls it harmless; the drawn world shows
				// otherwise (a finding: see the README's findings).
				if seed != 0 {
					by, _ := caughtBy(o, nil)
					t.Logf("FINDING: harmless by the registry, yet seed %d fails %v: %s", seed, by, o.Failed()[0])
				}
				return
			}
			if why, gap := notYetGeneric[k.Knob]; gap {
				t.Logf("not required yet (%s): PCG first failing seed %d, rapid runs %s", why, seed, rapidRuns)
				return
			}
			if why, miss := rapidMisses[k.Knob]; miss && !rres.Found {
				t.Logf("rapid: none in %d runs (%s)", genericBudget, why)
			} else if assert.True(t, rres.Found, "%s must be caught within %d rapid runs", k.Knob, genericBudget) {
				by, ok := caughtBy(last, k.CaughtBy)
				assert.True(t, ok, "rapid: %s must be caught by %v, was caught by %v", k.Knob, k.CaughtBy, by)
				t.Logf("rapid: %d runs, caught by %v; shrunk world: %s", rres.Runs, by, DescribeWorld(last.Options.Design, last.Options.Workload))
			}
			if why, miss := pcgMisses[k.Knob]; miss && seed == 0 {
				t.Logf("PCG: none in %d seeds (%s)", genericSeeds, why)
				return
			}
			if !assert.NotZero(t, seed, "%s must be caught within %d generic seeds", k.Knob, genericSeeds) {
				return
			}
			by, ok := caughtBy(o, k.CaughtBy)
			assert.True(t, ok, "%s must be caught by %v, was caught by %v", k.Knob, k.CaughtBy, by)
			t.Logf("PCG: seed %d, caught by %v [%s]", seed, by, DescribeWorld(o.Options.Design, o.Options.Workload))
		})
	}
}
