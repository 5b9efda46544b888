// Package detcheck inspects Go source for what would break a simulation's
// determinism: wall-clock time, sleeps and timers, global or crypto
// randomness, environment reads, goroutines, channels and select. It parses
// the source with go/parser and resolves each selector through the file's
// imports, so an aliased import is caught and a local variable named "time"
// is not. Its test runs it over clock/, network/, sim/ and model/.
//
// It only reads source files and never changes them. Its own test drives it;
// it is not used by the simulation.
package detcheck
