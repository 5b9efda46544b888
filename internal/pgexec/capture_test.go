package pgexec_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/internal/pgexec"
	"github.com/fencesim/fencesim/internal/pgtest"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/traces/hist"
)

// The commit records rebuilt from the server (InstallCapture, ReadCommits)
// are the model's: one per committed transaction that changed rows, in
// commit order, with the same tables, ops, keys, before and after images
// (timestamps within the pacing's tolerance), commit times, and the gid of
// a prepared transaction; a rolled-back transaction and one whose insert
// was deleted again leave nothing.
func TestReadCommitsAsTheModel(t *testing.T) {
	pgtest.Require(t)
	kv := db.Table{
		Name: "kv",
		Columns: []db.Column{
			{Name: "k", Type: db.Int},
			{Name: "v", Type: db.Int, NotNull: true, Default: int64(0)},
			{Name: "s", Type: db.Text},
			{Name: "ok", Type: db.Bool},
			{Name: "at", Type: db.Timestamp},
		},
		PrimaryKey: []string{"k"},
	}
	log := db.Table{
		Name:       "log",
		Columns:    []db.Column{{Name: "seq", Type: db.Int, Serial: true}, {Name: "what", Type: db.Text, NotNull: true}},
		PrimaryKey: []string{"seq"},
	}
	schema := db.Schema{Tables: []db.Table{kv, log}}
	set := func(col string, v db.Value) []db.Assign { return []db.Assign{db.Set(col, v)} }
	k := func(n int) db.Cond { return db.W("k", db.Eq, n) }
	const gap = 200 * time.Millisecond
	seq := []step{
		on(0, db.Insert("kv", db.Row{"k": 1, "s": "a", "ok": true, "at": at(time.Second)})),
		on(0, db.Insert("kv", db.Row{"k": 2, "v": 5, "at": db.Now()}), db.Insert("log", db.Row{"what": "two"})),
		on(0, db.Begin(), db.Insert("kv", db.Row{"k": 3}), db.Update("kv", set("v", 7), k(3)), db.Update("kv", set("s", "b"), k(1)), db.Commit()),
		on(1, db.Begin(), db.Insert("kv", db.Row{"k": 4}), db.Delete("kv", k(4)), db.Commit()),                      // nets out: no record
		on(1, db.Begin(), db.Update("kv", set("v", 9), k(1)), db.Rollback()),                                        // rolled back: no record
		atomicOn(1, db.Update("kv", set("k", int64(10)), k(2)), db.Update("kv", set("v", 6), db.W("k", db.Eq, 10))), // a key change
		atomicOn(0, db.Delete("kv", k(3)), db.Insert("kv", db.Row{"k": 3, "s": "again"})),                           // a delete and an insert of the same key
		on(1, db.Begin(), db.Update("kv", set("ok", false), k(1)), db.Insert("log", db.Row{"what": "2pc"}), db.Prepare("g1")),
		on(0, db.CommitPrepared("g1")),
		on(0, db.Update("kv", []db.Assign{db.Set("at", db.NowPlus(time.Minute))}, k(1)), db.Delete("kv", db.W("k", db.Eq, 10))),
		atomicOn(0, db.Insert("kv", db.Row{"k": 1})), // 23505: rolled back, no record
	}
	cfg := db.Config{MaxPreparedTransactions: 4}
	srv := newServer(t, schema, nil, true, pgexec.Options{RecordGID: true})
	server := srv.run(seq, gap)
	model, node := modelRun(t, schema, cfg, seq, gap)
	compare(t, seq, model, server)

	got, err := pgexec.ReadCommits(t.Context(), srv.admin, schema)
	require.NoError(t, err)
	var want []hist.CommitRecord
	for _, r := range node.CommitLog() {
		want = append(want, hist.CommitRecord(r))
	}
	require.Len(t, got, len(want), "one record per committed transaction that changed rows:\nserver %v\nmodel  %v", got, want)
	for i := range want {
		w, g := want[i], got[i]
		assert.Equal(t, w.Seq, g.Seq, "record %d: seq", i)
		assert.Equal(t, w.GID, g.GID, "record %d: gid", i)
		assert.InDelta(t, float64(w.At), float64(g.At), float64(tol), "record %d: commit time (model %v, server %v)", i, w.At, g.At)
		require.Len(t, g.Changes, len(w.Changes), "record %d: changes\nserver %+v\nmodel  %+v", i, g.Changes, w.Changes)
		for j := range w.Changes {
			wc, gc := w.Changes[j], g.Changes[j]
			if wc.Before != nil && gc.Before != nil {
				near(map[string]any(wc.Before), map[string]any(gc.Before))
			}
			if wc.After != nil && gc.After != nil {
				near(map[string]any(wc.After), map[string]any(gc.After))
			}
			assert.Equal(t, wc, gc, "record %d (%s), change %d", i, db.CommitRecord(w), j)
		}
		t.Logf("server %s", db.CommitRecord(g))
	}
}
