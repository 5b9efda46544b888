package pgtest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// fakeTB records Skipf and Fatalf instead of ending the test.
type fakeTB struct {
	testing.TB
	skipped, fatal string
}

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Skipf(format string, a ...any)  { f.skipped = fmt.Sprintf(format, a...) }
func (f *fakeTB) Fatalf(format string, a ...any) { f.fatal = fmt.Sprintf(format, a...) }

func TestRequireWithoutServer(t *testing.T) {
	t.Setenv(EnvURL, "")
	t.Setenv("CI", "")
	f := &fakeTB{TB: t}
	if u := Require(f); u != "" || f.fatal != "" || !strings.Contains(f.skipped, "scripts/pg.sh start") {
		t.Fatalf("outside CI: url %q, fatal %q, skipped %q; want a skip saying how to start a server", u, f.fatal, f.skipped)
	}
	t.Setenv("CI", "true")
	f = &fakeTB{TB: t}
	if u := Require(f); u != "" || f.skipped != "" || !strings.Contains(f.fatal, "CI must start PostgreSQL") {
		t.Fatalf("with CI=true: url %q, fatal %q, skipped %q; want a failure", u, f.fatal, f.skipped)
	}
}

func TestCode(t *testing.T) {
	if Code(nil) != "" || Code(errors.New("x")) != "" {
		t.Fatal("Code of a non-server error is not empty")
	}
	err := fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: LockNotAvailable})
	if Code(err) != LockNotAvailable {
		t.Fatalf("Code(wrapped) = %q", Code(err))
	}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func queryInt(t *testing.T, ctx context.Context, c *pgx.Conn, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := c.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func TestConnect(t *testing.T) {
	ctx := ctxFor(t)
	c := Connect(t, ctx)
	var version, db string
	if err := c.QueryRow(ctx, "SELECT version(), current_database()").Scan(&version, &db); err != nil {
		t.Fatal(err)
	}
	t.Logf("server: %s; database %s", version, db)
	if n := queryInt(t, ctx, c, "SELECT current_setting('server_version_num')::int"); n < 150000 {
		t.Errorf("server_version_num %d < 150000", n)
	}
}

func TestMaxPreparedTransactions(t *testing.T) {
	ctx := ctxFor(t)
	c := Connect(t, ctx)
	var s string
	if err := c.QueryRow(ctx, "SHOW max_prepared_transactions").Scan(&s); err != nil {
		t.Fatal(err)
	}
	if n, err := strconv.Atoi(s); err != nil || n <= 0 {
		t.Fatalf("max_prepared_transactions = %q; want > 0 (PREPARE TRANSACTION fails otherwise)", s)
	}
}

func TestAdvisoryLockReleasedWhenSessionCloses(t *testing.T) {
	ctx := ctxFor(t)
	s := Sessions(t, ctx, "", 2)
	a, b := s[0], s[1]
	const key = 7_000_001
	MustExec(t, ctx, a, "SELECT pg_advisory_lock($1)", key)
	var got bool
	if err := b.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&got); err != nil || got {
		t.Fatalf("second session got the lock the first holds: %v %v", got, err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// The client's close does not wait for the server's backend to exit: the
	// lock is released a moment later, so poll.
	start := time.Now()
	tries := 0
	for !got {
		tries++
		if err := b.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if !got {
			if time.Since(start) > 5*time.Second {
				t.Fatal("lock still held 5s after its session closed")
			}
			time.Sleep(time.Millisecond)
		}
	}
	t.Logf("lock free after its session closed: %d tries, %v", tries, time.Since(start))
}

func TestLockTimeout(t *testing.T) {
	ctx := ctxFor(t)
	a := Connect(t, ctx)
	schema := Fresh(t, a, "CREATE TABLE kv (k int PRIMARY KEY, v int)", "INSERT INTO kv VALUES (1, 0)")
	b := ConnectSchema(t, ctx, schema)
	MustExec(t, ctx, a, "BEGIN")
	MustExec(t, ctx, a, "UPDATE kv SET v = 1 WHERE k = 1")

	const timeout = 300 * time.Millisecond
	MustExec(t, ctx, b, fmt.Sprintf("SET lock_timeout = '%dms'", timeout.Milliseconds()))
	start := time.Now()
	_, err := b.Exec(ctx, "UPDATE kv SET v = 2 WHERE k = 1")
	took := time.Since(start)
	if Code(err) != LockNotAvailable {
		t.Fatalf("blocked UPDATE under lock_timeout: %v (SQLSTATE %q); want %s", err, Code(err), LockNotAvailable)
	}
	if took < timeout || took > timeout+2*time.Second {
		t.Errorf("lock_timeout %v fired after %v", timeout, took)
	}
	t.Logf("lock_timeout %v: %v after %v", timeout, err, took)

	// NOWAIT fails at once with the same SQLSTATE.
	start = time.Now()
	_, err = b.Exec(ctx, "SELECT * FROM kv WHERE k = 1 FOR UPDATE NOWAIT")
	if Code(err) != LockNotAvailable {
		t.Fatalf("FOR UPDATE NOWAIT: %v; want %s", err, LockNotAvailable)
	}
	t.Logf("NOWAIT: %v after %v", err, time.Since(start))
	MustExec(t, ctx, a, "ROLLBACK")
}

func TestPreparedTransactionSurvivesRestart(t *testing.T) {
	for _, immediate := range []bool{true, false} {
		name := "fast"
		if immediate {
			name = "immediate"
		}
		t.Run(name, func(t *testing.T) {
			ctx := ctxFor(t)
			a := Connect(t, ctx)
			schema := Fresh(t, a, "CREATE TABLE kv (k int PRIMARY KEY, v int)")
			gid := "pgtest-" + schema
			MustExec(t, ctx, a, "BEGIN")
			MustExec(t, ctx, a, "INSERT INTO kv VALUES (1, 1)")
			MustExec(t, ctx, a, "PREPARE TRANSACTION "+quoteLiteral(gid))

			start := time.Now()
			Restart(t, immediate)
			t.Logf("restart -m %s took %v", name, time.Since(start))

			_, err := a.Exec(ctx, "SELECT 1")
			if err == nil {
				t.Fatal("session opened before the restart still works")
			}
			t.Logf("old session after restart: SQLSTATE %q: %v", Code(err), err)

			c := ConnectSchema(t, ctx, schema)
			if n := queryInt(t, ctx, c, "SELECT count(*) FROM pg_prepared_xacts WHERE gid = $1", gid); n != 1 {
				t.Fatalf("prepared transaction %q gone after restart", gid)
			}
			if n := queryInt(t, ctx, c, "SELECT count(*) FROM kv"); n != 0 {
				t.Fatalf("prepared (uncommitted) row visible: count %d", n)
			}
			// It still holds its locks: a conflicting insert waits on it.
			MustExec(t, ctx, c, "SET lock_timeout = '200ms'")
			if _, err := c.Exec(ctx, "INSERT INTO kv VALUES (1, 2)"); Code(err) != LockNotAvailable {
				t.Fatalf("insert conflicting with the prepared transaction: %v; want %s", err, LockNotAvailable)
			}
			MustExec(t, ctx, c, "COMMIT PREPARED "+quoteLiteral(gid))
			if n := queryInt(t, ctx, c, "SELECT v FROM kv WHERE k = 1"); n != 1 {
				t.Fatalf("after COMMIT PREPARED: v = %d", n)
			}
		})
	}
}

func TestSQLStates(t *testing.T) {
	ctx := ctxFor(t)
	a := Connect(t, ctx)
	schema := Fresh(t, a, "CREATE TABLE kv (k int PRIMARY KEY, v int)", "INSERT INTO kv VALUES (1, 0)")
	b := ConnectSchema(t, ctx, schema)
	check := func(what string, err error, want string) {
		t.Helper()
		if Code(err) != want {
			t.Errorf("%s: %v (SQLSTATE %q); want %s", what, err, Code(err), want)
		} else {
			t.Logf("%s: %s %v", what, want, err)
		}
	}

	_, err := a.Exec(ctx, "COMMIT PREPARED 'no-such-gid'")
	check("COMMIT PREPARED unknown gid", err, UndefinedObject)
	_, err = a.Exec(ctx, "ROLLBACK PREPARED 'no-such-gid'")
	check("ROLLBACK PREPARED unknown gid", err, UndefinedObject)

	MustExec(t, ctx, a, "BEGIN")
	MustExec(t, ctx, a, "UPDATE kv SET v = v + 1")
	MustExec(t, ctx, a, "PREPARE TRANSACTION 'dup'")
	MustExec(t, ctx, b, "BEGIN")
	_, err = b.Exec(ctx, "PREPARE TRANSACTION 'dup'")
	check("PREPARE TRANSACTION with a gid in use", err, DuplicateObject)
	if b.PgConn().TxStatus() != 'I' {
		t.Errorf("after a failed PREPARE the session is in state %q; want idle (the transaction is rolled back)", b.PgConn().TxStatus())
	}
	MustExec(t, ctx, b, "BEGIN")
	_, err = b.Exec(ctx, "COMMIT PREPARED 'dup'")
	check("COMMIT PREPARED inside a transaction block", err, ActiveSQLTransaction)
	MustExec(t, ctx, b, "ROLLBACK")
	MustExec(t, ctx, b, "COMMIT PREPARED 'dup'") // from another session: allowed
	// The session that prepared is free again (PREPARE ended its transaction).
	MustExec(t, ctx, a, "SELECT 1")

	MustExec(t, ctx, a, "INSERT INTO kv VALUES (2, 0)")
	_, err = a.Exec(ctx, "INSERT INTO kv VALUES (2, 0)")
	check("duplicate key", err, UniqueViolation)

	MustExec(t, ctx, a, "BEGIN")
	_, err = a.Exec(ctx, "SELECT 1/0")
	check("division by zero", err, DivisionByZero)
	_, err = a.Exec(ctx, "SELECT 1")
	check("statement in an aborted transaction", err, InFailedSQLTransaction)
	MustExec(t, ctx, a, "ROLLBACK")

	MustExec(t, ctx, a, "BEGIN ISOLATION LEVEL REPEATABLE READ")
	MustExec(t, ctx, a, "SELECT v FROM kv WHERE k = 1")
	MustExec(t, ctx, b, "UPDATE kv SET v = 10 WHERE k = 1")
	_, err = a.Exec(ctx, "UPDATE kv SET v = 20 WHERE k = 1")
	check("repeatable read, concurrent update", err, SerializationFailure)
	MustExec(t, ctx, a, "ROLLBACK")

	MustExec(t, ctx, a, "SET statement_timeout = '100ms'")
	_, err = a.Exec(ctx, "SELECT pg_sleep(5)")
	check("statement_timeout", err, QueryCanceled)
	MustExec(t, ctx, a, "RESET statement_timeout")
}

func TestDeadlockDetected(t *testing.T) {
	ctx := ctxFor(t)
	a := Connect(t, ctx)
	schema := Fresh(t, a, "CREATE TABLE kv (k int PRIMARY KEY, v int)", "INSERT INTO kv VALUES (1, 0), (2, 0)")
	b := ConnectSchema(t, ctx, schema)
	// deadlock_timeout (1s by default) is how long a waiter sleeps before it
	// checks for a deadlock; a superuser session may shorten it.
	for _, c := range []*pgx.Conn{a, b} {
		MustExec(t, ctx, c, "SET deadlock_timeout = '100ms'")
		MustExec(t, ctx, c, "BEGIN")
	}
	MustExec(t, ctx, a, "UPDATE kv SET v = 1 WHERE k = 1")
	MustExec(t, ctx, b, "UPDATE kv SET v = 2 WHERE k = 2")
	errs := make(chan error, 2)
	go func() { _, err := a.Exec(ctx, "UPDATE kv SET v = 1 WHERE k = 2"); errs <- err }()
	go func() { _, err := b.Exec(ctx, "UPDATE kv SET v = 2 WHERE k = 1"); errs <- err }()
	var codes []string
	for range 2 {
		err := <-errs
		codes = append(codes, Code(err))
		if err != nil {
			t.Logf("%v", err)
		}
	}
	if !(codes[0] == DeadlockDetected && codes[1] == "" || codes[0] == "" && codes[1] == DeadlockDetected) {
		t.Fatalf("SQLSTATEs %q; want one %s and one success", codes, DeadlockDetected)
	}
	MustExec(t, ctx, a, "ROLLBACK")
	MustExec(t, ctx, b, "ROLLBACK")
}

func TestFreshIsolatesAndCleansUp(t *testing.T) {
	ctx := ctxFor(t)
	var inner string
	t.Run("inner", func(t *testing.T) {
		c := Connect(t, ctx)
		inner = Fresh(t, c, "CREATE TABLE kv (k int PRIMARY KEY)", "INSERT INTO kv VALUES (1)")
		// Left behind on purpose: a prepared transaction and a session in an
		// open transaction, both holding locks in the schema.
		MustExec(t, ctx, c, "BEGIN")
		MustExec(t, ctx, c, "INSERT INTO kv VALUES (2)")
		MustExec(t, ctx, c, "PREPARE TRANSACTION 'left-behind'")
		d := ConnectSchema(t, ctx, inner)
		MustExec(t, ctx, d, "BEGIN")
		MustExec(t, ctx, d, "SELECT count(*) FROM kv") // holds ACCESS SHARE until the end of its transaction
	})
	c := Connect(t, ctx)
	if n := queryInt(t, ctx, c, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", inner); n != 0 {
		t.Errorf("schema %s still there after its test", inner)
	}
	if n := queryInt(t, ctx, c, "SELECT count(*) FROM pg_prepared_xacts"); n != 0 {
		t.Errorf("%d prepared transactions left after the test", n)
	}
	// Two fresh schemas: same table name, separate data.
	s1 := Fresh(t, c, "CREATE TABLE kv (k int)", "INSERT INTO kv VALUES (1)")
	c2 := Connect(t, ctx)
	s2 := Fresh(t, c2, "CREATE TABLE kv (k int)")
	if s1 == s2 || !strings.HasPrefix(s1, "t_testfreshisolatesandcleansup_") {
		t.Errorf("schema names %q %q", s1, s2)
	}
	if n := queryInt(t, ctx, c2, "SELECT count(*) FROM kv"); n != 0 {
		t.Errorf("second schema sees the first's rows: %d", n)
	}
}
