package hist

import (
	"fmt"
	"strings"
)

// Event kinds written by models.
const (
	KindCall   = "call"   // Call: a client invoked an operation
	KindReturn = "return" // Return: the operation's reply reached the client
	KindJudge  = "judge"  // Judge: a worker's judging started, ended or was abandoned
	KindResult = "result" // Result: a worker's result on disk: saved, answered, lost
	KindAlert  = "alert"  // Alert: the monitor raised an alert
	KindState  = "state"  // State: a node's notable state change (leader, db up/down, grace, sweep)
	KindCommit = "commit" // written by model/db: one committed transaction
	KindDB     = "db"     // written by model/db: one statement and its result
)

// Call is an operation invoked by a client. ID is unique per run; an
// operation with no Return has an unknown outcome (its reply was lost).
type Call struct {
	ID        string `json:"id"`
	Client    string `json:"client"`
	Op        string `json:"op"`
	Sub       int64  `json:"sub,omitempty"`
	Token     string `json:"token,omitempty"`
	Gen       int64  `json:"gen,omitempty"`
	RequestID string `json:"request_id,omitempty"`
	Episode   string `json:"episode,omitempty"` // the logical operation its retries belong to (a claim's first request_id)
	Verdict   string `json:"verdict,omitempty"`
	Key       string `json:"key,omitempty"` // system B: the idempotency key
	// WorkerID is the worker_id the calling process acts under, when it is
	// not the process's own name (several sandbox processes, or a zombie
	// and its replacement, share one worker_id). Client is always the
	// process.
	WorkerID string `json:"worker_id,omitempty"`

	// Text only (the trace's data leaves them out; the event's text
	// carries them): No is system A's request number, To the handler a
	// system B delivery goes to.
	No uint64 `json:"-"`
	To string `json:"-"`
}

// Kind returns KindCall.
func (Call) Kind() string { return KindCall }

// String is the call's text in a trace. System A's worker requests read as
// the HTTP request (model/judge's Request), its web reads and operator
// rejudges as the operation and the submission; any other call is a
// system B delivery: id, operation, event key and handler.
func (c Call) String() string {
	switch c.Op {
	case "claim", "heartbeat", "submit":
		worker := c.Client
		if c.WorkerID != "" {
			worker = c.WorkerID + " proc=" + c.Client
		}
		switch c.Op {
		case "claim":
			return fmt.Sprintf("POST /claim no=%d worker=%s request_id=%s", c.No, worker, c.RequestID)
		case "heartbeat":
			return fmt.Sprintf("POST /heartbeat no=%d worker=%s sub=%d token=%s", c.No, worker, c.Sub, c.Token)
		}
		return fmt.Sprintf("POST /submit no=%d worker=%s sub=%d token=%s gen=%d verdict=%s", c.No, worker, c.Sub, c.Token, c.Gen, c.Verdict)
	case "read", "rejudge":
		return fmt.Sprintf("%s %d", c.Op, c.Sub)
	}
	return fmt.Sprintf("%s %s %s -> %s", c.ID, c.Op, orNone(c.Key), c.To)
}

// Return is the reply of a Call.
type Return struct {
	ID      string `json:"id"`
	Code    int    `json:"code"`
	Sub     int64  `json:"sub,omitempty"`
	Token   string `json:"token,omitempty"`
	Gen     int64  `json:"gen,omitempty"`
	User    int64  `json:"user,omitempty"`
	Problem int64  `json:"problem,omitempty"`
	Status  string `json:"status,omitempty"`
	Value   string `json:"value,omitempty"` // system B: the stored answer
	// Leases: a claim answered with more than one lease (claim_batch > 1)
	// lists every one of them here; the first is also in Sub, Token, Gen,
	// User and Problem.
	Leases []Lease `json:"leases,omitempty"`

	// Text only (the trace's data leaves them out; the event's text
	// carries them): the operation of the call it answers, and for system
	// A's worker requests the HTTP reply's request number, claim
	// request_id and reason.
	Op        string `json:"-"`
	No        uint64 `json:"-"`
	RequestID string `json:"-"`
	Why       string `json:"-"`
}

// Kind returns KindReturn.
func (Return) Kind() string { return KindReturn }

// String is the reply's text in a trace: for system A's worker requests
// the HTTP reply (model/judge's Reply), for its reads and rejudges the
// operation and its answer, for any other call (system B's deliveries) the
// call's id, the code and the stored answer.
func (r Return) String() string {
	switch r.Op {
	case "claim", "heartbeat", "submit":
		var b strings.Builder
		fmt.Fprintf(&b, "%d %s no=%d", r.Code, r.Op, r.No)
		switch {
		case r.Op == "claim" && r.Code == 200:
			b.WriteString(" request_id=" + r.RequestID)
			if len(r.Leases) > 1 {
				for _, l := range r.Leases {
					fmt.Fprintf(&b, " sub=%d token=%s gen=%d", l.Sub, l.Token, l.Gen)
				}
			} else {
				fmt.Fprintf(&b, " sub=%d token=%s gen=%d", r.Sub, r.Token, r.Gen)
			}
		case r.Op == "claim":
			b.WriteString(" request_id=" + r.RequestID)
		default:
			fmt.Fprintf(&b, " sub=%d token=%s", r.Sub, r.Token)
		}
		if r.Why != "" {
			b.WriteString(" (" + r.Why + ")")
		}
		return b.String()
	case "read":
		return fmt.Sprintf("read %d -> %d %s gen %d", r.Sub, r.Code, r.Status, r.Gen)
	case "rejudge":
		return fmt.Sprintf("rejudge %d -> %d", r.Sub, r.Code)
	}
	return fmt.Sprintf("%s %d %s", r.ID, r.Code, r.Value)
}

// Lease is one lease of a claim's answer.
type Lease struct {
	Sub     int64  `json:"sub"`
	Token   string `json:"token"`
	Gen     int64  `json:"gen"`
	User    int64  `json:"user,omitempty"`
	Problem int64  `json:"problem,omitempty"`
}

// Judge phases.
const (
	JudgeStart   = "start"
	JudgeEnd     = "end"
	JudgeAbandon = "abandon" // the worker dropped the job (410 on a heartbeat)
)

// Judge is a worker's judging of one lease.
type Judge struct {
	Worker   string `json:"worker"`              // the process (node) that judges
	WorkerID string `json:"worker_id,omitempty"` // its worker_id, when not its name
	Sub      int64  `json:"sub"`
	Token    string `json:"token"`
	Gen      int64  `json:"gen"`
	Phase    string `json:"phase"`
	Verdict  string `json:"verdict,omitempty"`
}

// Kind returns KindJudge.
func (Judge) Kind() string { return KindJudge }

// String is the judging's text in a trace: its phase, lease and verdict
// (empty but for the end).
func (j Judge) String() string {
	return fmt.Sprintf("%s sub=%d token=%s gen=%d %s", j.Phase, j.Sub, j.Token, j.Gen, j.Verdict)
}

// Result phases.
const (
	ResultSaved    = "saved"    // written to the worker's disk (or memory, under worker-no-disk)
	ResultAnswered = "answered" // answered 200 or 410 and removed
	ResultRetry    = "retry"    // a submit attempt failed (503, 500 or no reply); it will be retried
)

// Result is a judged result on its way to the arbiter.
type Result struct {
	Worker   string `json:"worker"`              // the process (node) holding the result
	WorkerID string `json:"worker_id,omitempty"` // its worker_id, when not its name
	Sub      int64  `json:"sub"`
	Token    string `json:"token"`
	Gen      int64  `json:"gen"`
	Verdict  string `json:"verdict"`
	Phase    string `json:"phase"`
	Code     int    `json:"code,omitempty"`
	Durable  bool   `json:"durable,omitempty"` // saved on disk (survives a crash)
}

// Kind returns KindResult.
func (Result) Kind() string { return KindResult }

// String is the result's text in a trace.
func (r Result) String() string {
	return fmt.Sprintf("%s sub=%d token=%s verdict=%s code=%d", r.Phase, r.Sub, r.Token, r.Verdict, r.Code)
}

// Alert is raised by a monitor.
type Alert struct {
	Monitor string `json:"monitor"`
	Target  string `json:"target"`
	Reason  string `json:"reason"`
}

// Kind returns KindAlert.
func (Alert) Kind() string { return KindAlert }

// String is the alert's text in a trace: its target and reason.
func (a Alert) String() string { return a.Target + ": " + a.Reason }

// State is a notable state change of a node.
type State struct {
	What  string `json:"what"` // leader, follower, db-down, db-up, grace, sweep, stall, unstall
	Count int    `json:"count,omitempty"`
}

// Kind returns KindState.
func (State) Kind() string { return KindState }

// String is the state change's text in a trace.
func (s State) String() string { return fmt.Sprintf("%s %d", s.What, s.Count) }
