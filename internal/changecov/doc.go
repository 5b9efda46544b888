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
// A target's code is counted block by block (Target.Blocks, Parts). A
// line no block holds counts with the block its code runs in; a switch's
// case expressions run in the passes of the switch that reached their
// clause, which no block counts alone: the build names the switch's block
// and, to take from its count (Target.Less), the bodies of the earlier
// clauses that matched (not one entered by fallthrough, whose count mixes
// matches and fallthroughs); a default's, every other matching clause's
// body. A case after a clause that always matches is then code that never
// ran, where counting it with its switch would say it ran whenever the
// switch did.
//
// It imports the standard library only and never changes a run: the
// counters are written by the instrumented code and read here.
package changecov
