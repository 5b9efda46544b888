// Package harness runs system B (model/outbox) and judges each run with
// checker/outbox: RunSeed (one run for a seed, as fencesim explore plays
// it: the world drawn from the seed, its reference run, the faults placed
// on it and timed over the workload), Property (the same generic search
// under rapid: world, seed and faults drawn from rapid's bit stream, so a
// failure shrinks toward the smallest world and the fewest faults;
// sim.RapidEach turns the search's lists into rapid slices), Simulate (given events and
// schedule), Judge (an Outcome of model/outbox, judged) and Stop (a failed
// run replayed only up to its violation, for the properties a prefix
// decides: PB1, PB4, PB6). Its tests are
// system B's property tests: the default design under generated faults,
// TestGenericFindsEveryKnob (every harmful knob caught by the generic
// search alone within a fixed budget, rapid and seeded), the probe rates
// and the soak.
//
// It is the one place where the model and its checker meet: model/outbox
// never imports a checker, checker/outbox never imports a model.
//
// It starts no goroutine and reads no clock; every world it runs is closed
// when the run ends (model/outbox's Simulate does it).
package harness
