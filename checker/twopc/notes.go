package twopc

// The 2PC notes that coordinators, agents and the harness write are
// traces/hist's Txn (kind hist.KindTxn). Besides those the checker reads
// model/db's documented "prepared" and "db" events; these are the parts of
// their data it needs.

// The participants' txlog table, as model/twopc writes it: one row per
// global transaction a participant committed, or refused (a tombstone).
const (
	TableTxlog   = "txlog"
	StateRefused = "refused"
)

// Prepared is model/db's "prepared" event data: a prepared transaction was
// prepared, committed or rolled back at a database node.
type Prepared struct {
	GID   string `json:"gid"`
	Tx    uint64 `json:"tx"`
	Event string `json:"event"` // prepare, commit, rollback
	At    int64  `json:"at"`
	Since int64  `json:"since"`
}

// Statement is the part of model/db's "db" event data the metrics read.
type Statement struct {
	Conn uint64 `json:"conn"`
	SQL  string `json:"sql"`
	Err  string `json:"err,omitempty"`
	Wait uint64 `json:"wait,omitempty"`
}
