package judge

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// WorkerConfig configures one worker.
type WorkerConfig struct {
	Design Design
	// ID is the worker_id the process acts under (empty: its own name):
	// several processes share one (sandboxes, a replacement).
	ID       string
	Home     bool           // a home machine (dispatch prefers them)
	Arbiters []network.Addr // arbiters to talk to, tried in turn
	// Direct makes the worker claim and submit directly from the database,
	// as the old scheme did (A-S9), on DB. A "mode direct" or "mode arbiter"
	// command switches it (the migration's rollback by configuration); the
	// mode is kept on disk.
	Direct bool
	DB     network.Addr
	// Poison are the submissions whose judging takes the worker down (a
	// sandbox escape, a kernel bug): the worker dies part way through the
	// judging and its supervisor restarts it PoisonRestart later.
	Poison map[int64]bool
}

// PoisonRestart is how long a worker's supervisor waits before it starts a
// worker that died judging a poison submission again.
const PoisonRestart = 5 * time.Second

// client is one HTTP client: the arbiter it talks to and its keep-alive
// connection.
type client struct {
	arb  int            // index of the arbiter in use
	conn network.ConnID // 0: none
}

// job is a lease the worker holds: judging, or waiting its turn.
type job struct {
	lease     Lease
	verdict   string
	ended     bool // judged, or abandoned
	stopped   bool // its heartbeats stopped (stop)
	confirmed bool // a heartbeat got 200: the unconfirmed lease became a full one
	// The confirming heartbeat's retry: at most one waiting at a time, on
	// a backoff that grows with each (reconfirm).
	reconfirming bool
	reconfirms   int
	gone         sim.Queue[struct{}] // a heartbeat got 410: the lease is gone, stop judging
	over         sim.Queue[struct{}] // stop the heartbeats
}

// stop ends the lease's heartbeats: its judging was abandoned, or its
// result was answered, or a heartbeat after the judging found the lease gone.
func (j *job) stop() {
	if !j.stopped {
		j.stopped = true
		j.over.Put(struct{}{})
	}
}

// pending is a result not yet answered by the arbiter.
type pending struct {
	key string // its key on disk
	res hist.Result
	job *job // the judging's lease, heartbeated until the answer (nil: a result read back from disk)
}

// Worker is one judge worker (A.3).
type Worker struct {
	cfg  WorkerConfig
	name string // the process
	id   string // the worker_id it acts under
	inc  int64
	no   uint64 // last request number

	// Two HTTP clients, as two loops of a real worker: one claims and
	// heartbeats, the other uploads results from disk in the background.
	// Each has its own keep-alive connection, so a stuck upload does not
	// hold up claiming (A-S5: home-1 claims again while its first result is
	// still stuck on the road).
	jobs, uploads client

	claimID      string // the claim in progress ("" when none): its request_id, kept across retries
	claimSeq     int
	claimAttempt int

	held    []*job // the leases of the claim being judged (one, or up to claim_batch)
	results map[string]*pending
	// The background uploader's queue, the next to submit first, and
	// whether its loop runs: one loop submits the results one at a time,
	// in turn, on one backoff.
	queue     []*pending
	uploading bool
	memory    map[string]hist.Result // results kept in memory only (worker-no-disk)

	direct bool                // claiming directly from the database (the old scheme)
	wake   sim.Queue[struct{}] // a mode switch ends the claim loop's wait
	// The old scheme's two database sessions: one claims, one writes
	// results (as the two HTTP clients of the new scheme).
	claimSQL, resultSQL *db.Conn
}

// Holding reports whether the worker holds a result it has not had
// answered (being uploaded, or kept in memory): the run is not quiet while
// one does.
func (w *Worker) Holding() bool { return len(w.results) > 0 || len(w.memory) > 0 }

// NewWorker returns the worker's factory.
func NewWorker(cfg WorkerConfig) sim.Factory {
	return func(name string, disk *sim.Disk) sim.Node {
		id := cfg.ID
		if id == "" {
			id = name
		}
		w := &Worker{cfg: cfg, name: name, id: id, results: map[string]*pending{}, memory: map[string]hist.Result{},
			claimSQL: &db.Conn{DB: cfg.DB}, resultSQL: &db.Conn{DB: cfg.DB}}
		if v, ok := disk.Get("incarnation"); ok {
			w.inc = v.(int64)
		}
		w.direct = cfg.Direct
		if v, ok := disk.Get("mode"); ok {
			w.direct = v.(string) == "direct"
		}
		return sim.ProgramOf(w, w.main)
	}
}

func resultKey(sub int64, token string) string { return fmt.Sprintf("result/%020d/%s", sub, token) }

// main is the worker's life (A.3): first re-submit every result left on
// disk, then claim, judge, save the result and claim again.
func (w *Worker) main(p *sim.Proc) {
	w.inc++
	p.Disk().Put("incarnation", w.inc)
	p.OnCommand(w.command)
	for _, k := range p.Disk().Keys("result/") {
		v, _ := p.Disk().Get(k)
		w.results[k] = &pending{key: k, res: v.(hist.Result)}
		w.upload(p, k)
	}
	for {
		ls, ok := w.claim(p)
		if !ok {
			continue // the mode changed: claim the other way
		}
		w.judgeAll(p, ls)
	}
}

// ---- HTTP to the arbiters ----

// call sends a request on a client's keep-alive connection (dialled when
// there is none) and waits for its reply, recording the call and its
// return. A timeout gives up on the connection (it is closed, and the
// client moves on to the next arbiter); a broken connection moves on too.
func (w *Worker) call(p *sim.Proc, c *client, r Request, timeout time.Duration) (Reply, error) {
	return w.callOn(p, c, r, timeout, true)
}

// callOn is call; a timeout gives up on the connection (the next request
// goes to the next arbiter, the others on it fail) only when drop says so.
func (w *Worker) callOn(p *sim.Proc, c *client, r Request, timeout time.Duration, drop bool) (Reply, error) {
	w.no++
	no := w.no
	r.No, r.Worker, r.Home = no, w.id, w.cfg.Home
	if w.id != w.name {
		r.Proc = w.name
	}
	id := fmt.Sprintf("%s#%d.%d", w.name, w.inc, no)
	p.Note(w.callNote(id, r))
	if c.conn != 0 && p.Broken(c.conn) {
		c.conn = 0
		c.next(len(w.cfg.Arbiters))
	}
	if c.conn == 0 {
		c.conn = p.Dial(w.cfg.Arbiters[c.arb])
	}
	conn := c.conn
	m, err := p.Call(conn, r, timeout, r.Op.Path(), no)
	if err != nil {
		if errors.Is(err, sim.ErrTimeout) {
			if drop {
				w.drop(p, c, conn)
			}
		} else if c.conn == conn {
			c.conn = 0
			c.next(len(w.cfg.Arbiters))
		}
		return Reply{}, err
	}
	rep := m.Body.(Reply)
	p.Note(returnNote(id, rep))
	return rep, nil
}

// callNote is the note of a request: its text reads as the request does.
func (w *Worker) callNote(id string, r Request) hist.Call {
	call := hist.Call{ID: id, Client: w.name, WorkerID: w.workerID(), Op: string(r.Op), Sub: r.Sub, Token: r.Token, Gen: r.Gen, RequestID: r.RequestID, Verdict: r.Verdict, No: r.No}
	if r.Op == OpClaim {
		call.Episode = w.claimID
	}
	return call
}

// returnNote is the note of a reply: its text reads as the reply does.
func returnNote(id string, rep Reply) hist.Return {
	ret := hist.Return{ID: id, Code: rep.Code, Sub: rep.Sub, Token: rep.Token, Op: string(rep.Op), No: rep.No, RequestID: rep.RequestID, Why: rep.Why}
	if len(rep.Leases) > 0 {
		l := rep.Leases[0]
		ret.Sub, ret.Token, ret.Gen, ret.User, ret.Problem = l.Sub, l.Token, l.Gen, l.User, l.Problem
	}
	if len(rep.Leases) > 1 {
		for _, l := range rep.Leases {
			ret.Leases = append(ret.Leases, hist.Lease{Sub: l.Sub, Token: l.Token, Gen: l.Gen, User: l.User, Problem: l.Problem})
		}
	}
	return ret
}

// drop gives up on a client's connection: it is closed, the client moves on
// to the next arbiter, and every other request still on it fails.
func (w *Worker) drop(p *sim.Proc, c *client, conn network.ConnID) {
	if c.conn != conn {
		return // already replaced
	}
	c.next(len(w.cfg.Arbiters))
	if conn == 0 {
		return
	}
	c.conn = 0
	p.Close(conn)
}

// next moves a client on to the next of n arbiters.
func (c *client) next(n int) {
	if n > 1 {
		c.arb = (c.arb + 1) % n
	}
}

// elsewhere is called after a 503: with several arbiters the client tries
// another one (this one is not the leader, or cannot reach the database).
func (w *Worker) elsewhere(p *sim.Proc, c *client) {
	if len(w.cfg.Arbiters) > 1 {
		w.drop(p, c, c.conn)
	}
}

// ---- claiming ----

// claim gets the next leases (one, or up to claim_batch): from the
// arbiter, or straight from the database in the old scheme. It returns
// false when a mode switch interrupted it.
func (w *Worker) claim(p *sim.Proc) ([]Lease, bool) {
	if w.direct {
		l, ok := w.claimDirect(p)
		return []Lease{l}, ok
	}
	return w.claimArbiter(p)
}

// claimArbiter asks the arbiter for work until it gets a lease (A.3): the
// claim hangs until paired or 204; a retry after a failure carries the same
// request_id, after the backoff.
func (w *Worker) claimArbiter(p *sim.Proc) ([]Lease, bool) {
	d := w.cfg.Design
	for !w.direct {
		if w.claimID == "" {
			w.claimSeq++
			w.claimID = w.newClaimID()
			w.claimAttempt = 0
		}
		rep, err := w.call(p, &w.jobs, Request{Op: OpClaim, RequestID: w.requestID()}, d.ClaimHold+d.RequestTimeout)
		if w.direct {
			break
		}
		switch {
		case err == nil && rep.Code == Code200:
			w.claimID = ""
			return rep.Leases, true
		case err == nil && rep.Code == Code204:
			w.claimID = "" // no work within the hold: a new claim at once
			continue
		case err == nil: // 503: the database is unreachable, or not the leader
			w.elsewhere(p, &w.jobs)
		}
		wait := d.Backoff(w.claimAttempt)
		w.claimAttempt++
		if _, err := w.wake.Get(p, wait, "claim backoff"); err == nil {
			break // woken by a mode switch
		}
	}
	w.claimID = ""
	return nil, false
}

// newClaimID names a new claim: by default the process's name, its
// incarnation and the claim's number, unique in the world. With
// local_request_ids the machine's name is left out: a sandbox number in
// its place keeps the ids of one worker_id apart, and two worker_ids send
// the same ids.
func (w *Worker) newClaimID() string {
	if !w.cfg.Design.LocalRequestIDs {
		return fmt.Sprintf("%s-%d-%d", w.name, w.inc, w.claimSeq)
	}
	box := "1"
	if i := strings.IndexByte(w.name, '.'); i >= 0 {
		box = w.name[i+1:]
	}
	return fmt.Sprintf("%s-%d-%d", box, w.inc, w.claimSeq)
}

// requestID is the request_id a claim attempt carries: the claim's own id,
// the same on every retry (A.3). Under no-request-id every attempt carries a
// new one, so a retry is a new claim to the arbiter.
func (w *Worker) requestID() string {
	if w.cfg.Design.Has(NoRequestID) {
		return fmt.Sprintf("%s.%d", w.claimID, w.claimAttempt)
	}
	return w.claimID
}

// ---- judging ----

// judgeAll judges the leases of one claim, one after another. Each lease
// is heartbeated from the start (the first heartbeat confirms its short
// unconfirmed lease at once) until its judging is abandoned or its result
// answered (heartbeats); a lease whose heartbeat gets 410 while it is
// judged is gone: its judging is abandoned, or never started.
func (w *Worker) judgeAll(p *sim.Proc, ls []Lease) {
	w.held = make([]*job, len(ls))
	for i, l := range ls {
		j := &job{lease: l, verdict: VerdictOf(l.Sub)}
		w.held[i] = j
		if !w.direct { // the old scheme has no leases and no heartbeats
			p.Go("heartbeat", func(p *sim.Proc) { w.heartbeats(p, j) })
		}
	}
	for _, j := range w.held {
		w.judge(p, j)
	}
	w.held = nil
}

// judge judges one lease.
func (w *Worker) judge(p *sim.Proc, j *job) {
	l := j.lease
	if j.gone.Len() > 0 { // reclaimed before its turn came
		j.ended = true
		j.stop()
		return
	}
	d := w.cfg.Design
	took := max(time.Duration(sim.Between(p.Rand(), "judge-time", int64(d.JudgeMin), int64(d.JudgeMax))), time.Nanosecond)
	p.Note(hist.Judge{Worker: w.name, WorkerID: w.workerID(), Sub: l.Sub, Token: l.Token, Gen: l.Gen, Phase: hist.JudgeStart})
	if w.cfg.Poison[l.Sub] {
		// The judging takes the worker down part way through.
		took /= 2
	}
	_, err := j.gone.Get(p, took, "judging")
	if err != nil && w.cfg.Poison[l.Sub] {
		p.Die(fmt.Sprintf("judging poison submission %d", l.Sub), PoisonRestart)
	}
	j.ended = true
	if err == nil {
		j.stop()
		p.Note(hist.Judge{Worker: w.name, WorkerID: w.workerID(), Sub: l.Sub, Token: l.Token, Gen: l.Gen, Phase: hist.JudgeAbandon})
		return
	}
	w.finish(p, j)
}

// heartbeats sends a heartbeat now and every interval until the lease's
// judging is abandoned or its result answered (stop). A finished judging
// whose result is still being uploaded keeps its lease alive: the lease
// says "we heard from you within 60 s" (A.2), and a worker that holds a
// result is still there. Without it the lease lives only as long as the
// uploader's backoff lets it reach an arbiter, and with two arbiter
// addresses tried in turn that is up to two backoff caps, longer than the
// grace a restarted arbiter gives (found by the baseline, wide world, heavy
// faults, seed 5002754: arbiter-1 crashed, its replacement arbiter-2 came
// up 37 s later; home-2, holding a finished result, tried arbiter-1 26 s
// into arbiter-2's grace and arbiter-2 next 66 s into it, after the sweep
// had made the submission a system_error, MA3).
func (w *Worker) heartbeats(p *sim.Proc, j *job) {
	for {
		w.beat(p, j)
		if _, err := j.over.Get(p, w.cfg.Design.Heartbeat, "heartbeat interval"); err == nil {
			return
		}
	}
}

// beat sends one heartbeat in a process of its own. One that gets no reply
// within the request timeout gives up on the connection, so the next
// heartbeat goes to another arbiter: a stalled arbiter must not cost a
// worker its lease while another one serves. So does a 503, as a submit's
// does: an arbiter that cannot reach the database (its link to it cut)
// cannot renew a lease that the other one can (found by the wide world:
// heavy faults, seed 2698, a lease lost to a cut between the database and
// the arbiter the worker kept asking, MA3). A connection that fails before
// any answer (nobody at that address: an arbiter crashed, or a replacement
// not yet up) tries the next arbiter at once, each once: a heartbeat that
// waited a whole interval per address would leave a replacement unheard
// from for as many intervals as there are addresses, longer than the grace
// it gives (a design whose grace covers one interval and a request's
// timeout, the checkers' keepsLeases). After the judging ended (its result
// still being uploaded) a 410 stops the heartbeats.
func (w *Worker) beat(p *sim.Proc, j *job) {
	p.Go("beat", func(p *sim.Proc) {
		l := j.lease
		for tries := 1; ; tries++ {
			// After the judging ended, the lease's heartbeats go with its
			// result, on the uploader's connection, and one that fails
			// leaves that connection to the uploader: the claims'
			// connection and the uploader's backoff are as before (a
			// heartbeat queued on the claims' connection behind a stalled
			// one held up A-S5's second claim until its lease ran out).
			c := &w.jobs
			if j.ended {
				c = &w.uploads
			}
			rep, err := w.callOn(p, c, Request{Op: OpHeartbeat, Sub: l.Sub, Token: l.Token}, w.cfg.Design.RequestTimeout, !j.ended)
			switch {
			case j.stopped:
			case errors.Is(err, sim.ErrTimeout) && !j.ended && tries < len(w.cfg.Arbiters):
				// Given up on (its connection dropped): the next arbiter at
				// once, as for a failed connection. Waiting for the next
				// interval left the lease unheard from for two intervals,
				// longer than a lease that covers one interval and a
				// request's timeout (keepsLeases): found by the wide world,
				// heavy faults, seed 20009551 (arbiter-1 paused at a
				// yield, prod-1's heartbeat to it timed out, arbiter-2 up
				// and serving; lease 17.9 s, heartbeat 10 s: the next one
				// came 2.2 s after the lease ran out, max_attempts 1 made
				// it a system_error, MA3).
				continue
			case errors.Is(err, sim.ErrTimeout):
				w.reconfirm(p, j)
			case err != nil: // the connection failed: the next arbiter at once
				if tries < len(w.cfg.Arbiters) {
					continue
				}
			case j.ended && rep.Code != Code200 && rep.Code != Code410:
				// A 503 after the judging: the uploader's own 503 moves
				// its connection on; the next heartbeat follows it.
			case rep.Code == Code410 && j.ended:
				j.stop()
			case rep.Code == Code410:
				j.gone.Put(struct{}{})
			case rep.Code == Code200:
				j.confirmed = true
			case rep.Why == NotLeader && tries < len(w.cfg.Arbiters):
				// Refused by a standby (leader-only-serves): the next
				// arbiter at once, as for a failed connection. Waiting for
				// the next interval outlived a lease that covers one
				// interval and a request's timeout: found by the wide
				// world, heavy faults, seed 41001617 (home-3's heartbeat
				// answered "not the leader" by arbiter-1, the next one
				// after its lease ran out, MA3).
				w.elsewhere(p, &w.jobs)
				continue
			default:
				w.elsewhere(p, &w.jobs)
				w.reconfirm(p, j)
			}
			return
		}
	})
}

// reconfirm retries the confirming heartbeat soon when the lease is still
// unconfirmed: the unconfirmed lease is short (A.2: 10 s), the heartbeat
// interval longer. One retry waits at a time per lease, on the worker's
// backoff (A.3: 1 s, 2 s, 4 s ... up to the cap), as the claims and the
// submits retry: each failed heartbeat had started a retry of its own
// every backoff_base, and the periodic heartbeats failing in an outage
// added one an interval, none ending until the lease was confirmed (found
// by a review of the wide world, heavy faults, seed 31000264: the database
// crashed just after home-1's grant, and home-1 sent 113 heartbeats in one
// minute of the outage, 2 a second growing to 7). The periodic heartbeats
// go on meanwhile, every interval, and an outage ends with the grace
// (A-S7: grace first, then sweep), which the next of them lands in.
func (w *Worker) reconfirm(p *sim.Proc, j *job) {
	if j.confirmed || j.reconfirming {
		return
	}
	j.reconfirming = true
	wait := w.cfg.Design.Backoff(j.reconfirms)
	j.reconfirms++
	p.Go("reconfirm", func(p *sim.Proc) {
		p.Sleep(wait, "reconfirm")
		j.reconfirming = false
		if !j.stopped && !j.confirmed {
			w.beat(p, j)
		}
	})
}

// finish ends a judging: the result goes to disk before it is submitted
// (A.3), then the worker claims new work while the result is uploaded.
func (w *Worker) finish(p *sim.Proc, j *job) {
	l := j.lease
	p.Note(hist.Judge{Worker: w.name, WorkerID: w.workerID(), Sub: l.Sub, Token: l.Token, Gen: l.Gen, Phase: hist.JudgeEnd, Verdict: j.verdict})
	res := hist.Result{Worker: w.name, Sub: l.Sub, Token: l.Token, Gen: l.Gen, Verdict: j.verdict, Phase: hist.ResultSaved}
	key := resultKey(l.Sub, l.Token)
	if w.cfg.Design.Has(WorkerNoDisk) {
		w.memory[key] = res
	} else {
		res.Durable = true
		p.Disk().Put(key, res) // persist before submitting
		p.Sync("result")
	}
	p.Note(w.noted(res))
	w.results[key] = &pending{key: key, res: res, job: j}
	w.upload(p, key)
}

// ---- uploading results ----

// upload hands a saved result to the background uploader (A.3: "a
// background uploader submits it with backoff"): one loop that submits the
// waiting results one at a time, in turn (a result that fails goes to the
// back, so one the arbiter keeps refusing holds up no other), each until
// the arbiter answers 200 (recorded) or 410 (stale: someone else's lease
// now), on one backoff that starts again at its base after an answer. One
// loop, not one per result: results that pile up while the arbiter is away (a worker
// goes on claiming while its uploads fail) would each retry on a backoff
// of their own, and an outage's load would grow with the backlog (found by
// steered seeds: a worker sent 14 requests in a minute of an outage, over
// MA5's bound; docs/findings.md). When the loop is idle, the result's first
// attempt goes out before the caller goes on (A.3: submit, then claim).
func (w *Worker) upload(p *sim.Proc, key string) {
	w.queue = append(w.queue, w.results[key])
	if w.uploading {
		return
	}
	w.uploading = true
	defer p.Yield("upload started")
	p.Go("upload", func(p *sim.Proc) {
		attempt := 0
		for len(w.queue) > 0 {
			pd := w.queue[0]
			code, done := w.submit(p, pd.res)
			if done {
				w.queue = w.queue[1:]
				attempt = 0
				w.answered(p, pd.key, pd, code)
				continue
			}
			r := pd.res
			r.Phase, r.Code = hist.ResultRetry, code
			p.Note(w.noted(r))
			w.queue = append(w.queue[1:], pd)
			p.Sleep(w.cfg.Design.Backoff(attempt), "submit backoff")
			attempt++
		}
		w.uploading = false
	})
}

// submit makes one attempt to submit a result; done when it was answered
// for good (200 or 410).
func (w *Worker) submit(p *sim.Proc, r hist.Result) (code int, done bool) {
	if r.Token == "" {
		return w.submitDirect(p, r)
	}
	rep, err := w.call(p, &w.uploads, Request{Op: OpSubmit, Sub: r.Sub, Token: r.Token, Gen: r.Gen, Verdict: r.Verdict}, w.cfg.Design.RequestTimeout)
	switch {
	case err != nil:
		return 0, false
	case rep.Code == Code200 || rep.Code == Code410:
		return rep.Code, true
	}
	w.elsewhere(p, &w.uploads)
	return rep.Code, false
}

// answered forgets a result the arbiter answered for good.
func (w *Worker) answered(p *sim.Proc, key string, pd *pending, code int) {
	if pd.job != nil {
		pd.job.stop()
	}
	res := pd.res
	res.Phase, res.Code = hist.ResultAnswered, code
	if w.results[key] != pd {
		// The same key was saved again meanwhile (the lease judged again,
		// as a token kept across a reclaim allows): that saving's own
		// upload forgets the key.
		p.Note(w.noted(res))
		return
	}
	delete(w.results, key)
	delete(w.memory, key)
	// The answer is noted before the sync: a crash at the sync (the
	// deletion already durable on an auto-syncing disk) must not read as
	// a result lost (PA7) when its 200 came back.
	p.Note(w.noted(res))
	p.Disk().Delete(key)
	p.Sync("result answered")
}

// workerID is the worker_id the notes name: empty when it is the
// process's own name.
func (w *Worker) workerID() string {
	if w.id != w.name {
		return w.id
	}
	return ""
}

// noted is a result as its note carries it: with the worker_id (the result
// on disk goes without it).
func (w *Worker) noted(r hist.Result) hist.Result {
	r.WorkerID = w.workerID()
	return r
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
	return Verdicts[1+int(x/2)%(len(Verdicts)-1)]
}

// ---- the old scheme: straight to the database (A-S9) ----

// command switches the scheme: "mode direct" or "mode arbiter" (the
// migration's rollback by configuration). The mode goes to disk; a claim in
// progress is switched over at once (hanging up on the arbiter cancels a
// claim hanging there); a judging in progress finishes as it started.
func (w *Worker) command(p *sim.Proc, cmd sim.Cmd) {
	if cmd.Name != "mode" || (cmd.Arg != "direct" && cmd.Arg != "arbiter") {
		panic(fmt.Sprintf("worker: unknown command %q %q (want: mode direct|arbiter)", cmd.Name, cmd.Arg))
	}
	p.Disk().Put("mode", cmd.Arg)
	if (cmd.Arg == "direct") == w.direct {
		return
	}
	w.direct = cmd.Arg == "direct"
	if w.held != nil {
		return
	}
	if c := w.jobs.conn; w.direct && c != 0 {
		w.jobs.conn = 0
		p.Close(c)
	}
	if w.wake.Waiting() > 0 {
		w.wake.Put(struct{}{}) // end the claim loop's wait (and nothing later)
	}
}

// claimDirect runs the old scheme's claim transaction: the global lock, a
// pending row with SKIP LOCKED, the row made ours, the shared round moved
// on. With nothing to claim it tries again every dispatch interval.
func (w *Worker) claimDirect(p *sim.Proc) (Lease, bool) {
	for w.direct {
		retryAt := p.Mono().Add(w.cfg.Design.DispatchEvery)
		l, ok := w.claimDirectOnce(p, &retryAt)
		if ok && w.direct {
			return l, true
		}
		if !w.direct {
			break // switched back: the row claimed meanwhile is left as it is
		}
		if _, err := w.wake.Get(p, max(retryAt.Sub(p.Mono()), time.Nanosecond), "direct claim retry"); err == nil {
			break
		}
	}
	return Lease{}, false
}

// claimDirectOnce makes one claim attempt; a failed one sets retryAt to a
// dispatch interval after the failure was known.
func (w *Worker) claimDirectOnce(p *sim.Proc, retryAt *clock.Time) (Lease, bool) {
	tx, _ := w.claimSQL.Begin(p)
	tx.Queue(GlobalLock().Named("global-lock"))
	row, err := tx.QueryRow(PickPending(1).Named("pick-pending"))
	if err != nil || row == nil {
		*retryAt = p.Mono().Add(w.cfg.Design.DispatchEvery)
		tx.Rollback()
		return Lease{}, false
	}
	id := row.Int("id")
	rs, err := tx.CommitBatch(LegacyClaim(id, w.id).Named("legacy-claim"), AdvanceRound(w.id).Named("advance-round"))
	*retryAt = p.Mono().Add(w.cfg.Design.DispatchEvery)
	if err != nil || rs[0].Affected != 1 {
		return Lease{}, false
	}
	claimed := rs[0].Rows[0]
	return Lease{Sub: id, Gen: claimed.Int("lease_gen"), User: claimed.Int("user_id"), Problem: claimed.Int("problem_id")}, true
}

// submitDirect writes a result the old way: conditional on the row still
// being judging and ours.
func (w *Worker) submitDirect(p *sim.Proc, r hist.Result) (code int, done bool) {
	tx, _ := w.resultSQL.Begin(p)
	row, err := tx.QueryRow(LegacyDecide(r.Sub, w.id, r.Verdict).Named("legacy-decide"))
	if err != nil {
		tx.Rollback()
		return 0, false
	}
	if row == nil {
		tx.Rollback()
		return Code410, true
	}
	now := p.Now()
	user := row.Int("user_id")
	write := []db.Stmt{RecordJudging(r.Sub, "", r.Gen, w.id, r.Verdict, now).Named("record-judging")}
	if r.Verdict == "AC" {
		write = append(write, w.cfg.Design.CreditFirstAC(user, row.Int("problem_id"), r.Sub, now).Named("credit-first-ac"))
	}
	rs, err := tx.Batch(write...)
	if err != nil {
		tx.Rollback()
		return 0, false
	}
	if r.Verdict == "AC" && rs[1].Inserted {
		tx.Queue(CreditXP(user).Named("credit-xp"))
	}
	if err := tx.Commit(); err != nil {
		tx.Rollback()
		return 0, false
	}
	return Code200, true
}
