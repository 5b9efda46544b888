package judge

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fencesim/fencesim/checker"
)

// Property names.
const (
	PA1 = "PA1 at-most-one-owner"
	PA2 = "PA2 no-regression"
	PA3 = "PA3 linearizable-api"
	PA4 = "PA4 idempotent-claim"
	PA5 = "PA5 idempotent-submit"
	PA6 = "PA6 exactly-once-credit"
	PA7 = "PA7 nothing-lost"
	PA8 = "PA8 liveness-after-healing"
	PA9 = "PA9 attempt-cap"
)

// Invariant is a named check over a decoded run of system A.
type Invariant = checker.Invariant[*Run]

// Invariants are the invariant checks of system A, in property order, and
// the metrics the source promises as zero. PA3 (and the porcupine half of
// PA1) are in Linearizable.
// Each declares the shapes of world it reads in Supports; on a run of
// another shape it answers "unsupported: ...".
var Invariants = gated([]Invariant{
	{Name: PA1, Check: AtMostOneOwner},
	{Name: PA2, Check: NoRegression},
	{Name: PA4, Check: IdempotentClaim},
	{Name: PA5, Check: IdempotentSubmit},
	{Name: PA6, Check: ExactlyOnceCredit},
	{Name: PA7, Check: NothingLost},
	{Name: PA8, Check: LivenessAfterHealing},
	{Name: PA9, Check: AttemptCap},
	// Metrics the source promises as zero: a run that breaks them fails.
	{Name: MA2, Check: NoPromisedWaste}, // where it is promised: A-S2, A-S7
	{Name: MA3, Check: NoFalseSystemErrors},
	// A-S8's promise: an alert means a stuck dispatch loop.
	{Name: MA4, Check: NoFalseAlerts},
	// A-S1's promise: a new lease starts with the unconfirmed lease.
	{Name: MA1, Check: UnconfirmedFirst},
})

// AtMostOneOwner (PA1, on the commit log and the workers' notes): every
// accepted result carries the token and generation of the lease that was
// current when it was accepted, and at most one result is accepted per
// (submission, lease_gen); every verdict comes with its history row (the
// row that records that verdict) in the same transaction; every lease
// token is held by one worker process (ownedByOne).
func AtMostOneOwner(r *Run) checker.Verdict {
	perGen := map[[2]int64]uint64{}
	for _, a := range r.Accepted {
		b := a.Before
		if b == nil {
			return checker.Fail(PA1, []uint64{a.Event}, "submission %d: result %s (token %s) recorded without deciding the submission", a.Sub, a.Verdict, a.Token)
		}
		if b.Status != "judging" || b.Token != a.Token || b.Gen != a.Gen {
			return checker.Fail(PA1, []uint64{a.Event},
				"submission %d: result %s of %s judged under token %s gen %d was accepted while the lease was token %q gen %d (status %s)",
				a.Sub, a.Verdict, a.Worker, a.Token, a.Gen, b.Token, b.Gen, b.Status)
		}
		if v := a.After; v != nil && v.Status != a.Verdict {
			// The row is the verdict's record: the same transaction writes
			// the verdict it records.
			return checker.Fail(PA1, []uint64{a.Event}, "submission %d: history row of token %s records %s, but its transaction left the submission %s",
				a.Sub, a.Token, a.Verdict, v.Status)
		}
		k := [2]int64{a.Sub, b.Gen}
		if first, dup := perGen[k]; dup {
			return checker.Fail(PA1, []uint64{first, a.Event}, "submission %d: two results accepted in generation %d", a.Sub, b.Gen)
		}
		perGen[k] = a.Event
	}
	// Every verdict comes with the history row that says which lease (or
	// legacy worker) decided it, in the same transaction.
	recorded := map[[2]int64]bool{}
	for _, a := range r.Accepted {
		recorded[[2]int64{a.Sub, int64(a.Event)}] = true
	}
	for _, id := range r.SubIDs() {
		vs := r.Subs[id]
		for i := 1; i < len(vs); i++ {
			p, v := vs[i-1], vs[i]
			if p.Status == "judging" && Terminal(v.Status) && v.Status != "system_error" && !recorded[[2]int64{id, int64(v.Event)}] {
				return checker.Fail(PA1, []uint64{v.Event}, "submission %d: verdict %s written without a judging-history row in the same transaction", id, v.Status)
			}
		}
	}
	return r.ownedByOne()
}

// NoRegression (PA2): per submission, lease_gen never decreases; status moves
// only along the design's arrows (pending -> judging -> terminal, judging ->
// pending by the sweep); leaving a terminal state happens only by rejudge,
// which raises lease_gen; history seq only grows.
func NoRegression(r *Run) checker.Verdict {
	// The history is append-only: "评测历史(submission_judgings)只追加、
	// 不修改" (000, scenario 5).
	for _, e := range r.HistoryEdits {
		return checker.Fail(PA2, []uint64{e.Event}, "submission %d: history row seq %d was %sd: the judging history (submission_judgings) is append-only", e.Sub, e.Seq, e.Op)
	}
	for _, id := range r.SubIDs() {
		vs := r.Subs[id]
		for i := 1; i < len(vs); i++ {
			p, v := vs[i-1], vs[i]
			bad := func(format string, args ...any) checker.Verdict {
				return checker.Fail(PA2, []uint64{p.Event, v.Event}, "submission %d: "+format, append([]any{id}, args...)...)
			}
			if v.Gen < p.Gen {
				return bad("lease_gen went back from %d to %d", p.Gen, v.Gen)
			}
			switch {
			case p.Status == v.Status && (p.Status != "judging" || p.Token == v.Token) && (!Terminal(p.Status) || p.Gen == v.Gen):
				// no change of state (a heartbeat, the grace, a rewrite)
			case p.Status == "pending" && v.Status == "judging" && v.Token == "":
				// a legacy worker's claim (A-S9): the old scheme has no leases
			case p.Status == "pending" && v.Status == "judging":
				if v.Gen <= p.Gen {
					return bad("claimed without a new generation (gen %d -> %d)", p.Gen, v.Gen)
				}
			case p.Status == "judging" && v.Status == "judging":
				return bad("lease changed hands from token %s to %s without going back to pending", p.Token, v.Token)
			case p.Status == "judging" && v.Status == "pending":
				// the sweep re-queued an expired lease
			case p.Status == "judging" && Terminal(v.Status):
				if v.Gen != p.Gen {
					return bad("decided in generation %d from generation %d", v.Gen, p.Gen)
				}
			case Terminal(p.Status) && v.Status == "pending":
				if v.Gen <= p.Gen {
					return bad("left terminal state %s without a new generation (rejudge must raise lease_gen)", p.Status)
				}
			case Terminal(p.Status) && Terminal(v.Status):
				return bad("verdict %s overwritten by %s in the same generation %d", p.Status, v.Status, v.Gen)
			default:
				return bad("moved from %s to %s", p.Status, v.Status)
			}
		}
	}
	// No reader sees an older generation's verdict after a newer state: once
	// a client read a verdict in generation g, its later reads show a newer
	// generation or that verdict. A read is later than every read of the
	// same client that returned before it was called; reads that overlap
	// (the web front reads on a timer, and a slow read may still be going)
	// are not ordered, so each read is held against all of those, not only
	// the last one called.
	type seen struct {
		status string
		gen    int64
		ret    int64
		ev     uint64
	}
	type clientSub struct {
		client string
		sub    int64
	}
	read := map[clientSub][]seen{}
	for i := range r.Ops {
		op := &r.Ops[i]
		if op.Call.Op != "read" || op.Return == nil || op.Return.Code != 200 {
			continue
		}
		k := clientSub{op.Call.Client, op.Call.Sub}
		rt := op.Return
		for _, p := range read[k] {
			if op.Invoke > p.ret && (rt.Gen < p.gen || (rt.Gen == p.gen && Terminal(p.status) && rt.Status != p.status)) {
				return checker.Fail(PA2, []uint64{p.ev, op.ReturnSeq}, "submission %d: %s read %s (gen %d) after reading %s (gen %d)", op.Call.Sub, op.Call.Client, rt.Status, rt.Gen, p.status, p.gen)
			}
		}
		read[k] = append(read[k], seen{rt.Status, rt.Gen, op.Response, op.ReturnSeq})
	}
	// History seq only grows per submission (the submission's row lock
	// orders its results; across submissions a serial may commit out of
	// order, in PostgreSQL too).
	lastSeq := map[int64]int64{}
	for _, a := range r.Accepted {
		if a.Seq <= lastSeq[a.Sub] {
			return checker.Fail(PA2, []uint64{a.Event}, "submission %d: history seq went from %d to %d", a.Sub, lastSeq[a.Sub], a.Seq)
		}
		lastSeq[a.Sub] = a.Seq
	}
	return checker.Pass(PA2)
}

// AttemptCap (PA9): a submission gets at most max_attempts leases between
// rejudges (an attempt is a lease its worker confirmed, "先确认、再算数", or
// a legacy worker's claim, which counts in judge_attempts when made; under
// attempts-at-grant every grant; a rejudge starts the count again), no
// lease is granted once they are spent, and once
// its max_attempts-th lease is reclaimed it becomes system_error: it never
// goes back to pending for another.
func AttemptCap(r *Run) checker.Verdict {
	limit := int64(r.P.MaxAttempts)
	atGrant := r.P.has("attempts-at-grant")
	for _, id := range r.SubIDs() {
		vs := r.Subs[id]
		// The first row seen carries the attempts made so far (none when
		// it is the insert).
		attempts := vs[0].Attempts
		var last uint64 // the commit of the latest attempt
		for i := 1; i < len(vs); i++ {
			p, v := &vs[i-1], &vs[i]
			counts := false
			switch {
			case Terminal(p.Status) && v.Status == "pending":
				attempts = 0 // a rejudge
			case newLease(p, v) && attempts >= limit:
				return checker.Fail(PA9, events(last, v.Event), "submission %d: a lease %s (gen %d) granted after its %d attempts since the last rejudge; max_attempts is %d",
					id, leaseName(v.Token), v.Gen, attempts, limit)
			case newLease(p, v):
				// A legacy claim counts when made; a lease when its worker
				// confirms it ("先确认、再算数"), unless every grant counts.
				counts = v.Token == "" || atGrant || v.Confirmed
			case v.Status == "judging" && p.Token == v.Token && p.Gen == v.Gen && v.Confirmed && !p.Confirmed:
				counts = !atGrant
			case p.Status == "judging" && v.Status == "pending" && attempts >= limit:
				return checker.Fail(PA9, events(last, v.Event), "submission %d: its lease %s, attempt %d of max_attempts %d, was reclaimed back to pending instead of to system_error",
					id, leaseName(p.Token), attempts, limit)
			}
			if counts {
				attempts++
				if attempts > limit {
					return checker.Fail(PA9, events(last, v.Event), "submission %d: attempt %d (lease %s, gen %d) since its last rejudge; max_attempts is %d",
						id, attempts, leaseName(v.Token), v.Gen, limit)
				}
				last = v.Event
			}
		}
	}
	return checker.Pass(PA9)
}

// events lists the events of a verdict, leaving out an unknown one (0).
func events(evs ...uint64) []uint64 {
	out := evs[:0]
	for _, e := range evs {
		if e != 0 {
			out = append(out, e)
		}
	}
	return out
}

// leaseName names a lease by its token (a legacy worker's has none).
func leaseName(token string) string {
	if token == "" {
		return "(a legacy claim, no token)"
	}
	return token
}

// grant is a lease handed out: a pending -> judging transition. grants
// returns them in commit order, computed once per run (shared: do not
// modify).
type grant struct {
	event  uint64
	t      int64
	sub    int64
	worker string
	token  string
}

func (r *Run) grants() []grant {
	if r.leases != nil {
		return r.leases
	}
	out := []grant{}
	for _, id := range r.SubIDs() {
		vs := r.Subs[id]
		for i := 1; i < len(vs); i++ {
			if vs[i-1].Status == "pending" && vs[i].Status == "judging" && vs[i].Token != "" {
				out = append(out, grant{event: vs[i].Event, t: vs[i].T, sub: id, worker: vs[i].Worker, token: vs[i].Token})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].event < out[j].event })
	r.leases = out
	return out
}

// IdempotentClaim (PA4): every 200 answer to the same (worker, request_id)
// carries the same leases, and a claim retried by a worker (one logical
// claim, however many requests) is granted its leases by one transaction
// only, at most claim_batch of them: a retry never leaves an orphan lease
// behind. The database keys claims by (worker_id, request_id), which is
// unique (request ids never collide within one worker_id); several
// processes may act under one worker_id, each with claims of its own. A
// grant the database did not record (no-request-id) belongs to the claim
// answered with it, or else to the claim of its worker_id's process; when
// several processes of that worker_id had claims going, it is not judged.
func IdempotentClaim(r *Run) checker.Verdict {
	type key struct{ worker, req string }
	type answer struct {
		leases string
		ev     uint64
	}
	claims := 0
	for i := range r.Ops {
		if r.Ops[i].Call.Op == "claim" {
			claims++
		}
	}
	answered := make(map[key]answer, claims)  // (process, request_id)
	episodeOf := make(map[key]string, claims) // (worker_id, request_id) -> episode
	type ep struct {
		wid, process, id string
		first            int64
	}
	var episodes []ep
	seenEp := map[key]bool{}           // (worker_id, episode)
	announced := map[subToken]string{} // a lease -> the episode of the claim answered with it
	for i := range r.Ops {
		op := &r.Ops[i]
		c := &op.Call
		if c.Op != "claim" {
			continue
		}
		wid := actsAs(c.Client, c.WorkerID)
		episodeOf[key{wid, c.RequestID}] = c.Episode
		if e := (key{wid, c.Episode}); !seenEp[e] {
			seenEp[e] = true
			episodes = append(episodes, ep{wid, c.Client, c.Episode, op.Invoke})
		}
		if op.Return == nil || op.Return.Code != 200 {
			continue
		}
		k := key{c.Client, c.RequestID}
		leases := leasesOf(op.Return)
		var got string
		if len(leases) == 1 {
			got = leases[0].Token
		} else {
			toks := make([]string, len(leases))
			for i, l := range leases {
				toks[i] = l.Token
			}
			got = strings.Join(toks, ",")
		}
		for _, l := range leases {
			if _, ok := announced[subToken{l.Sub, l.Token}]; !ok {
				announced[subToken{l.Sub, l.Token}] = c.Episode
			}
		}
		if prev, ok := answered[k]; ok && prev.leases != got {
			return checker.Fail(PA4, []uint64{prev.ev, op.ReturnSeq}, "%s's claim %s was answered with different leases: %s and %s", c.Client, c.RequestID, prev.leases, got)
		}
		if n := len(leases); n > r.P.Batch() {
			return checker.Fail(PA4, []uint64{op.ReturnSeq}, "%s's claim %s was answered with %d leases; claim_batch is %d", c.Client, c.RequestID, n, r.P.Batch())
		}
		answered[k] = answer{got, op.ReturnSeq}
	}
	type eventToken struct {
		event uint64
		token string
	}
	recorded := make(map[eventToken]string, len(r.Claims)) // (event, token) -> request_id
	for _, cr := range r.Claims {
		recorded[eventToken{cr.Event, cr.Token}] = cr.RequestID
	}
	// The episode active for a worker_id at time t (by the first call's
	// time); ambiguous (false) when several of its processes had claims
	// by then.
	activeAt := func(wid string, t int64) (string, bool) {
		id, process := "", ""
		for _, e := range episodes {
			if e.wid != wid || e.first > t {
				continue
			}
			if process != "" && e.process != process {
				return "", false
			}
			id, process = e.id, e.process
		}
		return id, true
	}
	// The claim a grant was for: the one the database recorded it for; or
	// the one answered with it; or the claim its worker_id's one process
	// had going.
	claimOf := func(g grant) (string, bool) {
		if req, ok := recorded[eventToken{g.event, g.token}]; ok {
			if e := episodeOf[key{g.worker, req}]; e != "" {
				return e, true
			}
			return "request " + req, true
		}
		if e, ok := announced[subToken{g.sub, g.token}]; ok {
			return e, true
		}
		return activeAt(g.worker, g.t)
	}
	perEpisode := map[key][]grant{} // (worker_id, episode)
	for _, g := range r.grants() {
		e, ok := claimOf(g)
		if !ok {
			continue // nothing says which process's claim it was
		}
		k := key{g.worker, e}
		perEpisode[k] = append(perEpisode[k], g)
		gs := perEpisode[k]
		if first := gs[0]; g.event != first.event {
			// A second transaction granted this claim a lease.
			return checker.Fail(PA4, []uint64{first.event, g.event},
				"%s's claim %s was granted leases by two transactions (%s on %d, %s on %d): a retry left an orphan lease", g.worker, e, first.token, first.sub, g.token, g.sub)
		}
		if len(gs) > r.P.Batch() {
			return checker.Fail(PA4, []uint64{g.event}, "%s's claim %s was granted %d leases in one transaction; claim_batch is %d", g.worker, e, len(gs), r.P.Batch())
		}
	}
	return checker.Pass(PA4)
}

// IdempotentSubmit (PA5): a duplicate submit of the deciding token gets the
// same success answer as the first; exactly one history row per
// (submission, token).
func IdempotentSubmit(r *Run) checker.Verdict {
	rows := make(map[subToken]uint64, len(r.Accepted))
	for _, a := range r.Accepted {
		if a.Token == "" {
			continue // a legacy worker's decision: no lease, one row per decision
		}
		k := subToken{a.Sub, a.Token}
		if first, dup := rows[k]; dup {
			return checker.Fail(PA5, []uint64{first, a.Event}, "submission %d has two history rows for token %s", a.Sub, a.Token)
		}
		rows[k] = a.Event
	}
	for i := range r.Ops {
		op := &r.Ops[i]
		c := &op.Call
		if c.Op != "submit" || op.Return == nil {
			continue
		}
		ev, decided := rows[subToken{c.Sub, c.Token}]
		if decided && op.Return.Code != 200 && op.Return.Code != 503 {
			return checker.Fail(PA5, []uint64{ev, op.ReturnSeq}, "%s's submit of submission %d with the deciding token %s got %d, not the success answer", c.Client, c.Sub, c.Token, op.Return.Code)
		}
	}
	return checker.Pass(PA5)
}

// ExactlyOnceCredit (PA6): at most one first-AC record per (user, problem),
// one for every (user, problem) with an accepted AC, and XP credited exactly
// once per first AC.
func ExactlyOnceCredit(r *Run) checker.Verdict {
	firsts := map[[2]int64]int{}
	perUser := map[int64]int64{}
	for _, row := range r.FirstAC {
		u, _ := checker.Int(row["user_id"])
		p, _ := checker.Int(row["problem_id"])
		firsts[[2]int64{u, p}]++
		perUser[u]++
		if firsts[[2]int64{u, p}] > 1 {
			return checker.Fail(PA6, nil, "user %d has %d first-AC records for problem %d", u, firsts[[2]int64{u, p}], p)
		}
	}
	for _, a := range r.Accepted {
		if a.Verdict != "AC" {
			continue
		}
		o := r.Owner[a.Sub]
		if firsts[o] == 0 {
			return checker.Fail(PA6, []uint64{a.Event}, "user %d's AC on problem %d (submission %d) has no first-AC record", o[0], o[1], a.Sub)
		}
	}
	for _, u := range checker.SortedKeys(r.XP) {
		if want := 10 * perUser[u]; r.XP[u] != want {
			return checker.Fail(PA6, nil, "user %d has %d XP for %d first ACs (want %d)", u, r.XP[u], perUser[u], want)
		}
	}
	return checker.Pass(PA6)
}

// settle is how long before the end of a run a result must have been saved
// for PA7 to expect its answer.
func (r *Run) settle() int64 {
	return int64(2*r.P.BackoffCap + 2*r.P.RequestTimeout + r.P.ClaimHold)
}

// NothingLost (PA7): every result a worker saved is eventually answered 200
// (recorded) or 410 (stale) and removed; none is dropped on another answer
// (a 503, a 500), none is silently dropped, none is retried forever.
func NothingLost(r *Run) checker.Verdict {
	for _, rl := range r.Results {
		if rl.Answered != 0 && rl.Code != 200 && rl.Code != 410 {
			return checker.Fail(PA7, []uint64{rl.SavedEv}, "%s's result %s for submission %d (token %s) was dropped on a %d answer: only 200 (recorded) or 410 (stale) settles a saved result",
				rl.Worker, rl.Verdict, rl.Sub, rl.Token, rl.Code)
		}
		if rl.Answered != 0 || rl.Saved > r.End-r.settle() {
			continue
		}
		where := "on disk"
		if !rl.Durable {
			where = "in memory only"
		}
		return checker.Fail(PA7, []uint64{rl.SavedEv}, "%s's result %s for submission %d (token %s), kept %s, was never answered (%d failed attempts)",
			rl.Worker, rl.Verdict, rl.Sub, rl.Token, where, rl.Retries)
	}
	return checker.Pass(PA7)
}

// Bound is PA8's bound after healing for this run.
func (r *Run) Bound() time.Duration {
	return BoundOf(r.P, len(r.Arrived)) + time.Duration(len(r.Poison))*PoisonBound(r.P)
}

// poisonRestart is the most a worker's supervisor waits to start a worker
// that died judging a poison submission again (the model's is 5 s).
const poisonRestart = 10 * time.Second

// PoisonBound is what a poison submission adds to PA8's bound: each of its
// attempts kills the worker that judges it part way through, and its lease
// comes back after the lease and a sweep, until max_attempts of them make
// it system_error.
func PoisonBound(p Params) time.Duration {
	return time.Duration(p.MaxAttempts) * (p.JudgeMax + p.Lease + p.SweepEvery + poisonRestart + p.BackoffCap + p.ClaimHold + p.RequestTimeout)
}

// BoundOf is PA8's bound after healing, computed from the design: a lease
// held by a node that failed gets the grace and then expires, the sweep
// re-queues it, a worker's backoff and claim hold bring it back, and the
// queue drains at one judging per worker at a time.
func BoundOf(p Params, submissions int) time.Duration {
	workers := p.HomeWorkers + p.ProdWorkers
	if workers < 1 {
		workers = 1
	}
	perWorker := (submissions + workers - 1) / workers
	job := p.JudgeMax + p.DispatchEvery + 2*p.RequestTimeout + p.BackoffCap
	return p.Grace + p.Lease + p.SweepEvery + 2*p.BackoffCap + p.ClaimHold + p.RequestTimeout + time.Duration(perWorker+1)*job
}

// LivenessAfterHealing (PA8): once faults stop (the heal-all fault), every
// submission reaches a terminal state within Bound. It is judged from the
// decision times: a run that ended early because it was quiet (every
// submission decided) is checked like one that went past the bound; only a
// run that ended before the bound with a submission undecided is not.
func LivenessAfterHealing(r *Run) checker.Verdict {
	if r.HealAt == 0 {
		return checker.Pass(PA8)
	}
	deadline := r.HealAt + int64(r.Bound())
	if r.End < deadline {
		for _, id := range r.SubIDs() {
			if r.DecidedAt(id) == 0 {
				v := checker.Pass(PA8)
				v.Message = fmt.Sprintf("not checked: the run ended %v after healing, before the bound %v, with submission %d undecided", time.Duration(r.End-r.HealAt), r.Bound(), id)
				return v
			}
		}
	}
	legacyHeld := 0
	for _, id := range r.SubIDs() {
		if f := r.Final(id); f.Status == "judging" && f.Token == "" {
			// Held by a legacy direct-to-database worker: the old scheme
			// has no lease and nothing reclaims its work (A-S9's known
			// limitation, not the arbiter's).
			legacyHeld++
			continue
		}
		at := r.DecidedAt(id)
		if at == 0 || at > deadline {
			f := r.Final(id)
			return checker.Fail(PA8, []uint64{f.Event}, "submission %d is %s %v after healing (bound %v)", id, f.Status, time.Duration(r.End-r.HealAt), r.Bound())
		}
	}
	v := checker.Pass(PA8)
	if legacyHeld > 0 {
		v.Message = fmt.Sprintf("%d submissions held by legacy workers not checked (the old scheme reclaims nothing)", legacyHeld)
	}
	return v
}
