// Package outbox models system B (docs/systems.md B.1-B.7, seed 001): the
// idempotent receiver with a transactional outbox and a compensating ledger.
//
// # Nodes
//
// Every node is a sim.Program: sequential processes that block on the
// network, the database client (db.Conn, with DBTimeout: a request not
// answered in time closes the connection and fails with 08006, outcome
// unknown) and their own queues.
//
//   - Sender (one or several: Params.Senders): the payment provider, queue
//     or browser; a process per event (Sender.send). It delivers events with a stable event id (or a client's
//     Idempotency-Key, or none), waits for an answer, and redelivers the same
//     id with a new delivery timestamp after a 5xx or a timeout, with
//     backoff, until MaxAttempts (its policy). It can send an event several
//     times at once to different handlers.
//   - Handler (several): a process per delivery (Handler.handle), one
//     interactive transaction on the service database (model/db): INSERT the
//     key (UNIQUE), the charge row, the ledger entry and the outbox row,
//     COMMIT, answer 200 "received <charge>". A unique violation on the key
//     means another arrival did the work: roll back, read the stored answer,
//     answer it (B.2, B.6). No key: 400, nothing touched (B.5). A refund is a
//     compensating ledger entry (B.4).
//   - Relay (one or several: Params.Relays, all polling the one outbox): a
//     loop (Relay.poll) that reads unsent outbox rows, publishes each to
//     the broker until it is acknowledged, then marks it sent (B.3). A
//     crash between the two publishes it again: at least once.
//   - Broker: a durable queue; a process per message pushes it to the
//     consumer until acknowledged.
//   - Consumer: a loop that applies each message once, recording its id with
//     the effect in one transaction of its own database, then acknowledges.
//
// # Order of effects
//
// Handler: the key, the business rows and the message commit together, and
// the answer is sent only after COMMIT succeeded. Relay: publish, wait for
// the broker's acknowledgement, then mark (mark-sent-before-publish swaps
// them). Consumer: apply and commit, then acknowledge. Broker: the message is
// on disk before the PUBACK.
//
// # Knobs
//
// Design.Knobs switch mechanisms off at the one place each lives: the
// schema's UNIQUE key and the handler's check (check-then-insert), the
// handler's writeMessage (send-before-commit), the relay's order
// (mark-sent-before-publish), KeyOf (key-includes-delivery-time),
// DuplicateAnswer (conflict-is-500), RecordRefusal (refusal-not-stored),
// Reverse (edit-in-place-refund, double-refund-is-error), Apply
// (consumer-without-dedup).
//
// # Crash points
//
// handler/after-key, handler/before-commit, handler/after-commit,
// relay/after-publish, relay/after-mark, consumer/after-apply, and the
// database's db/commit (FaultSpec draws crash-at faults for these). Every
// blocking call is a crash point too, labelled by what it waits for ("db
// store-key", "db unsent", "puback msg-...", "redeliver", ...).
//
// # For the command line
//
// Default, ParseDesign, Design.Set/With/JSON, Knobs (the registry), Build
// (a world), FaultSpec/Faults (generated schedules ending in heal-all) and
// Simulate (one run for given events and schedule: its trace and metrics;
// the world is closed when it returns; SimulateUntil stops it early). The generic search (swarm.go,
// search.go): DrawWorld (the world drawn per run, before its faults:
// handlers, senders, relays, timings, events with key reuse; zero draws
// are the smallest world; Design.Pinned keeps parameters as set), NewReference (the world's fault-free run:
// blocking calls and protocol events per node, messages per link),
// SearchFaults (faults placed on the reference, and timed ones over the
// workload's span) and DrawSeed (all three for a seed: what fencesim
// explore plays). The trace notes are traces/hist's
// (hist.BEvent and the rest). Judging is not done here: model/outbox/harness
// runs checker/outbox on the trace (RunSeed, Simulate, Judge); this package
// imports no checker.
//
// It never reads the wall clock, starts goroutines, uses global randomness
// or depends on map iteration order. Driven by the kernel (package sim).
package outbox
