package judge_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/checker"
	jc "github.com/fencesim/fencesim/checker/judge"
	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/arbiter"
	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

const sec = time.Second

func at(d time.Duration) clock.Time { return clock.Time(d) }

// outcome is a played scenario: the world, its trace, and the checkers' say.
type outcome struct {
	w   *judge.World
	evs []traces.Event
	run *jc.Run
	res jc.Result
}

func play(t *testing.T, o judge.Options) outcome {
	t.Helper()
	mem := &traces.Memory{}
	o.Recorder = mem
	w, err := judge.Simulate(o)
	require.NoError(t, err)
	run, err := jc.Decode(o.Header(w), mem.Events)
	require.NoError(t, err)
	return outcome{w: w, evs: mem.Events, run: run, res: jc.Check(run)}
}

func (o outcome) failed() []checker.Verdict { return checker.Failed(o.res.Verdicts) }

func (o outcome) requireSafe(t *testing.T) {
	t.Helper()
	for _, v := range o.failed() {
		t.Errorf("%s", v)
	}
}

// ops returns the client operations of one kind with a given token.
func (o outcome) ops(op, token string) []checker.Op {
	var out []checker.Op
	for _, x := range o.run.Ops {
		if x.Call.Op == op && (token == "" || x.Call.Token == token) {
			out = append(out, x)
		}
	}
	return out
}

// transitions returns (time, token) of the submission's row entering a
// status from another.
func (o outcome) transitions(sub int64, from, to string) []jc.Version {
	var out []jc.Version
	vs := o.run.Subs[sub]
	for i := 1; i < len(vs); i++ {
		if vs[i-1].Status == from && vs[i].Status == to {
			out = append(out, vs[i])
		}
	}
	return out
}

func secs(ns int64) string { return time.Duration(ns).Round(10 * time.Millisecond).String() }

// origin is when a scenario's source timeline starts: the world is up (the
// arbiter holds the leader lock and has run its grace) by then.
const origin = 2 * sec

func rel(ns int64) string { return secs(ns - int64(origin)) }

// A-S5: the late stale result. home-1 claims 101 (token A) at 0 s, the
// network stalls from 10 s, the lease is reclaimed at 70 s, home-1 claims
// 101 again at 71 s (token B), the token-A result arrives at 75 s. Times
// are relative to the origin.
func s5(knobs ...arbiter.Knob) judge.Options {
	d := arbiter.Default().MustWith(knobs...)
	d.HomeWorkers, d.ProdWorkers = 1, 0
	d.Heartbeat = 10 * sec // the last heartbeat before the stall lands at 10 s: the lease runs out at 70 s
	d.SweepEvery = sec
	d.JudgeMin, d.JudgeMax = 40*sec, 40*sec
	stall := func(from, to string) sim.Action {
		return sim.Action{At: at(origin + 10*sec + 100*time.Millisecond), Kind: sim.Stall, Node: from, Peer: to, For: 60*sec + 400*time.Millisecond, Amount: 4500 * time.Millisecond}
	}
	return judge.Options{
		Design:   d,
		Workload: judge.Workload{Arrivals: []judge.Arrival{{At: origin, ID: 101, User: 1, Problem: 1}}},
		Schedule: sim.Schedule{stall("home-1", "arbiter-1"), stall("arbiter-1", "home-1")},
		Until:    200 * sec,
	}
}

func TestScenarioA_S5(t *testing.T) {
	o := play(t, s5())
	o.requireSafe(t)
	grants := o.transitions(101, "pending", "judging")
	require.Len(t, grants, 2, "101 is claimed twice")
	a, b := grants[0], grants[1]
	reclaim := o.transitions(101, "judging", "pending")
	require.Len(t, reclaim, 1)
	t.Logf("claim A (token %s gen %d) at %s   (source: 0 s)", a.Token, a.Gen, rel(a.T))
	t.Logf("stall from 10.1 s            (source: 10 s)")
	t.Logf("lease reclaimed at %s        (source: 70 s)", rel(reclaim[0].T))
	t.Logf("claim B (token %s gen %d) at %s   (source: 71 s)", b.Token, b.Gen, rel(b.T))
	o0 := int64(origin)
	assert.Less(t, a.T-o0, int64(100*time.Millisecond), "claimed as it arrives")
	assert.InDelta(t, float64(70*sec), float64(reclaim[0].T-o0), float64(1500*time.Millisecond), "reclaimed at about 70 s")
	assert.InDelta(t, float64(71*sec), float64(b.T-o0), float64(1500*time.Millisecond), "claimed again at about 71 s")
	assert.NotEqual(t, a.Token, b.Token)
	assert.Equal(t, a.Gen+1, b.Gen, "the second claim is the next generation")
	assert.Equal(t, "home-1", b.Worker, "both claims belong to home-1: worker_id cannot tell them apart")

	// The token-A result arrives at 75 s and gets 410.
	stale := o.ops("submit", a.Token)
	require.NotEmpty(t, stale)
	var refused int
	for _, op := range stale {
		if op.Return != nil {
			assert.Equal(t, arbiter.Code410, op.Return.Code, "the token-A result must get 410 Gone")
			refused++
			t.Logf("token-A result answered %d at %s (source: arrives at 75 s, 410 Gone)", op.Return.Code, rel(op.Response))
			assert.GreaterOrEqual(t, op.Response-o0, int64(75*sec))
		}
	}
	assert.Equal(t, 1, refused, "the worker hears 410 once and drops the result")
	// The token-B result stands.
	require.Len(t, o.run.Accepted, 1)
	assert.Equal(t, b.Token, o.run.Accepted[0].Token, "the result that stands is token B's")
	assert.Equal(t, o.run.Final(101).Status, o.run.Accepted[0].Verdict)
}

// With fence-by-worker-id the same timeline lets the stale result in: at
// 75 s the row is judging and belongs to home-1, so the worker_id check
// passes.
func TestScenarioA_S5_FenceByWorkerID(t *testing.T) {
	o := play(t, s5(arbiter.FenceByWorkerID))
	require.NotEmpty(t, o.run.Accepted)
	first := o.run.Accepted[0]
	grants := o.transitions(101, "pending", "judging")
	require.Len(t, grants, 2)
	assert.Equal(t, grants[0].Token, first.Token, "the token-A result was accepted")
	assert.Equal(t, grants[1].Token, first.Before.Token, "while token B held the lease")
	var pa1 *checker.Verdict
	for _, v := range o.failed() {
		if v.Property == jc.PA1 {
			pa1 = &v
		}
	}
	require.NotNil(t, pa1, "PA1 must catch the stale result: %v", o.failed())
	t.Logf("caught: %s", pa1)
}
