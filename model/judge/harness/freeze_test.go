package harness

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/checker"
	jc "github.com/fencesim/fencesim/checker/judge"
	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
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

// TestFreezeDuringTheGraceOwesItAgain: the arbiter freezes for 20 s (the
// grace is owed on waking), and again a millisecond after it sent that
// grace, for 100 s, while a worker judges for 150 s; the database's link
// to the arbiter stalls meanwhile, so the grace's answer comes after the
// arbiter's next tick fell due. The grace renewed the lease to 60 s past
// its commit, which passes during the second freeze, and its answer comes
// at the thaw. The default design sees that the answer came late and
// gives the grace again before its sweep runs. Taking the late answer as
// the grace given (as before the baseline's seed 5001118 found it: the
// tick's wake, due first, found the grace still in flight and owed
// nothing more) sends the sweep first, which reclaims the lease unless a
// heartbeat held through the freeze lands before it (here one does; in
// seed 5001118 a delay burst kept them away, and MA3 failed).
func TestFreezeDuringTheGraceOwesItAgain(t *testing.T) {
	d := judge.Default()
	o := frozen("arbiter-1", d)
	o.Design.JudgeMin, o.Design.JudgeMax = 150*time.Second, 150*time.Second
	o.Schedule = sim.Schedule{
		{At: clock.Time(20 * time.Second), Kind: sim.Pause, Node: "arbiter-1"},
		{At: clock.Time(40 * time.Second), Kind: sim.Resume, Node: "arbiter-1"},
		{At: clock.Time(39 * time.Second), Kind: sim.Stall, Node: "db", Peer: "arbiter-1", For: 2900 * time.Millisecond},
		{At: clock.Time(40*time.Second + time.Millisecond), Kind: sim.Pause, Node: "arbiter-1"},
		{At: clock.Time(140 * time.Second), Kind: sim.HealAll},
	}
	out, err := Play(o)
	require.NoError(t, err)
	assert.Empty(t, failedNames(out), "the grace given again after the second freeze")
	assert.Empty(t, out.Transitions(101, judge.StatusJudging, judge.StatusPending), "no reclaim")
	// Grace first, then sweep (scenario 7): after the thaw, the sweep's
	// statements go out only after a grace sent after the thaw.
	graced, swept := false, false
	for _, e := range out.Events {
		if e.T < int64(140*time.Second) || e.Node != "arbiter-1" || e.Kind != "send" {
			continue
		}
		text := e.Desc()
		if strings.Contains(text, "greatest(lease_expires_at") {
			graced = true
		}
		if strings.Contains(text, "SET status = 'system_error'") {
			swept = true
			assert.True(t, graced, "a sweep after the thaw before a grace: %s", text)
			break
		}
	}
	assert.True(t, swept, "the sweep ran after the thaw")
}

// TestResultHolderKeepsItsLease: arbiter-1 crashes at 10 s while home-1
// judges (30 s); its standby, arbiter-2, comes up at 68 s and gives the
// grace. home-1 finished at about 32 s and uploads its result, trying the
// two addresses in turn on a backoff that reaches 40 s, longer than half
// the 60 s grace: its attempts at arbiter-2 fall before it came up and
// after its grace ended. The default design heartbeats the lease until the
// result is answered (every 20 s, the next address at once when one
// refuses), so arbiter-2 hears of it within its grace and the result lands:
// no system_error, every property holds. A worker that stopped
// heartbeating when its judging ended (as before the baseline's seed
// 5002754 found it) lost the lease to arbiter-2's sweep, and with
// max_attempts 1 the submission became a system_error: MA3.
func TestResultHolderKeepsItsLease(t *testing.T) {
	d := judge.Default()
	d.HomeWorkers, d.ProdWorkers = 1, 0
	d.StandbyArbiters, d.MaxAttempts = 1, 1
	d.BackoffCap = 40 * time.Second
	d.JudgeMin, d.JudgeMax = 30*time.Second, 30*time.Second
	o := judge.Options{Design: d, Entropy: sim.NewPCG(1), Until: 10 * time.Minute,
		Workload: judge.Workload{Arrivals: []judge.Arrival{{At: 2 * time.Second, ID: 101, User: 1, Problem: 1}}},
		Schedule: sim.Schedule{
			{At: clock.Time(10 * time.Second), Kind: sim.Crash, Node: "arbiter-1"},
			{At: clock.Time(68 * time.Second), Kind: sim.Restart, Node: "arbiter-2"},
		}}
	out, err := Play(o)
	require.NoError(t, err)
	assert.Empty(t, failedNames(out))
	assert.Empty(t, out.Transitions(101, judge.StatusJudging, judge.StatusSystemError), "no system_error")
	assert.Empty(t, out.Transitions(101, judge.StatusJudging, judge.StatusPending), "no reclaim")
	beats := 0
	for _, e := range out.Events {
		if e.Node == "home-1" && e.Kind == "call" && e.T > int64(33*time.Second) && strings.Contains(e.Desc(), "/heartbeat") {
			beats++
		}
	}
	assert.NotZero(t, beats, "heartbeats after the judging ended")
}

// TestReplayHoldsTheGenericBounds: a drawn world's run is held to MA5 (the
// generic bounds) and its trace's header says so, so its replay fails MA5
// as the run did (it replayed as passing when replay knew nothing of the
// world the run was drawn in).
func TestReplayHoldsTheGenericBounds(t *testing.T) {
	f, err := Intensity("moderate")
	require.NoError(t, err)
	opts, _ := SeedOptionsIn(judge.Default().MustWith(judge.NoBackoffCap), WorldDrawn, f, 124)
	opts.Filter = nil
	o, err := Play(opts)
	require.NoError(t, err)
	JudgeGeneric(&o.Result, opts.Design)
	require.Contains(t, failedNames(o), jc.MA5, "no-backoff-cap fails MA5 on seed 124")
	again, err := Replay(o.Header)
	require.NoError(t, err)
	assert.True(t, traces.Compare(o.Events, again.Events).Identical)
	assert.Contains(t, failedNames(again), jc.MA5, "the replay holds the run to MA5")

	fixed, _ := SeedOptionsIn(judge.Default().MustWith(judge.NoBackoffCap), WorldFixed, f, 124)
	assert.Nil(t, fixed.Workload.Bounds, "the fixed world carries no generic bounds")
}

// TestLateGrantAnswerIsCheckedFirst: the database's answer to a claim's
// COMMIT is held up 14 s on its way back (a fault of the link between the
// arbiter and the database, which the grace's promise covers): the lease
// it started, unconfirmed for 10 s, runs out and the sweep at 15 s takes
// it back before the arbiter hears of its own grant. The default arbiter,
// hearing the COMMIT's answer late, sends the lease only if it is still
// the submission's (it is not: a 204, and the worker claims again); MA2
// holds and no judging is thrown away. Sending it as committed (as before
// the baseline's seed 5001582 found it) had the worker judge a dead lease
// until its first heartbeat's 410: MA2 fails.
func TestLateGrantAnswerIsCheckedFirst(t *testing.T) {
	d := judge.Default()
	d.HomeWorkers, d.ProdWorkers = 1, 0
	d.JudgeMin, d.JudgeMax = 30*time.Second, 30*time.Second
	// The fourth message the database sends the arbiter from 2 s on is
	// the claim's COMMIT answer (BEGIN and find-claim, pick-pending,
	// grant, then record-claim, start-lease and COMMIT).
	o := judge.Options{Design: d, Entropy: sim.NewPCG(1), Until: 10 * time.Minute,
		Workload: judge.Workload{Arrivals: []judge.Arrival{{At: 2 * time.Second, ID: 101, User: 1, Problem: 1}}},
		Schedule: sim.Schedule{{At: clock.Time(2 * time.Second), Kind: sim.Message, Node: "db", Peer: "arbiter-1", Count: 4, Arg: sim.FateDelay, Amount: 14 * time.Second}}}
	out, err := Play(o)
	require.NoError(t, err)
	assert.Len(t, out.Transitions(101, judge.StatusJudging, judge.StatusPending), 1, "the sweep took the lease back before its grant's answer came")
	assert.Empty(t, failedNames(out))
	abandoned := 0
	for _, e := range out.Events {
		if e.Node == "home-1" && e.Kind == "judge" && strings.HasPrefix(e.Desc(), "abandon") {
			abandoned++
		}
	}
	assert.Zero(t, abandoned, "no judging of a dead lease")
}

// TestTimedOutHeartbeatTriesTheNextArbiter: the baseline's wide world,
// heavy faults, seed 20009551 (a lease of 17.9 s, heartbeats every 10 s, a
// request timeout of 5 s, max_attempts 1, two arbiters). A worker that
// waited for the next interval after a heartbeat timed out failed it:
// arbiter-1 paused at a yield from 215 s, prod-1.3's heartbeat for
// submission 109 went to it at 222.5 s and timed out at 227.5 s while
// arbiter-2 served, the next one (232.5 s) found the lease swept at 231.9
// s and the submission a system_error: MA3. The default worker sends a
// timed-out heartbeat to the next arbiter at once (this run's heartbeats
// move to arbiter-2 earlier, at the first one that times out) and every
// property holds.
func TestTimedOutHeartbeatTriesTheNextArbiter(t *testing.T) {
	opts, _ := SeedOptionsIn(judge.Default(), WorldWide, Heavy(), 20009551)
	opts.Filter = nil
	o, err := Play(opts)
	require.NoError(t, err)
	JudgeGeneric(&o.Result, opts.Design)
	assert.Empty(t, failedNames(o))
	assert.Empty(t, o.Transitions(109, judge.StatusJudging, judge.StatusSystemError), "no system_error")
	assert.Equal(t, 1, opts.Design.MaxAttempts, "the seed's world: one attempt")
}

// TestOneConfirmingRetryPerLease: the wide world, heavy faults, seed
// 31000264 (a review of the checkers found it): the database crashed at
// 150.2 s, just after home-1 was granted a lease and before its first
// heartbeat confirmed it. Each heartbeat that failed started a retry of
// its own every backoff_base (0.514 s here), and each periodic heartbeat
// (every 10.4 s) one more, none ending before the lease was confirmed:
// 179 heartbeats for the lease in one minute of the outage, against MA5's
// heartbeat bound of 13 (one arbiter: 6 periodic and 7 retries on the
// backoff). The default worker keeps one retry waiting per lease, on the
// backoff, and the run holds every property, MA5's heartbeats within the
// bound.
func TestOneConfirmingRetryPerLease(t *testing.T) {
	opts, _ := SeedOptionsIn(judge.Default(), WorldWide, Heavy(), 31000264)
	opts.Filter = nil
	o, err := Play(opts)
	require.NoError(t, err)
	JudgeGeneric(&o.Result, opts.Design)
	assert.Empty(t, failedNames(o))
	b := GenericBounds(opts.Design)
	assert.Equal(t, 13, b.HeartbeatLoad, "the seed's world")
	assert.LessOrEqual(t, o.Result.Metrics.HeartbeatLoad, b.HeartbeatLoad)
	assert.Positive(t, o.Result.Metrics.HeartbeatLoad, "heartbeats in the outage were counted")
}

// TestRefusedHeartbeatTriesTheNextArbiter: leader-only-serves (a standby
// answers every request 503 "not the leader"), the wide world, heavy
// faults, seed 41001617. A worker whose heartbeat a standby refused waited
// for the next interval, past a lease that covers one interval and a
// request's timeout: submission 103 lost a lease so and became a
// system_error (MA3). A heartbeat refused "not the leader" goes to the
// next arbiter at once (each arbiter once); the run holds every property.
func TestRefusedHeartbeatTriesTheNextArbiter(t *testing.T) {
	d := judge.Default().MustWith(judge.LeaderOnlyServes)
	opts, _ := SeedOptionsIn(d, WorldWide, Heavy(), 41001617)
	opts.Filter = nil
	o, err := Play(opts)
	require.NoError(t, err)
	JudgeGeneric(&o.Result, opts.Design)
	assert.Empty(t, failedNames(o))
	refused, atOnce := 0, 0
	for i, e := range o.Events {
		if e.Kind != "return" || !strings.Contains(e.Desc(), "heartbeat") || !strings.HasSuffix(e.Desc(), "("+judge.NotLeader+")") {
			continue
		}
		refused++
		for _, f := range o.Events[i+1:] {
			if f.T != e.T {
				break
			}
			if f.Node == e.Node && f.Kind == "call" && strings.HasPrefix(f.Desc(), "POST /heartbeat") {
				atOnce++
				break
			}
		}
	}
	assert.Equal(t, 4, refused, "the seed's heartbeats refused by the standby")
	assert.Equal(t, 2, atOnce, "refused at the first of the two arbiters: the other asked at once")
}
