package worker

import (
	"fmt"
	"sort"
	"time"

	"github.com/fencesim/fencesim/model/arbiter"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// Config configures one worker.
type Config struct {
	Design   arbiter.Design
	Home     bool           // a home machine (dispatch prefers them)
	Arbiters []network.Addr // arbiters to talk to, tried in turn
	// Direct makes the worker claim and submit directly from the database,
	// as the old scheme did (A-S9), on DB. A "mode direct" or "mode arbiter"
	// command switches it (the migration's rollback by configuration); the
	// mode is kept on disk.
	Direct bool
	DB     network.Addr
}

// Timer tags.
type (
	claimRetry   struct{}
	claimTimeout struct{ no uint64 }
	judgeDone    struct{ token string }
	heartbeat    struct{ token string }
	submitRetry  struct{ key string }
	beatWait     struct{ no uint64 }
	confirm      struct{ token string }
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
func (t beatWait) String() string     { return fmt.Sprintf("heartbeat-timeout no=%d", t.no) }
func (t confirm) String() string      { return "confirm token=" + t.token }
func (t submitWait) String() string   { return fmt.Sprintf("submit-timeout %s no=%d", t.key, t.no) }

// client is one HTTP client: the arbiter it talks to and its connection.
type client struct {
	arb  int            // index of the arbiter in use
	conn network.ConnID // keep-alive connection (0: none)
}

// outstanding is a request on a connection, awaiting its reply.
type outstanding struct {
	conn network.ConnID
	op   arbiter.Op
	key  string // submit: the result's key
}

type job struct {
	lease     arbiter.Lease
	verdict   string
	timer     sim.TimerID
	hb        sim.TimerID
	confirmed bool // a heartbeat got 200: the unconfirmed lease became a full one
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

	no    uint64                 // last request number
	calls map[uint64]string      // request number -> hist call id, until replied
	out   map[uint64]outstanding // requests awaiting a reply

	// Two HTTP clients, as two loops of a real worker: one claims and
	// heartbeats, the other uploads results from disk in the background.
	// Each has its own keep-alive connection, so a stuck upload does not
	// hold up claiming (A-S5: home-1 claims again while its first result is
	// still stuck on the road).
	jobs, uploads client

	// claiming
	claimID      string // the claim in progress ("" when none): its request_id, kept across retries
	claimSeq     int
	claimAttempt int
	claimNo      uint64
	claimTimer   sim.TimerID
	claiming     bool

	job     *job
	results map[string]*pending
	memory  map[string]hist.Result // results kept in memory only (worker-no-disk)

	direct bool // claiming directly from the database (the old scheme)
	// The old scheme's two database sessions: one claims, one writes
	// results (as the two HTTP clients of the new scheme).
	claimSQL, resultSQL db.Client
}

var _ sim.Node = (*Worker)(nil)

// New returns the worker's factory.
func New(cfg Config) sim.Factory {
	return func(name string, disk *sim.Disk) sim.Node {
		w := &Worker{cfg: cfg, name: name, calls: map[uint64]string{}, out: map[uint64]outstanding{}, results: map[string]*pending{}, memory: map[string]hist.Result{}}
		if v, ok := disk.Get("incarnation"); ok {
			w.inc = v.(int64)
		}
		w.direct = cfg.Direct
		if v, ok := disk.Get("mode"); ok {
			w.direct = v.(string) == "direct"
		}
		w.claimSQL.DB, w.resultSQL.DB = cfg.DB, cfg.DB
		return w
	}
}

func resultKey(sub int64, token string) string { return fmt.Sprintf("result/%020d/%s", sub, token) }

// Step implements sim.Node.
func (w *Worker) Step(env *sim.Env, in sim.Input) {
	for _, c := range []*db.Client{&w.claimSQL, &w.resultSQL} {
		if done, ok := c.Handle(in); ok {
			for _, d := range done {
				d.Tag.(func(db.Done))(d)
			}
			return
		}
	}
	switch in.Kind {
	case sim.Command:
		w.command(env, in.Cmd)
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
	case sim.ConnBroken:
		for _, c := range []*client{&w.jobs, &w.uploads} {
			if in.Conn == c.conn {
				c.conn = 0
				c.next(len(w.cfg.Arbiters))
				w.lost(env, in.Conn)
			}
		}
	}
}

// drop gives up on a client's connection (a request timed out, or the
// arbiter cannot serve): it is closed, the client moves on to the next
// arbiter, and every request still on the connection is failed and retried.
func (w *Worker) drop(env *sim.Env, c *client) {
	conn := c.conn
	c.next(len(w.cfg.Arbiters))
	if conn == 0 {
		return
	}
	env.Close(conn)
	c.conn = 0
	w.lost(env, conn)
}

// lost fails the requests that were on a connection that broke or was
// dropped: their outcome is unknown, and each is retried after its backoff.
func (w *Worker) lost(env *sim.Env, c network.ConnID) {
	var nos []uint64
	for no, o := range w.out {
		if o.conn == c {
			nos = append(nos, no)
		}
	}
	sort.Slice(nos, func(i, j int) bool { return nos[i] < nos[j] })
	for _, no := range nos {
		o := w.out[no]
		delete(w.out, no)
		delete(w.calls, no)
		switch o.op {
		case arbiter.OpClaim:
			if w.claiming && w.claimNo == no {
				w.claimLater(env)
			}
		case arbiter.OpSubmit:
			if p, ok := w.results[o.key]; ok && p.no == no {
				w.retrySubmit(env, o.key, 0)
			}
		}
	}
}

func (w *Worker) timer(env *sim.Env, in sim.Input) {
	switch t := in.Tag.(type) {
	case claimRetry:
		w.claiming = false
		w.claim(env)
	case claimTimeout:
		if w.claiming && w.claimNo == t.no {
			w.drop(env, &w.jobs)
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
	case beatWait:
		if _, waiting := w.out[t.no]; waiting && w.job != nil {
			w.drop(env, &w.jobs)
			w.reconfirm(env)
		}
	case confirm:
		if w.job != nil && w.job.lease.Token == t.token && !w.job.confirmed {
			w.beat(env)
		}
	case submitRetry:
		if _, ok := w.results[t.key]; ok {
			w.submit(env, t.key)
		}
	case submitWait:
		if p, ok := w.results[t.key]; ok && p.no == t.no {
			w.drop(env, &w.uploads)
		}
	}
}

// send sends a request on a client's keep-alive connection (dialled when
// there is none) and records the call.
func (w *Worker) send(env *sim.Env, c *client, r arbiter.Request, key string) uint64 {
	w.no++
	r.No = w.no
	r.Worker = w.name
	r.Home = w.cfg.Home
	id := fmt.Sprintf("%s#%d.%d", w.name, w.inc, w.no)
	w.calls[w.no] = id
	if env.Recording() {
		c := hist.Call{ID: id, Client: w.name, Op: string(r.Op), Sub: r.Sub, Token: r.Token, Gen: r.Gen, RequestID: r.RequestID, Verdict: r.Verdict}
		if r.Op == arbiter.OpClaim {
			c.Episode = w.claimID
		}
		env.Note(hist.KindCall, r.String(), c)
	}
	if c.conn == 0 {
		c.conn = env.Dial(w.cfg.Arbiters[c.arb])
	}
	w.out[w.no] = outstanding{conn: c.conn, op: r.Op, key: key}
	env.SendConn(c.conn, r)
	return w.no
}

// next moves a client on to the next of n arbiters.
func (c *client) next(n int) {
	if n > 1 {
		c.arb = (c.arb + 1) % n
	}
}

// elsewhere is called after a 503: with several arbiters the client tries
// another one (this one is not the leader, or cannot reach the database).
func (w *Worker) elsewhere(env *sim.Env, c *client) {
	if len(w.cfg.Arbiters) > 1 {
		w.drop(env, c)
	}
}

// claim sends (or re-sends, with the same request_id) a claim.
func (w *Worker) claim(env *sim.Env) {
	if w.job != nil {
		return
	}
	if w.direct {
		w.claimDirect(env)
		return
	}
	if w.claimID == "" {
		w.claimSeq++
		w.claimID = fmt.Sprintf("%s-%d-%d", w.name, w.inc, w.claimSeq)
		w.claimAttempt = 0
	}
	w.claiming = true
	w.claimNo = w.send(env, &w.jobs, arbiter.Request{Op: arbiter.OpClaim, RequestID: w.requestID()}, "")
	env.Cancel(w.claimTimer)
	w.claimTimer = env.After(w.cfg.Design.ClaimHold+w.cfg.Design.RequestTimeout, claimTimeout{w.claimNo})
}

// requestID is the request_id a claim attempt carries: the claim's own id,
// the same on every retry (A.3). Under no-request-id every attempt carries a
// new one, so a retry is a new claim to the arbiter.
func (w *Worker) requestID() string {
	if w.cfg.Design.Has(arbiter.NoRequestID) {
		return fmt.Sprintf("%s.%d", w.claimID, w.claimAttempt)
	}
	return w.claimID
}

// claimLater retries the claim after the backoff.
func (w *Worker) claimLater(env *sim.Env) {
	env.Cancel(w.claimTimer)
	w.claiming = false
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
	delete(w.out, r.No)
	if env.Recording() {
		env.Note(hist.KindReturn, r.String(), hist.Return{ID: id, Code: r.Code, Sub: r.Lease.Sub + r.Sub, Token: r.Lease.Token + r.Token, Gen: r.Lease.Gen, User: r.Lease.User, Problem: r.Lease.Problem})
	}
	switch r.Op {
	case arbiter.OpClaim:
		w.claimReply(env, r)
	case arbiter.OpHeartbeat:
		if w.job == nil || w.job.lease.Token != r.Token {
			return
		}
		switch r.Code {
		case arbiter.Code410:
			w.abandon(env)
		case arbiter.Code200:
			w.job.confirmed = true
		default:
			w.reconfirm(env)
		}
	case arbiter.OpSubmit:
		w.submitReply(env, r)
	}
}

func (w *Worker) claimReply(env *sim.Env, r arbiter.Reply) {
	if !w.claiming || r.RequestID != w.requestID() || w.job != nil {
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
	default: // 503: the database is unreachable, or not the leader
		w.elsewhere(env, &w.jobs)
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
	if w.direct {
		return // the old scheme has no leases and no heartbeats
	}
	w.beat(env)
	w.job.hb = env.After(d.Heartbeat, heartbeat{l.Token})
}

// reconfirm retries the confirming heartbeat soon when the lease is still
// unconfirmed: the unconfirmed lease is short (A.2: 10 s), the heartbeat
// interval longer.
func (w *Worker) reconfirm(env *sim.Env) {
	if w.job != nil && !w.job.confirmed {
		env.After(w.cfg.Design.BackoffBase, confirm{w.job.lease.Token})
	}
}

// beat sends a heartbeat. One that gets no reply within the request
// timeout gives up on the connection, so the next heartbeat goes to another
// arbiter: a stalled arbiter must not cost a worker its lease while another
// one serves.
func (w *Worker) beat(env *sim.Env) {
	l := w.job.lease
	no := w.send(env, &w.jobs, arbiter.Request{Op: arbiter.OpHeartbeat, Sub: l.Sub, Token: l.Token}, "")
	env.After(w.cfg.Design.RequestTimeout, beatWait{no})
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
	if r.Token == "" {
		w.submitDirect(env, key)
		return
	}
	p.no = w.send(env, &w.uploads, arbiter.Request{Op: arbiter.OpSubmit, Sub: r.Sub, Token: r.Token, Gen: r.Gen, Verdict: r.Verdict}, key)
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
			w.retrySubmit(env, key, r.Code)
			w.elsewhere(env, &w.uploads)
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

// ---- the old scheme: straight to the database (A-S9) ----

func (w *Worker) command(env *sim.Env, cmd sim.Cmd) {
	if cmd.Name != "mode" || (cmd.Arg != "direct" && cmd.Arg != "arbiter") {
		panic(fmt.Sprintf("worker: unknown command %q %q (want: mode direct|arbiter)", cmd.Name, cmd.Arg))
	}
	env.Disk().Put("mode", cmd.Arg)
	if (cmd.Arg == "direct") == w.direct {
		return
	}
	w.direct = cmd.Arg == "direct"
	if w.job == nil {
		// Switch the claim in progress over to the new path; hanging up on
		// the arbiter cancels a claim hanging there.
		env.Cancel(w.claimTimer)
		if c := w.jobs.conn; w.direct && c != 0 {
			env.Close(c)
			w.jobs.conn = 0
			w.lost(env, c)
		}
		w.claiming, w.claimID = false, ""
		w.claim(env)
	}
}

// claimDirect runs the old scheme's claim transaction: the global lock, a
// pending row with SKIP LOCKED, the row made ours, the shared round moved on.
func (w *Worker) claimDirect(env *sim.Env) {
	if w.claiming {
		return
	}
	w.claiming = true
	retry := func() {
		w.claiming = false
		env.Cancel(w.claimTimer)
		w.claimTimer = env.After(w.cfg.Design.DispatchEvery, claimRetry{})
	}
	w.claimSQL.Exec(env, func(d db.Done) {
		if d.Err() != nil {
			retry()
			return
		}
		rows := d.Resp.Results[2].Rows
		if len(rows) == 0 {
			w.claimSQL.Exec(env, func(db.Done) {}, db.Rollback())
			retry()
			return
		}
		id := rows[0]["id"].(int64)
		w.claimSQL.Exec(env, func(d db.Done) {
			if d.Err() != nil || d.Resp.Results[0].Affected != 1 {
				w.claimSQL.Exec(env, func(db.Done) {}, db.Rollback())
				retry()
				return
			}
			row := d.Resp.Results[0].Rows[0]
			w.claiming = false
			if w.job != nil || !w.direct {
				return
			}
			w.start(env, arbiter.Lease{Sub: id, Gen: row["lease_gen"].(int64), User: row["user_id"].(int64), Problem: row["problem_id"].(int64)})
		}, arbiter.LegacyClaim(id, w.name), arbiter.AdvanceRound(w.name), db.Commit())
	}, db.Begin(), arbiter.GlobalLock(), arbiter.PickPending())
}

// submitDirect writes a result the old way: conditional on the row still
// being judging and ours.
func (w *Worker) submitDirect(env *sim.Env, key string) {
	p := w.results[key]
	r := p.res
	p.no = 1 // a request is out
	fail := func() {
		w.resultSQL.Exec(env, func(db.Done) {}, db.Rollback())
		w.retrySubmit(env, key, 0)
	}
	answered := func(code int) {
		delete(w.results, key)
		delete(w.memory, key)
		env.Disk().Delete(key)
		env.Disk().Sync()
		res := p.res
		res.Phase, res.Code = hist.ResultAnswered, code
		w.note(env, res)
	}
	w.resultSQL.Exec(env, func(d db.Done) {
		if d.Err() != nil {
			fail()
			return
		}
		if d.Resp.Results[1].Affected == 0 {
			w.resultSQL.Exec(env, func(db.Done) {}, db.Rollback())
			answered(arbiter.Code410)
			return
		}
		row := d.Resp.Results[1].Rows[0]
		stmts := []db.Stmt{arbiter.RecordJudging(r.Sub, "", r.Gen, w.name, r.Verdict, env.Now())}
		credit := r.Verdict == "AC"
		if credit {
			stmts = append(stmts, w.cfg.Design.CreditFirstAC(row["user_id"].(int64), row["problem_id"].(int64), r.Sub, env.Now()))
		}
		w.resultSQL.Exec(env, func(d db.Done) {
			if d.Err() != nil {
				fail()
				return
			}
			var more []db.Stmt
			if credit && d.Resp.Results[1].Inserted {
				more = append(more, arbiter.CreditXP(row["user_id"].(int64)))
			}
			w.resultSQL.Exec(env, func(d db.Done) {
				if d.Err() != nil {
					fail()
					return
				}
				answered(arbiter.Code200)
			}, append(more, db.Commit())...)
		}, stmts...)
	}, db.Begin(), arbiter.LegacyDecide(r.Sub, w.name, r.Verdict))
}
