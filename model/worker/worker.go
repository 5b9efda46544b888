package worker

import (
	"fmt"
	"sort"
	"time"

	"github.com/fencesim/fencesim/model/arbiter"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// Config configures one worker.
type Config struct {
	Design   arbiter.Design
	Home     bool           // a home machine (dispatch prefers them)
	Arbiters []network.Addr // arbiters to talk to, tried in turn
}

// Timer tags.
type (
	claimRetry   struct{}
	claimTimeout struct{ no uint64 }
	judgeDone    struct{ token string }
	heartbeat    struct{ token string }
	submitRetry  struct{ key string }
	submitWait   struct {
		key string
		no  uint64
	}
)

func (claimRetry) String() string     { return "claim-retry" }
func (t claimTimeout) String() string { return fmt.Sprintf("claim-timeout no=%d", t.no) }
func (t judgeDone) String() string    { return "judge-done token=" + t.token }
func (t heartbeat) String() string    { return "heartbeat token=" + t.token }
func (t submitRetry) String() string  { return "submit-retry " + t.key }
func (t submitWait) String() string   { return fmt.Sprintf("submit-timeout %s no=%d", t.key, t.no) }

type job struct {
	lease   arbiter.Lease
	verdict string
	timer   sim.TimerID
	hb      sim.TimerID
}

type pending struct {
	res     hist.Result
	attempt int
	no      uint64 // outstanding request, 0 if none
	timer   sim.TimerID
}

// Worker is one judge worker.
type Worker struct {
	cfg  Config
	name string
	inc  int64

	no    uint64            // last request number
	calls map[uint64]string // request number -> hist call id, until replied

	arb int // index of the arbiter in use

	// claiming
	claimID      string // request_id of the claim in progress ("" when none)
	claimSeq     int
	claimAttempt int
	claimNo      uint64
	claimTimer   sim.TimerID
	claiming     bool

	job     *job
	results map[string]*pending
	memory  map[string]hist.Result // results kept in memory only (worker-no-disk)
}

var _ sim.Node = (*Worker)(nil)

// New returns the worker's factory.
func New(cfg Config) sim.Factory {
	return func(name string, disk *sim.Disk) sim.Node {
		w := &Worker{cfg: cfg, name: name, calls: map[uint64]string{}, results: map[string]*pending{}, memory: map[string]hist.Result{}}
		if v, ok := disk.Get("incarnation"); ok {
			w.inc = v.(int64)
		}
		return w
	}
}

func resultKey(sub int64, token string) string { return fmt.Sprintf("result/%020d/%s", sub, token) }

// Step implements sim.Node.
func (w *Worker) Step(env *sim.Env, in sim.Input) {
	switch in.Kind {
	case sim.Start:
		w.inc++
		env.Disk().Put("incarnation", w.inc)
		// A.3: first re-submit every result left on disk, then claim.
		for _, k := range env.Disk().Keys("result/") {
			v, _ := env.Disk().Get(k)
			w.results[k] = &pending{res: v.(hist.Result)}
			w.submit(env, k)
		}
		w.claim(env)
	case sim.Timer:
		w.timer(env, in)
	case sim.Deliver:
		if r, ok := in.Msg.Body.(arbiter.Reply); ok {
			w.reply(env, r)
		}
	}
}

func (w *Worker) timer(env *sim.Env, in sim.Input) {
	switch t := in.Tag.(type) {
	case claimRetry:
		w.claim(env)
	case claimTimeout:
		if w.claiming && w.claimNo == t.no {
			w.rotate()
			w.claimLater(env)
		}
	case judgeDone:
		if w.job != nil && w.job.lease.Token == t.token {
			w.finish(env)
		}
	case heartbeat:
		if w.job != nil && w.job.lease.Token == t.token {
			w.beat(env)
			w.job.hb = env.After(w.cfg.Design.Heartbeat, heartbeat{t.token})
		}
	case submitRetry:
		if _, ok := w.results[t.key]; ok {
			w.submit(env, t.key)
		}
	case submitWait:
		if p, ok := w.results[t.key]; ok && p.no == t.no {
			w.rotate()
			w.retrySubmit(env, t.key, 0)
		}
	}
}

// send sends a request to the arbiter in use and records the call.
func (w *Worker) send(env *sim.Env, r arbiter.Request) uint64 {
	w.no++
	r.No = w.no
	r.Worker = w.name
	r.Home = w.cfg.Home
	id := fmt.Sprintf("%s#%d.%d", w.name, w.inc, w.no)
	w.calls[w.no] = id
	if env.Recording() {
		env.Note(hist.KindCall, r.String(), hist.Call{ID: id, Client: w.name, Op: string(r.Op), Sub: r.Sub, Token: r.Token, Gen: r.Gen, RequestID: r.RequestID, Verdict: r.Verdict})
	}
	env.Send(w.cfg.Arbiters[w.arb], r)
	return w.no
}

func (w *Worker) rotate() {
	if len(w.cfg.Arbiters) > 1 {
		w.arb = (w.arb + 1) % len(w.cfg.Arbiters)
	}
}

// claim sends (or re-sends, with the same request_id) a claim.
func (w *Worker) claim(env *sim.Env) {
	if w.job != nil {
		return
	}
	if w.claimID == "" {
		w.claimSeq++
		w.claimID = fmt.Sprintf("%s-%d-%d", w.name, w.inc, w.claimSeq)
		w.claimAttempt = 0
	}
	w.claiming = true
	w.claimNo = w.send(env, arbiter.Request{Op: arbiter.OpClaim, RequestID: w.claimID})
	env.Cancel(w.claimTimer)
	w.claimTimer = env.After(w.cfg.Design.ClaimHold+w.cfg.Design.RequestTimeout, claimTimeout{w.claimNo})
}

// claimLater retries the claim after the backoff. Under no-request-id a
// retry is a new claim (a new request_id).
func (w *Worker) claimLater(env *sim.Env) {
	env.Cancel(w.claimTimer)
	w.claiming = false
	if w.cfg.Design.Has(arbiter.NoRequestID) {
		w.claimID = ""
	}
	d := w.cfg.Design.Backoff(w.claimAttempt)
	w.claimAttempt++
	w.claimTimer = env.After(d, claimRetry{})
}

func (w *Worker) reply(env *sim.Env, r arbiter.Reply) {
	id, known := w.calls[r.No]
	if !known {
		return // a duplicate of a reply already handled
	}
	delete(w.calls, r.No)
	if env.Recording() {
		env.Note(hist.KindReturn, r.String(), hist.Return{ID: id, Code: r.Code, Sub: r.Lease.Sub + r.Sub, Token: r.Lease.Token + r.Token, Gen: r.Lease.Gen, User: r.Lease.User, Problem: r.Lease.Problem})
	}
	switch r.Op {
	case arbiter.OpClaim:
		w.claimReply(env, r)
	case arbiter.OpHeartbeat:
		if r.Code == arbiter.Code410 && w.job != nil && w.job.lease.Token == r.Token {
			w.abandon(env)
		}
	case arbiter.OpSubmit:
		w.submitReply(env, r)
	}
}

func (w *Worker) claimReply(env *sim.Env, r arbiter.Reply) {
	if !w.claiming || r.RequestID != w.claimID || w.job != nil {
		return // an answer to a claim this worker no longer waits for
	}
	switch r.Code {
	case arbiter.Code200:
		env.Cancel(w.claimTimer)
		w.claiming, w.claimID = false, ""
		w.start(env, r.Lease)
	case arbiter.Code204:
		w.claimID = ""
		w.claim(env)
	default:
		w.rotate()
		w.claimLater(env)
	}
}

// start begins judging a lease: the first heartbeat confirms it at once.
func (w *Worker) start(env *sim.Env, l arbiter.Lease) {
	d := w.cfg.Design
	took := time.Duration(sim.Between(env.Rand(), "judge-time", int64(d.JudgeMin), int64(d.JudgeMax)))
	w.job = &job{lease: l, verdict: VerdictOf(l.Sub)}
	w.job.timer = env.After(took, judgeDone{l.Token})
	w.note(env, hist.Judge{Worker: w.name, Sub: l.Sub, Token: l.Token, Gen: l.Gen, Phase: hist.JudgeStart})
	w.beat(env)
	w.job.hb = env.After(d.Heartbeat, heartbeat{l.Token})
}

func (w *Worker) beat(env *sim.Env) {
	l := w.job.lease
	w.send(env, arbiter.Request{Op: arbiter.OpHeartbeat, Sub: l.Sub, Token: l.Token})
}

func (w *Worker) abandon(env *sim.Env) {
	l := w.job.lease
	env.Cancel(w.job.timer)
	env.Cancel(w.job.hb)
	w.job = nil
	w.note(env, hist.Judge{Worker: w.name, Sub: l.Sub, Token: l.Token, Gen: l.Gen, Phase: hist.JudgeAbandon})
	w.claim(env)
}

// finish ends a judging: the result goes to disk before it is submitted
// (A.3), then the worker claims new work while the result is retried.
func (w *Worker) finish(env *sim.Env) {
	j := w.job
	env.Cancel(j.hb)
	w.job = nil
	l := j.lease
	w.note(env, hist.Judge{Worker: w.name, Sub: l.Sub, Token: l.Token, Gen: l.Gen, Phase: hist.JudgeEnd, Verdict: j.verdict})
	res := hist.Result{Worker: w.name, Sub: l.Sub, Token: l.Token, Gen: l.Gen, Verdict: j.verdict, Phase: hist.ResultSaved}
	key := resultKey(l.Sub, l.Token)
	if w.cfg.Design.Has(arbiter.WorkerNoDisk) {
		w.memory[key] = res
	} else {
		res.Durable = true
		env.Disk().Put(key, res) // persist before submitting
		env.Disk().Sync()
	}
	w.note(env, res)
	w.results[key] = &pending{res: res}
	w.submit(env, key)
	w.claim(env)
}

func (w *Worker) submit(env *sim.Env, key string) {
	p := w.results[key]
	r := p.res
	p.no = w.send(env, arbiter.Request{Op: arbiter.OpSubmit, Sub: r.Sub, Token: r.Token, Gen: r.Gen, Verdict: r.Verdict})
	env.Cancel(p.timer)
	p.timer = env.After(w.cfg.Design.RequestTimeout, submitWait{key, p.no})
}

func (w *Worker) retrySubmit(env *sim.Env, key string, code int) {
	p := w.results[key]
	p.no = 0
	env.Cancel(p.timer)
	r := p.res
	r.Phase, r.Code = hist.ResultRetry, code
	w.note(env, r)
	p.timer = env.After(w.cfg.Design.Backoff(p.attempt), submitRetry{key})
	p.attempt++
}

func (w *Worker) submitReply(env *sim.Env, r arbiter.Reply) {
	key := resultKey(r.Sub, r.Token)
	p, ok := w.results[key]
	if !ok {
		return
	}
	switch r.Code {
	case arbiter.Code200, arbiter.Code410:
		env.Cancel(p.timer)
		delete(w.results, key)
		delete(w.memory, key)
		env.Disk().Delete(key)
		env.Disk().Sync()
		res := p.res
		res.Phase, res.Code = hist.ResultAnswered, r.Code
		w.note(env, res)
	default:
		if p.no != 0 {
			w.rotate()
			w.retrySubmit(env, key, r.Code)
		}
	}
}

func (w *Worker) note(env *sim.Env, data any) {
	if !env.Recording() {
		return
	}
	switch d := data.(type) {
	case hist.Judge:
		env.Note(hist.KindJudge, fmt.Sprintf("%s sub=%d token=%s gen=%d %s", d.Phase, d.Sub, d.Token, d.Gen, d.Verdict), d)
	case hist.Result:
		env.Note(hist.KindResult, fmt.Sprintf("%s sub=%d token=%s verdict=%s code=%d", d.Phase, d.Sub, d.Token, d.Verdict, d.Code), d)
	}
}

// Pending returns the keys of the results not yet answered, sorted.
func (w *Worker) Pending() []string {
	ks := make([]string, 0, len(w.results))
	for k := range w.results {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// VerdictOf is the verdict judging a submission produces: a fixed function of
// the submission, so every judging of it agrees (about half are AC).
func VerdictOf(sub int64) string {
	x := uint64(sub)*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019
	x ^= x >> 29
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 32
	if x%2 == 0 {
		return "AC"
	}
	return arbiter.Verdicts[1+int(x/2)%(len(arbiter.Verdicts)-1)]
}
