// Package harness runs system A end to end: it builds a world
// (model/judge), draws its faults, runs it, and judges the trace with the
// checkers (checker/judge). The scenario tests, the rapid properties, the
// knob table and the command line all go through it.
//
// It adds no behaviour to the model or the checkers; it only wires them.
package harness
