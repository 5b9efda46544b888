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
//
// An event from the kernel may be lazy: a message's text is kept as its
// pieces (Event.Msg), a note's data as the model's typed value
// (Event.Value), and, in a record that is the checkers' alone, a note's text
// as that value's String (Event.TextOfValue), rendered only when someone
// reads them (Desc, DataJSON),
// writes or hashes the event, or fills it (Fill). The line written and the
// hash are byte for byte those of the rendered event.
//
// The lines are encoding/json's bytes (an Encoder with SetEscapeHTML(false)
// of the rendered Event), appended by hand (traces/canon): a note with an
// AppendJSON method (traces/hist's) encodes without reflection; any other
// value goes through encoding/json. encode_test.go holds the two equal.
package traces
