// Package pgtest is the plumbing for tests that run against a real PostgreSQL
// server: the conformance tests that hold model/db to PostgreSQL's behaviour.
//
// The server is the throw-away cluster of scripts/pg.sh:
//
//	eval "$(scripts/pg.sh start)"   # exports FENCESIM_PG_URL
//	go test ./...
//	scripts/pg.sh stop
//
// Without FENCESIM_PG_URL a test that calls Require is skipped, or fails when
// CI=true. A typical test:
//
//	ctx := t.Context()
//	a := pgtest.Connect(t, ctx)
//	schema := pgtest.Fresh(t, a, `CREATE TABLE kv (k text PRIMARY KEY, v int)`)
//	b := pgtest.ConnectSchema(t, ctx, schema) // a second, independent session
//	...
//	if pgtest.Code(err) != pgtest.LockNotAvailable { ... }
//
// Sharing one server: every test process that calls Require holds an
// exclusive file lock (one per server: tests.lock beside scripts/pg.sh's state
// file) until it exits, so the test
// binaries of different packages, which go test runs in parallel, use the
// server one at a time; the first Require in a process also sweeps what a
// killed earlier run left behind (prepared transactions, t_* schemas). Within
// one process tests share the server as they run: tests that use Fresh or
// Restart must not call t.Parallel, since Fresh rolls back every prepared
// transaction of the database and Restart ends every session.
//
// It must never be imported by non-test code and never reaches a server other
// than the one FENCESIM_PG_URL names (on loopback). Conformance tests drive it.
package pgtest
