package sim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/sim/internal/ping"
	"github.com/fencesim/fencesim/traces"
)

// A run driven by rapid records its draws on a tape; replaying the tape
// gives the identical trace, so a shrunk failure replays without rapid.
func TestRapidRunReplaysFromTape(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		names := ping.Names(4)
		sched, _ := sim.Generate(sim.NewRapid(rt), sim.GenSpec{Nodes: names, Horizon: 5 * sec, MaxActions: 6})
		run := func(e sim.Entropy) []traces.Event {
			mem := &traces.Memory{}
			w := ping.World(4, 100*time.Millisecond, sim.Config{Entropy: e, Schedule: sched, Recorder: mem,
				Network: network.Policy{Loss: 100_000, Dup: 100_000, DelayMax: 20 * time.Millisecond},
				Limits:  sim.Limits{MaxTime: at(6 * sec)}})
			if err := w.Run(); err != nil {
				rt.Fatalf("run: %v", err)
			}
			return mem.Events
		}
		src := sim.NewRapid(rt)
		first := run(src)
		tape := sim.NewTape(src.Tape())
		again := run(tape)
		if tape.Err() != nil {
			rt.Fatalf("tape: %v", tape.Err())
		}
		if d := traces.Compare(first, again); !d.Identical {
			rt.Fatalf("replay differs: %s", d)
		}
	})
}

func TestTapeReportsDivergence(t *testing.T) {
	tp := sim.NewTape([]uint64{5})
	assert.Equal(t, uint64(0), tp.Uint64n("x", 3), "an out-of-range value is a divergence; the stream answers 0")
	require.Error(t, tp.Err())
	assert.Contains(t, tp.Err().Error(), "recorded 5, out of range [0,3)")
	tp = sim.NewTape(nil)
	tp.Uint64n("y", 2)
	assert.Contains(t, tp.Err().Error(), "past the end of the recorded tape")
}

func TestPCGStreamsAreIndependent(t *testing.T) {
	a := sim.NewPCG(9)
	x1 := a.Stream("x")
	y := a.Stream("y")
	var first []uint64
	for i := 0; i < 5; i++ {
		first = append(first, x1.Uint64n("", 1000))
	}
	for i := 0; i < 100; i++ {
		y.Uint64n("", 1000) // heavy use of another stream
	}
	x2 := sim.NewPCG(9).Stream("x")
	for i := 0; i < 5; i++ {
		assert.Equal(t, first[i], x2.Uint64n("", 1000), "stream x does not depend on stream y's draws")
	}
	assert.NotEqual(t, first, func() (o []uint64) {
		s := sim.NewPCG(10).Stream("x")
		for i := 0; i < 5; i++ {
			o = append(o, s.Uint64n("", 1000))
		}
		return
	}(), "another seed gives other draws")
}
