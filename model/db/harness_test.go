package db_test

// A scripted client node and a world builder for the semantic tests: each
// client sends its steps at fixed times on its own connection (one session)
// and records every answer with the time it arrived.

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

const (
	ms  = time.Millisecond
	sec = time.Second
	// hop is the fixed one-way network delay of the semantic tests.
	hop = time.Millisecond
)

func at(d time.Duration) clock.Time { return clock.Time(d) }

// step is one scripted request, sent at a fixed time.
type step struct {
	at     time.Duration
	stmts  []db.Stmt
	atomic bool
	close  bool // close the connection instead of sending
}

func send(d time.Duration, stmts ...db.Stmt) step { return step{at: d, stmts: stmts} }
func atomic(d time.Duration, stmts ...db.Stmt) step {
	return step{at: d, stmts: stmts, atomic: true}
}
func closeAt(d time.Duration) step { return step{at: d, close: true} }

// answer is one recorded response.
type answer struct {
	step     int
	sent, at clock.Time
	resp     db.Response
}

func (a answer) err() string {
	if e := a.resp.Err(); e != nil {
		return e.Code
	}
	return ""
}

// last returns the result of the request's last statement.
func (a answer) last() db.Result {
	if len(a.resp.Results) == 0 {
		return db.Result{}
	}
	return a.resp.Results[len(a.resp.Results)-1]
}

type stepTag int

func (s stepTag) String() string { return fmt.Sprintf("step %d", int(s)) }

// scripted is a client node that runs a list of steps.
type scripted struct {
	steps   []step
	cl      db.Client
	sentAt  map[uint64]clock.Time
	answers []answer
}

func (c *scripted) Step(env *sim.Env, in sim.Input) {
	switch in.Kind {
	case sim.Start:
		for i, s := range c.steps {
			env.After(s.at, stepTag(i))
		}
		return
	case sim.Timer:
		if i, ok := in.Tag.(stepTag); ok {
			s := c.steps[i]
			if s.close {
				c.record(env, c.cl.Close(env))
				return
			}
			var id uint64
			if s.atomic {
				id = c.cl.ExecAtomic(env, int(i), s.stmts...)
			} else {
				id = c.cl.Exec(env, int(i), s.stmts...)
			}
			c.sentAt[id] = env.Now()
			return
		}
	}
	if done, ok := c.cl.Handle(in); ok {
		c.record(env, done)
	}
}

func (c *scripted) record(env *sim.Env, done []db.Done) {
	for _, d := range done {
		c.answers = append(c.answers, answer{step: d.Tag.(int), sent: c.sentAt[d.ID], at: env.Now(), resp: d.Resp})
	}
}

type client struct {
	name  string
	steps []step
}

func cl(name string, steps ...step) client { return client{name, steps} }

type run struct {
	t       *testing.T
	w       *sim.World
	mem     *traces.Memory
	clients map[string]*scripted
}

// runWorld runs a database "db" and scripted clients until `until`.
func runWorld(t *testing.T, schema db.Schema, cfg db.Config, sched sim.Schedule, until time.Duration, clients ...client) *run {
	t.Helper()
	mem := &traces.Memory{}
	w := sim.New(sim.Config{
		Entropy:  sim.NewPCG(1),
		Network:  network.Policy{DelayMin: hop, DelayMax: hop},
		Schedule: sched,
		Limits:   sim.Limits{MaxTime: at(until), MaxEvents: 5_000_000},
		Recorder: mem,
	})
	w.Add("db", db.New(schema, cfg))
	r := &run{t: t, w: w, mem: mem, clients: map[string]*scripted{}}
	for _, c := range clients {
		s := &scripted{steps: c.steps, cl: db.Client{DB: "db"}, sentAt: map[uint64]clock.Time{}}
		r.clients[c.name] = s
		w.Add(c.name, func(string, *sim.Disk) sim.Node { return s })
	}
	require.NoError(t, w.Run(), "the world must run to its time limit")
	return r
}

// ans returns the answer of a client's step.
func (r *run) ans(name string, step int) answer {
	r.t.Helper()
	for _, a := range r.clients[name].answers {
		if a.step == step {
			return a
		}
	}
	r.t.Fatalf("client %s got no answer to step %d; trace:\n%s", name, step, r.trace())
	return answer{}
}

func (r *run) node() *db.Node {
	n, _ := r.w.Node("db").(*db.Node)
	require.NotNil(r.t, n, "the db node must be up")
	return n
}

func (r *run) trace() string {
	s := ""
	for _, e := range r.mem.Events {
		s += e.String() + "\n"
	}
	return s
}

// ---- the schema of the semantic tests ----

var schema = db.Schema{Tables: []db.Table{
	{
		Name: "jobs",
		Columns: []db.Column{
			{Name: "id", Type: db.Int, Serial: true},
			{Name: "status", Type: db.Text, NotNull: true, Default: "pending"},
			{Name: "owner", Type: db.Text},
			{Name: "hits", Type: db.Int, NotNull: true, Default: int64(0)},
			{Name: "at", Type: db.Timestamp},
		},
		PrimaryKey: []string{"id"},
	},
	{
		Name: "judgings",
		Columns: []db.Column{
			{Name: "seq", Type: db.Int, Serial: true},
			{Name: "submission_id", Type: db.Int, NotNull: true},
			{Name: "lease_token", Type: db.Text, NotNull: true},
			{Name: "verdict", Type: db.Text},
		},
		PrimaryKey: []string{"seq"},
		Unique:     [][]string{{"submission_id", "lease_token"}},
	},
	{
		Name: "stock",
		Columns: []db.Column{
			{Name: "id", Type: db.Int},
			{Name: "n", Type: db.Int, NotNull: true},
		},
		PrimaryKey: []string{"id"},
	},
}}

func jobs(n int) []db.Row {
	var rows []db.Row
	for i := 1; i <= n; i++ {
		rows = append(rows, db.Row{"id": int64(i), "status": "pending"})
	}
	return rows
}

func rowsOf(res db.Result, col string) []any {
	var out []any
	for _, r := range res.Rows {
		out = append(out, r[col])
	}
	return out
}
