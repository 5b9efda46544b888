// Package live runs a system's node code for real: the live world of
// `fencesim live` (docs/live.md).
//
// The node code is the simulator's, unchanged: model/judge's arbiters,
// workers, monitor and web front, model/twopc's coordinator and agents,
// model/outbox's handlers, relay, broker, consumer and sender, each built by
// the same factory (judge.PlanOf, the twopc world's nodes, outbox.NodesOf).
// What differs is the environment a node is stepped in. In the simulator
// the kernel steps it; here a driver (node.go) steps it in an OS process of
// its own (`fencesim node --config FILE`) through sim.Outside and carries out
// what each step asks for for real:
//
//   - timers: time.AfterFunc, on the machine's clock (every node reads the
//     same clock: time since the run's instant 0);
//   - messages between nodes: HTTP over TCP (net/http): a request on a
//     connection is a POST whose answer is the reply, a datagram a POST with
//     no answer; a client hanging up cancels the serving process's waits, as
//     a broken connection does in the simulator;
//   - the database client's requests: one pgx session per connection
//     (internal/pgexec), running the designs' SQL unchanged against
//     PostgreSQL;
//   - the disk: a file in the node's directory, replaced atomically and
//     fsynced whenever a step changed what is durable (before the step's
//     messages leave);
//   - notes (the history the checkers read): JSON lines appended to the
//     node's notes file as they are made.
//
// The orchestrator (run.go) starts the PostgreSQL servers (scripts/pg.sh,
// durable) unless given, creates each database in a schema of its own with
// a capture of its commits, puts a toxiproxy proxy (netproxy) in front of
// every link, starts the nodes, injects the schedule's faults as they fall
// due (SIGKILL and restart, SIGSTOP and SIGCONT, the proxies' partitions,
// cuts, stalls, delays, losses and breaks, pg_ctl restart -m immediate for a
// database crash, the nodes' own SIGKILL at a crash-at point), and merges
// every node's notes, its own fault and crash events and the servers'
// commits into one record, which the same checkers judge. Faults the real
// world cannot make (clock jumps and drift, crashes at the n-th blocking
// call, one message singled out) are refused before anything starts.
package live
