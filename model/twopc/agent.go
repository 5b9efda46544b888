package twopc

import (
	"fmt"
	"sort"

	"github.com/fencesim/fencesim/clock"
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
type Agent struct {
	d     Design
	name  string
	db    network.Addr
	peers []network.Addr
	cl    db.Client
	acts  map[string]bool // gids with a COMMIT/ROLLBACK PREPARED in flight
	round map[string]map[network.Addr]string
	noted map[string]bool // blocked noted
}

var _ sim.Node = (*Agent)(nil)

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

func (a Ask) String() string    { return "ask " + a.GID }
func (a Answer) String() string { return "answer " + a.GID + " " + a.State }

type (
	agentTick struct{}
	tagPoll   struct{}
	tagCheck  struct {
		gid  string
		from network.Addr
	}
	tagTomb struct {
		gid  string
		from network.Addr
	}
	tagEnd struct {
		gid, outcome, reason string
		unilateral           bool
	}
)

func (agentTick) String() string { return "agent-poll" }

// NewAgent returns the factory of participant db's agent.
func NewAgent(d Design, dbAddr network.Addr, peers []network.Addr) sim.Factory {
	return func(name string, _ *sim.Disk) sim.Node {
		return &Agent{d: d, name: name, db: dbAddr, peers: peers, cl: db.Client{DB: dbAddr},
			acts: map[string]bool{}, round: map[string]map[network.Addr]string{}, noted: map[string]bool{}}
	}
}

func (a *Agent) note(env *sim.Env, n hist.Txn) {
	if !env.Recording() {
		return
	}
	n.By, n.Participant = a.name, string(a.db)
	env.Note(hist.KindTxn, fmt.Sprintf("%s %s %s %s", n.What, n.GID, n.Outcome, n.Reason), n)
}

// Step implements sim.Node.
func (a *Agent) Step(env *sim.Env, in sim.Input) {
	switch in.Kind {
	case sim.Start:
		env.After(a.d.AgentPoll, agentTick{})
		return
	case sim.Timer:
		if _, ok := in.Tag.(agentTick); ok {
			a.cl.Exec(env, tagPoll{}, db.PreparedXacts())
			env.After(a.d.AgentPoll, agentTick{})
		}
		return
	case sim.Deliver:
		switch m := in.Msg.Body.(type) {
		case Ask:
			a.cl.Exec(env, tagCheck{m.GID, in.Msg.From}, db.PreparedXacts())
			return
		case Answer:
			a.answer(env, in.Msg.From, m)
			return
		}
	}
	done, ok := a.cl.Handle(in)
	if !ok {
		return
	}
	for _, d := range done {
		switch tag := d.Tag.(type) {
		case tagPoll:
			a.polled(env, d)
		case tagCheck:
			a.checked(env, tag, d)
		case tagTomb:
			a.tombed(env, tag, d)
		case tagEnd:
			delete(a.acts, tag.gid)
			if d.Err() == nil {
				w := hist.TxnResolve
				if tag.unilateral {
					w = hist.TxnUnilateral
				}
				a.note(env, hist.Txn{What: w, GID: tag.gid, Outcome: tag.outcome, Reason: tag.reason})
			}
		}
	}
}

func prepared(d db.Done) (map[string]clock.Time, bool) {
	if d.Err() != nil {
		return nil, false
	}
	out := map[string]clock.Time{}
	for _, row := range d.Resp.Results[len(d.Resp.Results)-1].Rows {
		age, _ := row["age"].(int64)
		out[row["gid"].(string)] = clock.Time(age)
	}
	return out, true
}

func (a *Agent) polled(env *sim.Env, d db.Done) {
	ps, ok := prepared(d)
	if !ok {
		return
	}
	gids := make([]string, 0, len(ps))
	for g := range ps {
		gids = append(gids, g)
	}
	sort.Strings(gids)
	for _, gid := range gids {
		age := ps[gid]
		if a.acts[gid] {
			continue
		}
		switch {
		case a.d.Has(TimeoutAbort) && age >= clock.Time(a.d.AbortAfter):
			a.end(env, gid, outcomeAbort, fmt.Sprintf("prepared for %v, no decision: timeout", age), true)
		case a.d.Cooperative && age >= clock.Time(a.d.AskAfter):
			a.round[gid] = map[network.Addr]string{}
			for _, p := range a.peers {
				env.Send(p, Ask{GID: gid})
			}
		}
	}
}

func (a *Agent) end(env *sim.Env, gid, outcome, reason string, unilateral bool) {
	a.acts[gid] = true
	delete(a.round, gid)
	a.cl.Exec(env, tagEnd{gid, outcome, reason, unilateral}, Finish(gid, outcome))
}

// checked answers a peer's Ask: prepared here, or not (then try the
// tombstone).
func (a *Agent) checked(env *sim.Env, tag tagCheck, d db.Done) {
	ps, ok := prepared(d)
	switch {
	case !ok:
		env.Send(tag.from, Answer{GID: tag.gid, State: "unknown"})
	case ps[tag.gid] != 0 || hasKey(ps, tag.gid):
		env.Send(tag.from, Answer{GID: tag.gid, State: "prepared"})
	default:
		a.cl.ExecAtomic(env, tagTomb{tag.gid, tag.from}, Refuse(tag.gid)...)
	}
}

func hasKey(m map[string]clock.Time, k string) bool { _, ok := m[k]; return ok }

func (a *Agent) tombed(env *sim.Env, tag tagTomb, d db.Done) {
	if d.Err() != nil { // e.g. lock_timeout: the gid is being prepared right now
		env.Send(tag.from, Answer{GID: tag.gid, State: "unknown"})
		return
	}
	if d.Resp.Results[0].Inserted {
		a.note(env, hist.Txn{What: hist.TxnRefuse, GID: tag.gid, Reason: "asked by " + string(tag.from) + "; never voted"})
		env.Send(tag.from, Answer{GID: tag.gid, State: TxRefused})
		return
	}
	state := "unknown"
	if rows := d.Resp.Results[1].Rows; len(rows) == 1 {
		state, _ = rows[0]["state"].(string)
	}
	env.Send(tag.from, Answer{GID: tag.gid, State: state})
}

func (a *Agent) answer(env *sim.Env, from network.Addr, m Answer) {
	r := a.round[m.GID]
	if r == nil || a.acts[m.GID] {
		return
	}
	r[from] = m.State
	switch m.State {
	case TxCommitted:
		a.end(env, m.GID, outcomeCommit, string(from)+" committed it", false)
		return
	case TxRefused:
		a.end(env, m.GID, outcomeAbort, string(from)+" refused it", false)
		return
	}
	if len(r) < len(a.peers) {
		return
	}
	for _, s := range r {
		if s != "prepared" {
			return
		}
	}
	delete(a.round, m.GID)
	if !a.noted[m.GID] {
		a.noted[m.GID] = true
		a.note(env, hist.Txn{What: hist.TxnBlocked, GID: m.GID, Reason: "every peer is prepared too: only the coordinator's log can decide"})
	}
}
