package pgtest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Environment variables.
const (
	// EnvURL holds the server's URL, as printed by `scripts/pg.sh start`.
	EnvURL = "FENCESIM_PG_URL"
	// EnvState names the directory of scripts/pg.sh's state file (default
	// /tmp/fencesim-pg); Restart reads the cluster's data directory from it.
	EnvState = "FENCESIM_PG_STATE"
)

// SQLSTATE codes that conformance tests meet most (see Code). The full list
// is PostgreSQL's Appendix A, "PostgreSQL Error Codes".
const (
	DivisionByZero         = "22012"
	UniqueViolation        = "23505"
	ActiveSQLTransaction   = "25001" // e.g. COMMIT PREPARED inside BEGIN
	InFailedSQLTransaction = "25P02" // any statement after an error, until ROLLBACK
	IdleInTxnTimeout       = "25P03"
	SerializationFailure   = "40001"
	DeadlockDetected       = "40P01"
	UndefinedObject        = "42704" // COMMIT/ROLLBACK PREPARED of an unknown gid
	DuplicateObject        = "42710" // PREPARE TRANSACTION with a gid in use
	ObjectInUse            = "55006"
	LockNotAvailable       = "55P03" // lock_timeout, NOWAIT
	QueryCanceled          = "57014" // statement_timeout, cancel request
	AdminShutdown          = "57P01" // fast shutdown, pg_terminate_backend
	CrashShutdown          = "57P02" // immediate shutdown, crash of another backend
)

// URL is the server's URL from FENCESIM_PG_URL, or "" when unset.
func URL() string { return strings.TrimSpace(os.Getenv(EnvURL)) }

// Require returns the server's URL. Without one the test is skipped, or fails
// when CI=true (CI must start the server). The first call in a process takes
// the cross-process lock described in the package comment, waiting for other
// test processes using the same server.
func Require(t testing.TB) string {
	t.Helper()
	u := URL()
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("pgtest: %s is not set: CI must start PostgreSQL: run `eval \"$(scripts/pg.sh start)\"` before the tests", EnvURL)
		} else {
			t.Skipf("pgtest: no PostgreSQL server (%s unset): start one with `eval \"$(make -s pg)\"` or `eval \"$(scripts/pg.sh start)\"`", EnvURL)
		}
		return ""
	}
	if err := acquire(u); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return u
}

type procLock struct {
	f   *os.File // held, and kept open for the process's life
	err error    // the sweep's error, repeated to every caller
}

var (
	procMu    sync.Mutex
	procLocks = map[string]*procLock{} // by URL
)

// acquire takes, once per process and URL, the exclusive lock that keeps test
// processes from sharing one server, then sweeps leftovers of killed runs.
func acquire(u string) error {
	procMu.Lock()
	defer procMu.Unlock()
	if l, ok := procLocks[u]; ok {
		return l.err
	}
	// The lock file of a scripts/pg.sh cluster sits beside its state file;
	// another server's is named after its URL in the temporary directory.
	var f *os.File
	var err error
	name := filepath.Join(filepath.Dir(StatePath()), "tests.lock")
	if st, serr := ReadState(); serr == nil && st.URL == u {
		f, err = os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o666)
	}
	if f == nil {
		h := fnv.New64a()
		h.Write([]byte(u))
		name = filepath.Join(os.TempDir(), fmt.Sprintf("fencesim-pgtest-%016x.lock", h.Sum64()))
		f, err = os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o666)
	}
	if err != nil {
		return fmt.Errorf("open lock %s: %w", name, err)
	}
	// Blocking: go test's -timeout ends a process that waits too long.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return fmt.Errorf("lock %s: %w", name, err)
	}
	l := &procLock{f: f}
	procLocks[u] = l
	l.err = sweep(u)
	return l.err
}

// sweep rolls back the prepared transactions and drops the t_* schemas that
// an earlier, killed test process left behind.
func sweep(u string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := connect(ctx, u, "pgtest-sweep", "")
	if err != nil {
		return fmt.Errorf("connect to %s: %w", u, err)
	}
	defer conn.Close(context.Background())
	if err := rollbackPrepared(ctx, conn); err != nil {
		return fmt.Errorf("sweep prepared transactions: %w", err)
	}
	rows, err := conn.Query(ctx, `SELECT nspname FROM pg_namespace WHERE nspname LIKE 't\_%'`)
	if err != nil {
		return fmt.Errorf("sweep schemas: %w", err)
	}
	schemas, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("sweep schemas: %w", err)
	}
	for _, s := range schemas {
		if err := dropSchema(ctx, conn, s); err != nil {
			return fmt.Errorf("sweep schema %s: %w", s, err)
		}
	}
	return nil
}

func connect(ctx context.Context, u, app, schema string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(u)
	if err != nil {
		return nil, err
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	if len(app) > 63 {
		app = app[:63]
	}
	cfg.RuntimeParams["application_name"] = app
	if schema != "" {
		// A startup parameter is the session's default: RESET ALL and
		// DISCARD ALL come back to it.
		cfg.RuntimeParams["search_path"] = pgx.Identifier{schema}.Sanitize()
	}
	return pgx.ConnectConfig(ctx, cfg)
}

// Connect opens a new session (its own connection and server backend); the
// test's cleanup closes it. Each call is independent: open two or three for
// interleaved sessions.
func Connect(t testing.TB, ctx context.Context) *pgx.Conn {
	t.Helper()
	return ConnectSchema(t, ctx, "")
}

// ConnectSchema is Connect with search_path set to schema (from Fresh), so
// that every session of a test sees the same tables.
func ConnectSchema(t testing.TB, ctx context.Context, schema string) *pgx.Conn {
	t.Helper()
	u := Require(t)
	conn, err := connect(ctx, u, t.Name(), schema)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn.Close(ctx)
	})
	return conn
}

// Sessions opens n independent sessions with search_path set to schema ("" for
// the default).
func Sessions(t testing.TB, ctx context.Context, schema string, n int) []*pgx.Conn {
	t.Helper()
	out := make([]*pgx.Conn, n)
	for i := range out {
		out[i] = ConnectSchema(t, ctx, schema)
	}
	return out
}

// Fresh gives the test an empty schema of its own: it rolls back the
// database's prepared transactions, creates schema t_<test name>_<random>,
// sets conn's search_path to it and runs each ddl statement there. It returns
// the schema's name, for ConnectSchema or Use. The cleanup rolls back the
// prepared transactions again, ends sessions that still hold locks in the
// schema, and drops it.
func Fresh(t testing.TB, conn *pgx.Conn, ddl ...string) string {
	t.Helper()
	u := Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rollbackPrepared(ctx, conn); err != nil {
		t.Fatalf("pgtest: Fresh: %v", err)
	}
	schema := schemaName(t.Name())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatalf("pgtest: Fresh: create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := connect(ctx, u, "pgtest-cleanup", "")
		if err != nil {
			t.Errorf("pgtest: Fresh cleanup: connect: %v", err)
			return
		}
		defer c.Close(context.Background())
		if err := rollbackPrepared(ctx, c); err != nil {
			t.Errorf("pgtest: Fresh cleanup: %v", err)
		}
		if err := dropSchema(ctx, c, schema); err != nil {
			t.Errorf("pgtest: Fresh cleanup: drop schema %s: %v", schema, err)
		}
	})
	Use(t, conn, schema)
	for _, stmt := range ddl {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("pgtest: Fresh: %q: %v", stmt, err)
		}
	}
	return schema
}

// Use sets conn's search_path to schema. (A later RESET ALL undoes it; a
// session from ConnectSchema keeps it.)
func Use(t testing.TB, conn *pgx.Conn, schema string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := conn.Exec(ctx, "SET search_path TO "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatalf("pgtest: set search_path: %v", err)
	}
}

var nonIdent = regexp.MustCompile(`[^a-z0-9]+`)

func schemaName(test string) string {
	base := strings.Trim(nonIdent.ReplaceAllString(strings.ToLower(test), "_"), "_")
	if len(base) > 40 {
		base = base[:40]
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return "t_" + base + "_" + hex.EncodeToString(b[:])
}

// rollbackPrepared rolls back every prepared transaction of conn's database
// (ROLLBACK PREPARED works only from the database the transaction was
// prepared in).
func rollbackPrepared(ctx context.Context, conn *pgx.Conn) error {
	rows, err := conn.Query(ctx, `SELECT gid FROM pg_prepared_xacts WHERE database = current_database()`)
	if err != nil {
		return fmt.Errorf("list prepared transactions: %w", err)
	}
	gids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("list prepared transactions: %w", err)
	}
	for _, gid := range gids {
		// UndefinedObject: finished by someone else meanwhile.
		if _, err := conn.Exec(ctx, "ROLLBACK PREPARED "+quoteLiteral(gid)); err != nil && Code(err) != UndefinedObject {
			return fmt.Errorf("rollback prepared %q: %w", gid, err)
		}
	}
	return nil
}

// dropSchema ends the other sessions holding locks on the schema's relations
// (a test's session left in an open transaction would block the drop), then
// drops it with everything in it.
func dropSchema(ctx context.Context, conn *pgx.Conn, schema string) error {
	if _, err := conn.Exec(ctx, `
		SELECT pg_terminate_backend(l.pid, 5000)
		FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND l.pid IS NOT NULL AND l.pid <> pg_backend_pid()`, schema); err != nil {
		return fmt.Errorf("end sessions: %w", err)
	}
	if _, err := conn.Exec(ctx, "SET lock_timeout = '10s'"); err != nil {
		return err
	}
	_, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	return err
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// MustExec runs sql on conn and fails the test on an error.
func MustExec(t testing.TB, ctx context.Context, conn *pgx.Conn, sql string, args ...any) pgconn.CommandTag {
	t.Helper()
	tag, err := conn.Exec(ctx, sql, args...)
	if err != nil {
		t.Fatalf("pgtest: %s: %v (SQLSTATE %s)", sql, err, Code(err))
	}
	return tag
}

// Code is err's SQLSTATE when err is (or wraps) a server error, else "".
func Code(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// State is scripts/pg.sh's record of the running cluster.
type State struct {
	URL, Port, Dir, Data, Log, PgCtl, Owner string
}

// StatePath is the state file scripts/pg.sh writes.
func StatePath() string {
	dir := os.Getenv(EnvState)
	if dir == "" {
		dir = "/tmp/fencesim-pg"
	}
	return filepath.Join(dir, "env")
}

// ReadState reads the state file of the cluster that scripts/pg.sh started.
func ReadState() (State, error) {
	b, err := os.ReadFile(StatePath())
	if err != nil {
		return State{}, err
	}
	kv := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		kv[k] = strings.Trim(v, "'")
	}
	s := State{
		URL: kv["FENCESIM_PG_URL"], Port: kv["FENCESIM_PG_PORT"], Dir: kv["FENCESIM_PG_DIR"],
		Data: kv["FENCESIM_PG_DATA"], Log: kv["FENCESIM_PG_LOG"], PgCtl: kv["FENCESIM_PG_CTL"],
		Owner: kv["FENCESIM_PG_OWNER"],
	}
	if s.URL == "" || s.Data == "" || s.PgCtl == "" || s.Log == "" {
		return State{}, fmt.Errorf("%s: missing fields", StatePath())
	}
	return s, nil
}

// Restart restarts the server, as pg_ctl restart does: with immediate, by
// `-m immediate` (every process is killed at once, no checkpoint: what a
// crash looks like, followed by WAL recovery); otherwise by `-m fast` (a
// clean shutdown). It returns once the server accepts connections. Every
// session open before it is dead afterwards: connect again. It needs a
// cluster started by scripts/pg.sh (skipped otherwise, or failed when CI=true).
func Restart(t testing.TB, immediate bool) {
	t.Helper()
	u := Require(t)
	st, err := ReadState()
	if err == nil && st.URL != u {
		err = fmt.Errorf("%s records %s, not %s=%s", StatePath(), st.URL, EnvURL, u)
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("pgtest: Restart needs a cluster started by scripts/pg.sh: %v", err)
		}
		t.Skipf("pgtest: Restart needs a cluster started by scripts/pg.sh: %v", err)
	}
	mode := "fast"
	if immediate {
		mode = "immediate"
	}
	// -l keeps the new postmaster's output in the log, off our pipes.
	args := []string{st.PgCtl, "restart", "-D", st.Data, "-m", mode, "-l", st.Log, "-w", "-t", "60"}
	if os.Geteuid() == 0 && st.Owner != "" && st.Owner != "root" {
		args = append([]string{"runuser", "-u", st.Owner, "--"}, args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("pgtest: %s: %v\n%s\n%s", strings.Join(args, " "), err, out.String(), logTail(st.Log))
	}
	for {
		c, err := connect(ctx, u, "pgtest-restart", "")
		if err == nil {
			c.Close(ctx)
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("pgtest: server not accepting connections after restart: %v\n%s", err, logTail(st.Log))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return "server log " + path + ":\n" + strings.Join(lines, "\n")
}
