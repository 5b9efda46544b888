package judge

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// Params are the design parameters the checkers need, decoded from the
// trace header (the model's Design JSON; unknown fields are ignored).
type Params struct {
	UnconfirmedLease time.Duration `json:"unconfirmed_lease"`
	Lease            time.Duration `json:"lease"`
	Heartbeat        time.Duration `json:"heartbeat"`
	BackoffBase      time.Duration `json:"backoff_base"`
	BackoffCap       time.Duration `json:"backoff_cap"`
	Grace            time.Duration `json:"grace"`
	MaxAttempts      int           `json:"max_attempts"`
	SweepEvery       time.Duration `json:"sweep_every"`
	ProbeThreshold   time.Duration `json:"probe_threshold"`
	ProbeEvery       time.Duration `json:"probe_every"`
	DispatchEvery    time.Duration `json:"dispatch_every"`
	ClaimHold        time.Duration `json:"claim_hold"`
	RequestTimeout   time.Duration `json:"request_timeout"`
	JudgeMax         time.Duration `json:"judge_max"`
	HomeWorkers      int           `json:"home_workers"`
	ProdWorkers      int           `json:"prod_workers"`
	ClaimBatch       int           `json:"claim_batch"`      // leases per claim at most; 0 (a header from before the parameter) means 1
	Arbiters         int           `json:"arbiters"`         // arbiter processes started at 0 (0 in a header from before the parameter: 1)
	StandbyArbiters  int           `json:"standby_arbiters"` // arbiter processes added down, started later
	// ConfirmAwareGrace: the start-up grace gives an unconfirmed lease only
	// the unconfirmed lease again (a variant of the source's grace).
	ConfirmAwareGrace bool     `json:"confirm_aware_grace"`
	Knobs             []string `json:"knobs"`
}

// Batch returns how many leases one claim may carry.
func (p Params) Batch() int { return max(p.ClaimBatch, 1) }

// has reports whether the design has a knob on.
func (p Params) has(knob string) bool {
	for _, k := range p.Knobs {
		if k == knob {
			return true
		}
	}
	return false
}

// leasesOf returns the leases a claim's 200 answer carried: every one of a
// batch, or the single one.
func leasesOf(ret *hist.Return) []hist.Lease {
	if len(ret.Leases) > 0 {
		return ret.Leases
	}
	return []hist.Lease{{Sub: ret.Sub, Token: ret.Token, Gen: ret.Gen, User: ret.User, Problem: ret.Problem}}
}

// ParseParams decodes the design JSON of a trace header.
func ParseParams(design json.RawMessage) (Params, error) {
	var p Params
	if err := json.Unmarshal(design, &p); err != nil {
		return p, fmt.Errorf("the trace header's design is not an arbiter design: %w", err)
	}
	if p.Lease <= 0 || p.MaxAttempts <= 0 {
		return p, fmt.Errorf("the trace header's design has no lease or max_attempts: not an arbiter design")
	}
	return p, nil
}

// Version is a submission row after one commit.
type Version struct {
	Event    uint64
	T        int64 // world time of the commit event
	Status   string
	Token    string
	Gen      int64
	Worker   string
	Expires  int64 // 0 for NULL
	Attempts int64
	// Confirmed: the lease's worker confirmed it (its first heartbeat);
	// absent in rows from before the column.
	Confirmed bool
	Deleted   bool
}

func version(row map[string]any) Version {
	v := Version{Status: checker.Str(row["status"]), Token: checker.Str(row["lease_token"]), Worker: checker.Str(row["worker_id"])}
	v.Gen, _ = checker.Int(row["lease_gen"])
	v.Expires, _ = checker.Int(row["lease_expires_at"])
	v.Attempts, _ = checker.Int(row["judge_attempts"])
	v.Confirmed, _ = row["lease_confirmed"].(bool)
	return v
}

// Accepted is a judging-history row: a result the database accepted.
type Accepted struct {
	Event   uint64
	T       int64
	Sub     int64
	Seq     int64
	Token   string
	Gen     int64 // the generation the worker judged under (from its submit)
	Worker  string
	Verdict string
	Before  *Version // the submission row before the same commit (nil if untouched)
	After   *Version
}

// Judging is one worker's judging of one lease.
type Judging struct {
	Worker         string // the process
	WorkerID       string // its worker_id, when not its name
	Sub            int64
	Token          string
	Gen            int64
	Start, End     int64 // End is 0 when it never ended
	Abandoned      int64 // when the worker dropped it (410), 0 if not
	Verdict        string
	StartEv, EndEv uint64
}

// ResultLife is a result on its way from a worker's disk to the database.
type ResultLife struct {
	Worker   string // the process
	WorkerID string // its worker_id, when not its name
	Sub      int64
	Token    string
	Verdict  string
	Durable  bool
	Saved    int64
	Answered int64 // 0 when never answered
	Code     int
	Retries  int
	SavedEv  uint64
}

// Interval is a span of world time; End is 0 while open.
type Interval struct{ Start, End int64 }

func (iv Interval) covers(t int64) bool { return t >= iv.Start && (iv.End == 0 || t < iv.End) }

// Run is a trace of system A, decoded.
type Run struct {
	Header   traces.Header
	P        Params
	Shape    hist.Shape // the world's shape, from the header's workload
	Poison   []int64    // the submissions whose judging takes its worker down, from the header's workload
	Events   []traces.Event
	Commits  []checker.Commit
	Ops      []checker.Op
	Subs     map[int64][]Version // row versions per submission, in commit order
	Arrived  map[int64]int64     // world time of the insert commit
	Owner    map[int64][2]int64  // submission -> (user, problem)
	Accepted []Accepted
	// HistoryEdits are the updates and deletes of submission_judgings
	// rows: the history is append-only (PA2).
	HistoryEdits []HistoryEdit
	FirstAC      []map[string]any // inserted first_ac rows
	XP           map[int64]int64  // users.xp at the end
	Claims       []ClaimRecord    // claims-table inserts
	Judgings     []*Judging
	Results      []*ResultLife
	Down         map[string][]Interval // crash..restart per node
	Up           map[string][]Interval // start or restart..crash per node (a standby is up from its first start)
	Paused       map[string][]Interval
	Faults       []FaultAt
	Alerts       []AlertAt
	HealAt       int64 // time of the last heal-all fault (0: none)
	End          int64 // time of the last event

	held   map[subToken]holding // holdings(), once computed
	ids    []int64              // SubIDs(), once computed
	leases []grant              // grants(), once computed
	dbs    []string             // the database nodes (those that wrote commits)
}

// ClaimRecord is a claims-table insert: (worker, request_id) -> lease.
type ClaimRecord struct {
	Event     uint64
	T         int64
	Worker    string
	RequestID string
	Sub       int64
	Token     string
}

// FaultAt is a fault action as applied.
type FaultAt struct {
	Event  uint64
	T      int64
	Kind   string     `json:"kind"`
	Node   string     `json:"node"`
	Peer   string     `json:"peer"`
	Point  string     `json:"point"`
	Arg    string     `json:"arg"`
	For    int64      `json:"for"`
	Amount int64      `json:"amount"`
	Rate   int64      `json:"rate"`
	Groups [][]string `json:"groups"`
}

// cutOff reports whether a partition puts node in a group without any
// arbiter, or without the database (when the trace shows which node that
// is): the worker cannot reach an arbiter that can serve it.
func (r *Run) cutOff(f FaultAt, node string) bool {
	for _, g := range f.Groups {
		in, arb, db := false, false, len(r.dbs) == 0
		for _, n := range g {
			in = in || n == node
			arb = arb || strings.HasPrefix(n, "arbiter")
			db = db || r.isDB(n)
		}
		if in {
			return !arb || !db
		}
	}
	return false
}

// HistoryEdit is an update or a delete of a submission_judgings row.
type HistoryEdit struct {
	Event uint64
	T     int64
	Op    string // "update" or "delete"
	Sub   int64
	Seq   int64
}

// AlertAt is a monitor alert.
type AlertAt struct {
	Event uint64
	T     int64
	hist.Alert
}

// Decode builds a Run from a trace.
func Decode(h traces.Header, evs []traces.Event) (*Run, error) {
	p, err := ParseParams(h.Design)
	if err != nil {
		return nil, err
	}
	r := &Run{Header: h, P: p, Events: evs, Subs: map[int64][]Version{}, Arrived: map[int64]int64{}, Owner: map[int64][2]int64{}, XP: map[int64]int64{},
		Down: map[string][]Interval{}, Up: map[string][]Interval{}, Paused: map[string][]Interval{}}
	r.Poison = poisonOf(h)
	if r.Shape, err = ShapeOf(h); err != nil {
		return nil, err
	}
	if r.Commits, err = checker.Commits(evs); err != nil {
		return nil, err
	}
	if r.Ops, err = checker.Ops(evs); err != nil {
		return nil, err
	}
	if len(evs) > 0 {
		r.End = evs[len(evs)-1].T
	}
	r.commitLog()
	if err := r.notes(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Run) commitLog() {
	// The submissions' row versions share one array, each submission its
	// own stretch of it: counted first, nothing regrows.
	counts := map[int64]int{}
	total := 0
	for i := range r.Commits {
		for j := range r.Commits[i].Changes {
			if ch := &r.Commits[i].Changes[j]; ch.Table == "submissions" {
				id, _ := checker.Int(ch.Row()["id"])
				counts[id]++
				total++
			}
		}
	}
	if len(r.Subs) == 0 {
		r.Subs = make(map[int64][]Version, len(counts))
	}
	slab := make([]Version, total)
	// The submission rows one commit touched: before and after it.
	type touched struct {
		id            int64
		hasBefore     bool
		before, after Version
	}
	var cur []touched
	// versionsOf returns the row of sub before the commit (the last change
	// that had one) and after it (the last change), nil when untouched.
	versionsOf := func(sub int64) (before, after *Version) {
		for i := len(cur) - 1; i >= 0; i-- {
			t := &cur[i]
			if t.id != sub {
				continue
			}
			if after == nil {
				v := t.after
				after = &v
			}
			if t.hasBefore {
				b := t.before
				before = &b
				break
			}
		}
		return before, after
	}
	for ci := range r.Commits {
		c := &r.Commits[ci]
		if !slices.Contains(r.dbs, c.Node) {
			r.dbs = append(r.dbs, c.Node)
		}
		cur = cur[:0]
		for j := range c.Changes {
			ch := &c.Changes[j]
			if ch.Table != "submissions" {
				continue
			}
			row := ch.Row()
			id, _ := checker.Int(row["id"])
			t := touched{id: id}
			if ch.Before != nil {
				t.before, t.hasBefore = version(ch.Before), true
			}
			v := version(row)
			v.Event, v.T, v.Deleted = c.Event, c.T, ch.Op == "delete"
			t.after = v
			cur = append(cur, t)
			if ch.Op == "insert" {
				r.Arrived[id] = c.T
				u, _ := checker.Int(ch.After["user_id"])
				pr, _ := checker.Int(ch.After["problem_id"])
				r.Owner[id] = [2]int64{u, pr}
			}
			vs, ok := r.Subs[id]
			if !ok && counts[id] > 0 {
				n := counts[id]
				vs, slab = slab[:0:n], slab[n:]
				counts[id] = 0
			}
			r.Subs[id] = append(vs, v)
		}
		for j := range c.Changes {
			ch := &c.Changes[j]
			row := ch.Row()
			switch {
			case ch.Table == "submission_judgings" && ch.Op == "insert":
				a := Accepted{Event: c.Event, T: c.T, Token: checker.Str(row["lease_token"]), Worker: checker.Str(row["worker_id"]), Verdict: checker.Str(row["verdict"])}
				a.Sub, _ = checker.Int(row["submission_id"])
				a.Seq, _ = checker.Int(row["seq"])
				a.Gen, _ = checker.Int(row["lease_gen"])
				a.Before, a.After = versionsOf(a.Sub)
				r.Accepted = append(r.Accepted, a)
			case ch.Table == "submission_judgings":
				e := HistoryEdit{Event: c.Event, T: c.T, Op: ch.Op}
				e.Sub, _ = checker.Int(row["submission_id"])
				e.Seq, _ = checker.Int(row["seq"])
				r.HistoryEdits = append(r.HistoryEdits, e)
			case ch.Table == "first_ac" && ch.Op == "insert":
				r.FirstAC = append(r.FirstAC, row)
			case ch.Table == "users":
				id, _ := checker.Int(row["id"])
				r.XP[id], _ = checker.Int(row["xp"])
			case ch.Table == "claims" && ch.Op == "insert":
				cr := ClaimRecord{Event: c.Event, T: c.T, Worker: checker.Str(row["worker_id"]), RequestID: checker.Str(row["request_id"]), Token: checker.Str(row["lease_token"])}
				cr.Sub, _ = checker.Int(row["submission_id"])
				r.Claims = append(r.Claims, cr)
			}
		}
	}
}

func (r *Run) notes() error {
	type judgingKey struct{ worker, token string }
	type resultKey struct {
		worker string
		sub    int64
		token  string
	}
	judging := map[judgingKey]*Judging{}
	results := map[resultKey]*ResultLife{}
	open := func(m map[string][]Interval, node string, t int64) {
		ivs := m[node]
		if len(ivs) > 0 && ivs[len(ivs)-1].End == 0 {
			return
		}
		m[node] = append(ivs, Interval{Start: t})
	}
	closeIv := func(m map[string][]Interval, node string, t int64) {
		ivs := m[node]
		if len(ivs) > 0 && ivs[len(ivs)-1].End == 0 {
			ivs[len(ivs)-1].End = t
		}
	}
	for _, e := range r.Events {
		switch e.Kind {
		case "crash":
			open(r.Down, e.Node, e.T)
			if len(r.Up[e.Node]) == 0 {
				// No start recorded (a history that begins with the
				// node running): it was up from the start.
				r.Up[e.Node] = []Interval{{Start: 0, End: e.T}}
			}
			closeIv(r.Up, e.Node, e.T)
			closeIv(r.Paused, e.Node, e.T)
		case "restart", "start":
			closeIv(r.Down, e.Node, e.T)
			open(r.Up, e.Node, e.T)
		case "fault":
			if !e.HasData() {
				continue // a note about a fault (a burst ended), not an action
			}
			f, err := checker.Decode[FaultAt](e)
			if err != nil {
				return err
			}
			f.Event, f.T = e.Seq, e.T
			r.Faults = append(r.Faults, f)
			switch f.Kind {
			case "pause":
				open(r.Paused, f.Node, e.T)
			case "resume":
				closeIv(r.Paused, f.Node, e.T)
			case "heal-all":
				r.HealAt = e.T
				for n := range r.Paused {
					closeIv(r.Paused, n, e.T)
				}
			}
		case hist.KindJudge:
			j, err := checker.Decode[hist.Judge](e)
			if err != nil {
				return err
			}
			k := judgingKey{j.Worker, j.Token}
			switch j.Phase {
			case hist.JudgeStart:
				jj := &Judging{Worker: j.Worker, WorkerID: j.WorkerID, Sub: j.Sub, Token: j.Token, Gen: j.Gen, Start: e.T, StartEv: e.Seq}
				judging[k] = jj
				r.Judgings = append(r.Judgings, jj)
			case hist.JudgeEnd:
				if jj := judging[k]; jj != nil {
					jj.End, jj.Verdict, jj.EndEv = e.T, j.Verdict, e.Seq
				}
			case hist.JudgeAbandon:
				if jj := judging[k]; jj != nil {
					jj.Abandoned = e.T
				}
			}
		case hist.KindResult:
			x, err := checker.Decode[hist.Result](e)
			if err != nil {
				return err
			}
			k := resultKey{x.Worker, x.Sub, x.Token}
			switch x.Phase {
			case hist.ResultSaved:
				if _, seen := results[k]; !seen {
					rl := &ResultLife{Worker: x.Worker, WorkerID: x.WorkerID, Sub: x.Sub, Token: x.Token, Verdict: x.Verdict, Durable: x.Durable, Saved: e.T, SavedEv: e.Seq}
					results[k] = rl
					r.Results = append(r.Results, rl)
				}
			case hist.ResultAnswered:
				if rl := results[k]; rl != nil && rl.Answered == 0 {
					rl.Answered, rl.Code = e.T, x.Code
				}
			case hist.ResultRetry:
				if rl := results[k]; rl != nil {
					rl.Retries++
				}
			}
		case hist.KindAlert:
			a, err := checker.Decode[hist.Alert](e)
			if err != nil {
				return err
			}
			r.Alerts = append(r.Alerts, AlertAt{Event: e.Seq, T: e.T, Alert: a})
		}
	}
	return nil
}

// SubIDs returns the submission ids in order.
// The slice is computed once per run and shared: do not modify it.
func (r *Run) SubIDs() []int64 {
	if r.ids != nil || len(r.Subs) == 0 {
		return r.ids
	}
	ids := make([]int64, 0, len(r.Subs))
	for id := range r.Subs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	r.ids = ids
	return ids
}

// Final returns a submission's last row version.
func (r *Run) Final(id int64) Version {
	vs := r.Subs[id]
	return vs[len(vs)-1]
}

// Terminal reports whether a status is terminal.
func Terminal(status string) bool { return status != "" && status != "pending" && status != "judging" }

// DecidedAt returns when a submission last entered a terminal state (0 if it
// is not terminal at the end).
func (r *Run) DecidedAt(id int64) int64 {
	vs := r.Subs[id]
	if !Terminal(vs[len(vs)-1].Status) {
		return 0
	}
	t := vs[len(vs)-1].T
	for i := len(vs) - 1; i >= 0 && Terminal(vs[i].Status); i-- {
		t = vs[i].T
	}
	return t
}

// DownAt reports whether a node was crashed (or paused) at time t.
func (r *Run) DownAt(node string, t int64) bool {
	for _, iv := range r.Down[node] {
		if iv.covers(t) {
			return true
		}
	}
	for _, iv := range r.Paused[node] {
		if iv.covers(t) {
			return true
		}
	}
	return false
}

// FailedDuring reports whether a node crashed or was paused within [a, b].
func (r *Run) FailedDuring(node string, a, b int64) bool {
	for _, m := range []map[string][]Interval{r.Down, r.Paused} {
		for _, iv := range m[node] {
			end := iv.End
			if end == 0 {
				end = r.End + 1
			}
			if iv.Start <= b && end >= a {
				return true
			}
		}
	}
	return false
}
