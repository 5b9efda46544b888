package contract

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/traces"
)

func TestWorldCheck(t *testing.T) {
	s := Support{Worlds: []string{"fixed", "drawn", "wide"}}
	assert.NoError(t, s.WorldCheck(""))
	assert.NoError(t, s.WorldCheck("wide"))
	assert.EqualError(t, s.WorldCheck("big"), `unknown world "big" (fixed, drawn, wide)`)
	assert.Error(t, Support{}.WorldCheck("drawn"), "a system of one world refuses a mode")
	assert.NoError(t, Support{}.WorldCheck(""))
}

func TestByIntensity(t *testing.T) {
	assert.Equal(t, 0, ByIntensity(None, 0, 1, 2))
	assert.Equal(t, 1, ByIntensity(Moderate, 0, 1, 2))
	assert.Equal(t, 2, ByIntensity(Heavy, 0, 1, 2))
}

func TestPinAndSplit(t *testing.T) {
	assert.Equal(t, []string{"a", "lease"}, Pin([]string{"lease"}, []string{"a=1", "lease=2s", "knob=x"}))
	assert.Nil(t, Pin(nil, nil))
	_, _, err := SplitSet("lease")
	assert.Error(t, err)
	n, v, err := SplitSet(" lease = 90s ")
	require.NoError(t, err)
	assert.Equal(t, [2]string{"lease", "90s"}, [2]string{n, v})
}

func TestCaughtBy(t *testing.T) {
	assert.Equal(t, "B.3: publishes: 0 (+2 more)", CaughtBy("B.3", []string{"publishes: 0", "x", "y"}))
	assert.Equal(t, "A-S5: PA1", CaughtBy("A-S5", []string{" PA1 "}))
}

func TestSeededHeader(t *testing.T) {
	assert.NoError(t, SeededHeader(traces.Header{Entropy: "pcg"}, "outbox"))
	assert.EqualError(t, SeededHeader(traces.Header{Entropy: "tape"}, "outbox"), `an outbox trace replays from a pcg seed, not from entropy "tape"`)
	assert.EqualError(t, SeededHeader(traces.Header{Entropy: "tape"}, "twopc"), `a twopc trace replays from a pcg seed, not from entropy "tape"`)
}

// TestStopwatch: laps with the clock the caller gave; none without one.
func TestStopwatch(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time { now = now.Add(time.Millisecond); return now }
	sw := (&Outcome{Clock: clock}).Stopwatch()
	sw.Lap("decode")
	sw.Lap("check")
	assert.Equal(t, []Timing{{"decode", time.Millisecond}, {"check", time.Millisecond}}, sw.Timings())
	quiet := (&Outcome{}).Stopwatch()
	quiet.Lap("decode")
	assert.Empty(t, quiet.Timings())
}

// TestRunRefusesADrawError: a world that cannot be drawn is a failed run,
// never a panic.
func TestRunRefusesADrawError(t *testing.T) {
	r := Run(failingDraw{}, Design{}, 3, Moderate, Options{})
	assert.Equal(t, []string{RunProperty}, r.FailedIDs())
	assert.Equal(t, uint64(3), r.Seed)
}

type failingDraw struct{ System }

func (failingDraw) Name() string { return "failing" }
func (failingDraw) Draw(Design, uint64, Faults, Options) (*World, error) {
	return nil, errors.New("no world")
}
