// Package worker models system A's judge workers (SYSTEMS.md A.3): a worker
// claims a submission from an arbiter under a lease, judges it locally (no
// arbiter needed), heartbeats to confirm and extend the lease, writes the
// result and its lease token to local disk before submitting it, and retries
// submits with exponential backoff until it gets 200 or 410. On (re)start it
// first re-submits every result left on disk, then claims new work; a claim
// whose answer never came is retried with the same request_id.
//
// It is a pure state machine (sim.Node): no goroutines, clocks or I/O; time
// and entropy come from the sim.Env. Every request and reply is recorded as a
// hist.Call / hist.Return note, every judging and every result on disk as a
// hist.Judge / hist.Result note, for the checkers.
//
// Driven by the kernel, built into worlds by package model/judge.
package worker
