// Package twopc checks system C (two-phase commit under coordinator crashes)
// on a trace: the invariants PC1..PC5 of docs/properties.md and the metrics of
// blocking (how long prepared transactions lived, the rows they held locked,
// the sessions that hit lock_timeout, how long the VACUUM horizon was held).
//
// It reads the 2PC notes (traces/hist's Txn, kind "2pc") that model/twopc's
// coordinators and agents and model/twopc/harness write, and model/db's
// documented "prepared", "commit" and "db" events. Like every checker it
// never imports model/, and the models never import it: traces/hist is the
// contract.
//
// Who drives it: model/twopc/harness (checked runs) and model/twopc/scenario
// (C.1-C.8) call Check on the events of a run; the command line calls it on
// a trace file's events.
package twopc
