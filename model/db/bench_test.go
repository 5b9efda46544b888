package db_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
)

var benchSchema = db.Schema{Tables: []db.Table{
	{
		Name: "submissions",
		Columns: []db.Column{
			{Name: "id", Type: db.Int},
			{Name: "status", Type: db.Text, NotNull: true, Default: "pending"},
			{Name: "lease_token", Type: db.Text},
			{Name: "lease_gen", Type: db.Int, NotNull: true, Default: int64(0)},
			{Name: "lease_expires_at", Type: db.Timestamp},
		},
		PrimaryKey: []string{"id"},
	},
	{
		Name: "judgings",
		Columns: []db.Column{
			{Name: "seq", Type: db.Int, Serial: true},
			{Name: "submission_id", Type: db.Int, NotNull: true},
			{Name: "lease_token", Type: db.Text, NotNull: true},
			{Name: "at", Type: db.Timestamp},
		},
		PrimaryKey: []string{"seq"},
		Unique:     [][]string{{"submission_id", "lease_token"}},
	},
}}

// loader is a client that runs an arbiter-like mix back to back: claims
// (FOR UPDATE SKIP LOCKED, then a conditional UPDATE, in a transaction),
// heartbeats and submits (conditional UPDATEs, INSERT ... ON CONFLICT DO
// NOTHING in an atomic batch), status reads, sweeps, rejudges, VACUUM.
type loader struct {
	cl     db.Client
	name   string
	budget *int
	id     int64 // the submission claimed, 0 when none
	token  string
	seq    int
	phase  int // 1: the claim's SELECT is answered, the UPDATE is next
}

func (l *loader) Step(env *sim.Env, in sim.Input) {
	if in.Kind == sim.Start {
		l.next(env)
		return
	}
	done, ok := l.cl.Handle(in)
	if !ok {
		return
	}
	for _, d := range done {
		if l.phase == 1 {
			l.phase = 0
			if rows := d.Resp.Results[len(d.Resp.Results)-1].Rows; len(rows) == 1 {
				l.id = rows[0]["id"].(int64)
				l.seq++
				l.token = fmt.Sprintf("%s-%d", l.name, l.seq)
				l.cl.Exec(env, nil, db.Update("submissions", []db.Assign{
					db.Set("status", "judging"), db.Set("lease_token", l.token),
					db.Set("lease_gen", db.Plus(db.Col("lease_gen"), db.Const(int64(1)))),
					db.Set("lease_expires_at", db.NowPlus(10*time.Second)),
				}, db.W("id", db.Eq, l.id)), db.Commit())
				return
			}
			l.cl.Exec(env, nil, db.Commit())
			return
		}
		l.next(env)
	}
}

func (l *loader) next(env *sim.Env) {
	if *l.budget <= 0 {
		return
	}
	*l.budget--
	r := env.Rand()
	mine := []db.Cond{db.W("id", db.Eq, l.id), db.W("status", db.Eq, "judging"), db.W("lease_token", db.Eq, l.token)}
	switch x := r.Uint64n("op", 100); {
	case x < 25 || l.id == 0:
		l.phase = 1
		l.cl.Exec(env, nil, db.Begin(), db.Select("submissions", db.W("status", db.Eq, "pending")).
			OrderedBy(db.Order{Col: "id"}).Limited(1).Locking(db.ForUpdateSkipLocked))
	case x < 45:
		l.cl.Exec(env, nil, db.Update("submissions", []db.Assign{db.Set("lease_expires_at", db.NowPlus(time.Minute))}, mine...))
	case x < 65:
		l.cl.ExecAtomic(env, nil,
			db.Update("submissions", []db.Assign{db.Set("status", "AC")}, mine...),
			db.InsertOrNothing("judgings", db.Row{"submission_id": l.id, "lease_token": l.token, "at": db.Now()}))
		l.id = 0
	case x < 85:
		l.cl.Exec(env, nil, db.Select("submissions", db.W("id", db.Eq, int64(r.Uint64n("id", 200))+1)))
	case x < 90:
		l.cl.Exec(env, nil, db.Update("submissions", []db.Assign{db.Set("status", "pending")},
			db.W("status", db.Eq, "judging"), db.W("lease_expires_at", db.Lt, db.Now())))
	case x < 99:
		l.cl.Exec(env, nil, db.Update("submissions", []db.Assign{db.Set("status", "pending"),
			db.Set("lease_gen", db.Plus(db.Col("lease_gen"), db.Const(int64(1))))},
			db.W("id", db.Eq, int64(r.Uint64n("id", 200))+1), db.W("status", db.Eq, "AC")))
	default:
		l.cl.Exec(env, nil, db.Vacuum(""))
	}
}

// BenchmarkStatements measures the database node's throughput in a world
// (kernel, network and clients included, no trace recorder): 8 clients run
// an arbiter-like mix on 200 submissions. b.N is the number of requests.
func BenchmarkStatements(b *testing.B) {
	var rows []db.Row
	for i := 1; i <= 200; i++ {
		rows = append(rows, db.Row{"id": int64(i)})
	}
	budget := b.N
	w := sim.New(sim.Config{
		Entropy: sim.NewPCG(7),
		Network: network.Policy{DelayMin: 100 * time.Microsecond, DelayMax: time.Millisecond},
	})
	w.Add("db", db.New(benchSchema, db.Config{LockTimeout: time.Second, Seed: map[string][]db.Row{"submissions": rows}}))
	for i := range 8 {
		l := &loader{cl: db.Client{DB: "db"}, name: fmt.Sprintf("w%d", i), budget: &budget}
		w.Add(l.name, func(string, *sim.Disk) sim.Node { return l })
	}
	b.ResetTimer()
	if err := w.Run(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	n := w.Node("db").(*db.Node)
	b.ReportMetric(float64(n.Statements())/b.Elapsed().Seconds(), "stmts/s")
	b.ReportMetric(float64(n.Statements())/float64(b.N), "stmts/req")
}
