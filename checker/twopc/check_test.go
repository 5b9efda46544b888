package twopc

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// A hand-made trace: each helper appends one event.
type trace struct{ evs []traces.Event }

func (tr *trace) add(t int64, node, kind string, data any) *trace {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	tr.evs = append(tr.evs, traces.Event{Seq: uint64(len(tr.evs) + 1), T: t, Node: node, Kind: kind, Data: b})
	return tr
}

func (tr *trace) note(t int64, n hist.Txn) *trace {
	if n.By == "" {
		n.By = "coordinator"
	}
	return tr.add(t, n.By, hist.KindTxn, n)
}
func (tr *trace) begin(t int64, gid string) *trace {
	return tr.note(t, hist.Txn{What: hist.TxnBegin, GID: gid, Participants: []string{"orders", "inventory"}})
}
func (tr *trace) vote(t int64, gid, p, v string) *trace {
	return tr.note(t, hist.Txn{What: hist.TxnVote, GID: gid, Participant: p, Vote: v, Rows: 2})
}
func (tr *trace) decide(t int64, gid, o string) *trace {
	return tr.note(t, hist.Txn{What: hist.TxnDecide, GID: gid, Outcome: o})
}
func (tr *trace) log(t int64, gid, o string) *trace {
	return tr.note(t, hist.Txn{What: hist.TxnLog, GID: gid, Outcome: o, Synced: true})
}
func (tr *trace) prep(t int64, node, gid, event string) *trace {
	return tr.add(t, node, "prepared", Prepared{GID: gid, Event: event, At: t})
}
func (tr *trace) end(t int64, quiesced bool) *trace {
	return tr.note(t, hist.Txn{What: hist.TxnEnd, Quiesced: quiesced})
}
func (tr *trace) lockTimeout(t int64, node string) *trace {
	return tr.add(t, node, "db", Statement{Conn: 1, SQL: "UPDATE stock ...", Err: "55P03"})
}

// prepared: both participants prepared x1 and voted YES.
func prepared() *trace {
	tr := &trace{}
	return tr.begin(100, "x1").prep(101, "orders", "x1", "prepare").vote(102, "x1", "orders", hist.VoteYes).
		prep(103, "inventory", "x1", "prepare").vote(104, "x1", "inventory", hist.VoteYes)
}

func failed(t *testing.T, tr *trace) []string {
	t.Helper()
	r, err := Check(tr.evs)
	require.NoError(t, err)
	var ids []string
	for _, f := range r.Failed() {
		ids = append(ids, strings.SplitN(f, " ", 2)[0])
	}
	return ids
}

func TestMustPass(t *testing.T) {
	cases := map[string]*trace{
		"commit": prepared().decide(104, "x1", hist.OutcomeCommit).log(104, "x1", hist.OutcomeCommit).
			prep(105, "orders", "x1", "commit").prep(107, "inventory", "x1", "commit").end(200, true),
		"abort after a NO": (&trace{}).begin(100, "x1").prep(101, "orders", "x1", "prepare").vote(102, "x1", "orders", hist.VoteYes).
			vote(104, "x1", "inventory", hist.VoteNo).decide(104, "x1", hist.OutcomeAbort).log(104, "x1", hist.OutcomeAbort).
			prep(105, "orders", "x1", "rollback").end(200, true),
		"recovery rolls back a prepared transaction without record": prepared().
			note(5000, hist.Txn{What: hist.TxnLog, GID: "x1", Outcome: hist.OutcomeAbort}).
			note(5000, hist.Txn{What: hist.TxnRecover, GID: "x1", Participant: "orders", Outcome: hist.OutcomeAbort}).
			prep(5001, "orders", "x1", "rollback").prep(5002, "inventory", "x1", "rollback").end(9000, true),
		"blocked but not quiesced": prepared().decide(104, "x1", hist.OutcomeCommit).log(104, "x1", hist.OutcomeCommit).
			prep(105, "orders", "x1", "commit").end(200, false),
		"cooperative: a peer that never voted refuses": (&trace{}).begin(100, "x1").prep(101, "orders", "x1", "prepare").
			vote(102, "x1", "orders", hist.VoteYes).note(3000, hist.Txn{What: hist.TxnRefuse, GID: "x1", By: "inventory-agent"}).
			prep(3001, "orders", "x1", "rollback").end(9000, true),
	}
	for name, tr := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Empty(t, failed(t, tr), "a correct history must pass")
		})
	}
}

func TestMustFail(t *testing.T) {
	cases := []struct {
		name string
		tr   *trace
		want []string
	}{
		{"half committed: C.5 position 4", prepared().decide(104, "x1", hist.OutcomeCommit).log(104, "x1", hist.OutcomeCommit).
			prep(105, "orders", "x1", "commit").log(5000, "x1", hist.OutcomeAbort).prep(5001, "inventory", "x1", "rollback").end(9000, true),
			[]string{"PC1", "PC2"}},
		{"logged commit reversed: C.5 position 3", prepared().decide(104, "x1", hist.OutcomeCommit).log(104, "x1", hist.OutcomeCommit).
			log(5000, "x1", hist.OutcomeAbort).prep(5001, "orders", "x1", "rollback").prep(5001, "inventory", "x1", "rollback").end(9000, true),
			[]string{"PC2"}},
		{"commit before log, no record: C.6 wrong order", prepared().decide(104, "x1", hist.OutcomeCommit).prep(105, "orders", "x1", "commit").
			log(5000, "x1", hist.OutcomeAbort).prep(5001, "inventory", "x1", "rollback").end(9000, true),
			[]string{"PC1"}},
		{"timeout abort: C.3 approach A", prepared().decide(104, "x1", hist.OutcomeCommit).log(104, "x1", hist.OutcomeCommit).prep(105, "orders", "x1", "commit").
			note(6000, hist.Txn{What: hist.TxnUnilateral, GID: "x1", By: "inventory-agent", Outcome: hist.OutcomeAbort}).prep(6000, "inventory", "x1", "rollback"),
			[]string{"PC1", "PC2", "PC3"}},
		{"left prepared after quiescence", prepared().end(9000, true), []string{"PC4"}},
		{"presume commit: the unvoted participant commits", (&trace{}).begin(100, "x1").prep(101, "orders", "x1", "prepare").
			prep(103, "inventory", "x1", "prepare").
			note(5000, hist.Txn{What: hist.TxnRecover, GID: "x1", Participant: "orders", Outcome: hist.OutcomeCommit}).
			note(5000, hist.Txn{What: hist.TxnRecover, GID: "x1", Participant: "inventory", Outcome: hist.OutcomeCommit}).
			prep(5001, "orders", "x1", "commit").prep(5001, "inventory", "x1", "commit").end(9000, true),
			[]string{"PC5"}},
		{"died before voting, left prepared", (&trace{}).begin(100, "x1").prep(101, "orders", "x1", "prepare").vote(102, "x1", "orders", hist.VoteYes).
			prep(103, "inventory", "x1", "prepare").vote(103, "x1", "inventory", hist.VoteUnknown).decide(103, "x1", hist.OutcomeAbort).log(103, "x1", hist.OutcomeAbort).
			prep(104, "orders", "x1", "rollback").end(9000, true),
			[]string{"PC4", "PC5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, failed(t, c.tr), "the checker must catch it with exactly these properties")
		})
	}
}

func TestMetrics(t *testing.T) {
	tr := prepared().decide(104, "x1", hist.OutcomeCommit).log(104, "x1", hist.OutcomeCommit).lockTimeout(3000, "inventory").
		prep(1105, "orders", "x1", "commit").prep(5103, "inventory", "x1", "commit").end(9000, true)
	h, err := Decode(tr.evs)
	require.NoError(t, err)
	m := Measure(h)
	assert.Equal(t, 2, m.Prepared)
	assert.EqualValues(t, 5000, m.BlockedMax, "inventory was prepared from 103 to 5103")
	assert.EqualValues(t, 1004+5000, m.BlockedTotal)
	assert.Equal(t, 4, m.RowsLocked, "two rows at each participant, both prepared at once")
	assert.Equal(t, 1, m.LockTimeouts)
	assert.EqualValues(t, 1004+5000, m.HorizonHeld, "each database's horizon was pinned while its transaction was prepared")
	assert.Equal(t, 0, m.StillPrep)
}

func TestDecodeRejectsBadData(t *testing.T) {
	tr := &trace{}
	tr.evs = append(tr.evs, traces.Event{Seq: 1, Kind: hist.KindTxn, Data: json.RawMessage(`{"what":3}`)})
	_, err := Check(tr.evs)
	assert.Error(t, err, "a 2pc note that does not decode is an error, not a silent pass")
}

// TestMetricsOverlapping: lives that overlap on one database pin its
// VACUUM horizon once (the union of their times, not the sum); a lock
// released at the instant another is taken is not held twice; a
// transaction still prepared at the end counts to the end; agents that
// could not decide are counted.
func TestMetricsOverlapping(t *testing.T) {
	tr := (&trace{}).begin(100, "x1").prep(100, "orders", "x1", "prepare").vote(100, "x1", "orders", hist.VoteYes).
		begin(150, "x4").prep(150, "orders", "x4", "prepare"). // one row: it never voted
		begin(200, "x2").prep(200, "orders", "x2", "prepare").vote(200, "x2", "orders", hist.VoteYes).
		prep(250, "orders", "x4", "rollback").
		prep(300, "orders", "x1", "commit").
		begin(300, "x3").prep(300, "inventory", "x3", "prepare").vote(300, "x3", "inventory", hist.VoteYes).
		prep(400, "orders", "x2", "commit").
		note(500, hist.Txn{What: hist.TxnBlocked, GID: "x3", By: "inventory-agent"}).
		end(1000, false)
	h, err := Decode(tr.evs)
	require.NoError(t, err)
	m := Measure(h)
	assert.Equal(t, 4, m.Prepared)
	assert.Equal(t, 1, m.StillPrep, "x3 at inventory")
	assert.EqualValues(t, 700, m.BlockedMax, "x3 from 300 to the end at 1000")
	assert.EqualValues(t, 200+100+200+700, m.BlockedTotal)
	assert.Equal(t, 5, m.RowsLocked, "x1, x4 and x2 at 200; at 300 x1's two rows go as x3's two come")
	assert.EqualValues(t, 300+700, m.HorizonHeld, "orders pinned from 100 to 400, inventory from 300 to 1000")
	assert.Equal(t, 1, m.Blocked)

	r, err := Check(tr.evs)
	require.NoError(t, err)
	lines := strings.Split(r.String(), "\n")
	require.Len(t, lines, len(r.Verdicts)+1, "one line per verdict, then the metrics")
	for i, v := range r.Verdicts {
		assert.Equal(t, v.String(), lines[i])
	}
	assert.Equal(t, m.String(), lines[len(lines)-1])
	assert.Contains(t, lines[len(lines)-1], "prepared=4 blocked_max=700ns")
	assert.Equal(t, len(r.Failed()) == 0, r.OK())
	bad, err := Check(prepared().end(9000, true).evs)
	require.NoError(t, err)
	assert.False(t, bad.OK(), "left prepared after quiescence")
}

func verdict(t *testing.T, tr *trace, prop string) checker.Verdict {
	t.Helper()
	r, err := Check(tr.evs)
	require.NoError(t, err)
	for _, v := range r.Verdicts {
		if strings.HasPrefix(v.Property, prop+" ") || v.Property == prop {
			return v
		}
	}
	t.Fatalf("no verdict %s", prop)
	return checker.Verdict{}
}

// TestParticipants: a transaction's participants are those its begin
// names (a later begin does not shrink them) and every database that
// prepared it; one that never prepared ends with nothing, which a commit
// elsewhere breaks.
func TestParticipants(t *testing.T) {
	named := (&trace{}).begin(100, "x1").note(100, hist.Txn{What: hist.TxnBegin, GID: "x1", Participants: []string{"orders"}}).
		prep(101, "orders", "x1", "prepare").vote(102, "x1", "orders", hist.VoteYes).
		decide(104, "x1", hist.OutcomeCommit).log(104, "x1", hist.OutcomeCommit).prep(105, "orders", "x1", "commit").end(200, false)
	v := verdict(t, named, "PC1")
	assert.False(t, v.OK, "inventory, named at begin, never prepared")
	assert.Contains(t, v.Message, "committed at orders but not at inventory")

	unnamed := (&trace{}).note(100, hist.Txn{What: hist.TxnBegin, GID: "x1", Participants: []string{"orders"}}).
		prep(101, "orders", "x1", "prepare").prep(102, "payments", "x1", "prepare").
		prep(105, "orders", "x1", "commit").prep(106, "payments", "x1", "rollback").end(200, false)
	v = verdict(t, unnamed, "PC1")
	assert.False(t, v.OK, "payments prepared it, though the begin did not name it")
	assert.Contains(t, v.Message, "not at payments")
}

// TestFailuresNameTheirEvents: PC1 names the commit and the rollback that
// disagree.
func TestFailuresNameTheirEvents(t *testing.T) {
	tr := prepared().decide(104, "x1", hist.OutcomeCommit).log(104, "x1", hist.OutcomeCommit).
		prep(105, "orders", "x1", "commit").log(5000, "x1", hist.OutcomeAbort).prep(5001, "inventory", "x1", "rollback").end(9000, true)
	v := verdict(t, tr, "PC1")
	require.False(t, v.OK)
	assert.Equal(t, []uint64{8, 10}, v.Events, "orders' COMMIT PREPARED and inventory's ROLLBACK PREPARED")
}

// TestLoggedCommitLost: a decision log that turns from COMMIT to ABORT
// breaks PC2 even when every participant had committed already.
func TestLoggedCommitLost(t *testing.T) {
	tr := prepared().decide(104, "x1", hist.OutcomeCommit).log(104, "x1", hist.OutcomeCommit).
		prep(105, "orders", "x1", "commit").prep(106, "inventory", "x1", "commit").log(5000, "x1", hist.OutcomeAbort).end(9000, true)
	v := verdict(t, tr, "PC2")
	assert.False(t, v.OK)
	assert.Contains(t, v.Message, "later coordinator logged ABORT")
	ok := prepared().decide(104, "x1", hist.OutcomeCommit).log(104, "x1", hist.OutcomeCommit).
		prep(105, "orders", "x1", "commit").prep(106, "inventory", "x1", "commit").log(5000, "x1", hist.OutcomeCommit).end(9000, true)
	assert.True(t, verdict(t, ok, "PC2").OK, "COMMIT logged again")
}

// TestMessagesSayWhatIsLeft: PC4 says how long a transaction was left
// prepared; PC5 says a participant's vote never arrived.
func TestMessagesSayWhatIsLeft(t *testing.T) {
	v := verdict(t, prepared().end(9000, true), "PC4")
	assert.Contains(t, v.Message, "orders:x1 (prepared 8.899µs ago)")
	tr := (&trace{}).begin(100, "x1").prep(101, "orders", "x1", "prepare").prep(103, "inventory", "x1", "prepare").
		note(5000, hist.Txn{What: hist.TxnRecover, GID: "x1", Participant: "orders", Outcome: hist.OutcomeCommit}).
		prep(5001, "orders", "x1", "commit").prep(5001, "inventory", "x1", "commit").end(9000, true)
	v = verdict(t, tr, "PC5")
	assert.False(t, v.OK)
	assert.Contains(t, v.Message, "no vote received")
}

func (tr *trace) commit(t int64, node string, changes ...hist.Change) *trace {
	return tr.add(t, node, "commit", hist.CommitRecord{Seq: uint64(len(tr.evs) + 1), At: 0, Changes: changes})
}

func txlogRow(gid, state string) hist.Change {
	return hist.Change{Table: TableTxlog, Op: "insert", Key: []any{gid}, After: map[string]any{"gid": gid, "state": state}}
}

// TestPC3RefusalByTombstone: a peer's refusal counts when only its
// tombstone says so (the agent crashed after committing it, before its
// note): a rollback on that word passes; a txlog row of the gid's own work,
// another gid's tombstone, or another table's row is no refusal.
func TestPC3RefusalByTombstone(t *testing.T) {
	base := func() *trace {
		return (&trace{}).begin(100, "x1").prep(101, "orders", "x1", "prepare").vote(102, "x1", "orders", hist.VoteYes)
	}
	ok := base().commit(3000, "inventory", txlogRow("x1", StateRefused)).prep(3001, "orders", "x1", "rollback").end(9000, true)
	assert.Empty(t, failed(t, ok), "a committed tombstone is the peer's refusal")
	for name, ch := range map[string]hist.Change{
		"the gid's own work":   txlogRow("x1", "committed"),
		"another gid refused":  txlogRow("x2", StateRefused),
		"another table":        {Table: "stock", Op: "insert", After: map[string]any{"gid": "x1", "state": StateRefused}},
		"a deleted tombstone":  {Table: TableTxlog, Op: "delete", Before: map[string]any{"gid": "x1", "state": StateRefused}},
		"a tombstone, no gid?": txlogRow("", StateRefused),
	} {
		bad := base().commit(3000, "inventory", ch).prep(3001, "orders", "x1", "rollback").end(9000, true)
		assert.Contains(t, failed(t, bad), "PC3", name)
	}
}
