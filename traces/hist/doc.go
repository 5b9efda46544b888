// Package hist is the vocabulary of the notes that models write into traces
// and checkers read back: client calls and returns, and each system's own
// facts (judgings, worker disks, alerts). It is the contract between model/
// and checker/, which never import each other: models encode these structs
// as an event's Data, checkers decode them.
//
// Each note type names its event kind (Kind) and renders the event's text
// (String), so that a model writes a note as one value: p.Note(hist.X{...})
// (sim.Proc.Note; the text is rendered only when the note is recorded).
// The text is part of the event, and of the trace's hash: a String changes
// only with the trace format. A few fields are marked "text only" (json:"-"):
// the text carries them and the data leaves them out, so a value read back
// from a trace file may render a shorter text than the event's own.
//
// Each note type (and CommitRecord) also appends its own JSON (AppendJSON,
// json.go): byte for byte json.Marshal's, so that traces encodes and hashes
// a note without reflection.
//
// It holds plain data and its rendering only: no dependency but the
// standard library, clock and traces/canon, nothing that reads the clock.
package hist
