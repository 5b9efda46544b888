package harness

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/checker"
	jc "github.com/fencesim/fencesim/checker/judge"
	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/sim"
)

// frozen is one submission judged for 30 s by one home worker while node
// (the arbiter or the database) is frozen from 20 s to 110 s: longer than
// a lease, so no heartbeat lands for more than a lease, and the worker's
// result waits on its disk, retried, until the thaw.
func frozen(node string, d judge.Design) judge.Options {
	d.HomeWorkers, d.ProdWorkers = 1, 0
	d.JudgeMin, d.JudgeMax = 30*time.Second, 30*time.Second
	s := sim.Schedule{{At: clock.Time(20 * time.Second), Kind: sim.Pause, Node: node}, {At: clock.Time(110 * time.Second), Kind: sim.Resume, Node: node}}
	wl := judge.Workload{Arrivals: []judge.Arrival{{At: 2 * time.Second, ID: 101, User: 1, Problem: 1}}}
	return judge.Options{Design: d, Workload: wl, Schedule: s, Entropy: sim.NewPCG(1), Until: 10 * time.Minute}
}

func failedNames(o *Outcome) []string {
	var out []string
	for _, v := range o.Failed() {
		out = append(out, v.Property)
	}
	return out
}

// TestLateSweepOwesTheGrace: an arbiter frozen past a lease (a GC pause,
// SIGSTOP), or a database paused past one, while workers judge (the
// freeze family). The default design's sweep notices that it runs late
// (the arbiter's ticks woke late; the database answered the sweep's
// SELECT now() late) and gives the grace first: every run holds every
// property. Under blind-sweep (the source's sweep, run whenever its tick
// fires) the sweep after the thaw reclaims leases whose heartbeats could
// not land, and MA2 fails: a healthy worker's judging thrown away around
// nothing but the freeze.
func TestLateSweepOwesTheGrace(t *testing.T) {
	for _, node := range []string{"arbiter-1", "db"} {
		o, err := Play(frozen(node, judge.Default()))
		require.NoError(t, err)
		assert.Empty(t, o.Failed(), "%s frozen: the default design gives the grace first", node)
		assert.Empty(t, o.Transitions(101, judge.StatusJudging, judge.StatusPending), "%s frozen: no reclaim", node)
	}
	fam, err := FamilyByName("freeze")
	require.NoError(t, err)
	caught := map[string]uint64{}
	for seed := uint64(1); seed <= 40; seed++ {
		ent := sim.NewPCG(seed)
		o, err := fam.Judged(ent.Stream("family"), judge.Default(), ent)
		require.NoError(t, err)
		require.Empty(t, o.Failed(), "seed %d: the default design holds through the freeze", seed)
		ent = sim.NewPCG(seed)
		o, err = fam.Judged(ent.Stream("family"), judge.Default().MustWith(judge.BlindSweep), ent)
		require.NoError(t, err)
		if slices.Contains(failedNames(o), jc.MA2) {
			node := o.Options.Schedule[0].Node
			if _, ok := caught[node]; !ok {
				caught[node] = seed
			}
		}
	}
	t.Logf("blind-sweep fails MA2 first at: %v", caught)
	assert.NotEmpty(t, caught, "blind-sweep must be caught by a freeze")
}

// TestDatabaseOutageOwesTheGrace: scenario 7 ("数据库连不上"), the database
// down for 90 s (crashed, restarted) while a worker judges: the grace runs
// when the arbiter sees it back, before any reclaim, and nothing is wasted.
// Without the grace (no-grace) the sweep reclaims the lease as soon as
// the database answers, and MA2, whose promise covers a database outage
// the worker lived through, fails.
func TestDatabaseOutageOwesTheGrace(t *testing.T) {
	outage := func(d judge.Design) judge.Options {
		o := frozen("db", d)
		o.Schedule = sim.Schedule{
			{At: clock.Time(20 * time.Second), Kind: sim.Crash, Node: "db"},
			{At: clock.Time(110 * time.Second), Kind: sim.Restart, Node: "db"},
		}
		return o
	}
	o, err := Play(outage(judge.Default()))
	require.NoError(t, err)
	assert.Empty(t, o.Failed())
	assert.Len(t, o.Transitions(101, judge.StatusJudging, judge.StatusPending), 0, "no reclaim")

	o, err = Play(outage(judge.Default().MustWith(judge.NoGrace)))
	require.NoError(t, err)
	require.Len(t, o.Transitions(101, judge.StatusJudging, judge.StatusPending), 1, "no-grace: reclaimed once the database answers")
	var ma2 checker.Verdict
	for _, v := range o.Result.Verdicts {
		if v.Property == jc.MA2 {
			ma2 = v
		}
	}
	assert.False(t, ma2.OK, "MA2 covers the database outage: %v", ma2)
}
