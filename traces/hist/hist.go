package hist

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

// Alert is raised by a monitor.
type Alert struct {
	Monitor string `json:"monitor"`
	Target  string `json:"target"`
	Reason  string `json:"reason"`
}

// State is a notable state change of a node.
type State struct {
	What  string `json:"what"` // leader, follower, db-down, db-up, grace, sweep, stall, unstall
	Count int    `json:"count,omitempty"`
}
