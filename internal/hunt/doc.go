// Package hunt runs a rapid property as a search rather than as a test: it
// reports whether rapid found a counterexample, after how many runs, and lets
// the property keep the shrunk counterexample, without failing the calling
// test. Knob tests use it to show that a property catches the bug it exists
// for ("this knob must be caught within N runs"), and the kernel's tests use
// it to assert how far a failure shrinks.
//
// rapid keeps its settings in package-level flags, so hunts run one at a time
// (a mutex serialises them). A hunt never writes fail files.
//
// It starts a goroutine per hunt, so it must never be used inside a simulated
// world (clock/, network/, sim/, model/ may not import it outside tests).
// Test code drives it.
package hunt
