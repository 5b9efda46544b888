package judge

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// fmtRequest and fmtReply are the messages' texts as fmt made them before
// they were appended by hand: traces and their hashes hold these texts, so
// the two must agree on every value.
func fmtRequest(r Request) string {
	worker := r.Worker
	if r.Proc != "" {
		worker += " proc=" + r.Proc
	}
	switch r.Op {
	case OpClaim:
		return fmt.Sprintf("POST /claim no=%d worker=%s request_id=%s", r.No, worker, r.RequestID)
	case OpHeartbeat:
		return fmt.Sprintf("POST /heartbeat no=%d worker=%s sub=%d token=%s", r.No, worker, r.Sub, r.Token)
	case OpSubmit:
		return fmt.Sprintf("POST /submit no=%d worker=%s sub=%d token=%s gen=%d verdict=%s", r.No, worker, r.Sub, r.Token, r.Gen, r.Verdict)
	}
	return fmt.Sprintf("GET /%s no=%d", r.Op, r.No)
}

func fmtReply(r Reply) string {
	s := fmt.Sprintf("%d %s no=%d", r.Code, r.Op, r.No)
	switch {
	case r.Op == OpClaim && r.Code == Code200:
		s += " request_id=" + r.RequestID
		for _, l := range r.Leases {
			s += fmt.Sprintf(" sub=%d token=%s gen=%d", l.Sub, l.Token, l.Gen)
		}
	case r.Op == OpClaim:
		s += " request_id=" + r.RequestID
	case r.Op == OpHeartbeat || r.Op == OpSubmit:
		s += fmt.Sprintf(" sub=%d token=%s", r.Sub, r.Token)
	case r.Op == OpProbe:
		s += fmt.Sprintf(" leader=%v waiting=%d claimable=%v round_age=%s unpaired=%s", r.Probe.Leader, r.Probe.Waiting, r.Probe.Claimable, r.Probe.RoundAge, r.Probe.Unpaired)
	}
	if r.Why != "" {
		s += " (" + r.Why + ")"
	}
	return s
}

// TestMessageTextsAsFmtMadeThem: every request and reply renders as fmt
// rendered it.
func TestMessageTextsAsFmtMadeThem(t *testing.T) {
	ops := []Op{OpClaim, OpHeartbeat, OpSubmit, OpProbe, "status"}
	str := rapid.StringMatching(`[a-z0-9 -]{0,8}`)
	rapid.Check(t, func(t *rapid.T) {
		r := Request{
			No: rapid.Uint64().Draw(t, "no"), Op: rapid.SampledFrom(ops).Draw(t, "op"),
			Worker: str.Draw(t, "worker"), Proc: str.Draw(t, "proc"), RequestID: str.Draw(t, "rid"),
			Sub: rapid.Int64().Draw(t, "sub"), Token: str.Draw(t, "token"), Gen: rapid.Int64().Draw(t, "gen"),
			Verdict: str.Draw(t, "verdict"),
		}
		if got, want := r.String(), fmtRequest(r); got != want {
			t.Fatalf("request %+v: %q, fmt made %q", r, got, want)
		}
		rep := Reply{
			No: r.No, Op: r.Op, Code: rapid.SampledFrom([]int{Code200, 204, 409, 410, 500, 503, -1}).Draw(t, "code"),
			RequestID: r.RequestID, Sub: r.Sub, Token: r.Token, Why: str.Draw(t, "why"),
			Probe: ProbeInfo{
				Leader: rapid.Bool().Draw(t, "leader"), Waiting: rapid.IntRange(-3, 1000).Draw(t, "waiting"),
				Claimable: rapid.Bool().Draw(t, "claimable"),
				RoundAge:  time.Duration(rapid.Int64().Draw(t, "round")), Unpaired: time.Duration(rapid.Int64().Draw(t, "pair")),
			},
		}
		for i := range rapid.IntRange(0, 3).Draw(t, "leases") {
			rep.Leases = append(rep.Leases, Lease{Sub: int64(i) - 1, Token: str.Draw(t, "ltoken"), Gen: rapid.Int64().Draw(t, "lgen")})
		}
		if got, want := rep.String(), fmtReply(rep); got != want {
			t.Fatalf("reply %+v: %q, fmt made %q", rep, got, want)
		}
	})
}
