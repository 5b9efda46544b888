package sim_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/internal/hunt"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/sim/internal/ping"
	"github.com/fencesim/fencesim/traces"
)

const sec = time.Second

func at(d time.Duration) clock.Time { return clock.Time(d) }

// heavy is the fault mix of the determinism test: every generic kind on.
func heavy(names []string) sim.GenSpec {
	return sim.GenSpec{Nodes: names, Horizon: 25 * sec, MaxActions: 20, MaxDown: 5 * sec}
}

func pingConfig(seed uint64, sched sim.Schedule, rec sim.Recorder) sim.Config {
	return sim.Config{
		Entropy:  sim.NewPCG(seed),
		Network:  network.Policy{Loss: 20_000, Dup: 20_000, DelayMin: time.Millisecond, DelayMax: 50 * time.Millisecond},
		Schedule: sched,
		Limits:   sim.Limits{MaxTime: at(30 * sec), MaxEvents: 2_000_000},
		Recorder: rec,
	}
}

// runSeed runs the ping system under a heavy generated schedule and returns
// the trace hash.
func runSeed(t testing.TB, seed uint64) string {
	names := ping.Names(5)
	sched, _ := sim.Generate(sim.NewPCG(seed).Stream("faults"), heavy(names))
	h := traces.NewDigest(traces.HashV1, nil, nil)
	w := ping.World(5, 200*time.Millisecond, pingConfig(seed, sched, h))
	require.NoError(t, w.Run())
	sum, _ := h.Sum()
	return sum
}

func TestDeterminism(t *testing.T) {
	const seeds = 500
	first := make([]string, seeds)
	for s := range first {
		first[s] = runSeed(t, uint64(s))
	}
	distinct := map[string]bool{}
	for _, h := range first {
		distinct[h] = true
	}
	assert.Len(t, distinct, seeds, "every seed must give a different trace")

	for _, procs := range []int{1, 2} {
		prev := runtime.GOMAXPROCS(procs)
		again := make([]string, seeds)
		var wg sync.WaitGroup
		jobs := make(chan int)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for s := range jobs {
					again[s] = runSeed(t, uint64(s))
				}
			}()
		}
		for s := range seeds {
			jobs <- s
		}
		close(jobs)
		wg.Wait()
		runtime.GOMAXPROCS(prev)
		for s := range seeds {
			require.Equal(t, first[s], again[s], "seed %d: trace hash differs in a parallel rerun with GOMAXPROCS=%d", s, procs)
		}
	}
}

// record runs a ping world with a hand-written schedule and returns its trace.
func record(t *testing.T, n int, sched sim.Schedule, until time.Duration) (*sim.World, []traces.Event) {
	t.Helper()
	mem := &traces.Memory{}
	cfg := pingConfig(1, sched, mem)
	cfg.Network = network.Policy{DelayMin: time.Millisecond, DelayMax: 5 * time.Millisecond}
	cfg.Limits.MaxTime = at(until)
	w := ping.World(n, 200*time.Millisecond, cfg)
	require.NoError(t, w.Run())
	return w, mem.Events
}

type sent struct {
	id       uint64
	from, to string
	t        int64
}

// sends parses the send events of a trace (datagrams only).
func sends(evs []traces.Event) []sent {
	var out []sent
	for _, e := range evs {
		if e.Kind != "send" || strings.Contains(e.Desc(), "conn=") {
			continue
		}
		var s sent
		var route string
		_, err := fmt.Sscanf(e.Desc(), "#%d %s", &s.id, &route)
		if err != nil {
			panic(err)
		}
		ft := strings.SplitN(route, "->", 2)
		s.from, s.to, s.t = ft[0], ft[1], e.T
		out = append(out, s)
	}
	return out
}

func fates(evs []traces.Event) (delivered, dropped map[uint64]string) {
	delivered, dropped = map[uint64]string{}, map[uint64]string{}
	for _, e := range evs {
		var id uint64
		if e.Kind != "deliver" && e.Kind != "drop" {
			continue
		}
		fmt.Sscanf(e.Desc(), "#%d", &id)
		if e.Kind == "deliver" {
			delivered[id] = e.Desc()
		} else {
			dropped[id] = e.Desc()
		}
	}
	return
}

func TestPartitionDropsExactlyTheCut(t *testing.T) {
	side := map[string]int{"p0": 0, "p1": 0, "p2": 1, "p3": 1}
	_, evs := record(t, 4, sim.Schedule{
		{At: at(2 * sec), Kind: sim.Partition, Groups: [][]string{{"p0", "p1"}, {"p2", "p3"}}},
		{At: at(6 * sec), Kind: sim.Heal},
	}, 10*sec)
	delivered, dropped := fates(evs)
	var across, within int
	for _, s := range sends(evs) {
		inWindow := s.t >= int64(2*sec) && s.t < int64(6*sec)-int64(10*time.Millisecond)
		if !inWindow || s.t < int64(2*sec) {
			continue
		}
		if side[s.from] != side[s.to] {
			across++
			assert.Contains(t, dropped[s.id], "partition", "message %d %s->%s crosses the cut and must be dropped", s.id, s.from, s.to)
		} else {
			within++
			assert.Contains(t, delivered, s.id, "message %d %s->%s stays on one side and must arrive", s.id, s.from, s.to)
		}
	}
	assert.Greater(t, across, 10)
	assert.Greater(t, within, 10)
	// After heal, messages cross again.
	crossedAfter := 0
	for _, s := range sends(evs) {
		if s.t > int64(6*sec) && side[s.from] != side[s.to] && delivered[s.id] != "" {
			crossedAfter++
		}
	}
	assert.Greater(t, crossedAfter, 0, "heal must let messages cross again")
}

func TestCrashLosesMemoryKeepsDisk(t *testing.T) {
	w, evs := record(t, 3, sim.Schedule{
		{At: at(5 * sec), Kind: sim.Crash, Node: "p0"},
		{At: at(7 * sec), Kind: sim.Restart, Node: "p0"},
	}, 7*sec+time.Millisecond)
	n := w.Node("p0").(*ping.Node)
	disk, ok := w.Disk("p0").Get("pongs")
	require.True(t, ok, "pongs counted before the crash are on disk")
	assert.Greater(t, disk.(uint64), uint64(0))
	assert.Equal(t, disk, n.Pongs, "the restarted node reads its count back from disk")
	assert.Zero(t, n.Beats, "beats were memory only: lost in the crash")
	// Messages in flight to p0 at the crash are lost.
	lost := 0
	for _, e := range evs {
		if e.Kind == "drop" && e.Node == "p0" && (strings.Contains(e.Desc(), "destination crashed") || strings.Contains(e.Desc(), "destination down")) {
			lost++
		}
	}
	assert.Greater(t, lost, 0, "messages to a crashed node are lost")
}

func TestDiskLosesUnsyncedWritesOnCrash(t *testing.T) {
	d := sim.NewDisk()
	d.AutoSync = false
	d.Put("a", 1)
	d.Sync()
	d.Put("b", 2)
	assert.Equal(t, 1, d.Unsynced())
	w := sim.New(sim.Config{Schedule: sim.Schedule{{At: at(sec), Kind: sim.Crash, Node: "n"}}})
	w.Add("n", func(string, *sim.Disk) sim.Node { return nopNode{} }, sim.WithDisk(d))
	require.NoError(t, w.Run())
	_, okA := d.Get("a")
	_, okB := d.Get("b")
	assert.True(t, okA, "synced write survives")
	assert.False(t, okB, "unsynced write is lost")
}

type nopNode struct{}

func (nopNode) Step(*sim.Env, sim.Input) {}

func TestPausedNodeTimersFireAfterResume(t *testing.T) {
	_, evs := record(t, 2, sim.Schedule{
		{At: at(2 * sec), Kind: sim.Pause, Node: "p0"},
		{At: at(8 * sec), Kind: sim.Resume, Node: "p0"},
	}, 9*sec)
	var during, atResume int
	for _, e := range evs {
		if e.Node != "p0" || (e.Kind != "timer" && e.Kind != "deliver") {
			continue
		}
		if e.T > int64(2*sec) && e.T < int64(8*sec) && e.Kind == "timer" {
			during++
		}
		if e.T == int64(8*sec) && e.Kind == "timer" {
			atResume++
		}
	}
	assert.Zero(t, during, "a paused node fires no timers")
	assert.Equal(t, 1, atResume, "the timer that came due while paused fires at resume")
}

func TestClockJumpMovesOneNode(t *testing.T) {
	w, _ := record(t, 2, sim.Schedule{{At: at(5 * sec), Kind: sim.Jump, Node: "p1", Amount: 30 * sec}}, 6*sec)
	c0, c1 := w.Clock("p0"), w.Clock("p1")
	assert.Equal(t, w.Now(), c0.Wall(w.Now()), "p0's clock is untouched")
	assert.Equal(t, w.Now().Add(30*sec), c1.Wall(w.Now()), "p1's clock jumped 30s")
	assert.Equal(t, w.Now(), c1.Mono(w.Now()), "a jump leaves monotonic time alone")
}

func TestDriftSlowsOneNode(t *testing.T) {
	w, _ := record(t, 2, sim.Schedule{{At: at(0), Kind: sim.Drift, Node: "p0", Rate: -100_000}}, 10*sec)
	c := w.Clock("p0")
	assert.Equal(t, w.Now().Add(-sec), c.Wall(w.Now()), "-10%% drift loses 1s in 10s")
}

// sleeper arms one timer of 10 s at its start.
type sleeper struct{}

func (sleeper) Step(env *sim.Env, in sim.Input) {
	if in.Kind == sim.Start {
		env.After(10*sec, nil)
	}
}

// TestDriftMovesPendingTimers: a timer elapses when its node's monotonic
// clock reaches the deadline, also when the drift changes after it was
// armed: armed at 0 for 10 s, a drift of -20% from 5 s leaves 5 s of the
// node's clock, 6.25 s of world time, so it fires at 11.25 s (at the old
// rate, 10 s); a drift of +25% from 5 s fires it at 9 s; heal-all at 7 s
// after the slow drift (2 s of world, 1.6 s of the clock: 3.4 s left)
// fires it at 10.4 s. Another node's timer does not move.
func TestDriftMovesPendingTimers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sched sim.Schedule
		want  time.Duration
	}{
		{"none", nil, 10 * sec},
		{"slow", sim.Schedule{{At: at(5 * sec), Kind: sim.Drift, Node: "a", Rate: -200_000}}, 11250 * time.Millisecond},
		{"fast", sim.Schedule{{At: at(5 * sec), Kind: sim.Drift, Node: "a", Rate: 250_000}}, 9 * sec},
		{"slow then healed", sim.Schedule{{At: at(5 * sec), Kind: sim.Drift, Node: "a", Rate: -200_000}, {At: at(7 * sec), Kind: sim.HealAll}}, 10400 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := &traces.Memory{}
			w := sim.New(sim.Config{Recorder: mem, Limits: sim.Limits{MaxTime: at(20 * sec)}, Schedule: tc.sched})
			w.Add("a", func(string, *sim.Disk) sim.Node { return sleeper{} })
			w.Add("b", func(string, *sim.Disk) sim.Node { return sleeper{} })
			require.NoError(t, w.Run())
			fired := map[string]time.Duration{}
			for _, e := range evs(mem) {
				if e.Kind == "timer" {
					fired[e.Node] = time.Duration(e.T)
				}
			}
			assert.Equal(t, tc.want, fired["a"], "a's timer")
			assert.Equal(t, 10*sec, fired["b"], "b's clock did not drift")
		})
	}
}

func TestBrokenConnectionSeenByBothEnds(t *testing.T) {
	_, evs := record(t, 3, sim.Schedule{{At: at(3 * sec), Kind: sim.Break, Node: "p0", Peer: "p1"}}, 5*sec)
	seen := map[string]bool{}
	for _, e := range evs {
		if e.Kind == "conn-broken" && e.T == int64(3*sec) {
			seen[e.Node] = true
		}
	}
	assert.Equal(t, map[string]bool{"p0": true, "p1": true}, seen, "both ends of p0's connection to p1 see the break, nobody else")
}

func TestCrashBreaksConnectionsFarSideSees(t *testing.T) {
	_, evs := record(t, 3, sim.Schedule{{At: at(3 * sec), Kind: sim.Crash, Node: "p1"}}, 4*sec)
	seen := map[string]bool{}
	for _, e := range evs {
		if e.Kind == "conn-broken" && e.T == int64(3*sec) {
			seen[e.Node] = true
		}
	}
	// p0 dialed p1; p1 dialed p2. Both far sides see it.
	assert.Equal(t, map[string]bool{"p0": true, "p2": true}, seen)
}

func TestBurstsDropDuplicateAndDelay(t *testing.T) {
	_, evs := record(t, 3, sim.Schedule{
		{At: at(1 * sec), Kind: sim.Loss, Rate: 1_000_000, For: sec},
		{At: at(3 * sec), Kind: sim.Dup, Node: "p0", Peer: "p1", Rate: 1_000_000, For: sec},
	}, 5*sec)
	_, dropped := fates(evs)
	var lossIn, lossOut, dupIn, dupWrong int
	for _, s := range sends(evs) {
		if s.t >= int64(sec) && s.t < int64(2*sec) {
			if strings.Contains(dropped[s.id], "loss") {
				lossIn++
			}
		} else if strings.Contains(dropped[s.id], "loss") {
			lossOut++
		}
	}
	for _, e := range evs {
		if e.Kind == "dup" {
			if e.T >= int64(3*sec) && e.T < int64(4*sec) && e.Node == "p0" {
				dupIn++
			} else {
				dupWrong++
			}
		}
	}
	assert.Greater(t, lossIn, 5, "a 100% loss burst drops datagrams")
	assert.Zero(t, lossOut, "no loss outside the burst")
	assert.Greater(t, dupIn, 0, "a dup burst on p0->p1 duplicates")
	assert.Zero(t, dupWrong, "no duplication elsewhere")
}

func TestDelayBurstReorders(t *testing.T) {
	n := network.New(network.Policy{DelayMin: time.Millisecond, DelayMax: 500 * time.Millisecond})
	r := sim.NewPCG(3).Stream("x")
	var last clock.Time
	reordered := false
	for i := 0; i < 50; i++ {
		_, f := n.Send(at(time.Duration(i)*time.Millisecond), network.Message{From: "a", To: "b"}, r)
		if f.Copy[0].At < last {
			reordered = true
		}
		last = f.Copy[0].At
	}
	assert.True(t, reordered, "a delay spread larger than the send interval reorders")
}

func TestConnectionIsFIFO(t *testing.T) {
	n := network.New(network.Policy{DelayMin: time.Millisecond, DelayMax: 500 * time.Millisecond})
	r := sim.NewPCG(3).Stream("x")
	c := n.Dial("a", "b")
	var last clock.Time
	for i := 0; i < 50; i++ {
		_, f := n.Send(at(time.Duration(i)*time.Millisecond), network.Message{From: "a", To: "b", Conn: c}, r)
		require.Equal(t, 1, f.N)
		assert.GreaterOrEqual(t, f.Copy[0].At, last, "connection traffic is never reordered")
		last = f.Copy[0].At
	}
}

// crashy crashes at its point "mid" on the second timer.
type crashy struct{ steps int }

func (c *crashy) Step(env *sim.Env, in sim.Input) {
	switch in.Kind {
	case sim.Start:
		env.After(sec, nil)
	case sim.Timer:
		c.steps++
		env.Note("before", "", nil)
		if env.CrashPoint("mid") {
			return
		}
		env.Note("after", "", nil)
		env.After(sec, nil)
	case sim.Command:
		env.Note("got", in.Cmd.Name+" "+in.Cmd.Arg, nil)
	}
}

func TestCrashPointAndCommand(t *testing.T) {
	mem := &traces.Memory{}
	w := sim.New(sim.Config{Recorder: mem, Limits: sim.Limits{MaxTime: at(10 * sec)}, Schedule: sim.Schedule{
		{At: 0, Kind: sim.CrashAt, Node: "c", Point: "mid", Count: 2},
		{At: at(500 * time.Millisecond), Kind: sim.Do, Node: "c", Point: "rejudge", Arg: "101"},
	}})
	w.Add("c", func(string, *sim.Disk) sim.Node { return &crashy{} })
	require.NoError(t, w.Run())
	var kinds []string
	for _, e := range evs(mem) {
		if e.Node == "c" && e.Kind != "fault" {
			kinds = append(kinds, e.Kind+"@"+time.Duration(e.T).String())
		}
	}
	assert.Equal(t, []string{"start@0s", "command@500ms", "got@500ms", "timer@1s", "before@1s", "after@1s", "timer@2s", "before@2s", "crash@2s"}, kinds,
		"the second pass of the point crashes the node after 'before', before 'after'")
	assert.False(t, w.Up("c"))
}

func evs(m *traces.Memory) []traces.Event { return m.Events }

func TestScheduleValidation(t *testing.T) {
	names := []string{"a", "b"}
	cases := map[string]sim.Schedule{
		`fault action 1 (crash): node "zz" is not a node of this world (nodes: a, b)`: {{Kind: sim.Crash, Node: "zz"}},
		`fault action 1 (bogus): unknown kind "bogus"`:                                {{Kind: "bogus"}},
		`fault action 1 (loss): rate 2000000 is not in [0, 1000000] per million`:      {{Kind: sim.Loss, Rate: 2_000_000, For: sec}},
		`fault action 1 (partition): node "a" is in two groups`:                       {{Kind: sim.Partition, Groups: [][]string{{"a"}, {"a", "b"}}}},
		`fault action 2 (crash): time -1.000s is negative`:                            {{Kind: sim.Heal}, {At: -clock.Time(sec), Kind: sim.Crash, Node: "a"}},
	}
	for want, s := range cases {
		err := s.Validate(names)
		require.Error(t, err)
		assert.Contains(t, err.Error(), want)
	}
	_, err := sim.ParseSchedule([]byte(`[{"at":0,"kind":"crash","node":"a","color":"red"}]`), names)
	assert.ErrorContains(t, err, `unknown field "color"`)
	good := sim.Schedule{{At: at(sec), Kind: sim.Crash, Node: "a"}, {At: at(2 * sec), Kind: sim.Restart, Node: "a"}}
	back, err := sim.ParseSchedule(good.JSON(), names)
	require.NoError(t, err)
	assert.Equal(t, good, back, "a schedule survives JSON")
}

func TestEventBudgetTurnsLivelockIntoError(t *testing.T) {
	w := ping.World(3, time.Millisecond, sim.Config{Limits: sim.Limits{MaxEvents: 1000}})
	err := w.Run()
	assert.ErrorIs(t, err, sim.ErrBudget)
}

// TestFalsePropertyShrinks: "no message is ever delivered twice" is false
// under a duplicating network. rapid must catch it and shrink the schedule
// to at most 2 fault actions.
func TestFalsePropertyShrinks(t *testing.T) {
	names := ping.Names(3)
	var lastSched sim.Schedule
	prop := func(rt *rapid.T) {
		sched, prof := sim.Generate(sim.NewRapid(rt), sim.GenSpec{Nodes: names, Horizon: 10 * sec, MaxActions: 8, MaxDown: 3 * sec})
		lastSched = sched
		mem := &traces.Memory{}
		cfg := sim.Config{Entropy: sim.NewRapid(rt), Network: network.Policy{DelayMin: time.Millisecond, DelayMax: time.Millisecond},
			Schedule: sched, Limits: sim.Limits{MaxTime: at(12 * sec)}, Recorder: mem}
		w := ping.World(3, 500*time.Millisecond, cfg)
		if err := w.Run(); err != nil {
			rt.Fatalf("run: %v", err)
		}
		seen := map[string]bool{}
		for _, e := range mem.Events {
			if e.Kind == "recv" {
				if seen[e.Node+e.Desc()] {
					rt.Fatalf("delivered twice: %s at %s; profile %s; schedule:\n%s", e.Desc(), e.Node, prof, sched)
				}
				seen[e.Node+e.Desc()] = true
			}
		}
	}
	var shrunk sim.Schedule
	var res hunt.Result
	for seed := uint64(1); seed <= 5 && !res.Found; seed++ {
		res = hunt.Run("dup", 100, seed, func(rt *rapid.T) {
			defer func() {
				if rt.Failed() {
					shrunk = lastSched
				}
			}()
			prop(rt)
		})
	}
	require.True(t, res.Found, "a duplicating network must break 'no message delivered twice':\n%s", res.Output)
	require.Contains(t, res.Output, "delivered twice", "the failure must be the property, not a broken run")
	t.Logf("caught after %d runs; shrunk counterexample (%d actions):\n%s", res.Runs, len(shrunk), shrunk)
	assert.LessOrEqual(t, len(shrunk), 2, "shrinks to at most 2 fault actions")
	assert.Equal(t, []sim.Kind{sim.Dup}, shrunk.Kinds(), "the failure needs duplication and nothing else")
}

func TestStallHoldsThenReleasesInOrder(t *testing.T) {
	_, evs := record(t, 2, sim.Schedule{{At: at(2 * sec), Kind: sim.Stall, Node: "p0", Peer: "p1", For: 3 * sec, Amount: 2 * sec}}, 10*sec)
	delivered, _ := fates(evs)
	deliverAt := map[uint64]int64{}
	for _, e := range evs {
		var id uint64
		if e.Kind == "deliver" {
			fmt.Sscanf(e.Desc(), "#%d", &id)
			deliverAt[id] = e.T
		}
	}
	var held []uint64
	for _, s := range sends(evs) {
		if s.from == "p0" && s.to == "p1" && s.t >= int64(2*sec) && s.t < int64(5*sec) {
			held = append(held, s.id)
			require.Contains(t, delivered, s.id, "a stall delays, it does not drop")
			assert.GreaterOrEqual(t, deliverAt[s.id], int64(7*sec), "held until the stall ends plus the release delay")
		}
		if s.from == "p1" && s.t >= int64(2*sec) && s.t < int64(5*sec) {
			assert.Less(t, deliverAt[s.id], int64(5*sec), "the other direction is not stalled")
		}
	}
	assert.Greater(t, len(held), 3)
}

func TestCutIsOneWayAndHealAllEndsEverything(t *testing.T) {
	w, evs := record(t, 3, sim.Schedule{
		{At: at(1 * sec), Kind: sim.Cut, Node: "p0", Peer: "p1"},
		{At: at(1 * sec), Kind: sim.Crash, Node: "p2"},
		{At: at(1 * sec), Kind: sim.Drift, Node: "p1", Rate: 5000},
		{At: at(3 * sec), Kind: sim.HealAll},
	}, 4*sec)
	_, dropped := fates(evs)
	delivered, _ := fates(evs)
	for _, s := range sends(evs) {
		if s.t < int64(1*sec)+int64(10*time.Millisecond) || s.t >= int64(3*sec)-int64(10*time.Millisecond) {
			continue
		}
		if s.from == "p0" && s.to == "p1" {
			assert.Contains(t, dropped[s.id], "partition", "p0->p1 is cut")
		}
		if s.from == "p1" && s.to == "p0" {
			assert.Contains(t, delivered, s.id, "p1->p0 is not cut")
		}
	}
	assert.True(t, w.Up("p2"), "heal-all restarts crashed nodes")
	assert.Equal(t, clock.PPM(0), w.Clock("p1").Drift(), "heal-all stops drift")
	assert.False(t, w.Net().IsCut("p0", "p1"), "heal-all heals cuts")
}
