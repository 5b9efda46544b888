package judge

import (
	"fmt"

	"github.com/fencesim/fencesim/clock"
)

// Op is an HTTP endpoint of the arbiter.
type Op string

// The endpoints.
const (
	OpClaim     Op = "claim"     // a worker asks for work; the request hangs until paired (A.4)
	OpHeartbeat Op = "heartbeat" // a worker confirms or extends its lease
	OpSubmit    Op = "submit"    // a worker reports a verdict under a lease
	OpProbe     Op = "probe"     // the monitor reads the dispatch loop's liveness
)

// Path is the endpoint's request line, as crash points and timers name it.
func (o Op) Path() string {
	switch o {
	case OpClaim:
		return "POST /claim"
	case OpHeartbeat:
		return "POST /heartbeat"
	case OpSubmit:
		return "POST /submit"
	}
	return "GET /" + string(o)
}

// HTTP status codes used by the design.
const (
	Code200 = 200 // OK
	Code204 = 204 // no work within the claim hold
	Code410 = 410 // Gone: the lease (token) is not valid
	Code500 = 500 // an error answer (only under duplicate-is-error)
	Code503 = 503 // the database is unreachable, or this arbiter is not the leader
)

// Request is an HTTP request from a worker or the monitor. No is the sender's
// request number, echoed by the reply; retries of one logical request carry
// new numbers but the same RequestID (claims) or the same Token (submits).
type Request struct {
	No        uint64
	Op        Op
	Worker    string // the worker_id
	Proc      string // the sending process (a sandbox, a replacement): its host name; empty when it is the worker_id
	Home      bool   // the worker is a home machine (dispatch prefers them)
	RequestID string // claim
	Sub       int64  // heartbeat, submit
	Token     string // heartbeat, submit
	Gen       int64  // submit: the generation the worker judged under
	Verdict   string // submit
}

func (r Request) String() string {
	worker := r.Worker
	if r.Proc != "" {
		worker += " proc=" + r.Proc
	}
	switch r.Op {
	case OpClaim:
		return fmt.Sprintf("POST /claim no=%d worker=%s request_id=%s", r.No, worker, r.RequestID)
	case OpHeartbeat:
		return fmt.Sprintf("POST /heartbeat no=%d worker=%s sub=%d token=%s", r.No, worker, r.Sub, r.Token)
	case OpSubmit:
		return fmt.Sprintf("POST /submit no=%d worker=%s sub=%d token=%s gen=%d verdict=%s", r.No, worker, r.Sub, r.Token, r.Gen, r.Verdict)
	}
	return fmt.Sprintf("GET /%s no=%d", r.Op, r.No)
}

// Lease is what a successful claim returns.
type Lease struct {
	Sub     int64  `json:"sub"`
	Token   string `json:"token"`
	Gen     int64  `json:"gen"`
	User    int64  `json:"user"`
	Problem int64  `json:"problem"`
}

// ProbeInfo is the dispatch loop's liveness as the arbiter reports it.
type ProbeInfo struct {
	Leader    bool       `json:"leader"`
	Waiting   int        `json:"waiting"`    // claims hanging now
	Claimable bool       `json:"claimable"`  // the last look at the queue found pending work
	LastRound clock.Time `json:"last_round"` // when a full dispatch round last completed
	LastPair  clock.Time `json:"last_pair"`  // when a claim was last paired with a submission
}

// Reply answers a Request.
type Reply struct {
	No        uint64
	Op        Op
	Code      int
	RequestID string    // claim
	Leases    []Lease   // claim (200): one, or up to claim_batch
	Sub       int64     // heartbeat, submit
	Token     string    // heartbeat, submit
	Probe     ProbeInfo // probe
	Why       string    // for 503/410/500: a short reason
}

// ReplyKey names the request a reply answers (sim.Keyed): its number.
func (r Reply) ReplyKey() uint64 { return r.No }

func (r Reply) String() string {
	s := fmt.Sprintf("%d %s no=%d", r.Code, r.Op, r.No)
	switch {
	case r.Op == OpClaim && r.Code == Code200:
		s += " request_id=" + r.RequestID
		for _, l := range r.Leases {
			s += fmt.Sprintf(" sub=%d token=%s gen=%d", l.Sub, l.Token, l.Gen)
		}
	case r.Op == OpClaim:
		s += " request_id=" + r.RequestID
	case r.Op == OpHeartbeat || r.Op == OpSubmit:
		s += fmt.Sprintf(" sub=%d token=%s", r.Sub, r.Token)
	case r.Op == OpProbe:
		s += fmt.Sprintf(" leader=%v waiting=%d claimable=%v last_round=%s last_pair=%s", r.Probe.Leader, r.Probe.Waiting, r.Probe.Claimable, r.Probe.LastRound, r.Probe.LastPair)
	}
	if r.Why != "" {
		s += " (" + r.Why + ")"
	}
	return s
}
