// Package story tells the story of a failure from its trace: the key the
// violation is about (system A: a submission; B: an idempotency key or an
// event; C: a transaction's gid), its state over time with the events that
// changed it or acted on it, the faults the failure needs as they happened,
// and the window from the first of them to the violation. The HTML report
// draws it as a lane of its own (report.Story); Lines renders it as a
// compact terminal timeline, one line per step, as VOPR prints.
//
// It reads what the models wrote (traces/hist notes, model/db's commit
// records) and the kernel's fault events, from the events' JSON data, so a
// trace read from a file and a run in memory tell the same story. It never
// imports a model or a checker and decides nothing: the checkers named the
// violating events; story only follows their key.
package story
