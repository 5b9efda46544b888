package scenario

// C.8: what the source did not verify.

import (
	"fmt"
	"strings"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/twopc"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// C8 runs the extensions beyond the source: N participants, a takeover
// coordinator, cooperative termination, max_prepared_transactions full.
func C8() ([]Table, error) {
	var out []Table
	n, err := C8Participants(3)
	if err != nil {
		return nil, fmt.Errorf("participants: %w", err)
	}
	out = append(out, TableC8Participants(3, n))
	tk, err := C8Takeover()
	if err != nil {
		return nil, fmt.Errorf("takeover: %w", err)
	}
	out = append(out, TableC8Takeover(tk))
	co, err := C8Cooperative()
	if err != nil {
		return nil, fmt.Errorf("cooperative: %w", err)
	}
	out = append(out, TableC8Cooperative(co))
	mp, err := C8MaxPrepared()
	if err != nil {
		return nil, fmt.Errorf("max_prepared_transactions: %w", err)
	}
	out = append(out, TableC8MaxPrepared(mp))
	return out, nil
}

// C8Participants runs C.1/C.4's positions with n participants.
func C8Participants(n int) ([]CrashRow, error) {
	d := twopc.Default()
	d.Participants = n
	return positions(d, CrashOpts{Restart: true})
}

func prepText(s State) string {
	parts := make([]string, len(s.Prepared))
	for i, p := range s.Prepared {
		parts[i] = itoa(p)
	}
	return strings.Join(parts, "/")
}

// TableC8Participants renders the N-participant positions.
func TableC8Participants(n int, rows []CrashRow) Table {
	names := make([]string, n)
	for i := range names {
		names[i] = twopc.ParticipantName(i)
	}
	t := Table{ID: "C.8a", Title: fmt.Sprintf("%d participants (%s): crash positions, then recovery", n, strings.Join(names, ", ")),
		Header: []string{"pos", "prepared at the crash", "log", "recovery action", "orders", "stock", "result", "properties"}}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{fmt.Sprint(r.Pos), prepText(r.Crash), logText(r.Log), r.Action, fmt.Sprint(r.After.Orders), r.After.stockText(), consistentText(r.Consistent), r.Verdicts})
	}
	return t
}

// TakeoverRow is one takeover case.
type TakeoverRow struct {
	Case       string
	Second     string // what coordinator-2 did
	First      string // how the first instance ended its transaction
	After      State
	Consistent bool
	Verdicts   string
}

// C8Takeover lets a second coordinator instance take over from the same
// decision log: once after the first died at position 3, once while the
// first is only paused (a false suspicion) in the middle of phase one.
func C8Takeover() ([]TakeoverRow, error) {
	d := twopc.Default()
	d.Standby = 1
	cases := []struct {
		name  string
		sched sim.Schedule
	}{
		{"coordinator killed at position 3 for good; coordinator-2 starts at 6 s on the same log", sim.Schedule{
			{At: 0, Kind: sim.CrashAt, Node: "coordinator", Point: twopc.PointLogged},
			{At: clock.Time(restartAt), Kind: sim.Restart, Node: "coordinator-2"},
		}},
		{"coordinator paused after orders prepared (0.1015 s to 2 s); coordinator-2 starts at 0.5 s", sim.Schedule{
			{At: clock.Time(101500 * time.Microsecond), Kind: sim.Pause, Node: "coordinator"},
			{At: clock.Time(500 * time.Millisecond), Kind: sim.Restart, Node: "coordinator-2"},
			{At: clock.Time(2 * time.Second), Kind: sim.Resume, Node: "coordinator"},
		}},
	}
	var rows []TakeoverRow
	for _, c := range cases {
		s, err := newScene(d, c.sched)
		if err != nil {
			return nil, err
		}
		defer s.close()
		if err := s.until(settleAt); err != nil {
			return nil, err
		}
		r := TakeoverRow{Case: c.name, After: s.state()}
		r.Consistent = r.After.Consistent(d.Stock)
		quiet := s.w.Up("coordinator-2")
		r.Verdicts = verdictText(s.check(quiet))
		var second, first []string
		for _, e := range s.mem.Events {
			if e.Kind != hist.KindTxn {
				continue
			}
			n, _ := decodeNote(e)
			switch {
			case n.By == "coordinator-2" && n.What == hist.TxnRecover:
				second = append(second, fmt.Sprintf("%s: %s (log: %s)", n.Participant, strings.ToUpper(n.Outcome), logText(n.Found)))
			case n.By == "coordinator-2" && n.What == hist.TxnLog:
				second = append(second, "logged "+strings.ToUpper(n.Outcome))
			case n.By == "coordinator" && n.What == hist.TxnDecide:
				first = append(first, "decided "+strings.ToUpper(n.Outcome)+" ("+n.Reason+")")
			case n.By == "coordinator" && n.What == hist.TxnDone:
				first = append(first, "finished "+strings.ToUpper(n.Outcome))
			}
		}
		if !s.w.Up("coordinator") {
			first = append(first, "dead")
		}
		r.Second, r.First = strings.Join(second, "; "), strings.Join(first, "; ")
		rows = append(rows, r)
	}
	return rows, nil
}

// TableC8Takeover renders the takeover cases.
func TableC8Takeover(rows []TakeoverRow) Table {
	t := Table{ID: "C.8b", Title: "a second coordinator instance takes over from the same decision log",
		Header: []string{"case", "coordinator-2 (recovery)", "coordinator (the first instance)", "orders", "stock", "result", "properties"}}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{r.Case, r.Second, r.First, fmt.Sprint(r.After.Orders), r.After.stockText(), consistentText(r.Consistent), r.Verdicts})
	}
	t.Notes = []string{"the first decision record of a gid wins: recovery logs ABORT before rolling back, and an instance that finds a record follows it"}
	return t
}

// CoopRow compares cooperative termination with waiting for the coordinator.
type CoopRow struct {
	CrashRow
	WaitBlocked time.Duration // the longest prepared life without cooperation
}

// C8Cooperative kills the coordinator at positions 1 to 4 and restarts it
// only after 60 s; the participants' agents ask each other meanwhile.
func C8Cooperative() ([]CoopRow, error) {
	coop := twopc.Default()
	coop.Cooperative = true
	var rows []CoopRow
	for i := 1; i < len(twopc.Positions); i++ {
		opts := CrashOpts{Restart: true, RestartAt: 60 * time.Second}
		r, err := CrashAt(coop, twopc.Positions[i], fmt.Sprintf("x%d", i), opts)
		if err != nil {
			return nil, err
		}
		r.Pos, r.Where = i, Where[i]
		w, err := CrashAt(twopc.Default(), twopc.Positions[i], fmt.Sprintf("x%d", i), opts)
		if err != nil {
			return nil, err
		}
		rows = append(rows, CoopRow{CrashRow: r, WaitBlocked: w.Metrics.BlockedMax})
	}
	return rows, nil
}

// TableC8Cooperative renders the cooperative termination runs.
func TableC8Cooperative(rows []CoopRow) Table {
	t := Table{ID: "C.8c", Title: "cooperative termination (coordinator down for 60 s; agents ask each other after 2 s)",
		Header: []string{"pos", "what the agents did", "coordinator's recovery at 60 s", "orders", "stock", "result", "longest prepared", "without cooperation", "properties"}}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{fmt.Sprint(r.Pos), r.Agents, r.Action, fmt.Sprint(r.After.Orders), r.After.stockText(),
			consistentText(r.Consistent), r.Metrics.BlockedMax.Round(time.Millisecond).String(), r.WaitBlocked.Round(time.Millisecond).String(), r.Verdicts})
	}
	t.Notes = []string{"a peer that committed decides COMMIT; a peer that never voted refuses the gid (a txlog tombstone) and that decides ABORT; when every peer is prepared, nobody can decide: blocked until the log is read"}
	return t
}

// MaxPrepRow is one transaction of the max_prepared_transactions run.
type MaxPrepRow struct {
	GID, Coordinator, At string
	Votes                string
	Outcome              string
}

// MaxPrepResult is the max_prepared_transactions run.
type MaxPrepResult struct {
	Rows     []MaxPrepRow
	After    State
	Verdicts string
}

// C8MaxPrepared sets max_prepared_transactions = 1: x1's coordinator dies
// with orders prepared (back at 20 s); meanwhile coordinator-2 asks for x2
// (2 s) and, after the recovery, x3 (25 s).
func C8MaxPrepared() (MaxPrepResult, error) {
	d := twopc.Default()
	d.MaxPrepared, d.Coordinators = 1, 2
	d.Schedule = []twopc.TxnAt{
		{At: 100 * time.Millisecond, GID: "x1", Coordinator: "coordinator"},
		{At: 2 * time.Second, GID: "x2", Coordinator: "coordinator-2"},
		{At: 25 * time.Second, GID: "x3", Coordinator: "coordinator-2"},
	}
	s, err := newScene(d, sim.Schedule{
		{At: 0, Kind: sim.CrashAt, Node: "coordinator", Point: twopc.PointPrepared + "orders"},
		{At: clock.Time(20 * time.Second), Kind: sim.Restart, Node: "coordinator"},
	})
	if err != nil {
		return MaxPrepResult{}, err
	}
	defer s.close()
	if err := s.until(60 * time.Second); err != nil {
		return MaxPrepResult{}, err
	}
	r := MaxPrepResult{After: s.state(), Verdicts: verdictText(s.check(true))}
	idx := map[string]int{}
	for _, t := range d.Schedule {
		idx[t.GID] = len(r.Rows)
		r.Rows = append(r.Rows, MaxPrepRow{GID: t.GID, Coordinator: t.Coordinator, At: clock.Time(t.At).String(), Outcome: "(coordinator died)"})
	}
	for _, e := range s.mem.Events {
		if e.Kind != hist.KindTxn {
			continue
		}
		n, _ := decodeNote(e)
		i, ok := idx[n.GID]
		if !ok {
			continue
		}
		row := &r.Rows[i]
		switch n.What {
		case hist.TxnVote:
			v := n.Participant + " " + strings.ToUpper(n.Vote)
			if n.Code != "" {
				v += " (" + n.Code + ")"
			}
			if row.Votes != "" {
				row.Votes += ", "
			}
			row.Votes += v
		case hist.TxnDone:
			row.Outcome = strings.ToUpper(n.Outcome) + " at " + clock.Time(e.T).String()
		case hist.TxnRecover:
			row.Outcome = fmt.Sprintf("%s: %s by %s's recovery at %s", n.Participant, strings.ToUpper(n.Outcome), n.By, clock.Time(e.T))
		}
	}
	return r, nil
}

// TableC8MaxPrepared renders the max_prepared_transactions run.
func TableC8MaxPrepared(r MaxPrepResult) Table {
	t := Table{ID: "C.8d", Title: "max_prepared_transactions = 1 is full while a coordinator is down",
		Header: []string{"gid", "coordinator", "asked at", "votes", "outcome"}}
	for _, x := range r.Rows {
		t.Rows = append(t.Rows, []string{x.GID, x.Coordinator, x.At, x.Votes, x.Outcome})
	}
	t.Notes = []string{fmt.Sprintf("final: orders=%d stock=%s prepared=%s; properties: %s", r.After.Orders, r.After.stockText(), prepText(r.After), r.Verdicts),
		"53200: every new global transaction through the full participant votes NO and aborts until recovery frees the slot: unavailability, not inconsistency"}
	return t
}
