package twopc

import (
	"fmt"
	"slices"

	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
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

// CoordinatorPoints lists the coordinator's crash points for a design. Every
// blocking call of the coordinator is a crash point too, labelled by what it
// waits for (crash-yield faults reach those by number).
func CoordinatorPoints(d Design) []string {
	ps := []string{PointStep, PointBegin}
	for i := 0; i < d.Participants; i++ {
		ps = append(ps, PointPrepared+ParticipantName(i))
	}
	ps = append(ps, PointDecided, PointLogged)
	for i := 0; i < d.Participants; i++ {
		ps = append(ps, PointCommitted+ParticipantName(i), PointAborted+ParticipantName(i), PointRecovered+ParticipantName(i))
	}
	return ps
}

// Coordinator runs global transactions over the participants and keeps the
// decision log on its disk. Order of effects, the heart of 2PC: every vote
// before the decision; the decision written and fsync'd before the first
// COMMIT PREPARED (the commit-before-log knob swaps them); the log read on
// every start, before new work, to finish what is left prepared.
//
// Its processes: main recovers (Recover) and then opens the door to new
// work; each "txn" command runs one global transaction (Commit) in its own
// process, as a service runs each request in its own goroutine. Each
// process passes PointStep when an input (its start, the command, an
// answer, a timeout, a broken connection) wakes it, before it acts on it.
type Coordinator struct {
	d     Design
	name  string
	parts []network.Addr
	disk  *sim.Disk
	// recovered opens when recovery is over: transactions asked for before
	// wait for it.
	recovered gate
}

// NewCoordinator returns the factory of a coordinator.
func NewCoordinator(d Design, parts []network.Addr) sim.Factory {
	return func(name string, disk *sim.Disk) sim.Node {
		disk.AutoSync = false // every log write is fsync'd explicitly (or never, under log-not-durable)
		c := &Coordinator{d: d, name: name, parts: parts, disk: disk}
		return sim.Program(c.main)
	}
}

func (c *Coordinator) main(p *sim.Proc) {
	p.Point(PointStep) // the start is an input
	p.OnCommand(func(p *sim.Proc, cmd sim.Cmd) {
		p.Point(PointStep)
		if cmd.Name != CmdTxn {
			return
		}
		c.recovered.wait(p, "wait for recovery")
		c.Commit(p, cmd.Arg)
	})
	c.Recover(p)
	c.recovered.open()
}

// ---- the decision path (C.1) ----

// Commit runs global transaction gid over every participant and returns its
// outcome. Phase one prepares the participants one after another, orders
// first, as the source does; a NO, or a vote that never came, decides ABORT.
// Phase two writes the decision to the log, fsync'd, and only then tells
// each participant that voted (C.6: log first, then COMMIT PREPARED).
func (c *Coordinator) Commit(p *sim.Proc, gid string) string {
	p.Point(PointBegin)
	conns := c.connect()
	p.Note(hist.Txn{What: hist.TxnBegin, By: c.name, GID: gid, Participants: c.names()})

	// Phase one: the work and PREPARE TRANSACTION at each participant. Once
	// it voted YES a participant holds the transaction prepared, whatever
	// happens to it or to us, until told how to end it.
	var voters []int                   // the participants that may hold it prepared: YES, or no answer
	late := make([]bool, len(c.parts)) // no answer within vote_timeout: the PREPARE may still be on its way
	outcome, why := hist.OutcomeCommit, "every participant voted yes"
	for i, part := range c.parts {
		vote := c.prepare(p, conns[i], i, gid, &late[i])
		if vote != hist.VoteNo {
			voters = append(voters, i)
		}
		if vote != hist.VoteYes {
			outcome, why = hist.OutcomeAbort, "participant "+string(part)+" voted "+vote
			break
		}
		p.Point(PointPrepared + string(part))
	}

	// The decision, in memory only: a crash here leaves it unwritten, and
	// recovery will roll back.
	p.Note(hist.Txn{What: hist.TxnDecide, By: c.name, GID: gid, Outcome: outcome, Reason: why})
	p.Point(PointDecided)

	// Phase two. The decision is durable before any participant hears it;
	// under commit-before-log the first participant commits before the log
	// is written (C.6's wrong order).
	tell := voters
	if c.d.Has(CommitBeforeLog) && outcome == hist.OutcomeCommit {
		c.tell(p, conns, gid, outcome, tell[:1], late)
		tell = tell[1:]
	}
	if logged := c.log(p, gid, outcome); logged != outcome {
		// Another instance (or its recovery) decided first: follow the log,
		// and tell every participant that voted.
		outcome = logged
		p.Note(hist.Txn{What: hist.TxnDecide, By: c.name, GID: gid, Outcome: outcome, Reason: "the decision log already held " + outcome})
		tell = voters
	}
	p.Point(PointLogged)
	c.tell(p, conns, gid, outcome, tell, late)

	p.Note(hist.Txn{What: hist.TxnDone, By: c.name, GID: gid, Outcome: outcome})
	closeAll(p, conns)
	return outcome
}

// prepare is phase one at participant i: its work and PREPARE TRANSACTION in
// one atomic round trip. It notes and returns the vote: YES (prepared), NO
// (the participant refused: an error, nothing is left prepared) or unknown
// (no answer within vote_timeout, or the connection broke: it may or may not
// have prepared). *late says the answer did not come within vote_timeout:
// the connection is closed then, but gracefully, so the request, if it is
// still on its way, arrives and may prepare later (a broken connection
// loses it).
func (c *Coordinator) prepare(p *sim.Proc, conn *db.Conn, i int, gid string, late *bool) string {
	conn.Timeout = c.d.VoteTimeout
	start := p.Mono()
	res, err := conn.Atomic(p, PrepareBatch(i, gid)...)
	*late = db.Unknown(err) && p.Mono().Sub(start) >= c.d.VoteTimeout
	p.Point(PointStep) // the answer (or the timeout, or the break) is in: a crash here loses it
	n := hist.Txn{What: hist.TxnVote, By: c.name, GID: gid, Participant: string(c.parts[i]), Vote: hist.VoteYes}
	switch {
	case err == nil:
		for _, r := range res {
			n.Rows += r.Affected
		}
	case db.Unknown(err):
		n.Vote, n.Code = hist.VoteUnknown, db.Code(err)
	default:
		n.Vote, n.Code = hist.VoteNo, db.Code(err)
	}
	p.Note(n)
	return n.Vote
}

// log writes the decision record, fsync'd before it is trusted, and returns
// the outcome now in the log. The first record of a gid wins: a coordinator
// that finds one (another instance's, or its recovery's ABORT) follows it.
// The log-not-durable knob skips the fsync.
func (c *Coordinator) log(p *sim.Proc, gid, outcome string) string {
	if found := c.logged(gid); found != "" {
		p.Note(hist.Txn{What: hist.TxnLog, By: c.name, GID: gid, Outcome: found, Found: found, Synced: true})
		return found
	}
	c.disk.Put(logKey(gid), outcome)
	synced := !c.d.Has(LogNotDurable)
	if synced {
		p.Sync("decision " + gid)
	}
	p.Note(hist.Txn{What: hist.TxnLog, By: c.name, GID: gid, Outcome: outcome, Synced: synced})
	return outcome
}

// logged reads the decision log's record of gid ("" for none).
func (c *Coordinator) logged(gid string) string {
	if v, ok := c.disk.Get(logKey(gid)); ok {
		return v.(string)
	}
	return ""
}

// tell finishes gid at the given participants, one after another, as the
// outcome says. A participant whose vote was late (late[i]) and that has
// nothing to roll back is made to refuse gid (refuse): its PREPARE may
// still come.
func (c *Coordinator) tell(p *sim.Proc, conns []*db.Conn, gid, outcome string, parts []int, late []bool) {
	point := PointCommitted
	if outcome == hist.OutcomeAbort {
		point = PointAborted
	}
	for _, i := range parts {
		tries := 0
		if none := c.finish(p, conns[i], i, gid, outcome, &tries); none && late[i] && outcome == hist.OutcomeAbort {
			c.refuse(p, conns[i], i, gid, &tries)
		}
		p.Point(point + string(c.parts[i]))
	}
}

// refuse makes participant i refuse gid forever (chosen: the source is
// silent on a late PREPARE): its vote did not come within vote_timeout,
// gid is aborted, and ROLLBACK PREPARED found nothing there, yet the
// PREPARE may still arrive and prepare a transaction nobody would ever
// finish (it would hold its rows and the VACUUM horizon until a
// coordinator restarts; found by the generic search). The tombstone is the
// agents' (Refuse): a txlog row that the gid's own work conflicts with, so
// a late PREPARE fails. When the late PREPARE holds that row already (the
// insert waits out lock_timeout, or request_timeout gives up on it first),
// it is prepared or about to be: it is rolled back, and the refusal tried
// again until one of the two sticks.
func (c *Coordinator) refuse(p *sim.Proc, conn *db.Conn, i int, gid string, tries *int) {
	conn.Timeout = c.d.ReqTimeout
	for {
		rs, err := conn.Atomic(p, Refuse(gid)...)
		p.Point(PointStep)
		switch {
		case err == nil:
			if rs[0].Inserted {
				p.Note(hist.Txn{What: hist.TxnRefuse, By: c.name, GID: gid, Participant: string(c.parts[i]), Reason: "its vote did not come within vote_timeout: a late PREPARE must fail"})
			}
			return
		case db.Code(err) == db.CodeLockNotAvailable || db.Unknown(err):
			// The tombstone waits on a row lock, out to lock_timeout or
			// past request_timeout (an unknown: found by the soak, seeds
			// 3525 and 4994): the late PREPARE holds the row.
			if !c.finish(p, conn, i, gid, hist.OutcomeAbort, tries) {
				return // the late PREPARE had prepared: rolled back now
			}
			conn.Timeout = c.d.ReqTimeout
		default:
			p.Sleep(c.d.Backoff(*tries), "backoff "+string(c.parts[i]))
			p.Point(PointStep)
			*tries++
		}
	}
}

// finish sends COMMIT PREPARED or ROLLBACK PREPARED until the participant
// answers. A participant that does not answer within request_timeout may be
// down (a request to a dead host is never answered): the connection is
// dropped and the request sent again after a backoff, as is a refused one.
// "No such prepared transaction" (42704) means it is finished already (the
// retry of one that did run, or a participant that never prepared it).
// tries counts the failed requests so far: the backoff grows with it. It
// reports whether the participant had no such prepared transaction.
func (c *Coordinator) finish(p *sim.Proc, conn *db.Conn, i int, gid, outcome string, tries *int) bool {
	conn.Timeout = c.d.ReqTimeout
	for {
		_, err := conn.Exec(p, Finish(gid, outcome))
		p.Point(PointStep)
		if err == nil || db.Code(err) == db.CodeUndefinedObject {
			return err != nil
		}
		p.Sleep(c.d.Backoff(*tries), "backoff "+string(c.parts[i]))
		p.Point(PointStep)
		*tries++
	}
}

// ---- recovery (C.4) ----

// Recover runs on every start, before new work: ask every participant for
// its prepared transactions, then finish each as the decision log says. A
// gid the log has no record of cannot have committed anywhere: it is logged
// ABORT (so that an instance still running it follows) and rolled back;
// presume-commit-on-no-record commits it instead.
func (c *Coordinator) Recover(p *sim.Proc) {
	conns := c.connect()
	tries := make([]int, len(c.parts)) // per participant: its failed requests so far (the backoff)

	// Every participant's prepared transactions, asked of all at once.
	found := make([][]string, len(c.parts))
	c.each(p, "recovery query", func(p *sim.Proc, i int) {
		found[i] = c.preparedAt(p, conns[i], i, &tries[i])
	})

	// What the log says of each.
	type action struct{ gid, outcome string }
	todo := make([][]action, len(c.parts))
	actions := 0
	for _, gid := range union(found) {
		logged := c.logged(gid)
		outcome := logged
		if outcome == "" {
			outcome = c.presume(p, gid)
		}
		for i, gids := range found {
			if _, ok := slices.BinarySearch(gids, gid); ok {
				todo[i] = append(todo[i], action{gid, outcome})
				actions++
				p.Note(hist.Txn{What: hist.TxnRecover, By: c.name, GID: gid, Participant: string(c.parts[i]), Outcome: outcome, Found: logged})
			}
		}
	}

	// Finish them: each participant's in turn, all participants at once.
	c.each(p, "recovery", func(p *sim.Proc, i int) {
		for _, a := range todo[i] {
			c.finish(p, conns[i], i, a.gid, a.outcome, &tries[i])
			p.Point(PointRecovered + string(c.parts[i]))
		}
	})
	closeAll(p, conns)
	p.Note(hist.Txn{What: hist.TxnRecovered, By: c.name, Reason: fmt.Sprintf("%d actions", actions)})
}

// preparedAt reads participant i's pg_prepared_xacts, asking again after a
// backoff until it answers, and returns the gids, sorted.
func (c *Coordinator) preparedAt(p *sim.Proc, conn *db.Conn, i int, tries *int) []string {
	conn.Timeout = c.d.ReqTimeout
	for {
		res, err := conn.Exec(p, db.PreparedXacts())
		p.Point(PointStep)
		if err == nil {
			gids := []string{}
			for _, row := range res.Rows {
				gids = append(gids, row.Text("gid"))
			}
			slices.Sort(gids)
			return gids
		}
		p.Sleep(c.d.Backoff(*tries), "backoff "+string(c.parts[i]))
		p.Point(PointStep)
		*tries++
	}
}

// presume is what recovery does with a prepared transaction the log has no
// record of: it cannot have committed anywhere, so ABORT, logged first;
// presume-commit-on-no-record commits it instead.
func (c *Coordinator) presume(p *sim.Proc, gid string) string {
	if c.d.Has(PresumeCommit) {
		return hist.OutcomeCommit
	}
	return c.log(p, gid, hist.OutcomeAbort)
}

// ---- plumbing ----

// connect returns a client per participant (one session each, dialed on
// first use).
func (c *Coordinator) connect() []*db.Conn {
	conns := make([]*db.Conn, len(c.parts))
	for i, a := range c.parts {
		conns[i] = &db.Conn{DB: a}
	}
	return conns
}

func closeAll(p *sim.Proc, conns []*db.Conn) {
	for _, conn := range conns {
		conn.Close(p)
	}
}

func (c *Coordinator) names() []string {
	out := make([]string, len(c.parts))
	for i, p := range c.parts {
		out[i] = string(p)
	}
	return out
}

// each runs fn for every participant at once, each in a process of its own,
// and waits until all have returned (an errgroup over the participants).
func (c *Coordinator) each(p *sim.Proc, what string, fn func(p *sim.Proc, i int)) {
	var done sim.Queue[int]
	for i, part := range c.parts {
		p.Go(what+" "+string(part), func(p *sim.Proc) {
			fn(p, i)
			done.Put(i)
		})
	}
	for range c.parts {
		if _, err := done.Get(p, 0, "wait for "+what); err != nil {
			panic(fmt.Sprintf("twopc: %s: waiting for %s: %v", c.name, what, err))
		}
	}
}

// union returns the gids of every list, once each, sorted.
func union(lists [][]string) []string {
	var all []string
	for _, l := range lists {
		all = append(all, l...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// gate is a door the processes of one node wait at until it opens.
type gate struct {
	opened  bool
	waiters sim.Queue[struct{}]
}

func (g *gate) wait(p *sim.Proc, label string) {
	if g.opened {
		return
	}
	if _, err := g.waiters.Get(p, 0, label); err != nil {
		panic("twopc: waiting at a gate: " + err.Error())
	}
}

func (g *gate) open() {
	g.opened = true
	for g.waiters.Waiting() > 0 {
		g.waiters.Put(struct{}{})
	}
}
