// Package systems is the registry of the systems under test: every
// implementation of the system contract (model/contract.System), one line
// each in registry.go: system A, the arbiter (model/judge/harness); system
// B, the outbox (model/outbox/harness); system C, two-phase commit
// (model/twopc/harness); and the hidden toy (internal/systems/toy) that
// proves the contract. The command line (cmd/fencesim) and the Go route
// (simtest) reach systems only through it, by name or as "all".
//
// What it owns: the registry (All, ByName, OwnerOf), the contract's types
// under the names the command line uses, a seeded run with its checkers
// timed by the wall clock (Run, Judge: the models never read it), schedule
// minimization (ddmin over the fault actions with the seed fixed, then
// attribution of each remaining action), the exhaustive mode's pool of
// workers over a system's exhaustive space, and the Go-literal rendering
// of a schedule.
//
// What it must never do: know a system by name, change what a model does
// or how a checker judges, or hold state between runs. Its goroutines are
// the exhaustive mode's workers, each playing whole runs; the command line
// runs one Run per goroutine.
//
// Who drives it: cmd/fencesim, simtest, internal/baseline, internal/artifact
// and their tests.
package systems
