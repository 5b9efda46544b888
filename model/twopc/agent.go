package twopc

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// Agent is a participant's local agent (the DBA's cron job): it watches its
// database's pg_prepared_xacts. Under the timeout-abort knob it rolls back
// a prepared transaction older than abort_after on its own (C.3 approach
// A). With cooperative termination (C.8) it asks the other participants'
// agents instead: a peer that committed the gid means COMMIT; a peer that
// had not voted refuses the gid forever (a tombstone row in txlog that the
// gid's own work would conflict with) and that means ABORT; when every peer
// is prepared too, nobody can decide and the agent stays blocked.
//
// Its processes: main polls every agent_poll; each peer's message is served
// in its own process. They share a small pool of database sessions.
type Agent struct {
	d     Design
	name  string
	db    network.Addr
	peers []network.Addr
	pool  *db.Pool

	acting  map[string]bool                    // gids with a COMMIT/ROLLBACK PREPARED in flight
	rounds  map[string]map[network.Addr]string // gid -> the peers' answers of the current round
	blocked map[string]bool                    // gids noted blocked
}

// agentSessions is the size of an agent's connection pool: a poll and the
// answers to a few peers at once.
const agentSessions = 4

// Ask is an agent's question to a peer agent: what do you know of GID?
type Ask struct {
	GID string
}

// Answer is a peer agent's reply: State is "prepared", "committed",
// "refused" or "unknown".
type Answer struct {
	GID   string
	State string
}

// Answer states besides TxCommitted and TxRefused.
const (
	statePrepared = "prepared"
	stateUnknown  = "unknown"
)

func (a Ask) String() string    { return "ask " + a.GID }
func (a Answer) String() string { return "answer " + a.GID + " " + a.State }

// NewAgent returns the factory of participant db's agent.
func NewAgent(d Design, dbAddr network.Addr, peers []network.Addr) sim.Factory {
	return func(name string, _ *sim.Disk) sim.Node {
		a := &Agent{d: d, name: name, db: dbAddr, peers: peers, pool: db.NewPool(dbAddr, agentSessions, 0),
			acting: map[string]bool{}, rounds: map[string]map[network.Addr]string{}, blocked: map[string]bool{}}
		return sim.Program(a.main)
	}
}

func (a *Agent) main(p *sim.Proc) {
	p.Handle(func(p *sim.Proc, m network.Message) {
		switch b := m.Body.(type) {
		case Ask:
			a.answer(p, m.From, b.GID)
		case Answer:
			a.heard(p, m.From, b)
		}
	})
	// Poll every agent_poll, on the clock: a poll that overruns its period
	// delays the next one (cron with a lock: runs never overlap).
	next := p.Mono()
	for {
		next = next.Add(a.d.AgentPoll)
		if wait := time.Duration(next - p.Mono()); wait > 0 {
			p.Sleep(wait, "agent poll")
		}
		a.poll(p)
	}
}

// poll reads pg_prepared_xacts and acts on every prepared transaction that
// has waited long enough: timeout-abort rolls it back; cooperative
// termination asks the peers.
func (a *Agent) poll(p *sim.Proc) {
	conn := a.pool.Get(p)
	res, err := conn.Exec(p, db.PreparedXacts())
	a.pool.Put(conn)
	if err != nil {
		return // the next poll asks again
	}
	rows := slices.Clone(res.Rows)
	slices.SortFunc(rows, func(x, y db.Row) int { return cmp.Compare(x.Text("gid"), y.Text("gid")) })
	for _, row := range rows {
		gid, age := row.Text("gid"), time.Duration(row.Int("age"))
		if a.acting[gid] {
			continue
		}
		switch {
		case a.d.Has(TimeoutAbort) && age >= a.d.AbortAfter:
			a.end(p, gid, hist.OutcomeAbort, fmt.Sprintf("prepared for %v, no decision: timeout", age), true)
		case a.d.Cooperative && age >= a.d.AskAfter:
			// A new round: the answers of the last one are forgotten.
			a.rounds[gid] = map[network.Addr]string{}
			for _, peer := range a.peers {
				p.Send(peer, Ask{GID: gid})
			}
		}
	}
}

// end finishes a prepared gid at the agent's database on its own word
// (unilateral) or on a peer's.
func (a *Agent) end(p *sim.Proc, gid, outcome, reason string, unilateral bool) {
	a.acting[gid] = true
	delete(a.rounds, gid)
	conn := a.pool.Get(p)
	_, err := conn.Exec(p, Finish(gid, outcome))
	a.pool.Put(conn)
	delete(a.acting, gid)
	if err != nil {
		return // still prepared: the next poll tries again
	}
	what := hist.TxnResolve
	if unilateral {
		what = hist.TxnUnilateral
	}
	p.Note(hist.Txn{What: what, By: a.name, Participant: string(a.db), GID: gid, Outcome: outcome, Reason: reason, Agent: true})
}

// answer tells a peer what this participant knows of gid.
func (a *Agent) answer(p *sim.Proc, peer network.Addr, gid string) {
	conn := a.pool.Get(p)
	state := a.know(p, conn, peer, gid)
	a.pool.Put(conn)
	p.Send(peer, Answer{GID: gid, State: state})
}

// know finds gid's state here: prepared; else it refuses the gid forever (a
// tombstone) and says refused, or finds the row already there (committed:
// the gid's own work; refused: an earlier tombstone).
func (a *Agent) know(p *sim.Proc, conn *db.Conn, peer network.Addr, gid string) string {
	res, err := conn.Exec(p, db.PreparedXacts())
	if err != nil {
		return stateUnknown
	}
	for _, row := range res.Rows {
		if row.Text("gid") == gid {
			return statePrepared
		}
	}
	rs, err := conn.Atomic(p, Refuse(gid)...)
	if err != nil {
		return stateUnknown // e.g. lock_timeout: the gid is being prepared right now
	}
	if rs[0].Inserted {
		p.Note(hist.Txn{What: hist.TxnRefuse, By: a.name, Participant: string(a.db), GID: gid, Reason: "asked by " + string(peer) + "; never voted", Agent: true})
		return TxRefused
	}
	if rows := rs[1].Rows; len(rows) == 1 {
		return rows[0].Text("state")
	}
	return stateUnknown
}

// heard takes a peer's answer into the gid's round: one peer that committed
// or refused decides; every peer prepared means nobody can.
func (a *Agent) heard(p *sim.Proc, peer network.Addr, m Answer) {
	r := a.rounds[m.GID]
	if r == nil || a.acting[m.GID] {
		return
	}
	r[peer] = m.State
	switch m.State {
	case TxCommitted:
		a.end(p, m.GID, hist.OutcomeCommit, string(peer)+" committed it", false)
		return
	case TxRefused:
		a.end(p, m.GID, hist.OutcomeAbort, string(peer)+" refused it", false)
		return
	}
	for _, q := range a.peers {
		if r[q] != statePrepared {
			return // not every peer answered, or one does not know
		}
	}
	delete(a.rounds, m.GID)
	if !a.blocked[m.GID] {
		a.blocked[m.GID] = true
		p.Note(hist.Txn{What: hist.TxnBlocked, By: a.name, Participant: string(a.db), GID: m.GID, Reason: "every peer is prepared too: only the coordinator's log can decide", Agent: true})
	}
}
