// Package summary owns the JSON summary that fencesim explore and mutants
// print (--json) and write per shard (--summary-out), and that fencesim
// merge reads back: its format (Summary, one System per explored system,
// one Mutant per knob of the matrix, Format the version it carries), the
// shards it is cut into (Shard: seed s belongs to shard s mod n), reading
// and saving it (Read, Save, WriteJSON), and merging shards into the
// summary one run over every seed prints (Merge).
//
// It works on summaries only: it runs nothing, judges nothing (a summary's
// counts come from the checkers' verdicts, gathered by its caller), knows
// no system and renders no text (the tables are the command's). Its
// errors are plain errors, one line each. cmd/fencesim drives it: explore
// and mutants build the summaries, merge combines them.
package summary
