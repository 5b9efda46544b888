// Package simtest is the Go route into fencesim: the rapid property of each
// system for go test, with the artifacts fencesim explore leaves, and the
// functions a regression test pastes.
//
//	func TestFenceByWorkerID(t *testing.T) {
//		sys, d, err := simtest.NewDesign("arbiter", []string{"fence-by-worker-id"})
//		require.NoError(t, err)
//		simtest.Check(t, sys, d, simtest.Options{})
//	}
//
// Check draws the world, the fault schedule and the run's streams from
// rapid (rapid shrinks a failure toward the smallest world and the fewest
// faults), judges every property, and on a failure writes the shrunk run's
// trace, schedule and HTML report under fencesim-out/ (in the test's
// package directory; -fencesim.out changes it), prints their paths and the
// replay command, and keeps its output short: rapid's draw log is off
// unless -fencesim.draws is given. rapid's own fail file goes under the
// package's testdata/rapid/ (ignored by .gitignore; -rapid.nofailfile turns
// it off).
//
// A regression test pastes what explore's schedule file prints: MustRun
// plays a seed with a given schedule; Replay re-runs a trace file kept
// under testdata/ (a rapid counterexample's streams are its recorded
// draws, so the trace file, not a seed, is what reproduces it).
//
// simtest owns no model and no checker: it drives internal/systems, the
// registry the command line uses, so a property here is the property
// explore checks. It runs simulations only (no goroutine but the one rapid
// needs to stop a failing check, no wall clock inside a run).
package simtest
