package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testLevers = []Lever{
	{Name: "arbiters=2", Label: "world/arbiters", Value: 2},
	{Name: "faults=max", Label: "faults", Value: LeverMax},
	{Name: "too-big", Label: "small", Value: 9},
}

func TestSteerSeed(t *testing.T) {
	s := SteerSeed(7, 0b101)
	mask, n := Steering(s)
	assert.Equal(t, uint64(0b101), mask)
	assert.Equal(t, uint64(7), n)
	mask, n = Steering(7)
	assert.Zero(t, mask, "a plain seed pulls no lever")
	assert.Equal(t, uint64(7), n)
	assert.Equal(t, "arbiters=2, too-big", SteerNames(s, testLevers))
	assert.Empty(t, SteerNames(7, testLevers))
	assert.Panics(t, func() { SteerSeed(SteerBaseLimit, 1) })
	assert.Panics(t, func() { SteerSeed(1, 0) })
	assert.Panics(t, func() { SteerSeed(1, 1<<MaxLevers) })
}

// TestSteerForcesOnlyItsDraws: a steered stream makes every draw the
// plain stream makes, returns the lever's value for the lever's label
// (the draw's highest for LeverMax or a value out of its range) and the
// plain stream's values for every other draw; a plain seed's stream is
// the stream itself.
func TestSteerForcesOnlyItsDraws(t *testing.T) {
	seed := SteerSeed(3, 0b111)
	plain := NewPCG(seed).Stream("world")
	r := Steer(NewPCG(seed).Stream("world"), seed, testLevers)
	for i := range 50 {
		want := []uint64{plain.Uint64n("x", 1000), plain.Uint64n("world/arbiters", 4), plain.Uint64n("faults", 9), plain.Uint64n("small", 3)}
		got := []uint64{r.Uint64n("x", 1000), r.Uint64n("world/arbiters", 4), r.Uint64n("faults", 9), r.Uint64n("small", 3)}
		assert.Equal(t, want[0], got[0], "draw %d: an unsteered label keeps its value", i)
		assert.Equal(t, []uint64{2, 8, 2}, got[1:], "draw %d: the levers' values", i)
	}
	one := SteerSeed(3, 0b010)
	r = Steer(NewPCG(one).Stream("w"), one, testLevers)
	p := NewPCG(one).Stream("w")
	assert.Equal(t, p.Uint64n("world/arbiters", 4), r.Uint64n("world/arbiters", 4), "a lever not pulled forces nothing")
	s := NewPCG(9).Stream("w")
	assert.Same(t, s, Steer(s, 9, testLevers))
}

func TestCheckSteer(t *testing.T) {
	require.NoError(t, CheckSteer(5, "x", nil))
	require.NoError(t, CheckSteer(SteerSeed(5, 0b100), "x", testLevers))
	err := CheckSteer(SteerSeed(5, 1), "outbox", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "outbox has no levers")
	err = CheckSteer(SteerSeed(5, 0b1000), "arbiter", testLevers)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "naming lever 3, and arbiter has 3 levers")
}

func TestKindLevers(t *testing.T) {
	assert.Equal(t, []Lever{{Name: "on:crash", Label: "kind-on/crash", Value: 1}}, KindLevers([]Kind{Crash}))
}
