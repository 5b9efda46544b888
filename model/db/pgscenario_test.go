package db_test

// Scripted conformance: every semantic test runs its scenario (schema,
// config, schedule, timed client scripts) on the model and, in the subtest
// "postgres", on a real PostgreSQL server, with one goroutine per client
// sending the same requests at the same times (wall clock). Every
// statement's outcome (SQLSTATE, violated constraint, command tag,
// warnings, returned rows with timestamps within a tolerance, VACUUM
// figures), every request's latency (waits for locks, lock_timeout,
// deadlock_timeout), and the final rows of every table and the prepared
// transactions must agree. The schedule's faults map to the server: a Crash
// of "db" is an immediate restart (pgtest.Restart), a Break of a client's
// connection or a close step closes its socket.

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	syncatomic "sync/atomic"
	"testing"
	"time"

	"github.com/fencesim/fencesim/internal/pgtest"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/sim"
)

// Tolerances of the scripted comparison: the server runs on the wall clock
// (goroutine wake-ups, round trips, a loaded CI machine).
const (
	tsTol      = 200 * time.Millisecond // timestamps and ages
	earlyTol   = 40 * time.Millisecond  // a server answer may come this much before the model's
	lateTol    = 400 * time.Millisecond // ... and this much after
	setupSlack = 300 * time.Millisecond // time 0 is this long after the setup starts
)

// Totals over the process, for the summary lines.
var scriptedScenarios, scriptedRequests, scriptedStatements syncatomic.Int64

// runBoth is runWorld plus the same scenario on PostgreSQL, compared with
// the model's run, as the subtest "postgres" (skipped without a server; a
// failure with CI=true). A scenario that touches nothing database-wide
// (prepared transactions, advisory locks, VACUUM's horizon, restarts) runs
// in parallel with the other such tests.
func runBoth(t *testing.T, schema db.Schema, cfg db.Config, sched sim.Schedule, until time.Duration, clients ...client) *run {
	t.Helper()
	if parallelSafe(sched, clients) {
		t.Parallel()
	}
	r := runWorld(t, schema, cfg, sched, until, clients...)
	t.Run("postgres", func(t *testing.T) { pgScenario(t, r, schema, cfg, sched, clients) })
	return r
}

// TestMain prints, after the tests, how much was compared with PostgreSQL
// (shown with go test -v, or when a test failed).
func TestMain(m *testing.M) {
	code := m.Run()
	if n, r, tm := scriptedScenarios.Load(), randSequences.Load(), tmSequences.Load(); n > 0 || r > 0 || tm > 0 {
		line := fmt.Sprintf("postgres conformance: %d scripted cases (%d requests, %d statements), %d random sequences (%d statements) and %d timed random sequences (%d statements, %d lock waits) compared with the model, result %s\n",
			n, scriptedRequests.Load(), scriptedStatements.Load(), r, randStatements.Load(), tm, tmStatements.Load(), tmWaits.Load(), map[bool]string{true: "ok", false: "FAILED"}[code == 0])
		fmt.Print(line)
		// go test ./... shows a passing package's output only with -v;
		// CI names a file to keep the line for its log.
		if path := os.Getenv("FENCESIM_CONFORMANCE_SUMMARY"); path != "" {
			_ = os.WriteFile(path, []byte(line), 0o644)
		}
	}
	os.Exit(code)
}

func parallelSafe(sched sim.Schedule, clients []client) bool {
	for _, a := range sched {
		if a.Kind == sim.Crash || a.Kind == sim.Restart {
			return false
		}
	}
	for _, c := range clients {
		for _, s := range c.steps {
			for _, st := range s.stmts {
				switch st.Kind {
				case db.SPrepare, db.SCommitPrepared, db.SRollbackPrepared, db.SPreparedXacts,
					db.STryAdvisoryLock, db.SAdvisoryUnlock, db.SVacuum:
					return false
				}
			}
		}
	}
	return true
}

// pgAnswer is the server's answer to one step.
type pgAnswer struct {
	outs     []pgOut
	sent, at time.Duration // since time 0
	// lag is how much later than it could have the request was sent: after
	// its time and the client's previous answer (the gate's wait for
	// another client, a slow wake-up).
	lag time.Duration
}

// pgClient is a client's server side: its current session, replaced after
// a break.
type pgClient struct {
	name    string
	steps   []step
	mu      sync.Mutex
	sess    *pgSess
	broken  bool
	answers map[int]pgAnswer
	next    int  // the first step not answered yet
	busy    bool // running step next
}

// seqGate keeps the clients' requests in the order of their times: a step
// starts only once every step of another client due before it has reached
// the server: answered, or waiting for a lock there (a request queued
// behind a waiting one, as the model queues it, counts as arrived). So 10 ms
// between two clients' steps is enough on a loaded machine.
type seqGate struct {
	pcs     []*pgClient
	schema  string
	mu      sync.Mutex // for monitor
	monitor *pgSess
	down    sync.RWMutex // held by the timeline while the server restarts
}

func (g *seqGate) waiting(ctx context.Context, pid uint32) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for try := 0; try < 2; try++ {
		if g.monitor == nil {
			m, err := pgDial(ctx, "pgconf-monitor", g.schema, 0, 0)
			if err != nil {
				return true // no way to tell: do not hold the others
			}
			g.monitor = m
		}
		var w bool
		err := g.monitor.conn.QueryRow(ctx, `SELECT coalesce(bool_or(wait_event_type = 'Lock'), false) FROM pg_stat_activity WHERE pid = $1`, pid).Scan(&w)
		if err == nil {
			return w
		}
		g.monitor.close()
		g.monitor = nil
	}
	return true
}

// turn waits until the steps of the other clients due before time at (or
// at at, for clients before client ci) have arrived at the server (for at
// most 10 s). ci is -1 for the timeline's crashes and breaks.
func (g *seqGate) turn(ctx context.Context, ci int, at time.Duration) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		ready := true
		for cj, pc := range g.pcs {
			if cj == ci {
				continue
			}
			pc.mu.Lock()
			n := pc.next
			for n < len(pc.steps) && pc.steps[n].close {
				n++
			}
			behind := n < len(pc.steps) && (pc.steps[n].at < at || (pc.steps[n].at == at && cj < ci))
			busy, sess := pc.busy && n == pc.next, pc.sess
			pc.mu.Unlock()
			if !behind {
				continue
			}
			if !busy || sess == nil || !g.waiting(ctx, sess.conn.PgConn().PID()) {
				ready = false
				break
			}
		}
		if ready {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func (g *seqGate) close() {
	if g.monitor != nil {
		g.monitor.close()
	}
}

// breakConn closes the client's socket (a broken connection, or a close:
// the server ends the session either way).
func (c *pgClient) breakConn() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess != nil && !c.broken {
		c.sess.nc.Close()
	}
	c.broken = true
}

func sleepUntil(ctx context.Context, at time.Time) {
	d := time.Until(at)
	if d <= 0 {
		return
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-ctx.Done():
	}
}

// runRequest runs a step's statements on a session as the model's node
// runs a Request (pgexec.Session.Request, the live runs' own): in order,
// stopping at the first error; an atomic one inside BEGIN ... COMMIT
// (ROLLBACK after an error; no COMMIT after a final PREPARE TRANSACTION),
// refused with 25001 inside an open transaction block (a deliberate
// simplification of the model: see doc.go).
func runRequest(ctx context.Context, s *pgSess, stmts []db.Stmt, atomicReq bool, shift time.Duration, t0 time.Time) []pgOut {
	shifted := make([]db.Stmt, len(stmts))
	for i, st := range stmts {
		shifted[i] = shiftStmt(st, shift)
	}
	var outs []pgOut
	for i, o := range s.sess.Request(ctx, db.Request{Stmts: shifted, Atomic: atomicReq}, t0) {
		st := db.Stmt{}
		if i < len(stmts) {
			st = stmts[i]
		}
		outs = append(outs, serverOut(st, o))
	}
	return outs
}

// pgScenario runs a scenario on PostgreSQL and compares it with the
// model's run. A divergence in timing alone (an answer later or earlier
// than the model's, beyond the tolerances) is run again, up to three times
// in all: the server's times are wall-clock times, and a loaded machine
// (the race detector, other jobs on two cores) delays them; a divergence
// in what was answered fails at once.
func pgScenario(t *testing.T, r *run, schema db.Schema, cfg db.Config, sched sim.Schedule, clients []client) {
	for attempt := 1; ; attempt++ {
		if !pgScenarioOnce(t, r, schema, cfg, sched, clients, attempt == 3) {
			return
		}
		t.Logf("attempt %d diverged in timing only: running it again", attempt)
	}
}

// pgScenarioOnce is one attempt; it reports whether it diverged in timing
// only and may be run again (never on the last attempt, which fails).
func pgScenarioOnce(t *testing.T, r *run, schema db.Schema, cfg db.Config, sched sim.Schedule, clients []client, final bool) (again bool) {
	v := pgRun(t, r, schema, cfg, sched, clients, scriptedTol)
	scriptedScenarios.Add(1)
	scriptedRequests.Add(int64(v.nreq))
	scriptedStatements.Add(int64(v.nstmt))
	if v.bad > 0 {
		if v.answers == 0 && v.finals == 0 && !final {
			t.Logf("PostgreSQL answered %d requests at other times than the model (tolerance -%v/+%v): \n%s", v.bad, scriptedTol.early, scriptedTol.late, v.report)
			return true
		}
		t.Errorf("PostgreSQL and the model diverge (%d):\n%s", v.bad, v.report)
		return false
	}
	t.Logf("postgres agrees: %d requests, %d statements, final rows of %d tables, %d prepared transactions",
		v.nreq, v.nstmt, len(schema.Tables), v.gids)
	return false
}

// pgTol is how far the server's run may be from the model's.
type pgTol struct {
	ts    time.Duration // timestamps and ages
	early time.Duration // a server answer may come this much before the model's
	late  time.Duration // ... and this much after
}

var scriptedTol = pgTol{ts: tsTol, early: earlyTol, late: lateTol}

// pgVerdict is what a run of a scenario on the server found.
type pgVerdict struct {
	bad     int // requests and final states that diverge
	answers int // of the requests, those whose answers differ (not only when they came)
	finals  int // final states (tables, prepared transactions) that differ
	nreq    int
	nstmt   int
	gids    int // prepared transactions at the end, on the server
	// lag is the largest pgAnswer.lag: how far the server's side fell
	// behind the schedule (a loaded machine).
	lag    time.Duration
	report string // the run, step by step, with the divergences (when bad > 0)
}

// pgRun runs a scenario on PostgreSQL and compares it with the model's run
// r. t is for the setup (its cleanups end the sessions and drop the
// schema; a failure to set up is fatal).
func pgRun(t testing.TB, r *run, schema db.Schema, cfg db.Config, sched sim.Schedule, clients []client, tol pgTol) pgVerdict {
	pgtest.Require(t)
	resetLeftoverConfig(t)
	last := time.Duration(0)
	prepares := 0
	for _, c := range clients {
		for _, s := range c.steps {
			last = max(last, s.at)
			for _, st := range s.stmts {
				if st.Kind == db.SPrepare {
					prepares++
				}
			}
		}
	}
	for _, a := range sched {
		last = max(last, time.Duration(a.At))
	}
	ctx, cancel := context.WithTimeout(t.Context(), last+time.Minute)
	defer cancel()

	// The server's max_prepared_transactions must be the model's when the
	// scenario can reach either limit.
	probe, err := pgDial(ctx, "pgconf-probe", "", 0, 0)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	serverMax, err := serverMaxPrepared(ctx, probe)
	probe.close()
	if err != nil {
		t.Fatalf("max_prepared_transactions: %v", err)
	}
	if (prepares > cfg.MaxPreparedTransactions || prepares > serverMax) && cfg.MaxPreparedTransactions != serverMax {
		t.Logf("restarting the server with max_prepared_transactions = %d (was %d)", cfg.MaxPreparedTransactions, serverMax)
		withMaxPrepared(t, cfg.MaxPreparedTransactions)
	}

	// A crash's recovery replays the WAL written since the last checkpoint
	// (earlier tests may have written much): a checkpoint first keeps the
	// restart within the scenario's time.
	for _, a := range sched {
		if a.Kind == sim.Crash {
			pgtest.MustExec(t, ctx, pgtest.Connect(t, ctx), "CHECKPOINT")
			break
		}
	}

	// Setup; time 0 is setupSlack after it starts.
	t0 := time.Now().Add(setupSlack)
	shift := t0.Sub(db.Epoch)
	admin := pgtest.Connect(t, ctx)
	schemaName := pgtest.Fresh(t, admin, setupSQL(schema.Tables, cfg.Seed, shift)...)
	pcs := make([]*pgClient, len(clients))
	for i, c := range clients {
		pcs[i] = &pgClient{name: c.name, steps: c.steps, answers: map[int]pgAnswer{}}
		s, err := pgDial(ctx, t.Name()+"/"+c.name, schemaName, cfg.LockTimeout, cfg.DeadlockTimeout)
		if err != nil {
			t.Fatalf("connect %s: %v", c.name, err)
		}
		pcs[i].sess = s
	}
	defer func() {
		for _, pc := range pcs {
			pc.mu.Lock()
			if pc.sess != nil {
				pc.sess.close()
			}
			pc.mu.Unlock()
		}
	}()
	// The gate's monitor session, dialled now: dialled when first needed,
	// it would hold the clients back for the connection's time.
	gate := &seqGate{pcs: pcs, schema: schemaName}
	defer gate.close()
	if m, err := pgDial(ctx, "pgconf-monitor", schemaName, 0, 0); err == nil {
		gate.monitor = m
	}
	if late := time.Since(t0); late > -10*time.Millisecond {
		t.Logf("setup took %v longer than planned: time 0 moves (seeded timestamp literals are off by that much)", late+10*time.Millisecond)
		t0 = time.Now().Add(10 * time.Millisecond)
	}

	// Clients: one goroutine each.
	var wg sync.WaitGroup
	defer wg.Wait()
	for ci, pc := range pcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			free := time.Duration(0) // when the previous request was answered
			for i, st := range pc.steps {
				if st.close {
					continue // the timeline closes it
				}
				sleepUntil(ctx, t0.Add(st.at))
				gate.turn(ctx, ci, st.at)
				gate.down.RLock() // not while the server restarts
				gate.down.RUnlock()
				if ctx.Err() != nil {
					return
				}
				lag := time.Since(t0) - max(st.at, free)
				pc.mu.Lock()
				s, broken := pc.sess, pc.broken
				pc.next, pc.busy = i, !broken
				pc.mu.Unlock()
				var outs []pgOut
				if broken {
					// The model's client dials a new connection.
					s = nil
					var err error
					for s == nil && ctx.Err() == nil {
						if s, err = pgDial(ctx, t.Name()+"/"+pc.name, schemaName, cfg.LockTimeout, cfg.DeadlockTimeout); err != nil {
							s = nil
							sleepUntil(ctx, time.Now().Add(50*time.Millisecond))
						}
					}
					if s == nil {
						outs = []pgOut{{Lost: true, Note: fmt.Sprintf("reconnect: %v", err)}}
					} else {
						pc.mu.Lock()
						old := pc.sess
						pc.sess, pc.broken, pc.busy = s, false, true
						pc.mu.Unlock()
						if old != nil {
							old.close()
						}
					}
				}
				if s != nil {
					outs = runRequest(ctx, s, st.stmts, st.atomic, shift, t0)
				}
				for _, o := range outs {
					if o.Lost {
						pc.mu.Lock()
						pc.broken = true
						pc.mu.Unlock()
					}
				}
				pc.mu.Lock()
				free = time.Since(t0)
				pc.answers[i] = pgAnswer{outs: outs, sent: st.at, at: free, lag: lag}
				pc.next, pc.busy = i+1, false
				pc.mu.Unlock()
			}
		}()
	}

	// The timeline: crashes, breaks and closes.
	type event struct {
		at    time.Duration
		crash bool
		who   *pgClient
	}
	var events []event
	byName := map[string]*pgClient{}
	for _, pc := range pcs {
		byName[pc.name] = pc
		for _, st := range pc.steps {
			if st.close {
				events = append(events, event{at: st.at, who: pc})
			}
		}
	}
	for _, a := range sched {
		switch a.Kind {
		case sim.Crash:
			if a.Node == "db" {
				events = append(events, event{at: time.Duration(a.At), crash: true})
			}
		case sim.Break:
			for _, n := range []string{string(a.Node), string(a.Peer)} {
				if pc := byName[n]; pc != nil {
					events = append(events, event{at: time.Duration(a.At), who: pc})
				}
			}
		case sim.Restart:
			// pgtest.Restart restarts at once.
		default:
			t.Fatalf("schedule action %v has no server equivalent", a)
		}
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].at < events[j].at })
	for _, e := range events {
		sleepUntil(ctx, t0.Add(e.at))
		gate.turn(ctx, -1, e.at)
		if e.crash {
			func() {
				gate.down.Lock()
				defer gate.down.Unlock()
				for _, pc := range pcs {
					pc.mu.Lock()
					pc.broken = true
					pc.mu.Unlock()
				}
				pgtest.Restart(t, true)
			}()
			continue
		}
		e.who.breakConn()
	}
	wg.Wait()

	// Compare.
	type line struct {
		at     time.Duration
		client string
		text   string
		bad    bool
	}
	var lines []line
	var v pgVerdict
	opts := cmpOpts{timeTol: tol.ts}
	for ci, c := range clients {
		pc := pcs[ci]
		for i, st := range c.steps {
			if st.close {
				lines = append(lines, line{at: st.at, client: c.name, text: "close"})
				continue
			}
			sa, ok := pc.answers[i]
			var ma answer
			mok := false
			for _, a := range r.clients[c.name].answers {
				if a.step == i {
					ma, mok = a, true
					break
				}
			}
			v.nreq++
			var msgs []string
			timed := 0 // of msgs, the divergences in timing only
			var b strings.Builder
			if !ok || !mok {
				msgs = append(msgs, fmt.Sprintf("answered: server %v, model %v", ok, mok))
			}
			var mouts []pgOut
			if mok {
				for j, res := range ma.resp.Results {
					if j < len(st.stmts) {
						mouts = append(mouts, modelOut(st.stmts[j], res))
					} else {
						mouts = append(mouts, modelOut(db.Stmt{}, res))
					}
				}
			}
			mlost := len(mouts) > 0 && mouts[len(mouts)-1].Lost
			if ok && mok && !mlost && len(sa.outs) != len(mouts) {
				msgs = append(msgs, fmt.Sprintf("%d results, the model has %d", len(sa.outs), len(mouts)))
			}
			for j, stmt := range st.stmts {
				var so, mo *pgOut
				if j < len(sa.outs) {
					so = &sa.outs[j]
				}
				if j < len(mouts) {
					mo = &mouts[j]
				}
				if so == nil && mo == nil {
					break
				}
				v.nstmt++
				fmt.Fprintf(&b, "\n      %s", stmt.SQL())
				if so != nil {
					fmt.Fprintf(&b, "\n        server: %s", so)
				}
				if mo != nil {
					fmt.Fprintf(&b, "\n        model:  %s", mo)
				}
				if so != nil && mo != nil {
					if d := diffOut(stmt, *so, *mo, opts); d != "" {
						msgs = append(msgs, fmt.Sprintf("%s: %s", stmt.SQL(), d))
					}
				}
			}
			if ok && mok && !mlost && !(len(sa.outs) > 0 && sa.outs[len(sa.outs)-1].Lost) {
				lm := ma.at.Sub(ma.sent) - 2*hop
				ls := sa.at - sa.sent
				if ls < lm-tol.early || ls > lm+tol.late {
					msgs = append(msgs, fmt.Sprintf("answered after %v, the model after %v", ls.Round(time.Millisecond), lm))
					timed++
				}
				fmt.Fprintf(&b, "\n      (answered after %v; model %v)", ls.Round(time.Millisecond), lm)
				if sa.lag > time.Millisecond {
					fmt.Fprintf(&b, " (sent %v late)", sa.lag.Round(time.Millisecond))
				}
				v.lag = max(v.lag, sa.lag)
			}
			kind := "request"
			if st.atomic {
				kind = "atomic request"
			}
			text := fmt.Sprintf("step %d, %s:%s", i, kind, b.String())
			if len(msgs) > 0 {
				v.bad++
				if len(msgs) > timed {
					v.answers++ // what was answered differs, not only when
				}
				text += "\n      DIVERGES: " + strings.Join(msgs, "; ")
			}
			lines = append(lines, line{at: st.at, client: c.name, text: text, bad: len(msgs) > 0})
		}
	}
	// The final state.
	check, err := pgDial(ctx, "pgconf-check", schemaName, 0, 0)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer check.close()
	var finals []string
	n := r.node()
	for _, tb := range schema.Tables {
		rows, err := serverRows(ctx, check, tb, t0)
		if err != nil {
			t.Fatalf("%v", err)
		}
		if d := diffRows(rows, n.Rows(tb.Name), true, opts); d != "" {
			v.bad++
			v.finals++
			finals = append(finals, fmt.Sprintf("table %s: %s\n  server: %v\n  model:  %v", tb.Name, d, rows, n.Rows(tb.Name)))
		}
	}
	gids, err := serverPrepared(ctx, check)
	if err != nil {
		t.Fatalf("pg_prepared_xacts: %v", err)
	}
	if fmt.Sprint(gids) != fmt.Sprint(n.Prepared()) {
		v.bad++
		v.finals++
		finals = append(finals, fmt.Sprintf("prepared transactions: server %v, model %v", gids, n.Prepared()))
	}
	v.gids = len(gids)
	if v.bad > 0 {
		sort.SliceStable(lines, func(i, j int) bool { return lines[i].at < lines[j].at })
		var b strings.Builder
		for _, l := range lines {
			fmt.Fprintf(&b, "  %8v %s %s\n", l.at, l.client, l.text)
		}
		for _, f := range finals {
			fmt.Fprintf(&b, "  %s\n", f)
		}
		v.report = b.String()
	}
	return v
}
