// Package scenario holds the nine failure scenarios of docs/systems.md A.5 as
// hand-written fault schedules whose steps follow the source's timelines,
// plays them, measures each one's cost from its trace with the checkers,
// and renders the A.5 table with a "measured worst cost" column. The
// scenario tests (and `fencesim scenarios`) drive it.
//
// It wires model/judge (the world) to checker/judge (the verdicts and
// metrics); it adds no behaviour to either.
package scenario
