package db_test

// Secondary indexes and cached plans change no outcome: the same random
// sessions (with crashes and broken connections) give the same trace, event
// for event, on a schema with indexes on the columns their equalities test
// and on one without.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

func indexed(s db.Schema) db.Schema {
	out := db.Schema{Tables: append([]db.Table(nil), s.Tables...)}
	for i := range out.Tables {
		switch out.Tables[i].Name {
		case "kv":
			out.Tables[i].Indexes = [][]string{{"v"}, {"v", "u"}}
		case "pair":
			out.Tables[i].Indexes = [][]string{{"a"}, {"b"}}
		}
	}
	return out
}

func fuzzTrace(t *testing.T, schema db.Schema, seed uint64) []traces.Event {
	ent := sim.NewPCG(seed)
	clients := []string{"f1", "f2", "f3"}
	sched, _ := sim.Generate(ent.Stream("faults"), sessionFaults(clients))
	mem := &traces.Memory{}
	w := sim.New(sim.Config{
		Entropy:  ent,
		Network:  network.Policy{DelayMin: hop, DelayMax: 3 * hop},
		Schedule: sched,
		Limits:   sim.Limits{MaxTime: at(8 * sec), MaxEvents: 2_000_000},
		Recorder: mem,
	})
	w.Add("db", db.New(schema, db.Config{
		MaxPreparedTransactions: 2,
		LockTimeout:             300 * ms,
		DeadlockTimeout:         100 * ms,
		Seed:                    map[string][]db.Row{"kv": {{"k": 1, "v": 0}, {"k": 2, "v": 5, "u": "x"}}},
	}))
	for _, c := range clients {
		f := &fuzzer{name: c, cl: db.Client{DB: "db"}, stopAt: 6 * sec, eq: true}
		w.Add(c, func(string, *sim.Disk) sim.Node { return f })
	}
	require.NoError(t, w.Run())
	return mem.Events
}

func TestIndexesChangeNothing(t *testing.T) {
	plain, withIdx := fuzzSchema, indexed(fuzzSchema)
	for seed := uint64(1); seed <= 60; seed++ {
		a, b := fuzzTrace(t, plain, seed), fuzzTrace(t, withIdx, seed)
		require.NotEmpty(t, a)
		if traces.HashOf(traces.Header{}, a) == traces.HashOf(traces.Header{}, b) {
			continue
		}
		for i := range min(len(a), len(b)) {
			require.Equal(t, a[i].String(), b[i].String(), "seed %d: event %d differs with indexes", seed, i)
		}
		require.Len(t, b, len(a), "seed %d: the runs have different lengths", seed)
	}
}

// TestPlanShapes: statements of one shape share a plan; a constant of
// another type is another shape (and an error is not cached), and the
// parameters of each statement are its own.
func TestPlanShapes(t *testing.T) {
	r := runWorld(t, schema, db.Config{Seed: map[string][]db.Row{"jobs": jobs(3)}}, nil, time.Second,
		cl("a",
			send(10*ms, db.Select("jobs", db.W("id", db.Eq, int64(2)))),
			send(20*ms, db.Select("jobs", db.W("id", db.Eq, int64(3)))),
			send(30*ms, db.Select("jobs", db.W("id", db.Eq, "3"))),
			send(40*ms, db.Select("jobs", db.W("id", db.Eq, "x"))),
			send(50*ms, db.Select("jobs", db.W("id", db.Eq, nil))),
			send(60*ms, db.Update("jobs", []db.Assign{db.Set("hits", db.Plus(db.Col("hits"), db.Const(int64(5))))}, db.W("id", db.Eq, int64(1)), db.W("status", db.Eq, "pending")).WithReturning()),
			send(70*ms, db.Update("jobs", []db.Assign{db.Set("hits", db.Plus(db.Col("hits"), db.Const(int64(7))))}, db.W("id", db.Eq, int64(1)), db.W("status", db.Eq, "pending")).WithReturning()),
			send(80*ms, db.Select("jobs", db.W("status", db.In, nil)).OrderedBy(db.Order{Col: "id", Desc: true})),
			send(90*ms, db.Select("jobs", db.Cond{Col: "id", Op: db.In, Set: []db.Value{int64(1), int64(3)}}).OrderedBy(db.Order{Col: "id", Desc: true}).Limited(1)),
			send(100*ms, db.Select("jobs", db.Cond{Col: "id", Op: db.In, Set: []db.Value{int64(2), 2}}).OrderedBy(db.Order{Col: "id", Desc: true})),
		))
	assert.Equal(t, []any{int64(2)}, rowsOf(r.ans("a", 0).last(), "id"))
	assert.Equal(t, []any{int64(3)}, rowsOf(r.ans("a", 1).last(), "id"))
	assert.Equal(t, db.CodeInvalidText, r.ans("a", 2).err())
	assert.Contains(t, r.ans("a", 2).resp.Err().Msg, `"3"`)
	assert.Contains(t, r.ans("a", 3).resp.Err().Msg, `"x"`, "the error quotes its own statement's value")
	assert.Equal(t, "SELECT 0", r.ans("a", 4).last().Tag, "id = NULL matches nothing")
	assert.Equal(t, []any{int64(5)}, rowsOf(r.ans("a", 5).last(), "hits"))
	assert.Equal(t, []any{int64(12)}, rowsOf(r.ans("a", 6).last(), "hits"))
	assert.Equal(t, "SELECT 0", r.ans("a", 7).last().Tag)
	assert.Equal(t, []any{int64(3)}, rowsOf(r.ans("a", 8).last(), "id"))
	assert.Equal(t, []any{int64(2)}, rowsOf(r.ans("a", 9).last(), "id"))
}
