package hist_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/traces/hist"
)

// note is what sim.Proc.Note takes (sim.Note): each note type must be one.
type note interface {
	Kind() string
	String() string
}

var (
	_ note = hist.Call{}
	_ note = hist.Return{}
	_ note = hist.Judge{}
	_ note = hist.Result{}
	_ note = hist.Alert{}
	_ note = hist.State{}
	_ note = hist.BEvent{}
	_ note = hist.BDelivery{}
	_ note = hist.BSender{}
	_ note = hist.BHandle{}
	_ note = hist.BRelay{}
	_ note = hist.BPublish{}
	_ note = hist.BPush{}
	_ note = hist.BApply{}
	_ note = hist.Txn{}
)

// TestNoteText pins each note's text: it is part of the trace event (and so
// of the trace's hash), exactly as the models wrote it when they formatted
// it themselves.
func TestNoteText(t *testing.T) {
	cases := []struct {
		name string
		n    note
		kind string
		text string
	}{
		// System A: the worker's HTTP calls (model/judge Request.String).
		{"claim", hist.Call{ID: "w1#1.3", Client: "w1", Op: "claim", RequestID: "w1-7", No: 3},
			hist.KindCall, "POST /claim no=3 worker=w1 request_id=w1-7"},
		{"claim by a sandbox", hist.Call{ID: "w1b#1.3", Client: "w1b", WorkerID: "w1", Op: "claim", RequestID: "w1-7", No: 3},
			hist.KindCall, "POST /claim no=3 worker=w1 proc=w1b request_id=w1-7"},
		{"heartbeat", hist.Call{ID: "w1#1.4", Client: "w1", Op: "heartbeat", Sub: 2, Token: "t9", No: 4},
			hist.KindCall, "POST /heartbeat no=4 worker=w1 sub=2 token=t9"},
		{"submit", hist.Call{ID: "w1#1.5", Client: "w1", Op: "submit", Sub: 2, Token: "t9", Gen: 3, Verdict: "AC", No: 5},
			hist.KindCall, "POST /submit no=5 worker=w1 sub=2 token=t9 gen=3 verdict=AC"},
		{"read", hist.Call{ID: "web#read.1", Client: "web", Op: "read", Sub: 4}, hist.KindCall, "read 4"},
		{"rejudge", hist.Call{ID: "a1#rejudge.4.0", Client: "operator", Op: "rejudge", Sub: 4}, hist.KindCall, "rejudge 4"},
		// System B: a delivery.
		{"delivery call", hist.Call{ID: "cd1", Client: "sender", Op: "charge", Key: "ev1", RequestID: "p1", To: "h2"},
			hist.KindCall, "cd1 charge ev1 -> h2"},
		{"keyless delivery call", hist.Call{ID: "cd2", Client: "sender", Op: "charge", RequestID: "p2", To: "h1"},
			hist.KindCall, "cd2 charge (no key) -> h1"},

		// System A: the replies (model/judge Reply.String).
		{"claim 200", hist.Return{ID: "w1#1.3", Code: 200, Sub: 2, Token: "t9", Gen: 1, Op: "claim", No: 3, RequestID: "w1-7"},
			hist.KindReturn, "200 claim no=3 request_id=w1-7 sub=2 token=t9 gen=1"},
		{"claim 200 batch", hist.Return{ID: "w1#1.3", Code: 200, Sub: 2, Token: "t9", Gen: 1, Op: "claim", No: 3, RequestID: "w1-7",
			Leases: []hist.Lease{{Sub: 2, Token: "t9", Gen: 1}, {Sub: 5, Token: "t10", Gen: 2}}},
			hist.KindReturn, "200 claim no=3 request_id=w1-7 sub=2 token=t9 gen=1 sub=5 token=t10 gen=2"},
		{"claim 204", hist.Return{ID: "w1#1.3", Code: 204, Op: "claim", No: 3, RequestID: "w1-7"},
			hist.KindReturn, "204 claim no=3 request_id=w1-7"},
		{"claim 503", hist.Return{ID: "w1#1.3", Code: 503, Op: "claim", No: 3, RequestID: "w1-7", Why: "not the leader"},
			hist.KindReturn, "503 claim no=3 request_id=w1-7 (not the leader)"},
		{"heartbeat 410", hist.Return{ID: "w1#1.4", Code: 410, Sub: 2, Token: "t9", Op: "heartbeat", No: 4, Why: "lease gone"},
			hist.KindReturn, "410 heartbeat no=4 sub=2 token=t9 (lease gone)"},
		{"submit 200", hist.Return{ID: "w1#1.5", Code: 200, Sub: 2, Token: "t9", Op: "submit", No: 5},
			hist.KindReturn, "200 submit no=5 sub=2 token=t9"},
		{"read return", hist.Return{ID: "web#read.1", Code: 200, Sub: 4, Status: "judged", Gen: 2, Op: "read"},
			hist.KindReturn, "read 4 -> 200 judged gen 2"},
		{"read 404", hist.Return{ID: "web#read.1", Code: 404, Sub: 4, Op: "read"},
			hist.KindReturn, "read 4 -> 404  gen 0"},
		{"rejudge return", hist.Return{ID: "a1#rejudge.4.0", Code: 410, Sub: 4, Op: "rejudge"},
			hist.KindReturn, "rejudge 4 -> 410"},
		// System B: a delivery's answer.
		{"delivery return", hist.Return{ID: "cd1", Code: 200, Value: "charged 5"}, hist.KindReturn, "cd1 200 charged 5"},

		{"judge start", hist.Judge{Worker: "w1", Sub: 2, Token: "t9", Gen: 1, Phase: hist.JudgeStart},
			hist.KindJudge, "start sub=2 token=t9 gen=1 "},
		{"judge end", hist.Judge{Worker: "w1", Sub: 2, Token: "t9", Gen: 1, Phase: hist.JudgeEnd, Verdict: "WA"},
			hist.KindJudge, "end sub=2 token=t9 gen=1 WA"},
		{"result saved", hist.Result{Worker: "w1", Sub: 2, Token: "t9", Gen: 1, Verdict: "WA", Phase: hist.ResultSaved, Durable: true},
			hist.KindResult, "saved sub=2 token=t9 verdict=WA code=0"},
		{"result answered", hist.Result{Worker: "w1", Sub: 2, Token: "t9", Gen: 1, Verdict: "WA", Phase: hist.ResultAnswered, Code: 410},
			hist.KindResult, "answered sub=2 token=t9 verdict=WA code=410"},
		{"alert", hist.Alert{Monitor: "mon", Target: "a1", Reason: "2 waiting"}, hist.KindAlert, "a1: 2 waiting"},
		{"state", hist.State{What: "grace", Count: 1500}, hist.KindState, "grace 1500"},
		{"state leader", hist.State{What: "leader"}, hist.KindState, "leader 0"},

		{"b-event", hist.BEvent{Event: "ev1", Payload: "p1", Op: "charge", Copies: 2, Bound: 4},
			hist.KindBEvent, "charge ev1 payload=p1 copies=2"},
		{"b-event keyless", hist.BEvent{Payload: "p1", Op: "charge", Copies: 1},
			hist.KindBEvent, "charge (no key) payload=p1 copies=1"},
		{"b-delivery", hist.BDelivery{Call: "cd1", Event: "ev1", Attempt: 1, DeliveredAt: 1_500_000_000},
			hist.KindBDelivery, "cd1 attempt 1 delivered_at 1.500s"},
		{"b-sender done", hist.BSender{Event: "ev1", What: hist.SenderDone, Code: 200, Attempts: 2, Op: "charge"},
			hist.KindBSender, "charge ev1 done 200 after 2 attempts"},
		{"b-sender give-up", hist.BSender{What: hist.SenderGiveUp, Attempts: 5, Op: "refund"},
			hist.KindBSender, "refund (no key) gives up after 5 attempts"},
		{"b-handle start", hist.BHandle{Handler: "h1", Event: "ev1", Key: "ev1", Phase: hist.HandleStart, Op: "charge"},
			hist.KindBHandle, "charge ev1 start"},
		{"b-handle end", hist.BHandle{Handler: "h1", Event: "ev1", Key: "ev1", Phase: hist.HandleEnd, Code: 409, Path: "duplicate", Op: "charge"},
			hist.KindBHandle, "charge ev1 end 409 duplicate"},
		{"b-relay", hist.BRelay{Msg: "msg-o1", What: hist.RelayMarked}, hist.KindBRelay, "marked msg-o1"},
		{"b-publish", hist.BPublish{Msg: hist.BMessage{ID: "msg-o1"}, From: "relay", Seq: 3},
			hist.KindBPublish, "seq=3 msg-o1 from relay"},
		{"b-push", hist.BPush{Seq: 3, Msg: "msg-o1", Attempt: 2}, hist.KindBPush, "redeliver seq=3 msg-o1 attempt 2"},
		{"b-apply", hist.BApply{Msg: "msg-o1", Seq: 3, What: hist.ApplyDuplicate}, hist.KindBApply, "duplicate msg-o1 seq=3"},

		// System C: a coordinator's notes...
		{"txn begin", hist.Txn{What: hist.TxnBegin, By: "coord", GID: "g1", Participants: []string{"orders", "stock"}},
			hist.KindTxn, "begin g1"},
		{"txn vote", hist.Txn{What: hist.TxnVote, By: "coord", GID: "g1", Participant: "orders", Vote: hist.VoteYes, Outcome: hist.OutcomeCommit},
			hist.KindTxn, "vote g1 orders yes"},
		{"txn log", hist.Txn{What: hist.TxnLog, By: "coord", GID: "g1", Outcome: hist.OutcomeCommit, Synced: true},
			hist.KindTxn, "log g1 commit"},
		{"txn refuse", hist.Txn{What: hist.TxnRefuse, By: "coord", GID: "g1", Participant: "stock", Reason: "late"},
			hist.KindTxn, "refuse g1 stock"},
		{"txn recovered", hist.Txn{What: hist.TxnRecovered, By: "coord", Reason: "2 actions"}, hist.KindTxn, "recovered "},
		// ...an agent's...
		{"agent refuse", hist.Txn{What: hist.TxnRefuse, By: "agent-stock", Participant: "stock", GID: "g1", Reason: "asked by orders; never voted", Agent: true},
			hist.KindTxn, "refuse g1  asked by orders; never voted"},
		{"agent unilateral", hist.Txn{What: hist.TxnUnilateral, By: "agent-stock", Participant: "stock", GID: "g1", Outcome: hist.OutcomeAbort, Reason: "timeout", Agent: true},
			hist.KindTxn, "unilateral g1 abort timeout"},
		// ...and the harness's end.
		{"txn end", hist.Txn{What: hist.TxnEnd, Quiesced: true}, hist.KindTxn, "end quiesced=true"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.kind, c.n.Kind(), "kind")
			assert.Equal(t, c.text, c.n.String(), "text")
		})
	}
}

// TestTextOnlyFields checks that the fields only the text carries stay out
// of the recorded data: adding them changed no trace.
func TestTextOnlyFields(t *testing.T) {
	cases := []struct {
		n    note
		want string
	}{
		{hist.Call{ID: "c", Client: "w", Op: "claim", No: 3, To: "h"}, `{"id":"c","client":"w","op":"claim"}`},
		{hist.Return{ID: "c", Code: 503, Op: "claim", No: 3, RequestID: "r", Why: "why"}, `{"id":"c","code":503}`},
		{hist.BSender{Event: "e", What: hist.SenderDone, Attempts: 1, Op: "charge"}, `{"event":"e","payload":"","what":"done","attempts":1}`},
		{hist.BHandle{Handler: "h", Phase: hist.HandleStart, Op: "charge"}, `{"handler":"h","event":"","key":"","phase":"start"}`},
		{hist.Txn{What: hist.TxnBlocked, GID: "g", Agent: true}, `{"what":"blocked","gid":"g"}`},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.n)
		require.NoError(t, err)
		assert.JSONEq(t, c.want, string(b), "%T", c.n)
	}
}
