package sim

import (
	"fmt"
	"math/bits"
	"strings"
)

// Steered seeds. A seed whose top bit is set is steered: its bits 32 to 62
// are a set of levers of its system (the system's lever list, bit 32 the
// first lever), its low 32 bits a number that tells seeds of the same set
// apart. A lever forces one of the labelled draws that make the seed's
// world and fault schedule ("world/arbiters" is 2, "kind-on/crash-at" is
// on): the draw is made as usual and its value replaced, so the stream's
// other draws are the ones it would have made. A steered seed is a plain
// seed in every other way: its streams are the PCG streams of the whole
// 64-bit seed, it replays alone, and explore --seeds plays it. A search
// steers seeds to reach a corner of the worlds (two arbiters, the old
// leader paused, a crash point armed) in more runs than the draws give
// it, without leaving the worlds the draws can make: a lever only picks
// one of a draw's own values.
//
// A system's lever list is part of its seed format: a lever is added at
// its end, never moved or removed, or the steered seeds of earlier runs
// would name other worlds.

// Lever forces one labelled draw of a world.
type Lever struct {
	// Name is how a search's report and a world's features name it
	// ("arbiters=2", "on:crash-at").
	Name string
	// Label is the draw's label (sim.Rand's label).
	Label string
	// Value replaces the draw's value; LeverMax, or a value out of the
	// draw's range, is its highest value.
	Value uint64
}

// LeverMax is a lever's value for a draw's highest value (the most faults).
const LeverMax = ^uint64(0)

const (
	steerBit   = uint64(1) << 63
	steerShift = 32
	// MaxLevers is how many levers a system's list may hold.
	MaxLevers = 31
	// SteerBaseLimit bounds a steered seed's own number (its low bits).
	SteerBaseLimit = uint64(1) << steerShift
)

// KindLevers are levers that turn fault kinds on (Generate's profile
// draws), one per kind, named "on:KIND".
func KindLevers(kinds []Kind) []Lever {
	out := make([]Lever, len(kinds))
	for i, k := range kinds {
		out[i] = Lever{Name: "on:" + string(k), Label: "kind-on/" + string(k), Value: 1}
	}
	return out
}

// SteerSeed is the steered seed of a number below SteerBaseLimit and a
// non-empty set of levers (bit i: lever i).
func SteerSeed(n uint64, mask uint64) uint64 {
	if n >= SteerBaseLimit || mask == 0 || mask>>MaxLevers != 0 {
		panic(fmt.Sprintf("sim: SteerSeed(%d, %#x) out of range", n, mask))
	}
	return steerBit | mask<<steerShift | n
}

// Steering splits a seed: its set of levers (0 for a plain seed) and its
// number.
func Steering(seed uint64) (mask, n uint64) {
	if seed&steerBit == 0 {
		return 0, seed
	}
	return (seed &^ steerBit) >> steerShift, seed & (SteerBaseLimit - 1)
}

// CheckSteer says why a seed cannot be played with a system's levers: a
// steered seed of a system without levers, or one naming a lever past the
// end of its list.
func CheckSteer(seed uint64, system string, levers []Lever) error {
	mask, _ := Steering(seed)
	if mask == 0 {
		return nil
	}
	if len(levers) == 0 {
		return fmt.Errorf("seed %d is a steered seed (its top bit is set), and %s has no levers to steer by: use a seed below 2^63", seed, system)
	}
	if mask>>len(levers) != 0 {
		return fmt.Errorf("seed %d is a steered seed naming lever %d, and %s has %d levers: use a seed a directed search printed", seed, bits.Len64(mask)-1, system, len(levers))
	}
	return nil
}

// SteerLevers are the levers a seed pulls, in the list's order (none for
// a plain seed).
func SteerLevers(seed uint64, levers []Lever) []Lever {
	mask, _ := Steering(seed)
	var out []Lever
	for i, l := range levers {
		if mask&(1<<uint(i)) != 0 {
			out = append(out, l)
		}
	}
	return out
}

// SteerNames names a seed's levers ("arbiters=2, on:crash-at"), "" for a
// plain seed.
func SteerNames(seed uint64, levers []Lever) string {
	var out []string
	for _, l := range SteerLevers(seed, levers) {
		out = append(out, l.Name)
	}
	return strings.Join(out, ", ")
}

// Steer is r with the seed's levers applied: r itself for a plain seed.
// The seed must pass CheckSteer.
func Steer(r Rand, seed uint64, levers []Lever) Rand {
	on := SteerLevers(seed, levers)
	if len(on) == 0 {
		return r
	}
	return &steered{r: r, on: on}
}

type steered struct {
	r  Rand
	on []Lever
}

func (s *steered) Uint64n(label string, n uint64) uint64 {
	v := s.r.Uint64n(label, n)
	for _, l := range s.on {
		if l.Label == label {
			if l.Value >= n {
				return n - 1
			}
			return l.Value
		}
	}
	return v
}
