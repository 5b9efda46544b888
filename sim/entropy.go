package sim

import (
	"fmt"
	"math/bits"

	"pgregory.net/rapid"
)

// Rand is one named stream of decisions. Uint64n returns a value in [0, n);
// by convention 0 is always the uneventful outcome (deliver, no delay, no
// crash), so that rapid's shrinking toward zero removes faults. label names
// the decision for rapid's logs. n must be positive.
type Rand interface {
	Uint64n(label string, n uint64) uint64
}

// Entropy hands out named streams. Streams of a PCG entropy are independent:
// adding draws on one never changes another's. Streams of a rapid or tape
// entropy share one recorded sequence in the order the run consumes it, which
// is itself deterministic.
type Entropy interface {
	Stream(name string) Rand
	// Describe names the entropy for a trace header ("pcg seed=7", "rapid").
	Describe() string
}

// Chance is true with probability ppm per million; a zero draw is false.
func Chance(r Rand, label string, ppm uint32) bool {
	if ppm == 0 {
		return false
	}
	if ppm >= 1_000_000 {
		return true
	}
	return r.Uint64n(label, 1_000_000) >= uint64(1_000_000-ppm)
}

// Between returns a value in [lo, hi], lo on a zero draw.
func Between(r Rand, label string, lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	return lo + int64(r.Uint64n(label, uint64(hi-lo)+1))
}

// ---- PCG ----

// PCG is a seeded entropy: a permuted congruential generator per stream, each
// seeded from (root seed, stream name) with FNV-1a and SplitMix64.
type PCG struct{ seed uint64 }

// NewPCG returns the entropy of a root seed.
func NewPCG(seed uint64) *PCG { return &PCG{seed: seed} }

// Seed returns the root seed.
func (p *PCG) Seed() uint64 { return p.seed }

// Describe implements Entropy.
func (p *PCG) Describe() string { return fmt.Sprintf("pcg seed=%d", p.seed) }

// Stream implements Entropy.
func (p *PCG) Stream(name string) Rand {
	h := splitmix(p.seed ^ fnv1a(name))
	return &pcgStream{state: splitmix(h), inc: splitmix(h+1) | 1}
}

type pcgStream struct{ state, inc uint64 }

func (s *pcgStream) next() uint64 {
	// PCG-XSL-RR 64-bit output from two 64-bit LCG steps (enough for a
	// simulator; not a cryptographic generator).
	s.state = s.state*6364136223846793005 + s.inc
	x := s.state
	hi := uint32((x ^ (x >> 18)) >> 27)
	hi = bits.RotateLeft32(hi, -int(x>>59))
	s.state = s.state*6364136223846793005 + s.inc
	y := s.state
	lo := uint32((y ^ (y >> 18)) >> 27)
	lo = bits.RotateLeft32(lo, -int(y>>59))
	return uint64(hi)<<32 | uint64(lo)
}

func (s *pcgStream) Uint64n(_ string, n uint64) uint64 {
	if n == 0 {
		panic("sim: Uint64n(0)")
	}
	if n&(n-1) == 0 {
		return s.next() & (n - 1)
	}
	// Lemire's nearly divisionless method, unbiased.
	hi, lo := bits.Mul64(s.next(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(s.next(), n)
		}
	}
	return hi
}

func fnv1a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// ---- rapid ----

// Rapid draws every decision from a *rapid.T, so rapid records, replays and
// shrinks them all. It also keeps a tape of the values drawn, for the trace.
type Rapid struct {
	t       *rapid.T
	tape    []uint64
	uniform bool
}

// NewRapid returns an entropy backed by t.
func NewRapid(t *rapid.T) *Rapid { return &Rapid{t: t} }

// NewRapidUniform is NewRapid whose draws are spread evenly over their
// range, as a seeded stream's are, and still shrink toward zero: each value
// is drawn bit by bit, the highest first, as rapid draws a single bit
// without its lean toward small numbers (rapid.Uint64Range leans hard: a
// fault's time and length over minutes come out as milliseconds). For the
// choices that make a world and its faults; a run's own entropy stays
// NewRapid.
func NewRapidUniform(t *rapid.T) *Rapid { return &Rapid{t: t, uniform: true} }

// Each draws a list of 1 to max elements, each drawn by one, so that
// rapid's shrinker can delete whole elements (a submission of a world, a
// fault of a schedule) without shifting the draws after them; each
// element's draws are made on an entropy of the same kind.
func (r *Rapid) Each(label string, maxN int, one func(Rand)) {
	uniform := r.uniform
	el := rapid.Custom(func(t *rapid.T) struct{} {
		one(&Rapid{t: t, uniform: uniform})
		return struct{}{}
	})
	rapid.SliceOfN(el, 1, maxN).Draw(r.t, label)
}

// Uniform returns an entropy on the same *rapid.T whose draws are spread
// evenly (see NewRapidUniform).
func (r *Rapid) Uniform() *Rapid { return &Rapid{t: r.t, uniform: true} }

// Describe implements Entropy.
func (r *Rapid) Describe() string { return "rapid" }

// Stream implements Entropy. Every stream draws from the same *rapid.T.
func (r *Rapid) Stream(string) Rand { return r }

// Tape returns the values drawn so far, in order.
func (r *Rapid) Tape() []uint64 { return r.tape }

// Uint64n implements Rand.
func (r *Rapid) Uint64n(label string, n uint64) uint64 {
	if n == 0 {
		panic("sim: Uint64n(0)")
	}
	var v uint64
	if r.uniform && n > 2 {
		for b := bits.Len64(n-1) - 1; b >= 0; b-- {
			v |= rapid.Uint64Range(0, 1).Draw(r.t, label) << b
		}
		v %= n
	} else {
		v = rapid.Uint64Range(0, n-1).Draw(r.t, label)
	}
	r.tape = append(r.tape, v)
	return v
}

// ---- tape ----

// Tape replays the values a Rapid entropy recorded. A draw past the end of
// the tape, or a value out of the requested range, means the replay has
// diverged from the recording; Err reports the first such draw and the
// stream answers 0 (uneventful) from then on.
type Tape struct {
	vals []uint64
	pos  int
	err  error
}

// NewTape returns an entropy that replays vals.
func NewTape(vals []uint64) *Tape { return &Tape{vals: vals} }

// Describe implements Entropy.
func (t *Tape) Describe() string { return fmt.Sprintf("tape len=%d", len(t.vals)) }

// Stream implements Entropy.
func (t *Tape) Stream(string) Rand { return t }

// Err reports a divergence from the recording, or nil.
func (t *Tape) Err() error { return t.err }

// Tape returns the values replayed so far, in order: a run replayed from
// a tape (a rapid counterexample trimmed at its violation) records what
// it drew, as a Rapid entropy does.
func (t *Tape) Tape() []uint64 { return t.vals[:t.pos] }

// Uint64n implements Rand.
func (t *Tape) Uint64n(label string, n uint64) uint64 {
	if t.err != nil {
		return 0
	}
	if t.pos >= len(t.vals) {
		t.err = fmt.Errorf("replay diverged: draw %d (%s) is past the end of the recorded tape (%d values)", t.pos, label, len(t.vals))
		return 0
	}
	v := t.vals[t.pos]
	if v >= n {
		t.err = fmt.Errorf("replay diverged: draw %d (%s) recorded %d, out of range [0,%d)", t.pos, label, v, n)
		return 0
	}
	t.pos++
	return v
}
