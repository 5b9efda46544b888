// Package contract is the one shape every system under test has: the
// System interface that each model/<system>/harness package implements,
// and the types it speaks (Design, World, Outcome, Result, Metric, Knob,
// Faults, Options, Support).
//
// A run is three steps, the same in every system: Draw a world from a
// seed (the design's drawn parameters and workload, the fault schedule of
// an intensity, every stream split once), Play it into an Outcome that
// carries its own trace header (limits included) and events, and Judge
// the outcome into verdicts and metrics with their ids. Run chains them;
// a live record is judged by the same Judge.
//
// What it owns: the interface and the types, the run's three steps
// chained (Run), and the small helpers every adapter needs (a design from
// a file, knobs and "name=value" settings; the pinning of set parameters;
// the run-failed verdicts). What it must never do: name a system, import
// a model, or hold state between runs. internal/systems is the registry of
// the implementations; cmd/fencesim and simtest drive them through it.
package contract
