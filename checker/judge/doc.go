// Package judge checks runs of system A (the judge arbiter) from their traces
// alone: the database's commit log, the client calls and returns, and the
// workers' and monitor's notes (traces/hist). It implements the safety
// properties PA1-PA7 as invariants, PA1 and PA3 also as porcupine models of
// the lease (per submission, in the client's view where a lost reply is an
// unknown outcome, and in the oracle's view where the commit log settles
// it), the liveness property PA8 after healing, and the metrics MA1-MA6.
//
// It never imports model/: the design's parameters are read from the trace
// header's JSON. Driven by the property tests, the scenario tests and the
// command line.
package judge
