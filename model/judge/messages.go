package judge

import (
	"strconv"

	"time"
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

func (r Request) String() string { return string(r.AppendString(make([]byte, 0, 96))) }

// AppendString appends the request's String to b (traces.StringAppender:
// a trace renders every message, without fmt).
func (r Request) AppendString(b []byte) []byte {
	worker := func(b []byte) []byte {
		b = append(b, " worker="...)
		b = append(b, r.Worker...)
		if r.Proc != "" {
			b = append(b, " proc="...)
			b = append(b, r.Proc...)
		}
		return b
	}
	no := func(b []byte, path string) []byte {
		b = append(b, path...)
		b = append(b, " no="...)
		return strconv.AppendUint(b, r.No, 10)
	}
	switch r.Op {
	case OpClaim:
		b = worker(no(b, "POST /claim"))
		b = append(b, " request_id="...)
		return append(b, r.RequestID...)
	case OpHeartbeat:
		b = worker(no(b, "POST /heartbeat"))
		return appendSubToken(b, r.Sub, r.Token)
	case OpSubmit:
		b = worker(no(b, "POST /submit"))
		b = appendSubToken(b, r.Sub, r.Token)
		b = append(b, " gen="...)
		b = strconv.AppendInt(b, r.Gen, 10)
		b = append(b, " verdict="...)
		return append(b, r.Verdict...)
	}
	b = append(b, "GET /"...)
	return no(b, string(r.Op))
}

// appendSubToken appends " sub=S token=T".
func appendSubToken(b []byte, sub int64, token string) []byte {
	b = append(b, " sub="...)
	b = strconv.AppendInt(b, sub, 10)
	b = append(b, " token="...)
	return append(b, token...)
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
	Leader    bool          `json:"leader"`
	Waiting   int           `json:"waiting"`   // claims hanging now
	Claimable bool          `json:"claimable"` // the last look at the queue found pending work
	RoundAge  time.Duration `json:"round_age"` // since a full dispatch round last completed (the arbiter's monotonic clock)
	Unpaired  time.Duration `json:"unpaired"`  // how long a worker has waited with work claimable and nothing paired (0: nobody waits, or nothing is claimable)
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

// NotLeader is the reason of a 503 from an arbiter that does not hold the
// leader lock: another arbiter may serve the request.
const NotLeader = "not the leader"

// ReplyKey names the request a reply answers (sim.Keyed): its number.
func (r Reply) ReplyKey() uint64 { return r.No }

func (r Reply) String() string { return string(r.AppendString(make([]byte, 0, 96))) }

// AppendString appends the reply's String to b (as Request's).
func (r Reply) AppendString(b []byte) []byte {
	b = strconv.AppendInt(b, int64(r.Code), 10)
	b = append(b, ' ')
	b = append(b, r.Op...)
	b = append(b, " no="...)
	b = strconv.AppendUint(b, r.No, 10)
	switch {
	case r.Op == OpClaim && r.Code == Code200:
		b = append(b, " request_id="...)
		b = append(b, r.RequestID...)
		for _, l := range r.Leases {
			b = appendSubToken(b, l.Sub, l.Token)
			b = append(b, " gen="...)
			b = strconv.AppendInt(b, l.Gen, 10)
		}
	case r.Op == OpClaim:
		b = append(b, " request_id="...)
		b = append(b, r.RequestID...)
	case r.Op == OpHeartbeat || r.Op == OpSubmit:
		b = appendSubToken(b, r.Sub, r.Token)
	case r.Op == OpProbe:
		b = append(b, " leader="...)
		b = strconv.AppendBool(b, r.Probe.Leader)
		b = append(b, " waiting="...)
		b = strconv.AppendInt(b, int64(r.Probe.Waiting), 10)
		b = append(b, " claimable="...)
		b = strconv.AppendBool(b, r.Probe.Claimable)
		b = append(b, " round_age="...)
		b = append(b, r.Probe.RoundAge.String()...)
		b = append(b, " unpaired="...)
		b = append(b, r.Probe.Unpaired.String()...)
	}
	if r.Why != "" {
		b = append(b, " ("...)
		b = append(b, r.Why...)
		b = append(b, ')')
	}
	return b
}
