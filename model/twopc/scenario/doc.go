// Package scenario holds system C's scenarios: the source's C.1-C.7
// (docs/systems.md) and the C.8 extensions (N participants, a second
// coordinator taking over the same decision log, cooperative termination,
// max_prepared_transactions), run in the simulator.
//
// # What it owns
//
// Every scenario is a hand-written schedule whose steps follow the
// source's: the coordinator is killed at a named crash point (the source's
// kill -9 at a place in its code), restarted (or not) at a fixed time, and
// the databases are read back (scenarios.go, c8.go). Each scenario has a
// function returning its rows and a function rendering its table
// (tables.go); Scenarios runs them all and Render prints them, which is
// the output of `fencesim scenarios --system twopc`. The golden files under
// testdata/ hold the rendered tables.
//
// # What it must never do
//
// It adds no behaviour to the model or the checker: it wires model/twopc
// (the world, the scripted sessions) to checker/twopc (the verdicts of
// each scenario's trace). Like the model it starts no goroutine, reads no
// wall clock and does not depend on map order.
//
// # Who drives it
//
// internal/systems (fencesim scenarios for system C) and its own tests,
// which compare every table with its golden file.
package scenario
