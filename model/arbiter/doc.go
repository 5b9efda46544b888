// Package arbiter models system A's central arbiter (SYSTEMS.md A.0-A.4): the
// only process that speaks SQL. Workers reach it with HTTP-like requests over
// the simulated network (claim, heartbeat, submit); it answers 200, 204, 410
// or 503. It holds a session-level advisory lock on a dedicated connection to
// be the leader; only the leader dispatches and sweeps. It runs the start-up
// grace (and grace after the database returns), answers 503 while the
// database is unreachable, pairs hanging claims with pending submissions
// home-first and round-robin, and refreshes its probe only when a full
// dispatch round completes.
//
// Facts live only in the database: every write is one function of sql.go
// with the condition SYSTEMS.md gives it, and each design knob is a switch at
// that one place. The Design carries every parameter (defaults from the
// source) and the knob registry.
//
// The arbiter is a pure state machine (sim.Node); requests run as tasks on a
// pool of database connections, so that several requests interleave in the
// database as they would in production. Crash points mark the three moments
// of A-S1: "claim-before-commit", "claim-after-commit", "claim-after-reply".
//
// It never reads the wall clock, starts goroutines or holds facts it has not
// read from the database (except under the memory-facts knob). Driven by the
// kernel; worlds are built by package model/judge.
package arbiter
