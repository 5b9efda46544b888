package judge

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/fencesim/fencesim/checker"
)

// The sequential specification of one submission's lease, for porcupine.
//
// State: the generation, the current token, the status, the tokens that are
// void (once void, never valid again: A.0 principle 3) and the tokens that
// decided a result. Lease expiry is invisible to clients, so in the client's
// view a 410 is always a legal answer, and it voids the token for good. A
// reply that never came, or a 503, leaves the outcome unknown: the model
// accepts both "applied" and "not applied" (a nondeterministic step), as
// etcd's robustness models do. In the oracle's view the commit log settles
// those outcomes and adds every grant and every sweep as an instantaneous
// operation.
//
// Each token belongs to the one worker process (a client) it was first
// seen at: the claim answered with it, or, in the oracle's view, where
// grants come from the database, its first heartbeat or submit. Any
// operation of another process with that token is illegal, whatever its
// answer: a second owner. A retried claim of the same process announces
// its own token again; the database's own transitions (client "db") own
// nothing.

// LeaseIn is an operation's input.
type LeaseIn struct {
	Op      string // claim, heartbeat, submit, rejudge, read (oracle view); oracle only: expire, fail (to system_error), hold and settle (a legacy worker's claim and verdict)
	Client  string
	Token   string
	Gen     int64
	Verdict string
	// Unseen: an operation in the client's view, where transitions the
	// client cannot see (a sweep, a legacy worker's verdict, a grant whose
	// answer never came) may have happened: a rejudge's success is
	// accepted from any state (the row may have become terminal), and a
	// read may see a row moved within its generation or a later one.
	Unseen bool
}

// LeaseOut is an operation's output: an HTTP code, or 0 for unknown; a
// read also returns the status and generation it saw.
type LeaseOut struct {
	Code   int
	Status string
	Gen    int64
}

type leaseState struct {
	Gen     int64
	Token   string
	Status  string // pending, judging, or a terminal status
	Void    string // sorted set, "|a|b|"
	Decided string // sorted set of "token=verdict"
	Owners  string // sorted set of "token=process": the process each token belongs to
}

func has(set, x string) bool { return strings.Contains(set, "|"+x+"|") }

// add returns the sorted set with x in it, x inserted in its place (one
// allocation: the step of a lease model runs in porcupine's inner loop).
func add(set, x string) string {
	if x == "" || has(set, x) {
		return set
	}
	if set == "" {
		return "|" + x + "|"
	}
	i := 1 // the start of an item, after its '|'
	for i < len(set) {
		j := i + strings.IndexByte(set[i:], '|')
		if set[i:j] > x {
			break
		}
		i = j + 1
	}
	return set[:i] + x + "|" + set[i:]
}

func (s leaseState) valid(t string) bool {
	return t != "" && s.Status == "judging" && s.Token == t && !has(s.Void, t)
}

func (s leaseState) decided(t string) bool { return strings.Contains(s.Decided, "|"+t+"=") }

// owner returns the process a token belongs to ("" when none yet).
func (s leaseState) owner(t string) string {
	i := strings.Index(s.Owners, "|"+t+"=")
	if i < 0 {
		return ""
	}
	rest := s.Owners[i+len(t)+2:]
	return rest[:strings.IndexByte(rest, '|')]
}

// own makes the operation's token owned by its client: bound when it
// binds it now, not ok when another process owns it. The database's
// transitions and operations without a token own nothing.
func (s *leaseState) own(in *LeaseIn) (bound, ok bool) {
	if in.Token == "" || in.Client == "db" {
		return false, true
	}
	switch s.owner(in.Token) {
	case in.Client:
		return false, true
	case "":
		s.Owners = add(s.Owners, in.Token+"="+in.Client)
		return true, true
	}
	return false, false
}

// apply makes the state the one after an operation that succeeded (200),
// or reports false when a 200 is illegal.
func (s *leaseState) apply(in *LeaseIn) bool {
	switch in.Op {
	case "claim":
		switch {
		case in.Gen < s.Gen:
			// A retried claim re-announces the lease it was granted earlier
			// (idempotent claims, PA4); a newer generation has voided it.
			s.Void = add(s.Void, in.Token)
			return true
		case in.Gen == s.Gen:
			return in.Token == s.Token // the same grant announced again
		case Terminal(s.Status):
			return false
		}
		s.Void = add(s.Void, s.Token)
		s.Token, s.Gen, s.Status = in.Token, in.Gen, "judging"
		return true
	case "heartbeat":
		return s.valid(in.Token)
	case "submit":
		if s.decided(in.Token) {
			return true // a duplicate of the deciding submit
		}
		if !s.valid(in.Token) {
			return false
		}
		s.Status = in.Verdict
		s.Decided = add(s.Decided, in.Token+"="+in.Verdict)
		return true
	case "rejudge":
		if !Terminal(s.Status) && !in.Unseen {
			return false
		}
		s.Void = add(s.Void, s.Token)
		s.Token, s.Status = "", "pending"
		s.Gen++
		return true
	case "expire", "fail":
		if s.Status != "judging" {
			return false
		}
		s.Void = add(s.Void, s.Token)
		s.Status = "pending"
		if in.Op == "fail" {
			s.Status = "system_error"
		}
		return true
	case "settle":
		if Terminal(s.Status) {
			return false
		}
		s.Status = in.Verdict
		return true
	case "hold":
		if s.Status != "pending" {
			return false
		}
		s.Status, s.Token = "judging", ""
		return true
	}
	return false
}

// refuse makes the state the one after a refusal (410), or reports false
// when a refusal is illegal.
func (s *leaseState) refuse(in *LeaseIn) bool {
	switch in.Op {
	case "heartbeat":
		s.Void = add(s.Void, in.Token)
		return true
	case "submit":
		if s.decided(in.Token) {
			return false // a duplicate of the deciding token must get the first answer
		}
		s.Void = add(s.Void, in.Token)
		return true
	case "rejudge":
		return !Terminal(s.Status)
	}
	return false
}

var leaseModel = porcupine.NondeterministicModel{
	Init: func() []any { return []any{leaseState{Status: "pending"}} },
	Step: func(state, input, output any) []any {
		s, in, out := state.(leaseState), input.(LeaseIn), output.(LeaseOut)
		if in.Op == "read" {
			// A read changes nothing; it must see the current status and
			// generation (404: nothing has happened to the row yet). In
			// the client's view (Unseen) the transitions it cannot see
			// may have happened: a sweep or a legacy worker's verdict
			// moves a row that is not terminal within its generation, and
			// a grant whose answer the client never had starts a later
			// one. What no unseen transition explains is a read that goes
			// back: an older generation, or another state of a decided
			// one (a stale cache's answer).
			ok := out.Code == 0 || out.Code == 503 ||
				(out.Code == 200 && out.Status == s.Status && out.Gen == s.Gen) ||
				(out.Code == 404 && s == leaseState{Status: "pending"}) ||
				(in.Unseen && out.Code == 200 && (out.Gen > s.Gen || (out.Gen == s.Gen && !Terminal(s.Status))))
			if ok {
				return []any{state}
			}
			return nil
		}
		// The process an operation came from must own its token,
		// whatever the answer (a fact of the call, not of its effect).
		bound, ok := s.own(&in)
		if !ok {
			return nil
		}
		// A state that does not change is passed on in its box (states
		// are values: nobody changes a box).
		kept := state
		if bound {
			kept = s
		}
		n := s
		switch out.Code {
		case 200:
			if !n.apply(&in) {
				return nil
			}
		case 410:
			if !n.refuse(&in) {
				return nil
			}
		case 0, 503: // unknown outcome: applied or not
			if n.apply(&in) && n != s {
				return []any{kept, n}
			}
			return []any{kept}
		default:
			return nil
		}
		if n == s {
			return []any{kept}
		}
		return []any{n}
	},
	Equal: func(a, b any) bool { return a.(leaseState) == b.(leaseState) },
	DescribeOperation: func(input, output any) string {
		in, out := input.(LeaseIn), output.(LeaseOut)
		code := "?"
		if out.Code != 0 {
			code = fmt.Sprint(out.Code)
		}
		switch in.Op {
		case "read":
			return fmt.Sprintf("%s read -> %s gen %d (%s)", in.Client, out.Status, out.Gen, code)
		case "claim":
			return fmt.Sprintf("%s claim -> token %s gen %d (%s)", in.Client, in.Token, in.Gen, code)
		case "submit":
			return fmt.Sprintf("%s submit(%s, %s) -> %s", in.Client, in.Token, in.Verdict, code)
		}
		return fmt.Sprintf("%s %s(%s) -> %s", in.Client, in.Op, in.Token, code)
	},
	DescribeState: func(state any) string {
		s := state.(leaseState)
		return fmt.Sprintf("gen %d token %q %s void%s decided%s owners%s", s.Gen, s.Token, s.Status, s.Void, s.Decided, s.Owners)
	},
}

// LeaseModel is the porcupine model of one submission's lease.
func LeaseModel() porcupine.Model {
	m := leaseModel.ToModel()
	// The converted model's state is a set of lease states; its hash must
	// not depend on their order.
	m.Hash = func(state any) uint64 {
		// Each state's FNV-1a of "gen|token|status|void|decided|owners",
		// as hash/fnv's New64a would compute it, without allocating.
		var sum uint64
		var buf [20]byte
		for _, x := range state.([]any) {
			s := x.(leaseState)
			h := fnvBytes(fnvOffset64, strconv.AppendInt(buf[:0], s.Gen, 10))
			h = fnvString(fnvString(h, "|"), s.Token)
			h = fnvString(fnvString(h, "|"), s.Status)
			h = fnvString(fnvString(h, "|"), s.Void)
			h = fnvString(fnvString(h, "|"), s.Decided)
			h = fnvString(fnvString(h, "|"), s.Owners)
			sum ^= h
		}
		return sum
	}
	return m
}

// FNV-1a, 64 bits (hash/fnv's New64a).
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

func fnvBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime64
	}
	return h
}

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	return h
}

// View selects how unknown outcomes are treated.
type View int

// The two views of PA3.
const (
	ClientView View = iota // a lost reply is an unknown outcome
	OracleView             // the commit log settles outcomes and adds grants and sweeps
)

// Boxed outputs of the common answers (a code alone), shared by every
// operation that has them: porcupine only reads its outputs.
var (
	out0   any = LeaseOut{}
	out200 any = LeaseOut{Code: 200}
	out404 any = LeaseOut{Code: 404}
	out410 any = LeaseOut{Code: 410}
	out503 any = LeaseOut{Code: 503}
)

// boxOut returns lo as an operation's output.
func boxOut(lo LeaseOut) any {
	if lo.Status == "" && lo.Gen == 0 {
		switch lo.Code {
		case 0:
			return out0
		case 200:
			return out200
		case 404:
			return out404
		case 410:
			return out410
		case 503:
			return out503
		}
	}
	return lo
}

// History returns the per-submission porcupine histories of a run.
func (r *Run) History(view View) map[int64][]porcupine.Operation {
	// Two passes over the same operations: the first counts each
	// submission's, the second fills their slices, cut from one array.
	decidedAt, rejudged := r.settled(view)
	counts := map[int64]int{}
	total := 0
	r.history(view, decidedAt, rejudged, func(sub int64, _ string, _ LeaseIn, _ LeaseOut, _, _ int64, _ [2]uint64) {
		counts[sub]++
		total++
	})
	out := make(map[int64][]porcupine.Operation, len(counts))
	slab := make([]porcupine.Operation, total)
	clients := map[string]int{}
	cid := func(name string) int {
		if id, ok := clients[name]; ok {
			return id
		}
		clients[name] = len(clients)
		return clients[name]
	}
	r.history(view, decidedAt, rejudged, func(sub int64, client string, in LeaseIn, lo LeaseOut, call, ret int64, _ [2]uint64) {
		ops, ok := out[sub]
		if !ok {
			n := counts[sub]
			ops, slab = slab[:0:n], slab[n:]
		}
		out[sub] = append(ops, porcupine.Operation{ClientId: cid(client), Input: in, Output: boxOut(lo), Call: call, Return: ret})
	})
	return out
}

// settled is what the view's history settles its unknown outcomes by:
// when each accepted result's commit happened, and (oracle view) which
// rejudges whose caller did not learn their outcome applied.
func (r *Run) settled(view View) (map[subToken]int64, map[int]bool) {
	decidedAt := make(map[subToken]int64, len(r.Accepted))
	for _, a := range r.Accepted {
		decidedAt[subToken{a.Sub, a.Token}] = a.T
	}
	var rejudged map[int]bool
	if view == OracleView {
		rejudged = r.rejudgesApplied()
	}
	return decidedAt, rejudged
}

// subToken is a (submission, token) pair.
type subToken struct {
	sub   int64
	token string
}

// history calls add with every operation of the view's histories, in
// order: its submission, its client, input, output and interval. decidedAt
// is when each accepted result's commit happened; rejudged says which
// rejudges whose outcome their caller did not learn applied (oracle view).
func (r *Run) history(view View, decidedAt map[subToken]int64, rejudged map[int]bool, add func(sub int64, client string, in LeaseIn, out LeaseOut, call, ret int64, seqs [2]uint64)) {
	// An attempt whose outcome the client did not learn (no reply, or a
	// 503) applied its result only if the commit that recorded it happened
	// within the attempt's own interval, and only one attempt did: the one
	// answered 200 around the commit if there is one, else the last one
	// sent before it. The others had no effect (a duplicate of a decided
	// result changes nothing) and are left out: a worker retrying for
	// minutes leaves dozens of attempts with no reply, each open to the
	// end of the run, and settling every one of them as applied made
	// porcupine order them all against each other (the search limit, on
	// histories of 30 operations: explore --world wide --faults heavy,
	// seed 531).
	var carrier map[int]bool
	if view == OracleView {
		carrier = r.carriers(decidedAt)
	}
	for i := range r.Ops {
		op := &r.Ops[i]
		c := &op.Call
		in := LeaseIn{Op: c.Op, Client: c.Client, Token: c.Token, Gen: c.Gen, Verdict: c.Verdict}
		sub := c.Sub
		ret := int64(math.MaxInt64)
		code := 0
		if op.Return != nil {
			ret, code = op.Response, op.Return.Code
		}
		switch c.Op {
		case "claim":
			// A claim belongs to the submissions it was granted (one
			// operation per lease of a batch); in the oracle's view grants
			// come from the commit log instead.
			if view == OracleView || op.Return == nil || code != 200 {
				continue
			}
			for _, l := range leasesOf(op.Return) {
				in.Token, in.Gen = l.Token, l.Gen
				add(l.Sub, c.Client, in, LeaseOut{Code: code}, op.Invoke, ret, [2]uint64{op.CallSeq, op.ReturnSeq})
			}
			continue
		case "heartbeat", "submit":
		case "rejudge":
			in.Unseen = view == ClientView
		case "read":
			// A read whose answer never came saw nothing. In the client's
			// view a read may see what the client cannot (Unseen).
			if op.Return == nil {
				continue
			}
			in.Unseen = view == ClientView
		default:
			continue
		}
		if view == OracleView && (code == 0 || code == 503) {
			switch {
			case c.Op == "submit" && carrier[i]:
				// It took effect at the commit: no later.
				code, ret = 200, decidedAt[subToken{sub, c.Token}]
			case c.Op == "rejudge" && rejudged[i]:
				code = 200
			default:
				continue // settled: it had no effect
			}
		}
		lo := LeaseOut{Code: code}
		if c.Op == "read" {
			lo.Status, lo.Gen = op.Return.Status, op.Return.Gen
		}
		add(sub, c.Client, in, lo, op.Invoke, ret, [2]uint64{op.CallSeq, op.ReturnSeq})
	}
	if view == OracleView {
		for _, id := range r.SubIDs() {
			vs := r.Subs[id]
			for i := 1; i < len(vs); i++ {
				p, v := &vs[i-1], &vs[i]
				var in LeaseIn
				switch {
				case p.Status == "pending" && v.Status == "judging" && v.Token == "":
					in = LeaseIn{Op: "hold", Client: "db"} // the old scheme's claim: no lease (A-S9)
				case p.Status == "pending" && v.Status == "judging":
					in = LeaseIn{Op: "claim", Client: "db", Token: v.Token, Gen: v.Gen}
				case p.Status == "judging" && v.Status == "pending":
					in = LeaseIn{Op: "expire", Client: "db", Token: p.Token}
				case p.Status == "judging" && v.Status == "system_error":
					in = LeaseIn{Op: "fail", Client: "db", Token: p.Token}
				case p.Status == "judging" && Terminal(v.Status) && p.Token == "":
					in = LeaseIn{Op: "settle", Client: "db", Verdict: v.Status} // a legacy worker's verdict
				default:
					continue
				}
				add(id, "db", in, LeaseOut{Code: 200}, v.T, v.T, [2]uint64{v.Event, v.Event})
			}
		}
	}
}

// rejudgesApplied settles the rejudges whose outcome their caller did
// not learn (no reply, or a 503), by operation index: each commit that
// took a submission out of a terminal state is one rejudge's, the first
// whose interval holds it, those answered 200 first (theirs for sure);
// a rejudge left without a commit had no effect. (Several unanswered
// rejudges around one commit are not all applied: each raises lease_gen.)
func (r *Run) rejudgesApplied() map[int]bool {
	type commit struct {
		t     int64
		taken bool
	}
	rejudges := map[int64][]commit{} // per submission, in commit order
	for i := range r.Ops {
		if c := &r.Ops[i].Call; c.Op == "rejudge" {
			if _, ok := rejudges[c.Sub]; !ok {
				var cs []commit
				vs := r.Subs[c.Sub]
				for k := 1; k < len(vs); k++ {
					if Terminal(vs[k-1].Status) && vs[k].Status == "pending" {
						cs = append(cs, commit{t: vs[k].T})
					}
				}
				rejudges[c.Sub] = cs
			}
		}
	}
	take := func(sub, from, to int64) bool {
		cs := rejudges[sub]
		for k := range cs {
			if !cs[k].taken && cs[k].t >= from && cs[k].t <= to {
				cs[k].taken = true
				return true
			}
		}
		return false
	}
	applied := map[int]bool{}
	for _, known := range []bool{true, false} {
		for i := range r.Ops {
			op := &r.Ops[i]
			if op.Call.Op != "rejudge" || (op.Return != nil && op.Return.Code == 200) != known {
				continue
			}
			if !known && op.Return != nil && op.Return.Code != 503 {
				continue // refused (410): no effect
			}
			to := int64(math.MaxInt64)
			if op.Return != nil {
				to = op.Response
			}
			if take(op.Call.Sub, op.Invoke, to) && !known {
				applied[i] = true
			}
		}
	}
	return applied
}

// carriers returns, per decided (submission, token), the submit attempt
// with an unknown outcome that carried the deciding commit (by index in
// Ops): none when an attempt answered 200 has the commit in its interval,
// else the last attempt sent before the commit whose interval holds it.
func (r *Run) carriers(decidedAt map[subToken]int64) map[int]bool {
	known := map[subToken]bool{}
	last := map[subToken]int{}
	for i := range r.Ops {
		op := &r.Ops[i]
		if op.Call.Op != "submit" {
			continue
		}
		k := subToken{op.Call.Sub, op.Call.Token}
		t, ok := decidedAt[k]
		if !ok || op.Invoke > t {
			continue
		}
		code, end := 0, int64(math.MaxInt64)
		if op.Return != nil {
			code, end = op.Return.Code, op.Response
		}
		if end < t {
			continue
		}
		switch {
		case code == 200:
			known[k] = true
		case code == 0 || code == 503:
			if j, seen := last[k]; !seen || r.Ops[j].Invoke <= op.Invoke {
				last[k] = i
			}
		}
	}
	out := map[int]bool{}
	for k, i := range last {
		if !known[k] {
			out[i] = true
		}
	}
	return out
}

// Linearizable checks each submission's history against the lease model.
// On a failure it returns porcupine's info for the visualisation (nil when
// every submission passed).
func Linearizable(r *Run, view View) (checker.Verdict, *porcupine.LinearizationInfo) {
	name := PA3
	if view == OracleView {
		name = PA1 + " (porcupine, oracle view)"
	}
	if v := r.supported(Porcupine, name); v != nil {
		return *v, nil
	}
	h := r.History(view)
	var order []int
	for _, id := range checker.SortedKeys(h) {
		ops := h[id]
		var ok bool
		if ok, order = sequentialOK(ops, order); ok {
			continue
		}
		model, over := boundedModel(SearchLimit)
		res, info := porcupine.CheckOperationsVerbose(model, ops, 0)
		if *over {
			// The search gave up: not a violation, undecided. The run is
			// not failed by it (no violation was found; the other view and
			// PA1's invariant still judge it); explore counts it apart
			// and names its seed.
			return checker.Undecided(name, "search limit: submission %d's %d operations on its lease took more than %d units of model work, or more than %d lease states at once, to decide (the history is too nondeterministic: many outcomes unknown)",
				id, len(ops), SearchLimit, MaxStates), nil
		}
		if res != porcupine.Ok {
			v := checker.Fail(name, nil, "submission %d: the %d operations on its lease are not linearizable against the lease specification", id, len(ops))
			if e, ok := r.explain(view, id, ops); ok {
				v.Message += ": " + e.short
				v.Detail, v.Events = e.long, e.seqs
			}
			return v, &info
		}
	}
	return checker.Pass(name), nil
}

// sequentialOK reports whether a history whose operations do not overlap
// (each returns before the next is called) passes, by stepping the bounded
// model through them in their one possible order, as porcupine's search
// does: on such a history it links call, return, call, return..., steps
// each operation once (no cache comparison: every prefix is new) and
// backtracks only when a step fails. So a true here is porcupine's Ok,
// reached with the same work; false (overlapping operations, a failing
// step, the search limit) leaves the history to porcupine. order is
// scratch space, returned for reuse.
func sequentialOK(ops []porcupine.Operation, order []int) (bool, []int) {
	order = order[:0]
	for i := range ops {
		if ops[i].Call > ops[i].Return {
			return false, order
		}
		order = append(order, i)
	}
	sort.Slice(order, func(a, b int) bool { return ops[order[a]].Call < ops[order[b]].Call })
	for k := 1; k < len(order); k++ {
		if ops[order[k-1]].Return >= ops[order[k]].Call {
			return false, order // overlapping (porcupine orders a call before a return at the same time)
		}
	}
	model, over := boundedModel(SearchLimit)
	state := model.Init()
	for _, i := range order {
		ok, next := model.Step(state, ops[i].Input, ops[i].Output)
		if !ok || *over {
			return false, order
		}
		state = next
	}
	return true, order
}

// SearchLimit bounds porcupine's search on one submission's history, in
// units of work: each model step costs the number of lease states it
// yields, each state comparison of the search's cache the states it
// compares; and one step may yield at most MaxStates states (an outcome
// unknown doubles them). A search that needs more ends with "unknown:
// search limit" instead of running away. It is deterministic, unlike a
// wall-clock timeout: the same history stops at the same point on any
// machine.
var (
	SearchLimit = 4_000_000
	MaxStates   = 4096
)

// boundedModel is the lease model whose work is counted: past a limit every
// step is refused and every state taken as seen, so the search ends
// quickly; the flag tells the caller that it did.
func boundedModel(limit int) (porcupine.Model, *bool) {
	m := LeaseModel()
	work, over := 0, new(bool)
	step, equal := m.Step, m.Equal
	m.StepContext = nil // porcupine prefers it to Step; the counted Step must be the one called
	m.Step = func(state, input, output any) (bool, any) {
		if *over || len(state.([]any)) > MaxStates {
			*over = true
			return false, state
		}
		ok, next := step(state, input, output)
		if ok {
			work += len(next.([]any))
		}
		if work > limit {
			*over = true
			return false, state
		}
		return ok, next
	}
	m.Equal = func(a, b any) bool {
		if *over {
			return true
		}
		work += len(a.([]any)) + len(b.([]any))
		return equal(a, b)
	}
	return m, over
}
