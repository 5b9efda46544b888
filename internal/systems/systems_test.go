package systems

import (
	"go/parser"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// TestFullRunsReplay: for every system, the fast path and the full
// recording of a seed judge the same, the full trace replays identical from
// its header, and a second run hashes the same.
func TestFullRunsReplay(t *testing.T) {
	for _, sys := range All() {
		t.Run(sys.Name(), func(t *testing.T) {
			d := sys.Default()
			for _, seed := range []uint64{1, 2, 3} {
				fast := Run(sys, d, seed, Moderate, Options{Hash: true})
				full := Run(sys, d, seed, Moderate, Options{Full: true, Hash: true})
				again := Run(sys, d, seed, Moderate, Options{Hash: true})
				assert.Equal(t, fast.Hash, again.Hash, "seed %d: two runs must hash the same", seed)
				assert.Equal(t, fast.FailedIDs(), full.FailedIDs(), "seed %d: fast and full runs must judge the same", seed)
				assert.Equal(t, fast.Schedule, full.Schedule)
				require.NotEmpty(t, full.Events)
				rep, err := sys.Replay(full.Header)
				require.NoError(t, err)
				d := traces.Compare(full.Events, rep.Events)
				assert.True(t, d.Identical, "seed %d: replay: %s", seed, d)
				assert.Equal(t, full.Hash, rep.Hash)
				assert.NotEmpty(t, fast.Metrics)
				for _, v := range fast.Verdicts {
					assert.NotEmpty(t, v.Property)
				}
			}
		})
	}
}

// TestGoLiteral: the minimized schedule renders as a Go expression that
// parses, with every field a test needs.
func TestGoLiteral(t *testing.T) {
	s := sim.Schedule{
		{At: clock.Time(75*time.Second + 200*time.Millisecond), Kind: sim.Crash, Node: "arbiter-1"},
		{At: clock.Time(80 * time.Second), Kind: sim.Partition, Groups: [][]string{{"db"}, {"arbiter-1", "home-1"}}},
		{At: clock.Time(90 * time.Second), Kind: sim.Stall, Node: "home-1", Peer: "arbiter-1", For: time.Minute, Amount: 4500 * time.Millisecond},
		{At: clock.Time(91 * time.Second), Kind: sim.Loss, Rate: 250000, For: time.Second},
		{At: clock.Time(92 * time.Second), Kind: sim.CrashAt, Node: "db", Point: "db/commit", Count: 2},
		{At: clock.Time(93 * time.Second), Kind: sim.Do, Node: "arbiter-1", Point: "rejudge", Arg: "101"},
		{At: clock.Time(180 * time.Second), Kind: sim.HealAll},
	}
	lit := GoLiteral(s)
	_, err := parser.ParseExpr(lit)
	require.NoError(t, err, lit)
	assert.Contains(t, lit, `{At: clock.Time(75200 * time.Millisecond), Kind: sim.Crash, Node: "arbiter-1"}`)
	assert.Contains(t, lit, `Groups: [][]string{{"db"}, {"arbiter-1", "home-1"}}`)
	assert.Contains(t, lit, `For: 60 * time.Second, Amount: 4500 * time.Millisecond`)
	assert.Contains(t, lit, `Kind: sim.Do, Node: "arbiter-1", Point: "rejudge", Arg: "101"`)
	assert.Contains(t, lit, `{At: clock.Time(180 * time.Second), Kind: sim.HealAll}`)
	_, err = parser.ParseExpr(GoLiteral(nil))
	require.NoError(t, err)
	// The hint names the imports the literal uses: an unused "time"
	// does not compile (a schedule of at-0 message drops has no duration).
	assert.Equal(t, "clock, sim, time", GoImports(s))
	noTime := sim.Schedule{{Kind: sim.Message, Node: "home-1", Peer: "arbiter-1", Arg: "drop", Count: 1}}
	assert.NotContains(t, GoLiteral(noTime), "time.")
	assert.Equal(t, "clock, sim", GoImports(noTime))
	assert.Equal(t, "sim", GoImports(nil))

	// A fault armed from the start (a rapid check's crash-yield) keeps
	// FromStart: without it the pasted schedule arms after the start-up
	// and plays another run.
	lit = GoLiteral(sim.Schedule{{Kind: sim.CrashYield, Node: "coordinator", For: time.Millisecond, Count: 24, FromStart: true}})
	assert.Contains(t, lit, `{At: clock.Time(0), Kind: sim.Kind("crash-yield"), Node: "coordinator", For: 1 * time.Millisecond, Count: 24, FromStart: true}`)
	// Every field of an action is rendered.
	all := sim.Action{At: 1, Kind: sim.Stall, Node: "a", Peer: "b", Groups: [][]string{{"a"}}, Rate: 1, For: 1, Amount: 1, Point: "p", Arg: "x", Count: 1, FromStart: true}
	lit = GoLiteral(sim.Schedule{all})
	for i := range reflect.TypeOf(all).NumField() {
		assert.Contains(t, lit, reflect.TypeOf(all).Field(i).Name+": ", "the literal renders every field of sim.Action")
	}
}
