// Package judge checks runs of system A (the judge arbiter) from their traces
// alone: the database's commit log, the client calls and returns, and the
// workers' and monitor's notes (traces/hist). It implements the safety
// properties PA1-PA7 and PA9 as invariants, PA1 and PA3 also as porcupine
// models of the lease (per submission, in the client's view where a lost
// reply is an unknown outcome, and in the oracle's view where the commit log
// settles it), the liveness property PA8 after healing, the metrics
// MA1-MA6, and, as properties, the metrics the source promises as zero (MA2
// where it promises no waste, MA3 on every run).
//
// A worker process is a node name; it acts under a worker_id (hist's
// WorkerID, its own name when absent), which is what the database records.
// Each check declares the shapes of world it reads (Supports, against the
// hist.Shape in the header's workload) and answers "unsupported: ..." on a
// run outside them.
//
// It never imports model/: the design's parameters are read from the trace
// header's JSON. Driven by the property tests, the scenario tests and the
// command line.
package judge
