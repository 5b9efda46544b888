// Package changecov is the registry of a coverage build's instrumented
// code: the line ranges of a change (targets) and, for each, how often it
// ran since the last Reset.
//
// fencesim diff builds each side with the files of its change instrumented
// by go tool cover (internal/revision.BuildCovered); a file generated next
// to them calls Register from init() with the file's counters and targets.
// In every other binary nothing registers and Enabled is false.
// cmd/fencesim's pool resets the counters before a run and takes them
// after it (one run per process at a time: the counters are the process's).
//
// It imports the standard library only and never changes a run: the
// counters are written by the instrumented code and read here.
package changecov
