package twopc

import (
	"fmt"
	"sort"

	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

const (
	outcomeCommit = hist.OutcomeCommit
	outcomeAbort  = hist.OutcomeAbort
)

// Crash points of the coordinator (sim.CrashAt actions arm them). The five
// positions of C.1 are PointBegin, PointPrepared+"orders", PointDecided,
// PointLogged and PointCommitted+"orders".
const (
	PointBegin     = "begin"      // a transaction was asked for; nothing done yet (C.1 position 0)
	PointPrepared  = "prepared/"  // + participant: its YES arrived (position 1 after the first)
	PointDecided   = "decided"    // every vote is in, the decision is not logged (position 2)
	PointLogged    = "logged"     // the decision is in the log, fsync'd; no COMMIT PREPARED sent (position 3)
	PointCommitted = "committed/" // + participant: its COMMIT PREPARED was acknowledged (position 4 after the first)
	PointAborted   = "aborted/"   // + participant: its ROLLBACK PREPARED was acknowledged
	PointRecovered = "recovered/" // + participant: one recovery action was acknowledged
)

// CmdTxn is the schedule command that asks a coordinator for one global
// transaction; its argument is the gid.
const CmdTxn = "txn"

// logKey is the decision log record of a gid on the coordinator's disk.
func logKey(gid string) string { return "decision/" + gid }

// Positions are C.1's five crash positions as coordinator crash points.
var Positions = []string{PointBegin, PointPrepared + "orders", PointDecided, PointLogged, PointCommitted + "orders"}

// CoordinatorPoints lists the coordinator's crash points for a design.
func CoordinatorPoints(d Design) []string {
	ps := []string{PointStep, PointBegin}
	for i := 0; i < d.Participants; i++ {
		ps = append(ps, PointPrepared+participantName(i))
	}
	ps = append(ps, PointDecided, PointLogged)
	for i := 0; i < d.Participants; i++ {
		ps = append(ps, PointCommitted+participantName(i), PointAborted+participantName(i), PointRecovered+participantName(i))
	}
	return ps
}

// Coordinator runs global transactions over the participants and keeps the
// decision log on its disk. Order of effects, the heart of 2PC: every vote
// before the decision; the decision written and fsync'd before the first
// COMMIT PREPARED (the commit-before-log knob swaps them); the log read on
// every start, before new work, to finish what is left prepared.
type Coordinator struct {
	d     Design
	name  string
	parts []network.Addr
	disk  *sim.Disk

	txns    []*txn
	rec     *recovery
	queued  []string
	nextGen int
}

var _ sim.Node = (*Coordinator)(nil)

type txn struct {
	gid     string
	cls     []db.Client
	votes   []string
	cur     int // phase one: the participant being prepared
	timer   sim.TimerID
	outcome string
	steps   []step // phase two
	tries   int
	seq     int
}

// step of phase two: log the decision (part < 0) or finish a participant.
type step struct{ part int }

type recovery struct {
	cls     []db.Client
	found   [][]string // per participant: its prepared gids (nil until it answered)
	actions []recAction
	tries   []int
	seq     []int
	started bool
}

type recAction struct {
	part    int
	gid     string
	outcome string
	done    bool
	sent    bool
}

// Request tags.
type (
	tagPrepare struct {
		gid  string
		part int
	}
	tagFinish struct {
		gid  string
		part int
	}
	tagQuery  struct{ part int }
	tagRecAct struct{ i int }
)

// Timer tags.
type (
	voteTimer struct {
		GID  string
		Part int
	}
	retryTimer struct {
		GID  string
		Part int
	}
	recRetry struct{ Part, Action int }
	// reqTimer drops a connection whose request got no answer in time.
	reqTimer struct {
		GID  string // "" for recovery
		Part int
		Seq  int
	}
)

func (t reqTimer) String() string {
	return fmt.Sprintf("request-timeout %q part %d #%d", t.GID, t.Part, t.Seq)
}

func (t voteTimer) String() string  { return fmt.Sprintf("vote-timeout %s part %d", t.GID, t.Part) }
func (t retryTimer) String() string { return fmt.Sprintf("retry %s part %d", t.GID, t.Part) }
func (t recRetry) String() string {
	return fmt.Sprintf("recovery-retry part %d action %d", t.Part, t.Action)
}

// NewCoordinator returns the factory of a coordinator.
func NewCoordinator(d Design, parts []network.Addr) sim.Factory {
	return func(name string, disk *sim.Disk) sim.Node {
		disk.AutoSync = false // every log write is fsync'd explicitly (or never, under log-not-durable)
		return &Coordinator{d: d, name: name, parts: parts, disk: disk}
	}
}

func (c *Coordinator) note(env *sim.Env, n hist.Txn) {
	if !env.Recording() {
		return
	}
	n.By = c.name
	text := n.What + " " + n.GID
	switch {
	case n.Participant != "":
		text += " " + n.Participant
	}
	switch {
	case n.Vote != "":
		text += " " + n.Vote
	case n.Outcome != "":
		text += " " + n.Outcome
	}
	env.Note(hist.KindTxn, text, n)
}

// Step implements sim.Node.
func (c *Coordinator) Step(env *sim.Env, in sim.Input) {
	switch in.Kind {
	case sim.Start:
		c.startRecovery(env)
		return
	case sim.Command:
		if in.Cmd.Name == CmdTxn {
			if c.rec != nil {
				c.queued = append(c.queued, in.Cmd.Arg)
				return
			}
			c.begin(env, in.Cmd.Arg)
		}
		return
	case sim.Timer:
		switch t := in.Tag.(type) {
		case voteTimer:
			if x := c.find(t.GID); x != nil && x.outcome == "" && x.cur == t.Part {
				c.handle(env, x.cls[t.Part].Close(env))
			}
		case retryTimer:
			if x := c.find(t.GID); x != nil {
				c.send(env, x)
			}
		case recRetry:
			c.recRetry(env, t)
		case reqTimer:
			c.timedOut(env, t)
		}
		return
	}
	if r := c.rec; r != nil {
		for i := range r.cls {
			if done, ok := r.cls[i].Handle(in); ok {
				c.handle(env, done)
				return
			}
		}
	}
	for _, x := range c.txns {
		for i := range x.cls {
			if done, ok := x.cls[i].Handle(in); ok {
				c.handle(env, done)
				return
			}
		}
	}
}

func (c *Coordinator) find(gid string) *txn {
	for _, x := range c.txns {
		if x.gid == gid {
			return x
		}
	}
	return nil
}

func (c *Coordinator) handle(env *sim.Env, done []db.Done) {
	for _, d := range done {
		switch tag := d.Tag.(type) {
		case tagPrepare:
			c.voted(env, tag, d)
		case tagFinish:
			c.finished(env, tag, d)
		case tagQuery:
			c.answered(env, tag, d)
		case tagRecAct:
			c.recActed(env, tag, d)
		}
		if env.CrashPoint("") { // crashed inside: stop at once
			return
		}
	}
}

// ---- phase one ----

func (c *Coordinator) begin(env *sim.Env, gid string) {
	if env.CrashPoint(PointBegin) {
		return
	}
	x := &txn{gid: gid, cls: make([]db.Client, len(c.parts)), votes: make([]string, len(c.parts))}
	for i, p := range c.parts {
		x.cls[i].DB = p
	}
	c.txns = append(c.txns, x)
	c.note(env, hist.Txn{What: hist.TxnBegin, GID: gid, Participants: c.names()})
	c.prepare(env, x)
}

func (c *Coordinator) names() []string {
	out := make([]string, len(c.parts))
	for i, p := range c.parts {
		out[i] = string(p)
	}
	return out
}

func (c *Coordinator) prepare(env *sim.Env, x *txn) {
	x.cls[x.cur].ExecAtomic(env, tagPrepare{x.gid, x.cur}, PrepareBatch(x.cur, x.gid)...)
	x.timer = env.After(c.d.VoteTimeout, voteTimer{x.gid, x.cur})
}

func (c *Coordinator) voted(env *sim.Env, tag tagPrepare, d db.Done) {
	x := c.find(tag.gid)
	if x == nil || x.outcome != "" || x.cur != tag.part {
		return
	}
	env.Cancel(x.timer)
	n := hist.Txn{What: hist.TxnVote, GID: x.gid, Participant: string(c.parts[tag.part]), Vote: hist.VoteYes}
	switch e := d.Err(); {
	case e == nil:
		for _, r := range d.Resp.Results {
			n.Rows += r.Affected
		}
	case d.Unknown():
		n.Vote, n.Code = hist.VoteUnknown, e.Code
	default:
		n.Vote, n.Code = hist.VoteNo, e.Code
	}
	x.votes[tag.part] = n.Vote
	c.note(env, n)
	if n.Vote != hist.VoteYes {
		c.decide(env, x, outcomeAbort, "participant "+n.Participant+" voted "+n.Vote)
		return
	}
	if env.CrashPoint(PointPrepared + n.Participant) {
		return
	}
	x.cur++
	if x.cur < len(c.parts) {
		c.prepare(env, x)
		return
	}
	c.decide(env, x, outcomeCommit, "every participant voted yes")
}

// ---- the decision and phase two ----

// decide fixes the outcome in memory and plans phase two: log, then finish
// each participant in order; under commit-before-log the first participant
// is finished before the log is written.
func (c *Coordinator) decide(env *sim.Env, x *txn, outcome, why string) {
	x.outcome = outcome
	c.note(env, hist.Txn{What: hist.TxnDecide, GID: x.gid, Outcome: outcome, Reason: why})
	if env.CrashPoint(PointDecided) {
		return
	}
	x.steps = append(x.steps, step{part: -1})
	for i := range c.parts {
		if x.votes[i] == hist.VoteYes || x.votes[i] == hist.VoteUnknown {
			x.steps = append(x.steps, step{part: i})
		}
	}
	if c.d.Has(CommitBeforeLog) && outcome == outcomeCommit {
		x.steps[0], x.steps[1] = x.steps[1], x.steps[0]
	}
	c.advance(env, x)
}

// logDecision writes the decision record, fsync'd before it is trusted. The
// first record of a gid wins: a coordinator that finds one (another
// instance's, or its recovery's ABORT) follows it. It returns the outcome now
// in the log. The log-not-durable knob skips the fsync.
func (c *Coordinator) logDecision(env *sim.Env, gid, outcome string) string {
	if v, ok := c.disk.Get(logKey(gid)); ok {
		found := v.(string)
		c.note(env, hist.Txn{What: hist.TxnLog, GID: gid, Outcome: found, Found: found, Synced: true})
		return found
	}
	c.disk.Put(logKey(gid), outcome)
	synced := !c.d.Has(LogNotDurable)
	if synced {
		c.disk.Sync()
	}
	c.note(env, hist.Txn{What: hist.TxnLog, GID: gid, Outcome: outcome, Synced: synced})
	return outcome
}

func (c *Coordinator) advance(env *sim.Env, x *txn) {
	for len(x.steps) > 0 {
		s := x.steps[0]
		if s.part >= 0 {
			x.tries = 0
			c.send(env, x)
			return
		}
		x.steps = x.steps[1:]
		if got := c.logDecision(env, x.gid, x.outcome); got != x.outcome {
			// Another instance decided first: follow the log.
			x.outcome = got
			c.note(env, hist.Txn{What: hist.TxnDecide, GID: x.gid, Outcome: got, Reason: "the decision log already held " + got})
			x.steps = x.steps[:0]
			for i := range c.parts {
				if x.votes[i] == hist.VoteYes || x.votes[i] == hist.VoteUnknown {
					x.steps = append(x.steps, step{part: i})
				}
			}
		}
		if env.CrashPoint(PointLogged) {
			return
		}
	}
	c.note(env, hist.Txn{What: hist.TxnDone, GID: x.gid, Outcome: x.outcome})
	for i := range x.cls {
		x.cls[i].Close(env)
	}
	for i, y := range c.txns {
		if y == x {
			c.txns = append(c.txns[:i], c.txns[i+1:]...)
			break
		}
	}
}

func (c *Coordinator) send(env *sim.Env, x *txn) {
	p := x.steps[0].part
	x.cls[p].Exec(env, tagFinish{x.gid, p}, Finish(x.gid, x.outcome))
	x.seq++
	env.After(c.d.ReqTimeout, reqTimer{x.gid, p, x.seq})
}

// timedOut drops a connection whose request was not answered in time (the
// database may be down: a request to a dead host is never answered); the
// request then fails as unknown and is retried.
func (c *Coordinator) timedOut(env *sim.Env, t reqTimer) {
	if t.GID == "" {
		if r := c.rec; r != nil && r.seq[t.Part] == t.Seq && r.cls[t.Part].Pending() > 0 {
			c.handle(env, r.cls[t.Part].Close(env))
		}
		return
	}
	if x := c.find(t.GID); x != nil && x.seq == t.Seq && x.cls[t.Part].Pending() > 0 {
		c.handle(env, x.cls[t.Part].Close(env))
	}
}

func (c *Coordinator) recExec(env *sim.Env, p int, tag any, st db.Stmt) {
	r := c.rec
	r.cls[p].Exec(env, tag, st)
	r.seq[p]++
	env.After(c.d.ReqTimeout, reqTimer{"", p, r.seq[p]})
}

func (c *Coordinator) finished(env *sim.Env, tag tagFinish, d db.Done) {
	x := c.find(tag.gid)
	if x == nil || len(x.steps) == 0 || x.steps[0].part != tag.part {
		return
	}
	if e := d.Err(); e != nil && e.Code != db.CodeUndefinedObject {
		// Unknown (the connection broke) or refused: ask again, later.
		env.After(c.d.Backoff(x.tries), retryTimer{x.gid, tag.part})
		x.tries++
		return
	}
	x.steps = x.steps[1:]
	point := PointCommitted
	if x.outcome == outcomeAbort {
		point = PointAborted
	}
	if env.CrashPoint(point + string(c.parts[tag.part])) {
		return
	}
	c.advance(env, x)
}

// ---- recovery ----

// startRecovery runs on every start: ask each participant for its prepared
// transactions, then finish each one as the log says (no record: ABORT,
// logged first; under presume-commit-on-no-record: COMMIT).
func (c *Coordinator) startRecovery(env *sim.Env) {
	r := &recovery{cls: make([]db.Client, len(c.parts)), found: make([][]string, len(c.parts)), tries: make([]int, len(c.parts)), seq: make([]int, len(c.parts))}
	for i, p := range c.parts {
		r.cls[i].DB = p
	}
	c.rec = r
	for i := range c.parts {
		c.recExec(env, i, tagQuery{i}, db.PreparedXacts())
	}
}

func (c *Coordinator) answered(env *sim.Env, tag tagQuery, d db.Done) {
	r := c.rec
	if r == nil || r.started {
		return
	}
	if d.Err() != nil {
		env.After(c.d.Backoff(r.tries[tag.part]), recRetry{Part: tag.part, Action: -1})
		r.tries[tag.part]++
		return
	}
	gids := []string{}
	for _, row := range d.Resp.Results[len(d.Resp.Results)-1].Rows {
		gids = append(gids, row["gid"].(string))
	}
	sort.Strings(gids)
	r.found[tag.part] = gids
	for _, f := range r.found {
		if f == nil {
			return
		}
	}
	r.started = true
	var all []string
	seen := map[string]bool{}
	for _, f := range r.found {
		for _, g := range f {
			if !seen[g] {
				seen[g] = true
				all = append(all, g)
			}
		}
	}
	sort.Strings(all)
	for _, gid := range all {
		found := ""
		if v, ok := c.disk.Get(logKey(gid)); ok {
			found = v.(string)
		}
		outcome := found
		if outcome == "" {
			outcome = c.presume(env, gid)
		}
		for p, f := range r.found {
			if containsSorted(f, gid) {
				r.actions = append(r.actions, recAction{part: p, gid: gid, outcome: outcome})
				c.note(env, hist.Txn{What: hist.TxnRecover, GID: gid, Participant: string(c.parts[p]), Outcome: outcome, Found: found})
			}
		}
	}
	for i := range r.actions {
		c.recSend(env, i)
	}
	c.recMaybeDone(env)
}

// presume is what recovery does with a prepared transaction the log has no
// record of: it cannot have committed anywhere, so ABORT (logged first, so
// that an instance still running it follows); presume-commit-on-no-record
// commits it instead.
func (c *Coordinator) presume(env *sim.Env, gid string) string {
	if c.d.Has(PresumeCommit) {
		return outcomeCommit
	}
	return c.logDecision(env, gid, outcomeAbort)
}

func containsSorted(xs []string, x string) bool {
	i := sort.SearchStrings(xs, x)
	return i < len(xs) && xs[i] == x
}

func (c *Coordinator) recSend(env *sim.Env, i int) {
	a := &c.rec.actions[i]
	a.sent = true
	c.recExec(env, a.part, tagRecAct{i}, Finish(a.gid, a.outcome))
}

func (c *Coordinator) recRetry(env *sim.Env, t recRetry) {
	r := c.rec
	if r == nil {
		return
	}
	if t.Action < 0 {
		c.recExec(env, t.Part, tagQuery{t.Part}, db.PreparedXacts())
		return
	}
	if !r.actions[t.Action].done {
		c.recSend(env, t.Action)
	}
}

func (c *Coordinator) recActed(env *sim.Env, tag tagRecAct, d db.Done) {
	r := c.rec
	if r == nil {
		return
	}
	a := &r.actions[tag.i]
	if e := d.Err(); e != nil && e.Code != db.CodeUndefinedObject {
		env.After(c.d.Backoff(r.tries[a.part]), recRetry{Part: a.part, Action: tag.i})
		r.tries[a.part]++
		return
	}
	a.done = true
	if env.CrashPoint(PointRecovered + string(c.parts[a.part])) {
		return
	}
	c.recMaybeDone(env)
}

func (c *Coordinator) recMaybeDone(env *sim.Env) {
	r := c.rec
	for _, a := range r.actions {
		if !a.done {
			return
		}
	}
	for i := range r.cls {
		r.cls[i].Close(env)
	}
	c.rec = nil
	c.note(env, hist.Txn{What: hist.TxnRecovered, Reason: fmt.Sprintf("%d actions", len(r.actions))})
	q := c.queued
	c.queued = nil
	for _, gid := range q {
		c.begin(env, gid)
		if env.CrashPoint("") {
			return
		}
	}
}
