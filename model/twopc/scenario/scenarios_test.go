package scenario

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/db"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files under testdata/")

// golden compares a rendered table with testdata/<name>.txt.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".txt")
	if *rewrite {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing: run go test ./model/twopc/scenario/ -run %s -rewrite", t.Name())
	assert.Equal(t, string(want), got, "%s differs from %s; if the change is intended, rerun with -rewrite", name, path)
}

// crashState is one C.1 row: orders prepared / inventory prepared /
// orders / stock / decision log.
type crashState struct {
	PrepOrders, PrepInventory, Orders int
	Stock                             int64
	Log                               string
}

func crashOf(r CrashRow) crashState {
	return crashState{r.Crash.Prepared[0], r.Crash.Prepared[1], r.Crash.Orders, r.Crash.Stock[0], r.Log}
}

// outcome is a recovery row: action, orders, stock, consistent.
type outcome struct {
	Action     string
	Orders     int
	Stock      int64
	Consistent bool
}

func outcomeOf(r CrashRow) outcome {
	return outcome{r.Action, r.After.Orders, r.After.Stock[0], r.Consistent}
}

// TestC1CrashPositions: the source's C.1 (kill -9 at five positions).
func TestC1CrashPositions(t *testing.T) {
	want := []crashState{
		{0, 0, 0, 100, ""},
		{1, 0, 0, 100, ""},
		{1, 1, 0, 100, ""},
		{1, 1, 0, 100, "commit"},
		{0, 1, 1, 100, "commit"},
	}
	rows, err := C1()
	require.NoError(t, err)
	require.Len(t, rows, 5)
	stuck := 0
	for i, r := range rows {
		assert.Equal(t, want[i], crashOf(r), "C.1 position %d (%s): the source measured %+v", i, r.Where, want[i])
		if r.Crash.Prepared[0]+r.Crash.Prepared[1] > 0 {
			stuck++
		}
	}
	assert.Equal(t, 4, stuck, "the source: 4 of 5 positions leave a participant prepared")
	golden(t, "c1", TableC1(rows).String())
}

// TestC2CostOfBlocking: the source's C.2 figures.
func TestC2CostOfBlocking(t *testing.T) {
	r, err := C2()
	require.NoError(t, err)
	assert.Less(t, r.Age0, 50*time.Millisecond, "pg_prepared_xacts age first reads 0.0 s")
	assert.Equal(t, "0.0", secs(r.Age0))
	assert.Equal(t, "4.0", secs(r.Age1), "then 4.0 s")
	assert.Equal(t, db.CodeLockNotAvailable, r.Blocked, "updating the prepared row fails with LockNotAvailable")
	assert.Equal(t, 3*time.Second, r.BlockedWait, "after lock_timeout: the source's 3001.3 ms, exactly 3 s simulated")
	assert.Equal(t, "UPDATE 1", r.Free, "another row updates")
	assert.Equal(t, time.Duration(0), r.FreeWait, "at once (the source: 0.8 ms)")
	assert.Equal(t, db.VacuumStats{Removed: 0, Remain: 8000, DeadNotRemovable: 6000}, r.Pinned, "VACUUM with the prepared transaction")
	assert.Equal(t, db.VacuumStats{Removed: 6000, Remain: 2000, DeadNotRemovable: 0}, r.Removed, "VACUUM after ROLLBACK PREPARED")
	golden(t, "c2", TableC2(r).String())
}

// TestC3ParticipantCannotDecide: the source's C.3.
func TestC3ParticipantCannotDecide(t *testing.T) {
	rows, err := C3()
	require.NoError(t, err)
	require.Len(t, rows, 2)
	sc := rows[0].Scene
	assert.Equal(t, []int{0, 1}, sc.Prepared, "scene: orders 0 prepared, inventory 1 prepared")
	assert.Equal(t, 1, sc.Orders, "scene: 1 order")
	assert.Equal(t, []int64{100}, sc.Stock, "scene: stock 100")
	assert.Equal(t, "commit", rows[0].Log, "scene: the log says COMMIT")
	assert.Equal(t, outcome{"", 1, 100, false}, outcome{"", rows[0].After.Orders, rows[0].After.Stock[0], rows[0].Consistent}, "A: ROLLBACK PREPARED -> (1, 100) inconsistent")
	assert.Equal(t, "inventory: ROLLBACK PREPARED 'xv'", rows[0].Action)
	assert.Equal(t, "PC1,PC2,PC3", rows[0].Verdicts, "approach A breaks atomicity, the logged decision, and is unilateral")
	assert.Equal(t, outcome{"", 1, 99, true}, outcome{"", rows[1].After.Orders, rows[1].After.Stock[0], rows[1].Consistent}, "B: ask the log -> COMMIT PREPARED -> (1, 99)")
	assert.Equal(t, "inventory: COMMIT PREPARED 'xv2'", rows[1].Action)
	assert.Equal(t, "ok", rows[1].Verdicts)
	golden(t, "c3", TableC3(rows).String())
}

// TestC4Recovery: the source's C.4.
func TestC4Recovery(t *testing.T) {
	want := []outcome{
		{"(nothing to do)", 0, 100, true},
		{"orders: ROLLBACK", 0, 100, true},
		{"orders: ROLLBACK; inventory: ROLLBACK", 0, 100, true},
		{"orders: COMMIT; inventory: COMMIT", 1, 99, true},
		{"inventory: COMMIT", 1, 99, true},
	}
	rows, err := C4()
	require.NoError(t, err)
	for i, r := range rows {
		assert.Equal(t, want[i], outcomeOf(r), "C.4 position %d", i)
		assert.Equal(t, "ok", r.Verdicts, "C.4 position %d: every property holds", i)
	}
	golden(t, "c4", TableC4(rows).String())
}

// TestC5LogLost: the source's C.5.
func TestC5LogLost(t *testing.T) {
	want := []outcome{
		{"(nothing to do)", 0, 100, true},
		{"orders: ROLLBACK", 0, 100, true},
		{"orders: ROLLBACK; inventory: ROLLBACK", 0, 100, true},
		{"orders: ROLLBACK; inventory: ROLLBACK", 0, 100, true},
		{"inventory: ROLLBACK", 1, 100, false},
	}
	rows, err := C5()
	require.NoError(t, err)
	for i, r := range rows {
		assert.Equal(t, want[i], outcomeOf(r), "C.5 position %d", i)
	}
	assert.Equal(t, "PC2", rows[3].Verdicts, "position 3 is 'consistent' but reverses a decided commit")
	assert.Equal(t, "PC1,PC2", rows[4].Verdicts, "position 4 is inconsistent")
	golden(t, "c5", TableC5(rows).String())
}

// TestC6WriteOrder: the source's C.6.
func TestC6WriteOrder(t *testing.T) {
	rows, err := C6()
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.Equal(t, "commit", rows[0].Log, "log first: the log says COMMIT at the crash")
	assert.Equal(t, outcome{"inventory: COMMIT", 1, 99, true}, outcomeOf(rows[0].CrashRow))
	assert.Equal(t, "", rows[1].Log, "COMMIT PREPARED first: the log is empty at the crash")
	assert.Equal(t, outcome{"inventory: ROLLBACK", 1, 100, false}, outcomeOf(rows[1].CrashRow))
	golden(t, "c6", TableC6(rows).String())
}

// TestC7ParticipantDiesFirst: the source's C.7.
func TestC7ParticipantDiesFirst(t *testing.T) {
	r, err := C7()
	require.NoError(t, err)
	assert.Equal(t, "abort", r.Decision, "the coordinator concludes ABORT")
	assert.Equal(t, "abort", r.Log, "and logs it")
	assert.Equal(t, []int{0, 0}, r.After.Prepared, "orders 0 prepared; inventory 0 prepared after its restart")
	assert.Equal(t, 0, r.After.Orders, "0 orders")
	assert.Equal(t, []int64{100}, r.After.Stock, "stock 100")
	assert.Equal(t, "orders: PREPARE TRANSACTION 'xp' -> YES", r.Lines[0], "orders prepares first and votes YES")
	assert.Equal(t, "ok", r.Verdicts)
	golden(t, "c7", TableC7(r).String())
}

// TestScenariosRender: the command line's table output is the golden files
// together.
func TestScenariosRender(t *testing.T) {
	ts, err := Scenarios()
	require.NoError(t, err)
	var ids []string
	for _, x := range ts {
		ids = append(ids, x.ID)
	}
	assert.Equal(t, []string{"C.1", "C.2", "C.3", "C.4", "C.5", "C.6", "C.7", "C.8a", "C.8b", "C.8c", "C.8d"}, ids)
	golden(t, "scenarios", Render(ts))
}
