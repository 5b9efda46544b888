package hist

import "fmt"

// System C (two-phase commit): every note of a coordinator, of a
// participant's agent and of the run harness is an event of kind KindTxn
// whose data is a Txn. Its What field says which fact it records.

// KindTxn is the event kind of every 2PC note.
const KindTxn = "2pc"

// What values of a Txn note.
const (
	TxnBegin      = "begin"      // a coordinator starts transaction GID over Participants
	TxnVote       = "vote"       // a coordinator received Participant's Vote (yes, no, unknown)
	TxnDecide     = "decide"     // a coordinator decided Outcome in memory (before logging it)
	TxnLog        = "log"        // a coordinator wrote Outcome to the decision log (Synced: fsync'd); Found: the record that was already there and wins
	TxnRecover    = "recover"    // a recovering coordinator tells Participant to Outcome the prepared GID; Found: the log record ("" none)
	TxnRecovered  = "recovered"  // a coordinator finished recovery
	TxnDone       = "done"       // a coordinator finished GID with Outcome
	TxnUnilateral = "unilateral" // an agent ended a prepared GID with Outcome on its own (Reason), without the coordinator's word
	TxnRefuse     = "refuse"     // an agent made its participant refuse GID forever (it had not voted): GID can no longer commit
	TxnResolve    = "resolve"    // an agent ended a prepared GID with Outcome on a peer's word (cooperative termination; Reason)
	TxnBlocked    = "blocked"    // an agent asked every peer and all are prepared too: it cannot decide
	TxnEnd        = "end"        // the harness ends the run; Quiesced: faults healed, every node up, time to settle given
)

// Outcomes and votes of a Txn note.
const (
	OutcomeCommit = "commit"
	OutcomeAbort  = "abort"
	VoteYes       = "yes"
	VoteNo        = "no"
	VoteUnknown   = "unknown" // the connection broke or the vote timed out: the participant may or may not have prepared
)

// Txn is the data of a 2PC note.
type Txn struct {
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
	Code         string   `json:"code,omitempty"` // the SQLSTATE of a NO (or unknown) vote
	Rows         int      `json:"rows,omitempty"` // rows the participant's prepared transaction holds locked
	Quiesced     bool     `json:"quiesced,omitempty"`

	// Agent marks a note of a participant's agent (text only: the trace's
	// data leaves it out, the event's text carries it in its shape).
	Agent bool `json:"-"`
}

// Kind returns KindTxn.
func (Txn) Kind() string { return KindTxn }

// String is the note's text in a trace. An agent's note lists what, GID,
// outcome and reason; the harness's end, whether the run quiesced; a
// coordinator's, what, GID, the participant if any, and the vote or else
// the outcome.
func (t Txn) String() string {
	switch {
	case t.Agent:
		return fmt.Sprintf("%s %s %s %s", t.What, t.GID, t.Outcome, t.Reason)
	case t.What == TxnEnd:
		return fmt.Sprintf("end quiesced=%v", t.Quiesced)
	}
	s := t.What + " " + t.GID
	if t.Participant != "" {
		s += " " + t.Participant
	}
	switch {
	case t.Vote != "":
		s += " " + t.Vote
	case t.Outcome != "":
		s += " " + t.Outcome
	}
	return s
}
