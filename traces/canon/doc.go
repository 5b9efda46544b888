// Package canon appends JSON by hand, byte for byte as encoding/json's
// Marshal writes it: strings escaped the same way (HTML characters too, or
// not, as an Encoder with SetEscapeHTML(false) writes them), numbers,
// booleans, maps of any with sorted keys. The trace's lines, and so its
// canonical hash, are encoding/json's bytes; the hot note types of
// traces/hist and the trace encoder of traces build them with these
// helpers instead of reflection (see hist's AppendJSON methods).
//
// A value of a type it does not know is handed to encoding/json (Any), so
// the result is always encoding/json's. It holds no state and reads
// nothing: no clock, no environment. Tests compare every helper with
// encoding/json on random values.
package canon
