// Package traces owns the event record of a run: its types, the JSON Lines
// encoding (a header line, then one event per line), a streaming writer and
// reader whose errors name the line and what was expected, the canonical hash,
// and the comparison that replay uses ("identical" or the first differing
// event).
//
// It knows nothing of the systems under test: a header carries the design and
// the fault schedule as raw JSON, and an event carries a canonical text plus
// optional structured data for the checkers. It must never read the wall
// clock. The kernel (package sim) produces events through a Recorder; the
// checkers and the command line read them.
package traces
