package judge

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNotesReadAsMessages: a worker's call and return notes read exactly as
// the request and the reply they record (the texts that the traces held
// when the worker noted r.String() and rep.String()).
func TestNotesReadAsMessages(t *testing.T) {
	own := &Worker{name: "w1", id: "w1", claimID: "w1-1"}
	sandbox := &Worker{name: "w1.2", id: "w1", claimID: "w1-1"}
	for _, w := range []*Worker{own, sandbox} {
		for _, r := range []Request{
			{Op: OpClaim, RequestID: "w1-1"},
			{Op: OpHeartbeat, Sub: 3, Token: "a1.1.4"},
			{Op: OpSubmit, Sub: 3, Token: "a1.1.4", Gen: 2, Verdict: "AC"},
		} {
			r.No, r.Worker = 7, w.id
			if w.id != w.name {
				r.Proc = w.name
			}
			assert.Equal(t, r.String(), w.callNote("id", r).String(), "the call note of %+v", r)
		}
	}
	l1 := Lease{Sub: 3, Token: "a1.1.4", Gen: 2, User: 1, Problem: 9}
	l2 := Lease{Sub: 5, Token: "a1.1.5", Gen: 1, User: 2, Problem: 9}
	for _, rep := range []Reply{
		{No: 7, Op: OpClaim, Code: Code200, RequestID: "w1-1", Leases: []Lease{l1}},
		{No: 7, Op: OpClaim, Code: Code200, RequestID: "w1-1", Leases: []Lease{l1, l2}},
		{No: 7, Op: OpClaim, Code: Code204, RequestID: "w1-1"},
		{No: 7, Op: OpClaim, Code: Code503, RequestID: "w1-1", Why: "not the leader"},
		{No: 8, Op: OpHeartbeat, Code: Code200, Sub: 3, Token: "a1.1.4"},
		{No: 8, Op: OpHeartbeat, Code: Code410, Sub: 3, Token: "a1.1.4", Why: "lease gone"},
		{No: 9, Op: OpSubmit, Code: Code200, Sub: 3, Token: "a1.1.4", Why: "duplicate: already recorded"},
		{No: 9, Op: OpSubmit, Code: Code503, Sub: 3, Token: "a1.1.4", Why: "database unreachable"},
	} {
		assert.Equal(t, rep.String(), returnNote("id", rep).String(), "the return note of %+v", rep)
	}
}
