// Package harness runs system C (model/twopc) end to end and judges each
// run with checker/twopc.
//
// # What it owns
//
// Harness (the network, the fault horizon and downtime, the heal-all and
// the settle time of a checked run, an optional restart supervisor),
// DefaultHarness, Run (a design under a fault schedule, the end of the run
// noted quiesced or not, the trace checked), the generic search (search.go:
// NewReference, the world's fault-free run with each node's blocking calls
// and protocol events and each link's messages; SearchFaults, faults
// placed on it and timed over the workload's span; DrawSeed, the world
// and the faults of a seed), RunSeed (one run for a seed: the unit of
// fencesim explore), Property (the same search under rapid, shrinking
// toward the smallest world and the fewest faults), Outcome (the closed
// world, the schedule, the events and the report), and Enumerate
// (exhaustive single and paired crashes at every step and named crash
// point, with their Coverage). Its tests are system C's property tests:
// seeded determinism and replay from a schedule, TestGenericFindsEveryKnob
// (every harmful knob caught by the generic search alone), the crash
// enumeration, the late-PREPARE finding, the soak and the benchmarks.
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
