// Package db is an in-memory relational database node with PostgreSQL's
// semantics, as far as the three designs use them.
//
// # What it owns
//
// The client contract (api.go: statements as data, results, SQLSTATE
// errors, Request/Response), the database node (New returns its
// sim.Factory), the Client helper that other nodes embed, and the commit
// log that the checkers read. Concretely:
//
//   - tables with typed columns, primary keys, multi-column unique indexes
//     (23505), NOT NULL (23502), defaults, serial columns, INSERT ... ON
//     CONFLICT DO NOTHING (Result.Inserted), RETURNING;
//   - non-unique indexes (Table.Indexes) that equality conditions use: like
//     the unique ones, candidate lists that readers check against their
//     snapshot, visited in heap order, so they change no result;
//   - statement plans compiled once per statement shape and node
//     (plan.go): constants are parameters;
//   - sessions (one per connection) with transaction blocks (BEGIN, COMMIT,
//     ROLLBACK; after an error, 25P02 until the block ends, and COMMIT then
//     rolls back), autocommit statements, and one-round-trip atomic batches;
//   - READ COMMITTED as PostgreSQL runs it: MVCC row versions, a snapshot per
//     statement, row locks held to transaction end, waits re-checked against
//     the newest committed version (EvalPlanQual); SELECT ... FOR UPDATE
//     with SKIP LOCKED and NOWAIT; lock_timeout (55P03); deadlock detection
//     after deadlock_timeout (40P01, the waiter whose check finds the cycle);
//   - now() from the node's own clock, fixed at transaction start;
//   - session-level advisory locks, released when the session ends;
//   - PREPARE TRANSACTION / COMMIT PREPARED / ROLLBACK PREPARED,
//     pg_prepared_xacts, max_prepared_transactions (55000, 53200, 42710,
//     42704);
//   - durability: committed changes (a WAL of CommitRecords) and prepared
//     transactions live on the node's sim.Disk and survive a crash;
//   - dead row versions and VACUUM with PostgreSQL's horizon.
//
// # Who drives it
//
// The kernel (package sim) steps the Node: a Start rebuilds it from its disk,
// a Deliver carries a Request on a connection (a *Request from the
// simulated clients, whose pointer boxes without an allocation; a value
// works as well: RequestOf), a ConnBroken ends a session, a Timer is a
// lock_timeout or deadlock_timeout. The node answers with a *Response
// (ResponseOf reads either). Client nodes written as
// processes (arbiter, workers, outbox nodes, 2PC coordinator) use the
// blocking client Conn (conn.go): a call yields until its answer arrives.
//
//	w.Add("db", db.New(schema, db.Config{MaxPreparedTransactions: 4, LockTimeout: 3 * time.Second}))
//
//	c := &db.Conn{DB: "db"}
//	tx, _ := c.Begin(p)                         // BEGIN rides with the first statement
//	row, err := tx.QueryRow(PickPending(1))      // SKIP LOCKED
//	tx.Queue(Grant(...))                        // sent with COMMIT
//	err = tx.Commit()
//
// The contract: every call gets the database's answer or, when the
// connection breaks (or Conn.Timeout passes) first, an error with 08006
// (CodeConnectionFailure): the outcome is unknown, the statements may have
// committed. Requests on one connection run in order; a request whose
// statement waits for a lock is answered later (the requests behind it
// wait too). Client (client.go) is the same protocol for plain state
// machines (Step/Env), as the semantics tests use it.
//
// # Order of effects
//
// A COMMIT (and COMMIT PREPARED, and an atomic batch's implicit commit)
// writes its CommitRecord to disk and syncs before the commit becomes
// visible, before the "commit" trace event, and before the answer is sent.
// PREPARE TRANSACTION writes its record and syncs before it answers. The
// crash points PointCommit and PointPrepare sit right after those writes.
//
// # The trace
//
// Every finished statement is a "db" event whose text is
// "c<conn> <SQL> => <result>" and whose data has conn, tx, sql, tag, err,
// msg, notice, affected and rows; a statement that starts to wait is a "db"
// event with "wait". Every committed transaction with changes is a "commit"
// event whose data is its CommitRecord (see CommitRecord for the JSON).
// Every PREPARE TRANSACTION, and the COMMIT PREPARED or ROLLBACK PREPARED
// that ends it, is a "prepared" event whose data is a PreparedNote.
// Stmt.SQL renders real PostgreSQL SQL with literals, so the same
// statements can be run against a server.
//
// # Held against PostgreSQL
//
// The tests run against a real server when one is running (internal/pgtest;
// skipped otherwise, a failure when CI=true): every semantic test runs its
// scenario on the server too (its subtest "postgres": the same timed
// requests on as many sessions, a Crash as an immediate restart, a Break as
// a closed socket) and compares each statement's outcome, each request's
// latency, and the final rows; conformance_test.go compares scripted
// statement sequences, pgrandom_test.go random ones (rapid), and
// pgtiming_test.go random ones on three sessions in real time, with real
// lock waits, lock_timeout, NOWAIT, SKIP LOCKED under contention, deadlocks
// and the timestamps compared. Every difference found is fixed or listed
// below.
//
// # What it must never do
//
// Read the wall clock, sleep, use global randomness, start goroutines, use
// channels, do I/O, or depend on map iteration order (rows are kept in heap
// order, maps are iterated only through sorted keys). It keeps no Env after
// a Step. It never imports another model.
//
// # Deliberate simplifications (vs PostgreSQL)
//
//   - One row-lock mode: FOR UPDATE, UPDATE and DELETE all take an
//     exclusive row lock (no FOR SHARE / FOR NO KEY UPDATE / FOR KEY SHARE,
//     no foreign keys). Only row locks, transaction waits and advisory locks
//     exist: no table locks, no DDL while running.
//   - Waits are on the holding transaction; when it ends, all its waiters
//     retry in the order they began to wait (PostgreSQL queues them on a
//     tuple lock first: the same order in the cases the designs meet). Each
//     new wait restarts lock_timeout, as each lock acquisition does in
//     PostgreSQL. The deadlock check follows the single waits-for edge of
//     each waiter. A known difference (pgtiming_test.go, skipped there
//     unless -pgtimed.all): when the first of two waiters on one row gives
//     up (its lock_timeout, a deadlock) while the holder goes on, PostgreSQL
//     hands the second the tuple lock and its wait, and its lock_timeout,
//     start again; the model's second waiter counts from its first wait
//     (holder locks k=2 at 0 s and commits at 2.2 s, w1 with lock_timeout
//     1 s waits from 0.1 s, w2 with 1.5 s from 0.2 s: the model times w2
//     out at 1.7 s, PostgreSQL updates at 2.2 s).
//   - Like PostgreSQL, an UPDATE/DELETE/FOR UPDATE that waited and whose
//     re-check fails keeps the row lock until its transaction ends.
//   - Isolation levels other than READ COMMITTED, savepoints, statement
//     timeouts, subqueries, joins and aggregates are not modelled.
//   - SET lock_timeout is session-level: a ROLLBACK does not undo it.
//   - A transaction id (in the trace, the commit log, pg_prepared_xacts) is
//     assigned at BEGIN. VACUUM's horizon follows PostgreSQL's ids instead,
//     which are given at a transaction's first write or row lock, or at
//     PREPARE TRANSACTION: it is the oldest of those of the running and
//     prepared transactions, or the oldest snapshot of a statement still
//     waiting; a transaction that has only read holds nothing back. VACUUM
//     reports Removed / Remain / DeadNotRemovable as VACUUM VERBOSE's
//     "tuples:" line does (Remain leaves out the versions written by running
//     or prepared transactions). As in PostgreSQL, an INSERT, or an UPDATE
//     of an indexed key, that fails on a unique index (or while waiting on
//     one) leaves a dead version behind.
//   - There is no autovacuum and no page pruning: dead versions stay until
//     VACUUM. PostgreSQL also prunes a nearly full page when a statement
//     reads it; the versions it prunes so are not in VACUUM's Removed. The
//     conformance tests create their tables WITH (autovacuum_enabled = off);
//     the C.2 figures (2000 rows updated 3 times) then agree exactly: the
//     prepared transaction keeps every version unprunable until VACUUM.
//   - Rows without ORDER BY come in the order their rows were created.
//     PostgreSQL returns them in physical order, where an updated row's new
//     version usually comes later, or fills space VACUUM freed. So a SELECT,
//     or an UPDATE or DELETE ... RETURNING, without ORDER BY may list rows
//     in another order, and a statement over several rows that would fail
//     for two different reasons (a lock it must wait for, a unique or NOT
//     NULL violation) may report the other one. The conformance tests
//     compare unordered rows as sets and do not generate such statements.
//   - A session whose connection breaks ends at once, also while one of its
//     statements waits for a lock. PostgreSQL notices a broken connection
//     only when it next reads from it (unless client_connection_check_interval
//     is set): a waiting statement keeps waiting, and its transaction keeps
//     its locks, until the wait ends.
//   - Dead row versions are not durable: after a crash the tables hold only
//     the committed rows (and the prepared transactions' versions).
//   - Serial sequences are durable per nextval; after a crash a sequence
//     also moves past the largest value present in its column (PostgreSQL
//     logs 32 values ahead: after a crash its sequence may skip up to 32).
//     Seeded rows with explicit ids move the sequence past them (a setval).
//   - pg_prepared_xacts returns transaction, gid, prepared and age, where
//     age (now() - prepared) is int64 nanoseconds, not an interval.
//   - Timestamps are simulated nanoseconds; rendered as SQL they are
//     microseconds after Epoch (2000-01-01 UTC).
//   - An atomic batch on a session with an open transaction is refused with
//     25001 (PostgreSQL would run the statements inside that transaction).
//   - Requests arrive only on connections; a datagram is ignored.
package db
