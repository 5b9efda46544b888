package pgexec_test

// The paced comparison: the same requests, each on its session, sent at
// i*gap to the model's db node (in the simulator) and to a real server
// through pgexec.Session (on the wall clock, db.Epoch being time 0), so that
// timestamps agree within a tolerance.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/internal/pgexec"
	"github.com/fencesim/fencesim/internal/pgtest"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
)

const (
	hop = time.Millisecond // the model's one-way network delay
	tol = 150 * time.Millisecond
)

// step is one request of one session.
type step struct {
	session int
	req     db.Request
}

func on(session int, stmts ...db.Stmt) step {
	return step{session: session, req: db.Request{Stmts: stmts}}
}

func atomicOn(session int, stmts ...db.Stmt) step {
	return step{session: session, req: db.Request{Stmts: stmts, Atomic: true}}
}

// client is a model node sending its steps at fixed times.
type client struct {
	steps []int // indexes into the sequence
	seq   []step
	gap   time.Duration
	cl    db.Client
	resp  map[int]db.Response
}

type stepTag int

func (c *client) Step(env *sim.Env, in sim.Input) {
	switch in.Kind {
	case sim.Start:
		for _, i := range c.steps {
			env.After(time.Duration(i)*c.gap, stepTag(i))
		}
		return
	case sim.Timer:
		if i, ok := in.Tag.(stepTag); ok {
			r := c.seq[i].req
			if r.Atomic {
				c.cl.ExecAtomic(env, int(i), r.Stmts...)
			} else {
				c.cl.Exec(env, int(i), r.Stmts...)
			}
			return
		}
	}
	if done, ok := c.cl.Handle(in); ok {
		for _, d := range done {
			c.resp[d.Tag.(int)] = d.Resp
		}
	}
}

// modelRun runs the sequence on the model; it returns each step's response
// and the db node.
func modelRun(t *testing.T, schema db.Schema, cfg db.Config, seq []step, gap time.Duration) ([]db.Response, *db.Node) {
	t.Helper()
	w := sim.New(sim.Config{
		Entropy: sim.NewPCG(1),
		Network: network.Policy{DelayMin: hop, DelayMax: hop},
		Limits:  sim.Limits{MaxTime: clock.Time(time.Duration(len(seq)+2) * gap), MaxEvents: 1_000_000},
	})
	w.Add("db", db.New(schema, cfg))
	clients := map[int]*client{}
	for i, s := range seq {
		c := clients[s.session]
		if c == nil {
			c = &client{seq: seq, gap: gap, cl: db.Client{DB: "db"}, resp: map[int]db.Response{}}
			clients[s.session] = c
			w.Add(fmt.Sprintf("s%d", s.session), func(string, *sim.Disk) sim.Node { return c })
		}
		c.steps = append(c.steps, i)
	}
	require.NoError(t, w.Run(), "the model's world must run to its time limit")
	out := make([]db.Response, len(seq))
	for i, s := range seq {
		r, ok := clients[s.session].resp[i]
		require.True(t, ok, "the model answers step %d", i)
		out[i] = r
	}
	n, _ := w.Node("db").(*db.Node)
	require.NotNil(t, n)
	return out, n
}

// server is a fresh schema on the test server, with db.Epoch set to a time
// 0 just ahead (put back by the cleanup).
type server struct {
	t      *testing.T
	url    string
	schema string
	admin  *pgx.Conn
	t0     time.Time
	opts   pgexec.Options
	sess   map[int]*pgexec.Session
}

// newServer creates the schema (pgexec.CreateSchema, then Seed, then, with
// capture, InstallCapture) and sets db.Epoch.
func newServer(t *testing.T, schema db.Schema, seed map[string][]db.Row, capture bool, o pgexec.Options) *server {
	t.Helper()
	url := pgtest.Require(t)
	ctx := t.Context()
	admin := pgtest.Connect(t, ctx)
	name := pgtest.Fresh(t, admin)
	old := db.Epoch
	t.Cleanup(func() { db.Epoch = old })
	// Seeded timestamps are relative to time 0: set it before seeding.
	db.Epoch = time.Now().Add(300 * time.Millisecond).UTC().Truncate(time.Microsecond)
	require.NoError(t, pgexec.CreateSchema(ctx, admin, schema))
	require.NoError(t, pgexec.Seed(ctx, admin, schema, seed))
	if capture {
		require.NoError(t, pgexec.InstallCapture(ctx, admin, schema))
	}
	o.Schema = name
	s := &server{t: t, url: url, schema: name, admin: admin, t0: db.Epoch, opts: o, sess: map[int]*pgexec.Session{}}
	t.Cleanup(func() {
		for _, x := range s.sess {
			x.Close()
		}
	})
	return s
}

func (s *server) session(i int) *pgexec.Session {
	s.t.Helper()
	if x := s.sess[i]; x != nil && !x.Dead() {
		return x
	}
	o := s.opts
	o.App = fmt.Sprintf("%s/s%d", s.t.Name(), i)
	x, err := pgexec.Dial(s.t.Context(), s.url, o)
	require.NoError(s.t, err, "dial session %d", i)
	s.sess[i] = x
	return x
}

// run sends step i at t0 + i*gap, one after another.
func (s *server) run(seq []step, gap time.Duration) []db.Response {
	s.t.Helper()
	out := make([]db.Response, len(seq))
	for i, st := range seq {
		if d := time.Until(s.t0.Add(time.Duration(i) * gap)); d > 0 {
			time.Sleep(d)
		}
		ctx, cancel := context.WithTimeout(s.t.Context(), 10*time.Second)
		out[i] = s.session(st.session).Run(ctx, st.req)
		cancel()
	}
	return out
}

// normal prepares results for comparison: error messages are the
// server's, not the model's (the code is compared); pg_prepared_xacts'
// transaction (an xid) is dropped, its age becomes a duration compared like
// timestamps; no rows is nil.
func normal(rs []db.Result) []db.Result {
	out := make([]db.Result, len(rs))
	for i, r := range rs {
		if r.Err != nil {
			r.Err = &db.Error{Code: r.Err.Code}
		}
		var rows []db.Row
		for _, row := range r.Rows {
			c := db.Row{}
			for k, v := range row {
				c[k] = v
			}
			if _, ok := c["transaction"]; ok {
				delete(c, "transaction")
				if a, ok := c["age"].(int64); ok {
					c["age"] = clock.Time(a)
				}
			}
			rows = append(rows, c)
		}
		r.Rows = rows
		out[i] = r
	}
	return out
}

// near gives the server's timestamps the model's values where they agree
// within tol (the server runs on the wall clock), so that what is left to
// differ is a real difference.
func near(model, server any) {
	switch m := model.(type) {
	case []db.Result:
		s := server.([]db.Result)
		for i := range min(len(m), len(s)) {
			for j := range min(len(m[i].Rows), len(s[i].Rows)) {
				near(m[i].Rows[j], s[i].Rows[j])
			}
		}
	case db.Row:
		nearMap(m, server.(db.Row))
	case map[string]any:
		nearMap(m, server.(map[string]any))
	}
}

func nearMap(m, s map[string]any) {
	for k, mv := range m {
		mt, ok1 := mv.(clock.Time)
		st, ok2 := s[k].(clock.Time)
		if d := mt.Sub(st); ok1 && ok2 && d <= tol && d >= -tol {
			s[k] = mt
		}
	}
}

// compare asserts that every step's response agrees.
func compare(t *testing.T, seq []step, model, server []db.Response) {
	t.Helper()
	for i := range seq {
		m, s := normal(model[i].Results), normal(server[i].Results)
		near(m, s)
		if assert.Equal(t, m, s, "step %d (s%d %s): the server's results must be the model's (expected: model, actual: server)", i, seq[i].session, seq[i].req) {
			t.Logf("step %d s%d %s\n    => %s", i, seq[i].session, seq[i].req, server[i])
		}
	}
}
