// Package twopc is system C: two-phase commit under coordinator crashes
// (docs/systems.md C.1-C.8, seed 002). A coordinator node runs global
// transactions over participant databases (model/db nodes: "orders" inserts
// one order; "inventory" (and "inventory-2", ... for more participants)
// takes one sku-1 off a stock of 100) with PREPARE TRANSACTION, COMMIT
// PREPARED and ROLLBACK PREPARED, and keeps its decision log on its
// sim.Disk, fsync'd before it is trusted.
//
// # What it owns
//
// The Design (parameters and the knob registry of docs/systems.md "System
// C"), the coordinator (coordinator.go), the participants' agents
// (agent.go: the timeout-abort knob and the cooperative termination
// protocol), a scripted database session for the scenarios (script.go), the
// schemas and statements (sql.go) and the world builder (world.go). The
// checked-run harness with exhaustive crash enumeration is
// model/twopc/harness; the source's scenarios C.1-C.7 and the C.8
// extensions with their tables are model/twopc/scenario.
//
// # Nodes are processes
//
// The coordinator, the agents and the scripts are sim.Program nodes written
// as sequential Go against model/db's blocking client (db.Conn, db.Pool):
// Coordinator.Commit is C.1's decision path and Coordinator.Recover is C.4's
// recovery, each one function that reads top to bottom as the source's
// coordinator and recover() do. The participants are model/db's database
// nodes.
//
// # Order of effects
//
// Phase one prepares the participants one after another (orders first, as
// the source does). The decision is written to the log and fsync'd before
// the first COMMIT PREPARED is sent (commit-before-log swaps them). A
// participant whose vote did not come within vote_timeout, and that has
// nothing to roll back when told ABORT, is made to refuse the gid (the
// agents' tombstone), so that its PREPARE, if it is still on its way,
// fails (chosen: the source is silent on a late PREPARE). Every
// start of a coordinator first recovers: it asks every participant for its
// prepared transactions and finishes each as the log says; a gid without a
// record is logged ABORT, then rolled back. Transactions asked for meanwhile
// wait until recovery is over. The first decision record of a gid wins: an
// instance that finds one follows it, which makes a second instance taking
// over from the same log safe.
//
// # Crash points
//
// Every blocking call of a coordinator is a crash point labelled by what it
// waits for (crash-yield faults reach them by number); the coordinator also
// passes the named points PointBegin, PointPrepared+p, PointDecided,
// PointLogged, PointCommitted+p, PointAborted+p and PointRecovered+p.
// Positions lists C.1's five. A database passes PointStep before each input
// (so a crash can be injected at every step) and db.PointPrepare and
// db.PointCommit.
//
// # Trace
//
// The coordinators and agents write "2pc" notes whose data is traces/hist's
// Txn, the contract with checker/twopc: the node files (coordinator.go,
// agent.go, script.go) import no checker. model/db writes the "prepared",
// "commit" and "db" events. This package imports no checker package at all:
// only model/twopc/harness and model/twopc/scenario call checker/twopc, to
// judge a run.
//
// Like every model package it never reads the wall clock, starts goroutines
// or depends on map order.
package twopc
