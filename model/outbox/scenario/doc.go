// Package scenario holds system B's named scenarios, B.1-B.7 of the source
// (docs/systems.md, System B): each a hand-written plan of events and
// fault schedule on the default design, played to its end and judged, with
// what the source says must come of it checked row by row. It also holds
// the runner every run of system B goes through (Play, Simulate, Judge):
// the harness (model/outbox/harness) draws worlds and searches faults on
// top of it.
//
// What it owns: the scenarios and their table (fencesim scenarios, the
// golden file testdata/table-b.txt), the runner, the judged Outcome. What
// it must never do: draw a world (that is the harness's), or change what
// the model does.
package scenario
