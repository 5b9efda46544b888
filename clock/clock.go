package clock

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Time is simulated time in nanoseconds since the start of a run. Durations are
// ordinary time.Duration values interpreted in simulated time.
type Time int64

// Add returns t+d.
func (t Time) Add(d time.Duration) Time { return t + Time(d) }

// Sub returns the duration t-u.
func (t Time) Sub(u Time) time.Duration { return time.Duration(t - u) }

// Before reports whether t is before u.
func (t Time) Before(u Time) bool { return t < u }

// String renders t as seconds with millisecond precision ("12.345s"), the
// format used in traces and reports.
func (t Time) String() string { return string(t.Append(make([]byte, 0, 16))) }

// Append appends the time's String to b: seconds with milliseconds,
// "-1.500s".
func (t Time) Append(b []byte) []byte {
	v := int64(t)
	if v == math.MinInt64 { // -v overflows: fmt's rendering of it
		return fmt.Appendf(b, "-%d.%03ds", v/int64(time.Second), (v%int64(time.Second))/int64(time.Millisecond))
	}
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	b = strconv.AppendInt(b, v/int64(time.Second), 10)
	b = append(b, '.')
	ms := (v % int64(time.Second)) / int64(time.Millisecond)
	if ms < 100 {
		b = append(b, '0')
	}
	if ms < 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, ms, 10)
	return append(b, 's')
}

// Never is a time after every time a run can reach.
const Never Time = 1<<63 - 1

// PPM is a drift rate in parts per million: +100 makes a clock gain 100 µs
// per simulated second.
type PPM int64

// Clock is one node's clock. Its wall reading is the world's time plus an
// offset, plus the drift accumulated since the drift was last set; jumps move
// the offset. Its monotonic reading (used for timers) is affected by drift
// only, never by jumps, as on a real machine.
//
// The zero Clock is a perfect clock.
type Clock struct {
	offset     time.Duration // wall offset, changed by jumps and Set
	drift      PPM
	driftSince Time          // world time at which the current drift began
	driftBase  time.Duration // drift accumulated before driftSince
}

// drifted returns the drift accumulated up to world time t.
func (c *Clock) drifted(t Time) time.Duration {
	if c.drift == 0 {
		return c.driftBase
	}
	return c.driftBase + time.Duration(int64(t-c.driftSince)*int64(c.drift)/1_000_000)
}

// Wall returns the node's wall-clock reading at world time t.
func (c *Clock) Wall(t Time) Time { return t + Time(c.offset) + Time(c.drifted(t)) }

// Mono returns the node's monotonic reading at world time t (drift only).
func (c *Clock) Mono(t Time) Time { return t + Time(c.drifted(t)) }

// Jump moves the wall clock by d (forwards or backwards) at once.
func (c *Clock) Jump(d time.Duration) { c.offset += d }

// SetDrift changes the drift rate from world time t on.
func (c *Clock) SetDrift(t Time, rate PPM) {
	c.driftBase = c.drifted(t)
	c.driftSince = t
	c.drift = rate
}

// Offset returns the wall clock's current offset from the world's time at
// world time t (jumps plus accumulated drift).
func (c *Clock) Offset(t Time) time.Duration { return c.offset + c.drifted(t) }

// Drift returns the current drift rate.
func (c Clock) Drift() PPM { return c.drift }

// Elapse converts a monotonic duration measured by this node (a timer) into
// the world duration after which it elapses, at the current drift rate (the
// kernel moves a pending timer when the rate changes: sim's setDrift). The
// result is at least 0. A fast clock (positive drift) elapses sooner.
func (c *Clock) Elapse(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	if c.drift == 0 {
		return d
	}
	w := time.Duration(int64(d) * 1_000_000 / (1_000_000 + int64(c.drift)))
	if w < 0 {
		return 0
	}
	return w
}

// ValidDrift reports whether a drift rate is one a clock can have: slower than
// standing still is impossible, and more than ±50% is treated as a mistake.
func ValidDrift(rate PPM) error {
	if rate <= -500_000 || rate > 500_000 {
		return fmt.Errorf("clock drift %d ppm is out of range: use a value in (-500000, 500000]", rate)
	}
	return nil
}
