// Package twopc checks system C (two-phase commit under coordinator crashes)
// on a trace: the invariants PC1..PC5 of PROPERTIES.md and the metrics of
// blocking (how long prepared transactions lived, the rows they held locked,
// the sessions that hit lock_timeout, how long the VACUUM horizon was held).
//
// It owns the vocabulary of the 2PC trace notes (Note, kind "2pc"), which
// model/twopc writes and this package reads; besides those it reads model/db's
// documented "prepared", "commit" and "db" events. Like every checker it never
// imports model/: the model imports this vocabulary, not the other way round.
//
// Who drives it: model/twopc's run functions and tests call Check on the
// events of a run; the command line calls it on a trace file's events.
package twopc
