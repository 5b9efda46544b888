// Package outbox judges runs of system B (docs/systems.md B, docs/properties.md
// PB1-PB6) from their trace alone: the sender's calls and returns
// (traces/hist), system B's own notes (b-event, b-delivery, b-sender,
// b-handle, b-relay, b-publish, b-push, b-apply, whose shapes traces/hist
// defines: hist.BEvent and the rest) and the databases' commit records. It
// never imports model/: traces/hist is the contract with model/outbox; the
// table names of its schema are restated here.
//
// What it owns: Decode (trace events to a History), the linearizability
// model of PB1 (KeyModel, a porcupine.Model partitioned per idempotency key,
// checked by porcupine without a wall-clock timeout; a call whose reply never
// came has an unknown outcome and is accepted either way; PB1Info keeps
// porcupine's LinearizationInfo for the visualisation of a failure), the
// invariants PB1-PB6 over the history and the commit logs, and the probes
// (sometimes-assertions) that a sweep counts.
//
// What it must never do: import model/, read the clock or the environment,
// or depend on map iteration order (verdict details are sorted).
//
// Who drives it: model/outbox/harness (Judge: one simulated run of
// model/outbox, then Check), the tests there and in model/outbox, and the
// command line (internal/systems).
package outbox
