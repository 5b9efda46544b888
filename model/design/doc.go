// Package design holds what every system's Design shares: a table of
// settable parameters (durations, counts, switches, each with a minimum),
// setting one from text with a clear error, listing them, checking their
// minimums, and turning knobs on with an unknown knob refused. Each system
// keeps its own parameters, knob registry and cross-parameter rules.
//
// Pure code: no clock, no I/O. Driven by the models' Design types and, via
// them, by the command line.
package design
