// Command fencesim is the command line of the suite: explore (many seeds in
// parallel, a table per system, a determinism audit, minimized failures
// written as traces, Go schedules and HTML reports), run (one seed as
// explore plays it, its trace and report written pass or fail), replay (a
// trace re-run from its header: "identical" or the first difference, and
// the properties that fail), report (a trace file's HTML report), mutants
// (the design-knob matrix), scenarios (A-S1..A-S9, C.1..C.8), compare (a
// design change on the same seeds), merge (shard summaries into one),
// knobs and params (what --knob and --set take, from the registries and
// design tables) and version (also --version).
// docs/README.md is the reference.
//
// It owns the flags, the pool of runs (one run per goroutine, GOMAXPROCS
// goroutines: parallelism only across runs), the progress display (only on
// a terminal), the summary's text and the aggregate a system's runs are
// gathered into (the summary's format, its files and its merge are
// internal/summary's) and the failure artifacts. It drives the systems only through internal/systems and never
// decides a verdict itself: the checkers do.
//
// explore, compare and mutants catch SIGINT and SIGTERM (interrupt.go):
// they stop starting runs, give the runs in progress a grace of 2 s (then
// abandon them), and print what finished marked as interrupted. explore's
// --time bounds the whole command the same way, minimization and
// artifacts included.
//
// Exit status: 0 every property held, 1 a property failed (or a run was not
// deterministic, or a knob was not judged as expected), 2 bad usage or
// input (one line on stderr, nothing written), 130 interrupted. Main runs
// it in-process for the tests; TestMain runs it as the test binary for the
// tests that send signals.
package main
