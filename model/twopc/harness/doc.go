// Package harness runs system C (model/twopc) end to end and judges each
// run with checker/twopc.
//
// # What it owns
//
// Harness (the network, the fault horizon and downtime, the heal-all and
// the settle time of a checked run, an optional restart supervisor),
// DefaultHarness, Run (a design under a fault schedule, the end of the run
// noted quiesced or not, the trace checked), Draw (a fault schedule from
// model/twopc's Spec), RunSeed (one run for a seed: the unit of fencesim
// explore), Outcome (the closed world, the schedule, the events and the
// report), and Enumerate (exhaustive single and paired crashes at every
// step and named crash point, with their Coverage). Its tests are system
// C's property tests: seeded determinism and replay from a schedule, the
// knob table (every harmful knob caught), the crash enumeration, the soak
// and the benchmarks.
//
// # What it must never do
//
// It adds no behaviour to the model or the checker; it only wires them: it
// is the place where model/twopc and checker/twopc meet (model/twopc never
// imports a checker, checker/twopc never imports a model). Like the model
// it starts no goroutine, reads no wall clock and does not depend on map
// order; every world it runs is closed when Run returns.
//
// # Who drives it
//
// internal/systems (fencesim explore and replay for system C) and its own
// tests.
package harness
