package db_test

// The model's own invariants under random concurrent sessions, crashes of
// the database node (also at its crash points) and connection breaks.

import (
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

var fuzzSchema = db.Schema{Tables: []db.Table{
	{
		Name: "kv",
		Columns: []db.Column{
			{Name: "k", Type: db.Int},
			{Name: "v", Type: db.Int, NotNull: true, Default: int64(0)},
			{Name: "u", Type: db.Text},
			{Name: "at", Type: db.Timestamp},
		},
		PrimaryKey: []string{"k"},
		Unique:     [][]string{{"u"}},
	},
	{
		Name: "pair",
		Columns: []db.Column{
			{Name: "id", Type: db.Int, Serial: true},
			{Name: "a", Type: db.Int, NotNull: true},
			{Name: "b", Type: db.Text, NotNull: true},
		},
		PrimaryKey: []string{"id"},
		Unique:     [][]string{{"a", "b"}},
	},
}}

var fuzzPK = map[string][]string{"kv": {"k"}, "pair": {"id"}}

type next struct{}

func (next) String() string { return "next" }

type stop struct{}

func (stop) String() string { return "stop" }

// fuzzer is a client node that sends random requests, one at a time, until
// stopAt, then closes its connection.
type fuzzer struct {
	name    string
	cl      db.Client
	stopAt  time.Duration
	gids    []string
	nextGid int
	stopped bool
	eq      bool // the range conditions on v become equalities (index_test.go)
}

func (f *fuzzer) Step(env *sim.Env, in sim.Input) {
	switch in.Kind {
	case sim.Start:
		env.After(time.Duration(env.Rand().Uint64n("think", 20))*ms, next{})
		env.After(f.stopAt, stop{})
	case sim.Timer:
		switch in.Tag.(type) {
		case stop:
			f.stopped = true
			f.cl.Close(env)
		case next:
			if !f.stopped {
				f.act(env)
			}
		}
	default:
		if done, ok := f.cl.Handle(in); ok && len(done) > 0 && !f.stopped {
			env.After(time.Duration(env.Rand().Uint64n("think", 30))*ms, next{})
		}
	}
}

func (f *fuzzer) act(env *sim.Env) {
	r := env.Rand()
	pick := func(label string, n int) int { return int(r.Uint64n(label, uint64(n))) }
	k := func() int64 { return int64(pick("k", 4) + 1) }
	u := func() db.Value { return []db.Value{nil, "x", "y"}[pick("u", 3)] }
	gid := func() string {
		if len(f.gids) == 0 || pick("new-gid", 4) == 0 {
			return fmt.Sprintf("%s-%d", f.name, f.nextGid)
		}
		return f.gids[pick("gid", len(f.gids))]
	}
	vop := func(op db.Op) db.Op {
		if f.eq {
			return db.Eq
		}
		return op
	}
	stmt := func() db.Stmt {
		switch pick("stmt", 22) {
		case 0, 1:
			return db.Insert("kv", db.Row{"k": k(), "v": int64(pick("v", 10)), "u": u(), "at": db.Now()})
		case 2:
			return db.InsertOrNothing("kv", db.Row{"k": k(), "u": u()})
		case 3:
			return db.Insert("pair", db.Row{"a": int64(pick("a", 2)), "b": []string{"p", "q"}[pick("b", 2)]}).WithReturning()
		case 4, 5:
			return db.Update("kv", []db.Assign{db.Set("v", db.Plus(db.Col("v"), db.Const(int64(1))))}, db.W("k", db.Eq, k()))
		case 6:
			return db.Update("kv", []db.Assign{db.Set("u", u())}, db.W("k", db.Eq, k()))
		case 7:
			return db.Update("kv", []db.Assign{db.Set("k", k())}, db.W("k", db.Eq, k()))
		case 8:
			return db.Update("kv", []db.Assign{db.Set("v", int64(0)), db.Set("at", db.Greatest(db.Col("at"), db.NowPlus(time.Second)))}, db.W("v", vop(db.Ge), int64(pick("v", 5))))
		case 9:
			return db.Delete("kv", db.W("k", db.Eq, k()))
		case 10:
			return db.Delete("pair", db.W("a", db.Eq, int64(pick("a", 2))))
		case 11:
			lock := []db.Lock{db.NoLock, db.ForUpdate, db.ForUpdateSkipLocked, db.ForUpdateNoWait}[pick("lock", 4)]
			return db.Select("kv", db.W("v", vop(db.Le), int64(pick("v", 10)))).OrderedBy(db.Order{Col: "k"}).Limited(pick("limit", 3)).Locking(lock)
		case 12, 13:
			return db.Begin()
		case 14:
			return db.Commit()
		case 15:
			return db.Rollback()
		case 16:
			g := gid()
			if g == fmt.Sprintf("%s-%d", f.name, f.nextGid) {
				f.nextGid++
				f.gids = append(f.gids, g)
			}
			return db.Prepare(g)
		case 17:
			if pick("commit-prepared", 2) == 0 {
				return db.CommitPrepared(gid())
			}
			return db.RollbackPrepared(gid())
		case 18:
			key := int64(pick("key", 2))
			if pick("unlock", 2) == 0 {
				return db.TryAdvisoryLock(key)
			}
			return db.AdvisoryUnlock(key)
		case 19:
			return db.SetLockTimeout([]time.Duration{0, 50 * ms, 200 * ms}[pick("timeout", 3)])
		case 20:
			return db.Vacuum([]string{"", "kv", "pair"}[pick("vacuum", 3)])
		default:
			return db.PreparedXacts()
		}
	}
	if pick("close", 30) == 1 {
		f.cl.Close(env)
		env.After(time.Duration(pick("think", 30))*ms, next{})
		return
	}
	stmts := make([]db.Stmt, pick("stmts", 3)+1)
	for i := range stmts {
		stmts[i] = stmt()
	}
	if pick("atomic", 3) == 0 {
		f.cl.ExecAtomic(env, nil, stmts...)
	} else {
		f.cl.Exec(env, nil, stmts...)
	}
}

// replay applies a commit log to empty tables (independently of the engine).
func replay(log []db.CommitRecord) map[string]map[string]db.Row {
	state := map[string]map[string]db.Row{}
	for _, t := range fuzzSchema.Tables {
		state[t.Name] = map[string]db.Row{}
	}
	key := func(table string, r db.Row) string {
		var ks []any
		for _, c := range fuzzPK[table] {
			ks = append(ks, r[c])
		}
		return fmt.Sprint(ks...)
	}
	for _, rec := range log {
		// Every row the transaction replaced goes, then every row it left
		// comes: its changes are net per row, in no particular order (one
		// may give a key another deletes).
		for _, ch := range rec.Changes {
			if ch.Before != nil {
				delete(state[ch.Table], key(ch.Table, ch.Before))
			}
		}
		for _, ch := range rec.Changes {
			if ch.After != nil {
				state[ch.Table][key(ch.Table, ch.After)] = ch.After
			}
		}
	}
	return state
}

func keyed(table string, rows []db.Row) map[string]db.Row {
	out := map[string]db.Row{}
	for _, r := range rows {
		var ks []any
		for _, c := range fuzzPK[table] {
			ks = append(ks, r[c])
		}
		out[fmt.Sprint(ks...)] = r
	}
	return out
}

// sessionFaults are the faults of the random-session tests: the database
// crashes (at its crash points too) and connections break, in the first 4 s.
func sessionFaults(clients []string) sim.GenSpec {
	return sim.GenSpec{
		Nodes:      append([]string{"db"}, clients...),
		Horizon:    4 * sec,
		MaxActions: 4,
		Kinds:      []sim.Kind{sim.Crash, sim.Break},
		Crashable:  []string{"db"},
		MaxDown:    time.Second,
		Points:     []sim.PointSpec{{Node: "db", Points: db.Points}},
	}
}

func TestPropertyInvariants(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ent := sim.NewRapid(rt)
		clients := []string{"f1", "f2", "f3"}
		sched, _ := sim.Generate(ent, sessionFaults(clients))
		mem := &traces.Memory{}
		w := sim.New(sim.Config{
			Entropy:  ent,
			Network:  network.Policy{DelayMin: hop, DelayMax: hop},
			Schedule: sched,
			Limits:   sim.Limits{MaxEvents: 2_000_000},
			Recorder: mem,
		})
		w.Add("db", db.New(fuzzSchema, db.Config{
			MaxPreparedTransactions: 2,
			LockTimeout:             300 * ms,
			DeadlockTimeout:         100 * ms,
			Seed:                    map[string][]db.Row{"kv": {{"k": 1, "v": 0}, {"k": 2, "v": 5, "u": "x"}}},
		}))
		for _, c := range clients {
			f := &fuzzer{name: c, cl: db.Client{DB: "db"}, stopAt: 6 * sec}
			w.Add(c, func(string, *sim.Disk) sim.Node { return f })
		}
		fail := func(format string, args ...any) {
			rt.Helper()
			tail := mem.Events
			if len(tail) > 60 {
				tail = tail[len(tail)-60:]
			}
			s := ""
			for _, e := range tail {
				s += e.String() + "\n"
			}

			rt.Fatalf("schedule:\n%s\n%s\nlast events:\n%s", sim.Schedule(sched), fmt.Sprintf(format, args...), s)
		}
		for tm := 250 * ms; tm <= 8*sec; tm += 250 * ms {
			require.NoError(rt, w.RunUntil(at(tm)))
			if n, ok := w.Node("db").(*db.Node); ok {
				if err := n.Check(); err != nil {
					fail("at %v: %v", tm, err)
				}
			}
		}
		if !w.Up("db") { // crashed at a crash point after its scheduled restart
			require.NoError(rt, w.Inject(sim.Action{At: w.Now(), Kind: sim.Restart, Node: "db"}))
			require.NoError(rt, w.RunUntil(w.Now()+clock.Time(sec)))
		}
		n := w.Node("db").(*db.Node)

		// Every lock is released at transaction or session end: the clients
		// have closed their connections.
		if err := n.Quiet(); err != nil {
			fail("after every client left: %v", err)
		}

		// Committed data survives crashes: every commit the database ever
		// announced is in its recovered log, in order, and nothing else.
		var announced []string
		prepared := map[string]bool{}
		for _, e := range mem.Events {
			switch e.Kind {
			case "commit":
				announced = append(announced, string(e.DataJSON()))
			case "prepared":
				var p db.PreparedNote
				require.NoError(rt, json.Unmarshal(e.DataJSON(), &p))
				prepared[p.GID] = p.Event == "prepare"
			}
		}
		log := n.CommitLog()
		if len(log) != len(announced) {
			fail("the recovered log has %d commits, the trace announced %d", len(log), len(announced))
		}
		for i, rec := range log {
			b, err := json.Marshal(rec)
			require.NoError(rt, err)
			if string(b) != announced[i] {
				fail("commit %d differs:\n log:   %s\n trace: %s", i+1, b, announced[i])
			}
		}
		// Prepared transactions survive crashes, and only they remain.
		var want []string
		for g, open := range prepared {
			if open {
				want = append(want, g)
			}
		}
		sort.Strings(want)
		if got := n.Prepared(); fmt.Sprint(got) != fmt.Sprint(want) {
			fail("prepared transactions: have %v, the trace says %v", got, want)
		}
		// Replaying the commit log from empty gives the current state
		// (after the prepared transactions are rolled back, nothing else
		// can change it).
		state := replay(log)
		for _, tb := range n.Tables() {
			if got, want := keyed(tb, n.Rows(tb)), state[tb]; fmt.Sprint(got) != fmt.Sprint(want) {
				fail("table %s: state %v differs from the replayed log %v", tb, got, want)
			}
		}
	})
}
