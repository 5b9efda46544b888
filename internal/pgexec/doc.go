// Package pgexec serves model/db's client protocol from a real PostgreSQL:
// the database side of a live run, where the node code the simulator runs
// sends its db.Request values to a server over pgx instead of to the
// model's db node.
//
// It owns three things, each with one definition that the conformance tests
// in model/db share:
//
//   - Session: one pgx connection, one server session. Session.Run answers
//     a db.Request as the model's node (model/db/node.go) answers it: the
//     statements in order, stopping at the first error; an atomic request
//     inside BEGIN ... COMMIT (ROLLBACK after an error, no COMMIT after a
//     final PREPARE TRANSACTION), refused with 25001 inside an open
//     transaction block; the same Result fields filled the same way. A
//     broken session answers with the single 08006 result the model's
//     client gives for an unknown outcome, and stays dead.
//   - DDL and CreateSchema: a db.Schema's tables and indexes on the server.
//   - InstallCapture and ReadCommits: the commit log the checkers read
//     (hist.CommitRecord), recovered from row triggers and commit
//     timestamps.
//
// Timestamps cross the boundary relative to db.Epoch, as Stmt.SQL renders
// them: a clock.Time d is the instant db.Epoch + d on the server.
//
// It must never run inside model/ (it does I/O and keeps goroutines in pgx)
// and never reaches a server other than the URL it is given. The live
// runner drives it; model/db's conformance tests drive it against the
// throw-away server of scripts/pg.sh.
package pgexec
