// Package ping is a tiny system for proving the kernel: nodes that ping each
// other over datagrams, count the replies on disk, and keep a connection to
// their successor alive. It is test-only scaffolding and follows every rule
// of a model: pure state machine, effects only through the Env.
//
// It must never read the wall clock, start goroutines or depend on map order
// (the determinism check covers it). The kernel's tests and BenchmarkKernel
// drive it.
package ping
