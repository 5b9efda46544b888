package scenario

// The source's scenarios (docs/systems.md C.1-C.7) and the C.8 extensions, run
// in the simulator, with a function per table. Every scenario is a
// hand-written schedule whose steps follow the source's: the coordinator is
// killed at a named crash point (the source's kill -9 at a place in its
// code), restarted (or not) at a fixed time, and the databases are read
// back.

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	ct "github.com/fencesim/fencesim/checker/twopc"
	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/model/twopc"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// hop is the one-way network delay of the scenarios.
const hop = time.Millisecond

// Where names C.1's positions as the source does.
var Where = []string{
	"before starting",
	"after the first participant prepared",
	"after all prepared, before writing the decision",
	"after the decision COMMIT is durable, before the first COMMIT PREPARED",
	"after the first COMMIT PREPARED, before the second",
}

// State is what the databases hold.
type State struct {
	Prepared []int   // prepared transactions per participant (-1: down)
	Orders   int     // rows in orders
	Stock    []int64 // sku-1 at each inventory
}

// Consistent reports whether the global transaction committed everywhere or
// nowhere: (1 order, stock-1 everywhere) or (0 orders, stock everywhere).
func (s State) Consistent(stock int) bool {
	for _, n := range s.Stock {
		if (s.Orders == 1 && n != int64(stock-1)) || (s.Orders == 0 && n != int64(stock)) || s.Orders > 1 {
			return false
		}
	}
	return true
}

func (s State) stockText() string {
	parts := make([]string, len(s.Stock))
	for i, n := range s.Stock {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, "/")
}

type scene struct {
	w   *twopc.World
	mem *traces.Memory
}

func newScene(d twopc.Design, sched sim.Schedule) (*scene, error) {
	mem := &traces.Memory{}
	w, err := twopc.Build(d, sim.Config{
		Entropy: sim.NewPCG(1), Network: network.Policy{DelayMin: hop, DelayMax: hop},
		Schedule: sched, Recorder: mem, Limits: sim.Limits{MaxEvents: 5_000_000, MaxPending: sim.DefaultMaxPending},
	})
	if err != nil {
		return nil, err
	}
	return &scene{w: w, mem: mem}, nil
}

// close ends the scene's world (its databases can still be read).
func (s *scene) close() { s.w.Close() }

func (s *scene) until(t time.Duration) error { return s.w.RunUntil(clock.Time(t)) }

func (s *scene) state() State {
	st := State{Prepared: make([]int, len(s.w.Names.Participants))}
	for i, p := range s.w.Names.Participants {
		n := s.w.DB(p)
		if n == nil {
			st.Prepared[i] = -1
			continue
		}
		st.Prepared[i] = len(n.Prepared())
		if i == 0 {
			st.Orders = len(n.Rows(twopc.TOrders))
			continue
		}
		for _, r := range n.Rows(twopc.TStock) {
			if r["sku"] == "sku-1" {
				st.Stock = append(st.Stock, r["n"].(int64))
			}
		}
	}
	return st
}

// check notes the end of the run and checks it.
func (s *scene) check(quiesced bool) ct.Report {
	s.w.Note(hist.KindTxn, "end", hist.Txn{What: hist.TxnEnd, Quiesced: quiesced})
	r, err := ct.Check(s.mem.Events)
	if err != nil {
		panic(fmt.Sprintf("twopc: scenario trace does not decode: %v", err))
	}
	return r
}

// decodeNote reads a 2PC note's data.
func decodeNote(e traces.Event) (hist.Txn, error) {
	var n hist.Txn
	err := json.Unmarshal(e.DataJSON(), &n)
	return n, err
}

func (s *scene) notes(what string) []hist.Txn { return txnNotes(s.mem.Events, what) }

// txnNotes returns a record's 2PC notes of one kind.
func txnNotes(evs []traces.Event, what string) []hist.Txn {
	var out []hist.Txn
	for _, e := range evs {
		if e.Kind != hist.KindTxn {
			continue
		}
		n, err := decodeNote(e)
		if err == nil && n.What == what {
			out = append(out, n)
		}
	}
	return out
}

// recovery renders the recovery actions as the source does:
// "orders: ROLLBACK; inventory: ROLLBACK".
func (s *scene) recovery() string { return RecoveryText(s.mem.Events) }

// RecoveryText renders what a record's recoveries did, as C.4's
// "recovery action" cell: "orders: ROLLBACK; inventory: ROLLBACK".
func RecoveryText(evs []traces.Event) string {
	var parts []string
	for _, n := range txnNotes(evs, hist.TxnRecover) {
		parts = append(parts, n.Participant+": "+strings.ToUpper(map[string]string{hist.OutcomeCommit: "commit", hist.OutcomeAbort: "rollback"}[n.Outcome]))
	}
	if len(parts) == 0 {
		return "(nothing to do)"
	}
	return strings.Join(parts, "; ")
}

// agents renders what the agents did: "inventory: COMMIT at 2.103s (orders
// committed it)", "blocked", "refused".
func (s *scene) agents() string {
	var parts []string
	for _, e := range s.mem.Events {
		if e.Kind != hist.KindTxn {
			continue
		}
		n, _ := decodeNote(e)
		switch n.What {
		case hist.TxnResolve, hist.TxnUnilateral:
			parts = append(parts, fmt.Sprintf("%s: %s at %s (%s)", n.Participant, strings.ToUpper(map[string]string{hist.OutcomeCommit: "commit", hist.OutcomeAbort: "rollback"}[n.Outcome]), clock.Time(e.T), n.Reason))
		case hist.TxnRefuse:
			parts = append(parts, fmt.Sprintf("%s refused %s at %s", n.Participant, n.GID, clock.Time(e.T)))
		case hist.TxnBlocked:
			parts = append(parts, fmt.Sprintf("%s blocked at %s", n.Participant, clock.Time(e.T)))
		}
	}
	return strings.Join(parts, "; ")
}

func logText(v string) string {
	if v == "" {
		return "(none)"
	}
	return strings.ToUpper(v)
}

// VerdictText renders a report as a table's "properties" cell: "ok" or
// the failed properties' ids.
func VerdictText(r ct.Report) string { return verdictText(r) }

func verdictText(r ct.Report) string {
	if r.OK() {
		return "ok"
	}
	var ids []string
	for _, f := range r.Failed() {
		ids = append(ids, strings.SplitN(f, " ", 2)[0])
	}
	return strings.Join(ids, ",")
}

// CrashRow is one crash position's outcome.
type CrashRow struct {
	Pos        int
	Where      string
	Crash      State  // right after the crash, the coordinator down
	Log        string // the decision log at the crash ("" none)
	Action     string // what recovery did (C.4, C.5, C.6)
	After      State  // after recovery
	Consistent bool
	Verdicts   string // "ok" or the failed properties
	Metrics    ct.Metrics
	Agents     string // what the participants' agents did (C.8 cooperative termination)
}

// CrashOpts vary the crash-position runs.
type CrashOpts struct {
	Restart   bool          // restart the coordinator (recovery, C.4)
	LoseLog   bool          // wipe the decision log before the restart (C.5)
	RestartAt time.Duration // default 6 s
}

const (
	crashRead = 5 * time.Second  // the state is read, the log lost, before the restart
	restartAt = 6 * time.Second  // the coordinator restarts
	settleAt  = 40 * time.Second // recovery is over
)

// CrashAt runs one global transaction gid, kills the coordinator at crash
// point, and (with opts.Restart) restarts it with its log (or without it).
func CrashAt(d twopc.Design, point, gid string, opts CrashOpts) (CrashRow, error) {
	d.GIDs, d.Txns, d.Schedule = []string{gid}, 1, nil
	sched := sim.Schedule{{At: 0, Kind: sim.CrashAt, Node: "coordinator", Point: point}}
	at, settle := restartAt, settleAt
	if opts.RestartAt > 0 {
		at, settle = opts.RestartAt, opts.RestartAt+settleAt
	}
	if opts.Restart {
		sched = append(sched, sim.Action{At: clock.Time(at), Kind: sim.Restart, Node: "coordinator"})
	}
	s, err := newScene(d, sched)
	if err != nil {
		return CrashRow{}, err
	}
	defer s.close()
	if err := s.until(crashRead); err != nil {
		return CrashRow{}, err
	}
	if s.w.Up("coordinator") {
		return CrashRow{}, fmt.Errorf("crash point %s was never reached", point)
	}
	row := CrashRow{Crash: s.state(), Log: s.w.Decision(gid)}
	if opts.LoseLog {
		for _, k := range s.w.Log.Keys("decision/") {
			s.w.Log.Delete(k)
		}
		s.w.Log.Sync()
	}
	if err := s.until(settle); err != nil {
		return CrashRow{}, err
	}
	row.After = s.state()
	row.Action = s.recovery()
	row.Consistent = row.After.Consistent(d.Stock)
	rep := s.check(opts.Restart)
	row.Verdicts, row.Metrics = verdictText(rep), rep.Metrics
	row.Agents = s.agents()
	return row, nil
}

// Positions runs C.1's five positions.
func positions(d twopc.Design, opts CrashOpts) ([]CrashRow, error) {
	var rows []CrashRow
	for i, p := range twopc.Positions {
		r, err := CrashAt(d, p, fmt.Sprintf("x%d", i), opts)
		if err != nil {
			return nil, fmt.Errorf("position %d: %w", i, err)
		}
		r.Pos, r.Where = i, Where[i]
		rows = append(rows, r)
	}
	return rows, nil
}

// C1 is the crash-position table: the databases right after the coordinator
// was killed at each position.
func C1() ([]CrashRow, error) { return positions(twopc.Default(), CrashOpts{}) }

// C4 restarts the coordinator with its log after each crash.
func C4() ([]CrashRow, error) { return positions(twopc.Default(), CrashOpts{Restart: true}) }

// C5 restarts it after its log was lost: recovery can only roll back.
func C5() ([]CrashRow, error) {
	return positions(twopc.Default(), CrashOpts{Restart: true, LoseLog: true})
}

// C6Row is one write order of C.6.
type C6Row struct {
	Order string
	CrashRow
}

// C6 kills the coordinator after the first COMMIT PREPARED in both write
// orders and recovers.
func C6() ([]C6Row, error) {
	var rows []C6Row
	for _, c := range []struct {
		order string
		d     twopc.Design
	}{
		{"log first, then COMMIT PREPARED (correct)", twopc.Default()},
		{"first COMMIT PREPARED, then log (wrong)", twopc.Default().MustWith(twopc.CommitBeforeLog)},
	} {
		r, err := CrashAt(c.d, twopc.PointCommitted+"orders", "x4", CrashOpts{Restart: true})
		if err != nil {
			return nil, err
		}
		rows = append(rows, C6Row{Order: c.order, CrashRow: r})
	}
	return rows, nil
}

// ---- C.2 ----

// C2Result is the cost of blocking.
type C2Result struct {
	Age0, Age1      time.Duration // pg_prepared_xacts' age of 'xw', then 4 s later
	Blocked         string        // SQLSTATE of the update of the prepared row
	BlockedWait     time.Duration // its wait at the database
	Free            string        // the command tag of the update of another row
	FreeWait        time.Duration
	Pinned, Removed db.VacuumStats // VACUUM with the prepared transaction, then after ROLLBACK PREPARED
}

// C2 leaves 'xw' prepared at the inventory (the coordinator dies after both
// prepared) and runs the source's business session and VACUUMs against it.
func C2() (C2Result, error) {
	d := twopc.Default()
	d.GIDs, d.ChurnRows = []string{"xw"}, 2000
	s, err := newScene(d, sim.Schedule{{At: 0, Kind: sim.CrashAt, Node: "coordinator", Point: twopc.PointDecided}})
	if err != nil {
		return C2Result{}, err
	}
	defer s.close()
	ms := time.Millisecond
	biz := &twopc.Script{DB: "inventory", Steps: []twopc.ScriptStep{
		{At: 110 * ms, Stmts: []db.Stmt{db.PreparedXacts()}},
		{At: 200 * ms, Stmts: []db.Stmt{twopc.Decrement("sku-1")}},
		{At: 3500 * ms, Stmts: []db.Stmt{twopc.Decrement("sku-2")}},
		{At: 4110 * ms, Stmts: []db.Stmt{db.PreparedXacts()}},
		{At: 5000 * ms, Stmts: []db.Stmt{twopc.Churn()}},
		{At: 5100 * ms, Stmts: []db.Stmt{twopc.Churn()}},
		{At: 5200 * ms, Stmts: []db.Stmt{twopc.Churn()}},
		{At: 6000 * ms, Stmts: []db.Stmt{db.Vacuum(twopc.TChurn)}},
		{At: 7000 * ms, Stmts: []db.Stmt{db.RollbackPrepared("xw")}},
		{At: 8000 * ms, Stmts: []db.Stmt{db.Vacuum(twopc.TChurn)}},
	}}
	s.w.Add("business", biz.Factory())
	if err := s.until(10 * time.Second); err != nil {
		return C2Result{}, err
	}
	var r C2Result
	ans := func(i int) (twopc.ScriptAnswer, error) {
		a, ok := biz.Answer(i)
		if !ok {
			return a, fmt.Errorf("C.2: the business session got no answer to step %d", i)
		}
		return a, nil
	}
	age := func(i int) (time.Duration, error) {
		a, err := ans(i)
		if err != nil {
			return 0, err
		}
		for _, row := range a.Last().Rows {
			if row["gid"] == "xw" {
				return time.Duration(row["age"].(int64)), nil
			}
		}
		return 0, fmt.Errorf("C.2: 'xw' is not in pg_prepared_xacts at step %d", i)
	}
	if r.Age0, err = age(0); err != nil {
		return r, err
	}
	if r.Age1, err = age(3); err != nil {
		return r, err
	}
	a, err := ans(1)
	if err != nil {
		return r, err
	}
	r.Blocked = db.Code(a.Err)
	r.BlockedWait = a.Took() - 2*hop
	if a, err = ans(2); err != nil {
		return r, err
	}
	r.Free, r.FreeWait = a.Last().Tag, a.Took()-2*hop
	if a, err = ans(7); err != nil {
		return r, err
	}
	r.Pinned = a.Last().Vacuum
	if a, err = ans(9); err != nil {
		return r, err
	}
	r.Removed = a.Last().Vacuum
	return r, nil
}

// ---- C.3 ----

// C3Row is one way to end the stuck 'xv'.
type C3Row struct {
	Approach   string
	Action     string
	Scene      State // before the action
	Log        string
	After      State
	Consistent bool
	Verdicts   string
}

// C3 leaves the source's scene (orders committed, inventory prepared, the
// log says COMMIT: the coordinator died at position 4) and lets the
// inventory's DBA end it: A rolls back on a timeout, B asks the decision log.
func C3() ([]C3Row, error) {
	var rows []C3Row
	for _, c := range []struct{ approach, gid string }{
		{"A: abort on timeout", "xv"},
		{"B: ask the decision log", "xv2"},
	} {
		d := twopc.Default()
		d.GIDs = []string{c.gid}
		s, err := newScene(d, sim.Schedule{{At: 0, Kind: sim.CrashAt, Node: "coordinator", Point: twopc.PointCommitted + "orders"}})
		if err != nil {
			return nil, err
		}
		defer s.close()
		gid, w := c.gid, s.w
		step := twopc.ScriptStep{At: time.Second, Stmts: []db.Stmt{db.RollbackPrepared(gid)}}
		if strings.HasPrefix(c.approach, "B") {
			step = twopc.ScriptStep{At: time.Second, Fn: func() []db.Stmt {
				return []db.Stmt{twopc.Finish(gid, w.Decision(gid))}
			}}
		}
		dba := &twopc.Script{DB: "inventory", Steps: []twopc.ScriptStep{step}}
		s.w.Add("dba", dba.Factory())
		if err := s.until(900 * time.Millisecond); err != nil {
			return nil, err
		}
		row := C3Row{Approach: c.approach, Scene: s.state(), Log: s.w.Decision(gid)}
		if err := s.until(5 * time.Second); err != nil {
			return nil, err
		}
		if a, ok := dba.Answer(0); ok {
			row.Action = "inventory: " + a.Last().Tag + " '" + gid + "'"
		}
		row.After = s.state()
		row.Consistent = row.After.Consistent(d.Stock)
		row.Verdicts = verdictText(s.check(false))
		rows = append(rows, row)
	}
	return rows, nil
}

// ---- C.7 ----

// C7Result is a participant dying before its vote.
type C7Result struct {
	Lines    []string // what the coordinator noted
	Decision string   // its decision
	Log      string   // the decision log
	After    State    // after the inventory restarted
	Verdicts string
}

// C7 kills the inventory when the prepare request for 'xp' reaches it
// (orders already voted YES) and restarts it 5 s later.
func C7() (C7Result, error) {
	d := twopc.Default()
	d.GIDs = []string{"xp"}
	s, err := newScene(d, sim.Schedule{
		{At: clock.Time(50 * time.Millisecond), Kind: sim.CrashAt, Node: "inventory", Point: twopc.PointStep},
		{At: clock.Time(5 * time.Second), Kind: sim.Restart, Node: "inventory"},
	})
	if err != nil {
		return C7Result{}, err
	}
	defer s.close()
	if err := s.until(settleAt); err != nil {
		return C7Result{}, err
	}
	r := C7Result{After: s.state(), Log: s.w.Decision("xp"), Verdicts: verdictText(s.check(true))}
	for _, e := range s.mem.Events {
		if e.Kind != hist.KindTxn {
			continue
		}
		n, _ := decodeNote(e)
		switch n.What {
		case hist.TxnVote:
			line := fmt.Sprintf("%s: PREPARE TRANSACTION 'xp' -> %s", n.Participant, strings.ToUpper(n.Vote))
			if n.Code != "" {
				line += " (" + n.Code + ")"
			}
			r.Lines = append(r.Lines, line)
		case hist.TxnDecide:
			r.Decision = n.Outcome
			r.Lines = append(r.Lines, "decision: "+strings.ToUpper(n.Outcome)+" ("+n.Reason+")")
		case hist.TxnLog:
			r.Lines = append(r.Lines, "decision log: "+strings.ToUpper(n.Outcome))
		case hist.TxnDone:
			r.Lines = append(r.Lines, fmt.Sprintf("done at %s: every participant told %s", clock.Time(e.T), strings.ToUpper(n.Outcome)))
		}
	}
	return r, nil
}
