package db_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
)

// Stmt.SQL renders real PostgreSQL SQL with literals (the conformance tests
// run it on a server); these are its exact forms.
func TestSQLRendering(t *testing.T) {
	mine := []db.Cond{db.W("status", db.Eq, "judging"), db.W("lease_token", db.Eq, "it's")}
	cases := []struct {
		stmt db.Stmt
		want string
	}{
		{db.Update("submissions", []db.Assign{db.Set("lease_expires_at", db.NowPlus(60*time.Second))}, mine...),
			"UPDATE submissions SET lease_expires_at = (now() + interval '60 seconds') WHERE status = 'judging' AND lease_token = 'it''s'"},
		{db.Update("submissions", []db.Assign{db.Set("lease_expires_at", db.Greatest(db.Col("lease_expires_at"), db.NowPlus(1500*time.Millisecond)))}, db.W("status", db.Eq, "judging")),
			"UPDATE submissions SET lease_expires_at = greatest(lease_expires_at, (now() + interval '1500 milliseconds')) WHERE status = 'judging'"},
		{db.Select("submissions", db.W("status", db.Eq, "pending")).OrderedBy(db.Order{Col: "id"}, db.Order{Col: "user", Desc: true}).Limited(1).Locking(db.ForUpdateSkipLocked),
			`SELECT * FROM submissions WHERE status = 'pending' ORDER BY id, "user" DESC LIMIT 1 FOR UPDATE SKIP LOCKED`},
		{db.InsertOrNothing("first_ac", db.Row{"user_id": 7, "problem_id": int64(3), "at": clock.Time(1_500_000_000), "ok": true, "x": nil}).WithReturning(),
			"INSERT INTO first_ac (at, ok, problem_id, user_id, x) VALUES (timestamptz '2000-01-01 00:00:01.5+00', true, 3, 7, NULL) ON CONFLICT DO NOTHING RETURNING *"},
		{db.Delete("outbox", db.Cond{Col: "id", Op: db.In, Set: []db.Value{1, 2}}, db.W("sent_at", db.IsNotNull, nil)),
			"DELETE FROM outbox WHERE id IN (1, 2) AND sent_at IS NOT NULL"},
		{db.SetLockTimeout(3 * time.Second), "SET lock_timeout = '3000ms'"},
		{db.TryAdvisoryLock(42), "SELECT pg_try_advisory_lock(42)"},
		{db.Prepare("tx-'1'"), "PREPARE TRANSACTION 'tx-''1'''"},
		{db.RollbackPrepared("g"), "ROLLBACK PREPARED 'g'"},
		{db.Vacuum("bloat"), "VACUUM (VERBOSE) bloat"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.stmt.SQL())
	}
	tbl := db.Table{Name: "judgings", Columns: []db.Column{
		{Name: "seq", Type: db.Int, Serial: true}, {Name: "submission_id", Type: db.Int, NotNull: true},
		{Name: "lease_token", Type: db.Text, NotNull: true}, {Name: "at", Type: db.Timestamp, Default: db.Now()},
	}, PrimaryKey: []string{"seq"}, Unique: [][]string{{"submission_id", "lease_token"}}}
	assert.Equal(t, "CREATE TABLE judgings (seq bigserial, submission_id bigint NOT NULL, lease_token text NOT NULL, at timestamptz DEFAULT now(), "+
		"PRIMARY KEY (seq), UNIQUE (submission_id, lease_token))", tbl.SQL())
	req := db.Request{ID: 3, Atomic: true, Stmts: []db.Stmt{db.Begin(), db.Commit()}}
	assert.Equal(t, "req 3 atomic: BEGIN; COMMIT", req.String())
	resp := db.Response{ID: 3, Results: []db.Result{{Tag: "SELECT 1", Rows: []db.Row{{"id": int64(1), "s": "a"}}}, {Err: &db.Error{Code: "55P03", Msg: "m"}}}}
	assert.Equal(t, "resp 3: SELECT 1 {id=1 s='a'}; ERROR 55P03: m", resp.String())
}
