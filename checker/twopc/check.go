package twopc

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// The properties of system C (docs/properties.md).
const (
	PC1 = "PC1 atomicity-after-recovery"
	PC2 = "PC2 decision-durability"
	PC3 = "PC3 no-unilateral-decision"
	PC4 = "PC4 recovery-completes"
	PC5 = "PC5 abort-before-yes-is-clean"
)

// Invariant is a named check over a decoded run of system C.
type Invariant = checker.Invariant[*History]

// Invariants are the checks of system C, in property order.
var Invariants = []Invariant{
	{Name: PC1, Check: Atomicity},
	{Name: PC2, Check: DecisionDurability},
	{Name: PC3, Check: NoUnilateralDecision},
	{Name: PC4, Check: RecoveryCompletes},
	{Name: PC5, Check: AbortBeforeYesIsClean},
}

// Participant states of one transaction at one database.
const (
	StateNone      = "none"      // never prepared there
	StatePrepared  = "prepared"  // prepared, not ended (yet)
	StateCommitted = "committed" // COMMIT PREPARED
	StateAborted   = "aborted"   // ROLLBACK PREPARED
)

// Life is one prepared transaction at one database, from PREPARE
// TRANSACTION to its COMMIT or ROLLBACK PREPARED.
type Life struct {
	Node, GID   string
	Start, End  int64 // world times; End is 0 while it lives
	Outcome     string
	Rows        int // rows it holds locked (from the coordinator's vote note; 1 if unknown)
	Seq, EndSeq uint64
}

// Txn is what the trace says about one global transaction.
type Txn struct {
	GID          string
	Participants []string          // from the begin note, else the databases where it prepared
	Votes        map[string]string // participant -> the vote a coordinator received
	LoggedCommit uint64            // seq of the first log note holding COMMIT (0: none)
}

// Event is a decoded 2PC note with its place in the trace.
type Event struct {
	hist.Txn
	Seq  uint64
	T    int64
	Node string
}

// History is a decoded run of system C.
type History struct {
	Events       []traces.Event
	Notes        []Event
	Txns         map[string]*Txn
	GIDs         []string // in order of first appearance
	Lives        []*Life
	LockTimeouts int   // statements that failed with 55P03 (lock_timeout)
	Quiesced     bool  // the harness ended the run quiesced (PC4 and liveness apply)
	EndT         int64 // world time of the last event
	live         map[[2]string]*Life
	last         map[[2]string]*Life
}

// Reads reports whether the checker reads events of a kind: a run
// recorded with only these (and the rest numbered, as sim's Filter does)
// is judged as its full record is. Decode's and Check's switches and this
// one must agree: the harness's TestFastIsFull (contracttest.FastIsFull)
// fails when this one misses a kind they read.
func Reads(kind string) bool {
	switch kind {
	case hist.KindTxn, "prepared", hist.KindDB, hist.KindCommit:
		return true
	}
	return false
}

// Decode reads the 2PC notes and the databases' prepared-transaction events
// of a trace.
func Decode(evs []traces.Event) (*History, error) {
	h := &History{Events: evs, Txns: map[string]*Txn{}, live: map[[2]string]*Life{}, last: map[[2]string]*Life{}}
	txn := func(gid string) *Txn {
		t := h.Txns[gid]
		if t == nil {
			t = &Txn{GID: gid, Votes: map[string]string{}}
			h.Txns[gid] = t
			h.GIDs = append(h.GIDs, gid)
		}
		return t
	}
	rows := map[[2]string]int{}
	for _, e := range evs {
		h.EndT = e.T
		switch e.Kind {
		case hist.KindTxn:
			n, err := checker.Decode[hist.Txn](e)
			if err != nil {
				return nil, err
			}
			h.Notes = append(h.Notes, Event{Txn: n, Seq: e.Seq, T: e.T, Node: e.Node})
			if n.What == hist.TxnEnd {
				h.Quiesced = n.Quiesced
				continue
			}
			if n.GID == "" {
				continue
			}
			t := txn(n.GID)
			switch n.What {
			case hist.TxnBegin:
				if len(t.Participants) == 0 {
					t.Participants = append([]string(nil), n.Participants...)
				}
			case hist.TxnVote:
				if t.Votes[n.Participant] != hist.VoteYes {
					t.Votes[n.Participant] = n.Vote
				}
				if n.Vote == hist.VoteYes {
					rows[[2]string{n.Participant, n.GID}] = n.Rows
				}
			case hist.TxnLog:
				if n.Outcome == hist.OutcomeCommit && t.LoggedCommit == 0 {
					t.LoggedCommit = e.Seq
				}
			}
		case "prepared":
			p, err := decode[Prepared](e)
			if err != nil {
				return nil, err
			}
			k := [2]string{e.Node, p.GID}
			t := txn(p.GID)
			if !contains(t.Participants, e.Node) {
				t.Participants = append(t.Participants, e.Node)
			}
			switch p.Event {
			case "prepare":
				l := &Life{Node: e.Node, GID: p.GID, Start: e.T, Seq: e.Seq, Rows: 1}
				h.Lives = append(h.Lives, l)
				h.live[k] = l
				h.last[k] = l
			case "commit", "rollback":
				l := h.live[k]
				if l == nil { // prepared before the trace began
					l = &Life{Node: e.Node, GID: p.GID, Start: e.T, Seq: e.Seq, Rows: 1}
					h.Lives = append(h.Lives, l)
				}
				l.End, l.EndSeq = e.T, e.Seq
				l.Outcome = hist.OutcomeCommit
				if p.Event == "rollback" {
					l.Outcome = hist.OutcomeAbort
				}
				delete(h.live, k)
				h.last[k] = l
			}
		case hist.KindDB:
			if !e.HasData() {
				continue
			}
			s, err := decode[Statement](e)
			if err != nil {
				return nil, err
			}
			if s.Err == "55P03" {
				h.LockTimeouts++
			}
		}
	}
	for _, l := range h.Lives {
		if r := rows[[2]string{l.Node, l.GID}]; r > 0 {
			l.Rows = r
		}
	}
	return h, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// State returns the final state of a transaction at a database.
func (h *History) State(node, gid string) string {
	l := h.last[[2]string{node, gid}]
	switch {
	case l == nil:
		return StateNone
	case l.End == 0:
		return StatePrepared
	case l.Outcome == hist.OutcomeCommit:
		return StateCommitted
	}
	return StateAborted
}

func (h *History) states(t *Txn) (committed, notCommitted, prepared []string) {
	for _, p := range t.Participants {
		switch h.State(p, t.GID) {
		case StateCommitted:
			committed = append(committed, p)
		case StatePrepared:
			prepared = append(prepared, p)
		default:
			notCommitted = append(notCommitted, p)
		}
	}
	return
}

func (h *History) endSeq(node, gid string) []uint64 {
	if l := h.last[[2]string{node, gid}]; l != nil && l.EndSeq != 0 {
		return []uint64{l.EndSeq}
	}
	return nil
}

// Atomicity (PC1): no transaction ends committed at one participant and
// rolled back (or never prepared) at another. A participant still prepared
// can still go either way and is left to PC4.
func Atomicity(h *History) checker.Verdict {
	for _, gid := range h.GIDs {
		t := h.Txns[gid]
		c, n, _ := h.states(t)
		if len(c) > 0 && len(n) > 0 {
			var seqs []uint64
			for _, p := range append(append([]string(nil), c...), n...) {
				seqs = append(seqs, h.endSeq(p, gid)...)
			}
			return checker.Fail(PC1, seqs, "transaction %q committed at %s but not at %s (%s)",
				gid, strings.Join(c, ","), strings.Join(n, ","), h.describe(t))
		}
	}
	return checker.Pass(PC1)
}

// DecisionDurability (PC2): once the decision log holds COMMIT for a
// transaction, no participant rolls it back, the log never turns to ABORT,
// and after quiescence every participant has committed.
func DecisionDurability(h *History) checker.Verdict {
	for _, n := range h.Notes {
		if n.What != hist.TxnLog || n.Outcome != hist.OutcomeAbort {
			continue
		}
		if t := h.Txns[n.GID]; t != nil && t.LoggedCommit != 0 && t.LoggedCommit < n.Seq {
			return checker.Fail(PC2, []uint64{t.LoggedCommit, n.Seq}, "the decision log held COMMIT for %q, later %s logged ABORT (the record was lost)", n.GID, n.By)
		}
	}
	for _, gid := range h.GIDs {
		t := h.Txns[gid]
		if t.LoggedCommit == 0 {
			continue
		}
		for _, p := range t.Participants {
			st := h.State(p, gid)
			if st == StateAborted || st == StateNone || (h.Quiesced && st != StateCommitted) {
				return checker.Fail(PC2, append([]uint64{t.LoggedCommit}, h.endSeq(p, gid)...),
					"the decision log held COMMIT for %q, but %s ended %s", gid, p, st)
			}
		}
	}
	return checker.Pass(PC2)
}

// NoUnilateralDecision (PC3): a prepared transaction is committed only after
// a coordinator decided (or its log or recovery said) COMMIT, and rolled back
// only after a coordinator decided ABORT or a participant that never voted
// refused the transaction (cooperative termination). A refusal is its note,
// or the tombstone itself: a committed txlog row in state "refused" (an
// agent that crashed after committing it never noted it, yet the refusal
// holds and its peers hear it). A refusal by a participant whose YES a
// coordinator had received is no refusal: it voted.
func NoUnilateralDecision(h *History) checker.Verdict {
	word := map[string]map[string]bool{}
	say := func(gid, outcome string) {
		if word[gid] == nil {
			word[gid] = map[string]bool{}
		}
		word[gid][outcome] = true
	}
	yes := map[[2]string]bool{}   // (participant, gid): a coordinator received its YES
	voided := map[string]string{} // gid -> a refusal that did not count
	refuse := func(participant, gid string) {
		if yes[[2]string{participant, gid}] {
			voided[gid] = fmt.Sprintf("; %s refused it after voting YES", participant)
			return
		}
		say(gid, hist.OutcomeAbort)
	}
	notes := 0
	for _, e := range h.Events {
		switch e.Kind {
		case hist.KindTxn:
			n := h.Notes[notes].Txn
			notes++
			switch n.What {
			case hist.TxnDecide, hist.TxnLog, hist.TxnRecover:
				say(n.GID, n.Outcome)
			case hist.TxnVote:
				if n.Vote == hist.VoteYes {
					yes[[2]string{n.Participant, n.GID}] = true
				}
			case hist.TxnRefuse:
				refuse(n.Participant, n.GID)
			}
		case hist.KindCommit:
			c, err := checker.Decode[hist.CommitRecord](e)
			if err != nil {
				return checker.Fail(PC3, []uint64{e.Seq}, "%v", err)
			}
			for _, ch := range c.Changes {
				if gid, ok := refusal(ch); ok {
					refuse(e.Node, gid)
				}
			}
		case "prepared":
			p, _ := decode[Prepared](e)
			out := map[string]string{"commit": hist.OutcomeCommit, "rollback": hist.OutcomeAbort}[p.Event]
			if out != "" && !word[p.GID][out] {
				return checker.Fail(PC3, []uint64{e.Seq}, "%s ended the prepared %q with %s, but no coordinator, decision log or refusing peer had said %s%s",
					e.Node, p.GID, strings.ToUpper(p.Event), out, voided[p.GID])
			}
		}
	}
	return checker.Pass(PC3)
}

// refusal reports whether a committed change is a participant's refusal of
// a gid: a txlog row inserted in state "refused" (model/twopc's tombstone).
func refusal(ch hist.Change) (string, bool) {
	if ch.Table != TableTxlog || ch.Op != "insert" {
		return "", false
	}
	gid, _ := ch.After["gid"].(string)
	state, _ := ch.After["state"].(string)
	return gid, state == StateRefused && gid != ""
}

// RecoveryCompletes (PC4): when the run ends quiesced (faults healed, the
// coordinator restarted with its log, time given to settle), no prepared
// transaction remains at any database.
func RecoveryCompletes(h *History) checker.Verdict {
	if !h.Quiesced {
		return checker.Pass(PC4)
	}
	var left []string
	var seqs []uint64
	for _, l := range h.Lives {
		if l.End == 0 && h.last[[2]string{l.Node, l.GID}] == l {
			left = append(left, fmt.Sprintf("%s:%s (prepared %s ago)", l.Node, l.GID, time.Duration(h.EndT-l.Start)))
			seqs = append(seqs, l.Seq)
		}
	}
	if len(left) > 0 {
		return checker.Fail(PC4, seqs, "after quiescence %d prepared transactions remain: %s", len(left), strings.Join(left, ", "))
	}
	return checker.Pass(PC4)
}

// AbortBeforeYesIsClean (PC5): a participant whose YES no coordinator
// received (it died, refused or its answer was lost) never commits the
// transaction, and after quiescence holds nothing prepared for it.
func AbortBeforeYesIsClean(h *History) checker.Verdict {
	for _, gid := range h.GIDs {
		t := h.Txns[gid]
		for _, p := range t.Participants {
			if t.Votes[p] == hist.VoteYes {
				continue
			}
			st := h.State(p, gid)
			if st == StateCommitted || (h.Quiesced && st == StatePrepared) {
				vote := t.Votes[p]
				if vote == "" {
					vote = "no vote received"
				}
				return checker.Fail(PC5, h.endSeq(p, gid), "%s never voted YES on %q (%s) but ended %s", p, gid, vote, st)
			}
		}
	}
	return checker.Pass(PC5)
}

func (h *History) describe(t *Txn) string {
	parts := make([]string, 0, len(t.Participants))
	for _, p := range t.Participants {
		parts = append(parts, p+"="+h.State(p, t.GID))
	}
	return strings.Join(parts, " ")
}

// Report is the verdicts and metrics of one run.
type Report struct {
	Verdicts []checker.Verdict
	Metrics  Metrics
}

// OK reports whether every property held.
func (r Report) OK() bool { return len(checker.Failed(r.Verdicts)) == 0 }

// Failed returns the names of the failed properties, in order.
func (r Report) Failed() []string {
	var out []string
	for _, v := range checker.Failed(r.Verdicts) {
		out = append(out, v.Property)
	}
	return out
}

// String renders one verdict per line, then the metrics.
func (r Report) String() string {
	var b strings.Builder
	for _, v := range r.Verdicts {
		b.WriteString(v.String() + "\n")
	}
	b.WriteString(r.Metrics.String())
	return b.String()
}

// Check decodes a run and runs every invariant and metric.
func Check(evs []traces.Event) (Report, error) {
	h, err := Decode(evs)
	if err != nil {
		return Report{}, err
	}
	r := Report{Metrics: Measure(h)}
	for _, inv := range Invariants {
		r.Verdicts = append(r.Verdicts, inv.Check(h))
	}
	return r, nil
}

// Metrics are the costs of blocking in one run.
type Metrics struct {
	Prepared     int           `json:"prepared"`      // prepared transactions (lives)
	BlockedMax   time.Duration `json:"blocked_max"`   // the longest a prepared transaction lived (to the end of the run if it still lives)
	BlockedTotal time.Duration `json:"blocked_total"` // the sum of their lives
	RowsLocked   int           `json:"rows_locked"`   // the most rows held locked by prepared transactions at once
	LockTimeouts int           `json:"lock_timeouts"` // statements that waited out lock_timeout (55P03)
	HorizonHeld  time.Duration `json:"horizon_held"`  // per database, the time some prepared transaction pinned the VACUUM horizon; summed
	Blocked      int           `json:"blocked"`       // agents that asked every peer and still could not decide
	StillPrep    int           `json:"still_prepared"`
}

// Measure computes the metrics of a decoded run.
func Measure(h *History) Metrics {
	m := Metrics{Prepared: len(h.Lives), LockTimeouts: h.LockTimeouts}
	type edge struct {
		t    int64
		rows int
	}
	var edges []edge
	held := map[string][][2]int64{}
	for _, l := range h.Lives {
		end := l.End
		if end == 0 {
			end = h.EndT
			m.StillPrep++
		}
		d := time.Duration(end - l.Start)
		m.BlockedTotal += d
		if d > m.BlockedMax {
			m.BlockedMax = d
		}
		edges = append(edges, edge{l.Start, l.Rows}, edge{end, -l.Rows})
		held[l.Node] = append(held[l.Node], [2]int64{l.Start, end})
	}
	sort.SliceStable(edges, func(i, j int) bool {
		if edges[i].t != edges[j].t {
			return edges[i].t < edges[j].t
		}
		return edges[i].rows < edges[j].rows
	})
	cur := 0
	for _, e := range edges {
		cur += e.rows
		if cur > m.RowsLocked {
			m.RowsLocked = cur
		}
	}
	for _, node := range checker.SortedKeys(held) {
		ivs := held[node]
		sort.Slice(ivs, func(i, j int) bool { return ivs[i][0] < ivs[j][0] })
		var end int64 = -1
		for _, iv := range ivs {
			s := iv[0]
			if s < end {
				s = end
			}
			if iv[1] > s {
				m.HorizonHeld += time.Duration(iv[1] - s)
				end = iv[1]
			}
		}
	}
	for _, n := range h.Notes {
		if n.What == hist.TxnBlocked {
			m.Blocked++
		}
	}
	return m
}

// String renders the metrics in one line.
func (m Metrics) String() string {
	return fmt.Sprintf("prepared=%d blocked_max=%v blocked_total=%v rows_locked=%d lock_timeouts=%d horizon_held=%v blocked_agents=%d still_prepared=%d",
		m.Prepared, m.BlockedMax, m.BlockedTotal, m.RowsLocked, m.LockTimeouts, m.HorizonHeld, m.Blocked, m.StillPrep)
}
