// Package judge is system A of docs/systems.md, the judge arbiter, written the
// way its Go service would be: one file per node, each node ordinary
// sequential code in processes (sim.Program) whose operations follow A.2-A.4
// top to bottom.
//
//   - design.go: the Design (every knob and parameter, defaults from the
//     source) and the knob registry;
//   - sql.go and schema.go: every statement, one function each, with the
//     condition docs/systems.md gives it; a knob changes a condition at the one
//     place it lives;
//   - messages.go: the HTTP-like requests and replies (claim, heartbeat,
//     submit, probe);
//   - arbiter.go: the central arbiter (A.4): the leader lock, the start-up
//     grace, the dispatch loop that pairs hanging claims home-first and
//     round-robin, claim/heartbeat/submit/rejudge/sweep, 503 while the
//     database is unreachable; crash points "claim-before-commit",
//     "claim-after-commit", "claim-after-reply" (A-S1);
//   - worker.go: the judge workers (A.3), and the old direct-to-database
//     worker of the migration (A-S9);
//   - web.go and monitor.go: the web front that inserts submissions and
//     reads statuses, and the monitor that polls the probe (A-S8);
//   - world.go and simulate.go: Build turns (Design, Workload, fault
//     schedule, entropy) into a runnable sim.World; World.Quiet says when
//     nothing is left to do, and a run with Options.Settle ends at the
//     first quiet moment after its last fault plus the settle period.
//
// Beneath it, harness/ runs and checks seeded and rapid runs and the fault
// families; scenario/ holds A-S1..A-S9 and the A.5 table.
//
// Facts live only in the database (except under the memory-facts knob). The
// package never reads the wall clock, starts goroutines, uses channels or
// depends on map order; its processes are driven by the kernel alone. Every
// request and reply is recorded as a hist.Call / hist.Return note, every
// judging and result on disk as a hist.Judge / hist.Result note, for the
// checkers, which never import this package.
package judge
