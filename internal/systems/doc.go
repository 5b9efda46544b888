// Package systems puts the three systems under test behind one interface
// for the command line (cmd/fencesim): system A, the arbiter (model/judge,
// model/judge/harness, checker/judge); system B, the outbox (model/outbox,
// checker/outbox); system C, two-phase commit (model/twopc,
// model/twopc/harness, model/twopc/scenario, checker/twopc).
//
// What it owns: the System interface (knob registry, design from knobs,
// "name=value" parameters and a design file, one seeded run with its
// verdicts, metrics, probes and fault schedule, a full recording for
// artifacts, replay from a trace header, the named scenarios), a trace
// header for the systems whose models do not write one (B and C), the
// fault intensities none/moderate/heavy for B and C (their models have one
// fault spec; heavy draws twice as many actions), schedule minimization
// (ddmin over the fault actions with the seed fixed, then attribution of
// each remaining action), and the Go-literal rendering of a schedule.
//
// What it must never do: change what a model does or how a checker judges
// (the adapters only wire the models' own entry points: harness.Schedule and
// judge.Simulate, outbox.Simulate, model/twopc/harness's Harness.Run), hold
// state between runs, or start goroutines: the command line runs one Run per goroutine.
// Checker timings are measured by running the checker on the recorded
// trace (for B and C a second time, after the model's own check; the
// verdicts are the same).
//
// Who drives it: cmd/fencesim (explore, replay, mutants, scenarios,
// compare) and its tests.
package systems
