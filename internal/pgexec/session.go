package pgexec

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
)

// Options configure a session. The zero value is a session with the
// server's defaults and no lock_timeout, as a zero db.Config gives the
// model's sessions.
type Options struct {
	App    string // application_name (cut to 63 bytes)
	Schema string // search_path; "" keeps the server's
	// LockTimeout and DeadlockTimeout are the session's defaults, as
	// db.Config sets them for the model's sessions: LockTimeout 0 waits
	// forever; DeadlockTimeout 0 keeps the server's (1 s).
	LockTimeout     time.Duration
	DeadlockTimeout time.Duration
	ConnectTimeout  time.Duration // 0: 10 s
	// RecordGID: before a PREPARE TRANSACTION in a healthy open
	// transaction, the session records (txid_current(), gid) in the
	// capture's gid table, so that ReadCommits can name the gid of a
	// transaction committed with COMMIT PREPARED. Set it only on a database
	// where InstallCapture has run.
	RecordGID bool
}

// Session is one server session on its own connection. Run may be called
// from several goroutines: requests run one after another, in the order
// they get the session, as the model's node runs a connection's requests.
type Session struct {
	conn      *pgx.Conn
	recordGID bool

	run  sync.Mutex // one request at a time
	dead atomic.Bool

	mu      sync.Mutex
	notices []*pgconn.Notice
}

// Dial opens a session.
func Dial(ctx context.Context, url string, o Options) (*Session, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.ConnectTimeout = o.ConnectTimeout
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	app := o.App
	if len(app) > 63 {
		app = app[:63]
	}
	if app != "" {
		cfg.RuntimeParams["application_name"] = app
	}
	if o.Schema != "" {
		// A startup parameter is the session's default: RESET ALL and
		// DISCARD ALL come back to it.
		cfg.RuntimeParams["search_path"] = pgx.Identifier{o.Schema}.Sanitize()
	}
	cfg.RuntimeParams["lock_timeout"] = fmt.Sprintf("%dus", o.LockTimeout/time.Microsecond)
	if o.DeadlockTimeout > 0 {
		cfg.RuntimeParams["deadlock_timeout"] = fmt.Sprintf("%dus", o.DeadlockTimeout/time.Microsecond)
	}
	s := &Session{recordGID: o.RecordGID}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		s.mu.Lock()
		s.notices = append(s.notices, n)
		s.mu.Unlock()
	}
	s.conn, err = pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Conn is the session's connection, for tests and inspection (its backend's
// PID, a query of pg_stat_activity). Statements sent on it bypass Run.
func (s *Session) Conn() *pgx.Conn { return s.conn }

// Dead reports whether the session is gone: its connection broke or was
// closed. A dead session answers every request with 08006.
func (s *Session) Dead() bool { return s.dead.Load() || s.conn.IsClosed() }

// Close ends the session (the server rolls back its open transaction and
// releases its advisory locks). Prepared transactions stay.
func (s *Session) Close() {
	s.dead.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.conn.Close(ctx)
}

// lostMsg is the message of the 08006 result; the model's client says the
// same (db.Client).
const lostMsg = "connection to the database broke: the outcome is unknown"

func lost(detail string) db.Result {
	msg := lostMsg
	if detail != "" {
		msg += " (" + detail + ")"
	}
	return db.Result{Err: &db.Error{Code: db.CodeConnectionFailure, Msg: msg}}
}

// Lost reports whether a result is the 08006 of a broken session.
func Lost(r db.Result) bool { return r.Err != nil && r.Err.Code == db.CodeConnectionFailure }

// Run answers req as the model's db node would answer it on this session.
// A request whose answer the connection does not deliver (broken, closed,
// ctx done) gets the model's client's answer: one result with 08006, the
// outcome unknown; the session is then dead.
func (s *Session) Run(ctx context.Context, req db.Request) db.Response {
	outs := s.Request(ctx, req, db.Epoch)
	resp := db.Response{ID: req.ID, Results: make([]db.Result, 0, len(outs))}
	for _, o := range outs {
		if Lost(o.Result) {
			return db.Response{ID: req.ID, Results: []db.Result{o.Result}}
		}
		resp.Results = append(resp.Results, o.Result)
	}
	return resp
}

// Request runs req as Run does, with timestamps relative to epoch (Run's is
// db.Epoch), and returns every statement's outcome. A lost connection ends
// the list with an 08006 outcome after the statements that were answered
// (Run answers only the 08006, as the model's client does).
func (s *Session) Request(ctx context.Context, req db.Request, epoch time.Time) []Outcome {
	s.run.Lock()
	defer s.run.Unlock()
	if s.Dead() {
		return []Outcome{{Result: lost("the session is closed")}}
	}
	var outs []Outcome
	if req.Atomic {
		if s.conn.PgConn().TxStatus() != 'I' {
			return []Outcome{{Result: db.Result{Err: &db.Error{Code: db.CodeActiveTx, Msg: "an atomic batch cannot run inside an open transaction block"}}}}
		}
		if b := s.exec(ctx, db.Begin(), epoch); b.Err != nil {
			return []Outcome{b}
		}
	}
	failed := false
	for _, st := range req.Stmts {
		o := s.exec(ctx, st, epoch)
		outs = append(outs, o)
		if Lost(o.Result) {
			return outs
		}
		if o.Err != nil {
			failed = true
			break
		}
	}
	if req.Atomic {
		// The model ends the batch's transaction if it is still open: a
		// final PREPARE TRANSACTION (or a COMMIT among the statements) has
		// ended it already.
		switch st := s.conn.PgConn().TxStatus(); {
		case st == 'I':
		case failed || st == 'E':
			if r := s.exec(ctx, db.Rollback(), epoch); Lost(r.Result) {
				// The answers stand: the batch failed, and a session that
				// is gone has rolled its transaction back.
				return outs
			}
		default:
			if c := s.exec(ctx, db.Commit(), epoch); c.Err != nil {
				// The model's commit cannot fail; the server's may
				// (or the connection may break): it is the batch's answer.
				if len(outs) == 0 {
					outs = append(outs, c)
				} else {
					outs[len(outs)-1] = c
				}
			}
		}
	}
	return outs
}

// Outcome is one statement's outcome: the model's Result, and every
// warning the server sent with it ("WARNING 25P01"; one without its own
// SQLSTATE, 01000, is "WARNING"), of which Result.Notice holds the first
// with its message.
type Outcome struct {
	db.Result
	Notices []string
}

// Exec runs one statement on the session, by itself (no request around
// it), with timestamps relative to epoch. It is Request's step, exported
// for the conformance tests.
func (s *Session) Exec(ctx context.Context, st db.Stmt, epoch time.Time) Outcome {
	s.run.Lock()
	defer s.run.Unlock()
	if s.Dead() {
		return Outcome{Result: lost("the session is closed")}
	}
	return s.exec(ctx, st, epoch)
}

func (s *Session) exec(ctx context.Context, st db.Stmt, epoch time.Time) Outcome {
	if st.Kind == db.SPrepare && s.recordGID && s.conn.PgConn().TxStatus() == 'T' {
		if o := s.query(ctx, db.Stmt{}, recordGIDSQL(st.GID), epoch); o.Err != nil {
			return o
		}
	}
	return s.query(ctx, st, st.SQL(), epoch)
}

// query sends one SQL statement for st and converts the answer.
func (s *Session) query(ctx context.Context, st db.Stmt, sql string, epoch time.Time) Outcome {
	s.mu.Lock()
	s.notices = nil
	s.mu.Unlock()
	var rows []db.Row
	r, err := s.conn.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	var tag pgconn.CommandTag
	if err == nil {
		for r.Next() {
			vals, verr := r.Values()
			if verr != nil {
				err = verr
				break
			}
			row := make(db.Row, len(vals))
			for j, f := range r.FieldDescriptions() {
				row[f.Name] = value(vals[j], epoch)
			}
			rows = append(rows, row)
		}
		r.Close()
		if err == nil {
			err = r.Err()
		}
		tag = r.CommandTag()
	}
	s.mu.Lock()
	notices := s.notices
	s.notices = nil
	s.mu.Unlock()
	if err != nil {
		code := sqlState(err)
		// No SQLSTATE (an I/O error, ctx done), or the server's end of the
		// session (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot
		// connect now, 08xxx): the outcome is unknown. The connection is
		// closed so that the session surely ends (its transaction rolls
		// back) and stays dead.
		if code == "" || strings.HasPrefix(code, "57P") || strings.HasPrefix(code, "08") || s.conn.IsClosed() {
			s.dead.Store(true)
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = s.conn.Close(cctx)
			cancel()
			return Outcome{Result: lost(err.Error())}
		}
		var pe *pgconn.PgError
		msg := err.Error()
		if errors.As(err, &pe) {
			// The model's message is PostgreSQL's message and detail.
			msg = pe.Message
			if pe.Detail != "" {
				msg += ": " + pe.Detail
			}
		}
		return Outcome{Result: db.Result{Err: &db.Error{Code: code, Msg: msg}}, Notices: heads(notices)}
	}
	res := db.Result{Tag: tag.String(), Affected: int(tag.RowsAffected())}
	var infos []string
	for _, n := range notices {
		if severity(n) == "INFO" {
			infos = append(infos, n.Message)
			continue
		}
		if res.Notice == "" {
			res.Notice = head(n) + ": " + n.Message
		}
	}
	switch st.Kind {
	case db.STryAdvisoryLock, db.SAdvisoryUnlock:
		// The model answers with Locked alone: the function's boolean.
		if len(rows) == 1 {
			for _, v := range rows[0] {
				res.Locked, _ = v.(bool)
			}
		}
	case db.SVacuum:
		v, ok := VacuumStats(infos)
		if !ok {
			v = db.VacuumStats{Removed: -1, Remain: -1, DeadNotRemovable: -1} // the server's output was not understood
		}
		res.Vacuum = v
	case db.SInsert:
		res.Inserted = res.Affected > 0
		res.Rows = rows
	case db.SCommit, db.SPrepare:
		// A COMMIT or PREPARE of a failed transaction answers ROLLBACK
		// without a warning; outside a transaction PREPARE answers
		// ROLLBACK with 25P01.
		res.RolledBack = res.Tag == "ROLLBACK" && !strings.Contains(res.Notice, db.CodeNoActiveTx)
	default:
		res.Rows = rows
	}
	return Outcome{Result: res, Notices: heads(notices)}
}

func severity(n *pgconn.Notice) string {
	if n.SeverityUnlocalized != "" {
		return n.SeverityUnlocalized
	}
	return n.Severity
}

// head is a notice's severity and SQLSTATE ("WARNING 25P01"), without the
// SQLSTATE when it is the generic 01000.
func head(n *pgconn.Notice) string {
	if n.Code == "01000" || n.Code == "" {
		return severity(n)
	}
	return severity(n) + " " + n.Code
}

func heads(ns []*pgconn.Notice) []string {
	var out []string
	for _, n := range ns {
		if severity(n) != "INFO" {
			out = append(out, head(n))
		}
	}
	return out
}

// sqlState is err's SQLSTATE when it is (or wraps) a server error, else "".
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// value converts a value pgx decoded to the model's: int64, string, bool,
// nil, and clock.Time for timestamps (since epoch).
func value(v any, epoch time.Time) db.Value {
	switch x := v.(type) {
	case time.Time:
		return clock.Time(x.Sub(epoch))
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	}
	return v
}

var (
	vacuumRe   = regexp.MustCompile(`tuples: (\d+) removed, (\d+) remain, (\d+) are dead but not yet removable`)
	vacuum14Re = regexp.MustCompile(`found (\d+) removable, (\d+) nonremovable row versions`)
	dead14Re   = regexp.MustCompile(`(\d+) dead row versions cannot be removed yet`)
)

// VacuumStats sums the tuples figures of VACUUM VERBOSE's INFO messages
// (PostgreSQL 15 and later: "tuples: N removed, M remain, K are dead but not
// yet removable"; 14 and earlier: "found N removable, M nonremovable row
// versions" with "K dead row versions cannot be removed yet"). ok is false
// when no message had figures.
func VacuumStats(infos []string) (st db.VacuumStats, ok bool) {
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	for _, m := range infos {
		for _, g := range vacuumRe.FindAllStringSubmatch(m, -1) {
			ok = true
			st.Removed += atoi(g[1])
			st.Remain += atoi(g[2])
			st.DeadNotRemovable += atoi(g[3])
		}
		if g := vacuum14Re.FindStringSubmatch(m); g != nil {
			ok = true
			st.Removed += atoi(g[1])
			st.Remain += atoi(g[2])
		}
		if g := dead14Re.FindStringSubmatch(m); g != nil {
			st.DeadNotRemovable += atoi(g[1])
		}
	}
	return st, ok
}
