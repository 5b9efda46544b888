package db_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/db"
)

// The source's C.2 figures (docs/systems.md, "The cost of blocking"): a prepared
// transaction keeps its row lock, so with lock_timeout = 3 s an update of the
// prepared row waits 3 s and fails with LockNotAvailable while another row
// updates at once; pg_prepared_xacts shows its age growing (0 s, then 4 s);
// it pins the VACUUM horizon: after 3 full updates of a 2000-row table,
// VACUUM finds 6000 dead row versions it cannot remove (8000 remain), and
// after ROLLBACK PREPARED it removes all 6000 (2000 remain).
//
// PostgreSQL: PREPARE TRANSACTION ("the transaction continues to hold
// whatever locks it held"), 20.11 lock_timeout, 25.1.5 / VACUUM VERBOSE
// ("dead but not yet removable"), 54.16 pg_prepared_xacts.
func TestC2CostOfBlocking(t *testing.T) {
	bloat := db.Table{Name: "bloat", Columns: []db.Column{{Name: "id", Type: db.Int}, {Name: "v", Type: db.Int}}, PrimaryKey: []string{"id"}}
	sc := db.Schema{Tables: append(append([]db.Table(nil), schema.Tables...), bloat)}
	var rows []db.Row
	for i := 1; i <= 2000; i++ {
		rows = append(rows, db.Row{"id": int64(i), "v": int64(0)})
	}
	cfg := db.Config{
		MaxPreparedTransactions: 2,
		LockTimeout:             3 * time.Second,
		Seed:                    map[string][]db.Row{"stock": stock(2), "bloat": rows},
	}
	bump := db.Update("bloat", []db.Assign{db.Set("v", db.Plus(db.Col("v"), db.Const(int64(1))))})
	r := runBoth(t, sc, cfg, nil, 20*sec,
		cl("coordinator", send(0, db.Begin(), decr(1), db.Prepare("c2")),
			send(0, db.PreparedXacts()), send(4*sec, db.PreparedXacts())),
		cl("other", send(1*sec, decr(1)), send(5*sec, decr(2)),
			send(6*sec, bump), send(6100*ms, bump), send(6200*ms, bump),
			send(7*sec, db.Vacuum("bloat")),
			send(8*sec, db.RollbackPrepared("c2")),
			send(9*sec, db.Vacuum("bloat")),
			send(10*sec, db.Select("bloat", db.W("v", db.Ne, 3)))),
	)

	ages := []any{r.ans("coordinator", 1).last().Rows[0]["age"], r.ans("coordinator", 2).last().Rows[0]["age"]}
	assert.Equal(t, []any{int64(0), int64(4 * sec)}, ages, "the prepared transaction's age: 0 s, then 4 s")

	blocked := r.ans("other", 0)
	assert.Equal(t, db.CodeLockNotAvailable, blocked.err(), "updating the prepared row fails with LockNotAvailable")
	assert.Equal(t, 3*sec, blocked.at.Sub(blocked.sent)-2*hop, "after exactly lock_timeout = 3 s of waiting at the database")
	free := r.ans("other", 1)
	assert.Equal(t, "UPDATE 1", free.last().Tag, "another row updates")
	assert.Equal(t, time.Duration(0), free.at.Sub(free.sent)-2*hop, "at once: lock granularity is the prepared row")

	for i := 2; i <= 4; i++ {
		assert.Equal(t, "UPDATE 2000", r.ans("other", i).last().Tag, "full update %d", i-1)
	}
	pinned := r.ans("other", 5).last().Vacuum
	assert.Equal(t, db.VacuumStats{Removed: 0, Remain: 8000, DeadNotRemovable: 6000}, pinned,
		"while the prepared transaction exists, the 6000 dead versions cannot be removed")
	require.Equal(t, "ROLLBACK PREPARED", r.ans("other", 6).last().Tag)
	freed := r.ans("other", 7).last().Vacuum
	assert.Equal(t, db.VacuumStats{Removed: 6000, Remain: 2000, DeadNotRemovable: 0}, freed,
		"after ROLLBACK PREPARED, VACUUM removes all 6000")
	assert.Empty(t, r.ans("other", 8).last().Rows, "every row was updated 3 times")
	assert.Equal(t, int64(99), r.node().Rows("stock")[1]["n"])
	assert.Equal(t, int64(100), r.node().Rows("stock")[0]["n"], "the rolled-back prepared decrement is gone")
}
