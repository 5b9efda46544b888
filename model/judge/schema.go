package judge

import "github.com/fencesim/fencesim/model/db"

// Table names.
const (
	TSubmissions = "submissions"
	TJudgings    = "submission_judgings"
	TFirstAC     = "first_ac"
	TUsers       = "users"
	TClaims      = "claims"
	TDispatch    = "judge_dispatch_state"
)

// LeaderLockKey is the advisory lock key of the leader lock.
const LeaderLockKey int64 = 0x4a554447 // "JUDG"

// XPPerFirstAC is the experience credited for a user's first pass of a problem.
const XPPerFirstAC = 10

// claimUnique is the claims table's UNIQUE (worker_id, request_id, slot),
// which claim-lookup-only drops.
func claimUnique(d Design) [][]string {
	if d.Has(ClaimLookupOnly) {
		return nil
	}
	return [][]string{{"worker_id", "request_id", "slot"}}
}

// Schema returns the database schema of system A under a design. Three knobs
// change it, at this one place: no-unique-history drops UNIQUE
// (submission_id, lease_token), credit-without-on-conflict drops UNIQUE
// (user_id, problem_id) on first_ac, and claim-lookup-only drops UNIQUE
// (worker_id, request_id, slot) on claims.
func Schema(d Design) db.Schema {
	judgings := db.Table{
		Name: TJudgings,
		Columns: []db.Column{
			{Name: "seq", Type: db.Int, Serial: true},
			{Name: "submission_id", Type: db.Int, NotNull: true},
			{Name: "lease_token", Type: db.Text},
			{Name: "lease_gen", Type: db.Int},
			{Name: "worker_id", Type: db.Text},
			{Name: "verdict", Type: db.Text, NotNull: true},
			{Name: "at", Type: db.Timestamp},
		},
		PrimaryKey: []string{"seq"},
	}
	if !d.Has(NoUniqueHistory) {
		judgings.Unique = [][]string{{"submission_id", "lease_token"}}
	}
	firstAC := db.Table{
		Name: TFirstAC,
		Columns: []db.Column{
			{Name: "id", Type: db.Int, Serial: true},
			{Name: "user_id", Type: db.Int, NotNull: true},
			{Name: "problem_id", Type: db.Int, NotNull: true},
			{Name: "submission_id", Type: db.Int, NotNull: true},
			{Name: "at", Type: db.Timestamp},
		},
		PrimaryKey: []string{"id"},
	}
	if !d.Has(CreditWithoutOnConflict) {
		firstAC.Unique = [][]string{{"user_id", "problem_id"}}
	}
	return db.Schema{Tables: []db.Table{
		{
			Name: TSubmissions,
			Columns: []db.Column{
				{Name: "id", Type: db.Int, NotNull: true},
				{Name: "user_id", Type: db.Int, NotNull: true},
				{Name: "problem_id", Type: db.Int, NotNull: true},
				{Name: "status", Type: db.Text, NotNull: true, Default: StatusPending},
				{Name: "worker_id", Type: db.Text},
				{Name: "lease_token", Type: db.Text},
				{Name: "lease_gen", Type: db.Int, NotNull: true, Default: int64(0)},
				{Name: "lease_expires_at", Type: db.Timestamp},
				{Name: "lease_confirmed", Type: db.Bool, NotNull: true, Default: false}, // set by the first heartbeat (used by confirm_aware_grace)
				{Name: "judge_attempts", Type: db.Int, NotNull: true, Default: int64(0)},
			},
			PrimaryKey: []string{"id"},
			// The claim picks pending rows; the sweeps and the grace read
			// the judging ones (the leases in flight, a few per worker, so
			// lease_expires_at needs no index of its own).
			Indexes: [][]string{{"status"}},
		},
		judgings,
		firstAC,
		{
			Name: TUsers,
			Columns: []db.Column{
				{Name: "id", Type: db.Int, NotNull: true},
				{Name: "xp", Type: db.Int, NotNull: true, Default: int64(0)},
			},
			PrimaryKey: []string{"id"},
		},
		{
			Name: TClaims,
			Columns: []db.Column{
				{Name: "worker_id", Type: db.Text, NotNull: true},
				{Name: "request_id", Type: db.Text, NotNull: true},
				{Name: "submission_id", Type: db.Int, NotNull: true},
				{Name: "lease_token", Type: db.Text, NotNull: true},
				{Name: "lease_gen", Type: db.Int, NotNull: true},
				{Name: "user_id", Type: db.Int, NotNull: true},
				{Name: "problem_id", Type: db.Int, NotNull: true},
				{Name: "slot", Type: db.Int, NotNull: true, Default: int64(0)}, // the lease's place in its claim's answer (0 .. claim_batch-1)
			},
			PrimaryKey: []string{"worker_id", "request_id", "submission_id"}, // a claim may lease several (claim_batch)
			// One answer per claim: a second transaction that grants the
			// same (worker_id, request_id) (the claim retried at another
			// arbiter while the first one's transaction still runs) fails
			// on it and rolls its grants back. Under claim-lookup-only the
			// look-up alone stands guard.
			Unique: claimUnique(d),
			// find-claim looks a claim up by (worker_id, request_id): the
			// primary key's prefix, which PostgreSQL's btree serves.
			Indexes: [][]string{{"worker_id", "request_id"}},
		},
		{
			Name: TDispatch,
			Columns: []db.Column{
				{Name: "id", Type: db.Int, NotNull: true},
				{Name: "round", Type: db.Int, NotNull: true, Default: int64(0)},
				{Name: "last_worker", Type: db.Text},
			},
			PrimaryKey: []string{"id"},
		},
	}}
}
