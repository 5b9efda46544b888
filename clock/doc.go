// Package clock owns simulated time: the world's Time (nanoseconds since the
// run's start) and the per-node clocks that distort it with an offset, a drift
// rate and sudden jumps, as a fault schedule sets them.
//
// It must never read the wall clock, sleep, or hold any global state: every
// value here is a pure function of the world's time and the faults applied so
// far. The kernel (package sim) drives it: it owns one Clock per node, applies
// clock faults at their scheduled times and converts between a node's local
// readings and the world's time.
package clock
