package hist

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"
)

// fmtCall and fmtReturn are the texts as fmt rendered them before
// AppendString: the reference the appended texts must match byte for byte
// (a trace's hash is made of them).
func fmtCall(c Call) string {
	switch c.Op {
	case "claim", "heartbeat", "submit":
		worker := c.Client
		if c.WorkerID != "" {
			worker = c.WorkerID + " proc=" + c.Client
		}
		switch c.Op {
		case "claim":
			return fmt.Sprintf("POST /claim no=%d worker=%s request_id=%s", c.No, worker, c.RequestID)
		case "heartbeat":
			return fmt.Sprintf("POST /heartbeat no=%d worker=%s sub=%d token=%s", c.No, worker, c.Sub, c.Token)
		}
		return fmt.Sprintf("POST /submit no=%d worker=%s sub=%d token=%s gen=%d verdict=%s", c.No, worker, c.Sub, c.Token, c.Gen, c.Verdict)
	case "read", "rejudge":
		return fmt.Sprintf("%s %d", c.Op, c.Sub)
	}
	return fmt.Sprintf("%s %s %s -> %s", c.ID, c.Op, orNone(c.Key), c.To)
}

func fmtReturn(r Return) string {
	switch r.Op {
	case "claim", "heartbeat", "submit":
		var b strings.Builder
		fmt.Fprintf(&b, "%d %s no=%d", r.Code, r.Op, r.No)
		switch {
		case r.Op == "claim" && r.Code == 200:
			b.WriteString(" request_id=" + r.RequestID)
			if len(r.Leases) > 1 {
				for _, l := range r.Leases {
					fmt.Fprintf(&b, " sub=%d token=%s gen=%d", l.Sub, l.Token, l.Gen)
				}
			} else {
				fmt.Fprintf(&b, " sub=%d token=%s gen=%d", r.Sub, r.Token, r.Gen)
			}
		case r.Op == "claim":
			b.WriteString(" request_id=" + r.RequestID)
		default:
			fmt.Fprintf(&b, " sub=%d token=%s", r.Sub, r.Token)
		}
		if r.Why != "" {
			b.WriteString(" (" + r.Why + ")")
		}
		return b.String()
	case "read":
		return fmt.Sprintf("read %d -> %d %s gen %d", r.Sub, r.Code, r.Status, r.Gen)
	case "rejudge":
		return fmt.Sprintf("rejudge %d -> %d", r.Sub, r.Code)
	}
	return fmt.Sprintf("%s %d %s", r.ID, r.Code, r.Value)
}

// TestTextsAsFmt: Call's and Return's texts are fmt's, for every operation.
func TestTextsAsFmt(t *testing.T) {
	op := rapid.SampledFrom([]string{"claim", "heartbeat", "submit", "read", "rejudge", "charge", ""})
	s := rapid.OneOf(rapid.String(), rapid.Just(""), rapid.SampledFrom([]string{"w1", "tok-3", "AC", "%d", "a b"}))
	n := rapid.OneOf(rapid.Int64(), rapid.Int64Range(-3, 300))
	rapid.Check(t, func(t *rapid.T) {
		c := Call{ID: s.Draw(t, "id"), Client: s.Draw(t, "client"), Op: op.Draw(t, "op"), Sub: n.Draw(t, "sub"), Token: s.Draw(t, "token"),
			Gen: n.Draw(t, "gen"), RequestID: s.Draw(t, "rid"), Verdict: s.Draw(t, "verdict"), Key: s.Draw(t, "key"),
			WorkerID: s.Draw(t, "wid"), No: rapid.Uint64().Draw(t, "no"), To: s.Draw(t, "to")}
		assert.Equal(t, fmtCall(c), c.String())
		r := Return{ID: s.Draw(t, "rid"), Code: rapid.SampledFrom([]int{200, 409, 503, -1}).Draw(t, "code"), Sub: n.Draw(t, "rsub"),
			Token: s.Draw(t, "rtoken"), Gen: n.Draw(t, "rgen"), Status: s.Draw(t, "status"), Value: s.Draw(t, "value"),
			Op: op.Draw(t, "rop"), No: rapid.Uint64().Draw(t, "rno"), RequestID: s.Draw(t, "rreq"), Why: s.Draw(t, "why")}
		for range rapid.IntRange(0, 3).Draw(t, "leases") {
			r.Leases = append(r.Leases, Lease{Sub: n.Draw(t, "lsub"), Token: s.Draw(t, "ltoken"), Gen: n.Draw(t, "lgen")})
		}
		assert.Equal(t, fmtReturn(r), r.String())
	})
}
