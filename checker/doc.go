// Package checker holds what every system's checkers share: the Verdict of a
// property, the database commit log and the client operations decoded from a
// trace, and small value helpers. The per-system checkers live in
// subpackages (checker/judge, checker/outbox, checker/twopc).
//
// Checkers read traces and histories, never model internals: no package
// under checker/ imports model/. The vocabulary they decode is
// traces/hist's and model/db's documented commit-record JSON. They never read
// the wall clock except to time themselves.
package checker
