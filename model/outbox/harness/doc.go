// Package harness runs system B (model/outbox) and judges each run with
// checker/outbox: RunSeed (one run for a seed: the workload and the faults
// drawn from the seed's streams, as fencesim explore does), Simulate (given
// events and schedule) and Judge (an Outcome of model/outbox, judged). Its
// tests are system B's property tests: the default design under generated
// faults, the knob table (every harmful knob caught within a fixed budget),
// the probe rates and the soak.
//
// It is the one place where the model and its checker meet: model/outbox
// never imports a checker, checker/outbox never imports a model.
//
// It starts no goroutine and reads no clock; every world it runs is closed
// when the run ends (model/outbox's Simulate does it).
package harness
