package hist

import "github.com/fencesim/fencesim/clock"

// CommitRecord is one committed transaction's changes: the data of a
// "commit" event, which model/db writes (db.CommitRecord is this type, with
// its rendering) and the checkers read. In a trace file it is JSON:
//
//	{"seq":3,"tx":17,"at":12000000000,"gid":"g1",
//	 "changes":[{"table":"stock","op":"update","key":[1],
//	             "before":{"id":1,"n":100},"after":{"id":1,"n":99}}]}
//
// Read from a file, numbers are json.Number; read from a run in memory,
// they are the database's own values (int64, clock.Time for timestamps).
// Records are shared: never modify one.
type CommitRecord struct {
	Seq     uint64     `json:"seq"`
	Tx      uint64     `json:"tx"`
	At      clock.Time `json:"at"`
	GID     string     `json:"gid,omitempty"`
	Changes []Change   `json:"changes"`
}

// Change is one row's net change within a committed transaction.
type Change struct {
	Table  string         `json:"table"`
	Op     string         `json:"op"`  // "insert", "update" or "delete"
	Key    []any          `json:"key"` // primary key values of the row (after an update: the new key)
	Before map[string]any `json:"before,omitempty"`
	After  map[string]any `json:"after,omitempty"`
}

// Row returns the row after the change (before it, for a delete).
func (c Change) Row() map[string]any {
	if c.After != nil {
		return c.After
	}
	return c.Before
}
