package hist

import (
	"fmt"
	"strconv"
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
func (c Call) String() string { return string(c.AppendString(make([]byte, 0, 96))) }

// AppendString appends the call's String to b.
func (c Call) AppendString(b []byte) []byte {
	switch c.Op {
	case "claim", "heartbeat", "submit":
		b = append(b, "POST /"...)
		b = append(b, c.Op...)
		b = append(b, " no="...)
		b = strconv.AppendUint(b, c.No, 10)
		b = append(b, " worker="...)
		if c.WorkerID != "" {
			b = append(b, c.WorkerID...)
			b = append(b, " proc="...)
		}
		b = append(b, c.Client...)
		switch c.Op {
		case "claim":
			b = append(b, " request_id="...)
			return append(b, c.RequestID...)
		case "heartbeat":
			return appendSubToken(b, c.Sub, c.Token)
		}
		b = appendSubToken(b, c.Sub, c.Token)
		b = append(b, " gen="...)
		b = strconv.AppendInt(b, c.Gen, 10)
		b = append(b, " verdict="...)
		return append(b, c.Verdict...)
	case "read", "rejudge":
		b = append(b, c.Op...)
		b = append(b, ' ')
		return strconv.AppendInt(b, c.Sub, 10)
	}
	b = append(b, c.ID...)
	b = append(b, ' ')
	b = append(b, c.Op...)
	b = append(b, ' ')
	b = append(b, orNone(c.Key)...)
	b = append(b, " -> "...)
	return append(b, c.To...)
}

// appendSubToken appends " sub=<sub> token=<token>".
func appendSubToken(b []byte, sub int64, token string) []byte {
	b = append(b, " sub="...)
	b = strconv.AppendInt(b, sub, 10)
	b = append(b, " token="...)
	return append(b, token...)
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
func (r Return) String() string { return string(r.AppendString(make([]byte, 0, 96))) }

// AppendString appends the reply's String to b.
func (r Return) AppendString(b []byte) []byte {
	switch r.Op {
	case "claim", "heartbeat", "submit":
		b = strconv.AppendInt(b, int64(r.Code), 10)
		b = append(b, ' ')
		b = append(b, r.Op...)
		b = append(b, " no="...)
		b = strconv.AppendUint(b, r.No, 10)
		switch {
		case r.Op == "claim" && r.Code == 200:
			b = append(b, " request_id="...)
			b = append(b, r.RequestID...)
			if len(r.Leases) > 1 {
				for _, l := range r.Leases {
					b = appendSubToken(b, l.Sub, l.Token)
					b = append(b, " gen="...)
					b = strconv.AppendInt(b, l.Gen, 10)
				}
			} else {
				b = appendSubToken(b, r.Sub, r.Token)
				b = append(b, " gen="...)
				b = strconv.AppendInt(b, r.Gen, 10)
			}
		case r.Op == "claim":
			b = append(b, " request_id="...)
			b = append(b, r.RequestID...)
		default:
			b = appendSubToken(b, r.Sub, r.Token)
		}
		if r.Why != "" {
			b = append(b, " ("...)
			b = append(b, r.Why...)
			b = append(b, ')')
		}
		return b
	case "read":
		b = append(b, "read "...)
		b = strconv.AppendInt(b, r.Sub, 10)
		b = append(b, " -> "...)
		b = strconv.AppendInt(b, int64(r.Code), 10)
		b = append(b, ' ')
		b = append(b, r.Status...)
		b = append(b, " gen "...)
		return strconv.AppendInt(b, r.Gen, 10)
	case "rejudge":
		b = append(b, "rejudge "...)
		b = strconv.AppendInt(b, r.Sub, 10)
		b = append(b, " -> "...)
		return strconv.AppendInt(b, int64(r.Code), 10)
	}
	b = append(b, r.ID...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(r.Code), 10)
	b = append(b, ' ')
	return append(b, r.Value...)
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
