package twopc

// The 2PC trace vocabulary: every note of the coordinator, of the
// participants' agents and of the run harness is an event of kind Kind whose
// data is a Note. The What field says which fact it records.

// Kind is the trace event kind of every 2PC note.
const Kind = "2pc"

// What values of a Note.
const (
	WBegin      = "begin"      // a coordinator starts transaction GID over Participants
	WVote       = "vote"       // a coordinator received Participant's Vote (yes, no, unknown)
	WDecide     = "decide"     // a coordinator decided Outcome in memory (before logging it)
	WLog        = "log"        // a coordinator wrote Outcome to the decision log (Synced: fsync'd); Found: the record that was already there and wins
	WRecover    = "recover"    // a recovering coordinator tells Participant to Outcome the prepared GID; Found: the log record ("" none)
	WRecovered  = "recovered"  // a coordinator finished recovery
	WDone       = "done"       // a coordinator finished GID with Outcome
	WUnilateral = "unilateral" // an agent ended a prepared GID with Outcome on its own (Reason), without the coordinator's word
	WRefuse     = "refuse"     // an agent made its participant refuse GID forever (it had not voted): GID can no longer commit
	WResolve    = "resolve"    // an agent ended a prepared GID with Outcome on a peer's word (cooperative termination; Reason)
	WBlocked    = "blocked"    // an agent asked every peer and all are prepared too: it cannot decide
	WEnd        = "end"        // the harness ends the run; Quiesced: faults healed, every node up, time to settle given
)

// Outcomes and votes.
const (
	Commit  = "commit"
	Abort   = "abort"
	Yes     = "yes"
	No      = "no"
	Unknown = "unknown" // the connection broke: the participant may or may not have prepared
)

// Note is the data of a 2PC trace note.
type Note struct {
	What         string   `json:"what"`
	GID          string   `json:"gid,omitempty"`
	By           string   `json:"by,omitempty"` // the node that notes it
	Participant  string   `json:"participant,omitempty"`
	Participants []string `json:"participants,omitempty"`
	Vote         string   `json:"vote,omitempty"`
	Outcome      string   `json:"outcome,omitempty"`
	Synced       bool     `json:"synced,omitempty"`
	Found        string   `json:"found,omitempty"`
	Reason       string   `json:"reason,omitempty"`
	Code         string   `json:"code,omitempty"` // the SQLSTATE of a NO vote
	Rows         int      `json:"rows,omitempty"` // rows the participant's prepared transaction holds locked
	Quiesced     bool     `json:"quiesced,omitempty"`
}

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
