package pgexec_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fencesim/fencesim/internal/pgexec"
	"github.com/fencesim/fencesim/internal/pgtest"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/model/outbox"
)

// The outbox handler's statements (model/outbox/sql.go) in the shapes its
// transactions send them, answered by the server as by the model: a key
// stored with the code column's default (200); a refund of nothing whose
// refusal is recorded on its own key row (RecordRefusal) and read back with
// its code (FindKey); a reversal (Reverse: INSERT ... ON CONFLICT DO
// NOTHING on UNIQUE (reversal_of)) that inserts, and a second one of the
// same charge under another key that inserts nothing (Affected 0, the
// handler's 409); under double-refund-is-error the plain INSERT's 23505.
func TestRunOutboxStatementsAsTheModel(t *testing.T) {
	pgtest.Require(t)
	d := outbox.Default()
	schema := outbox.Schema(d)
	charge := db.Row{"id": outbox.EntryID("h1.1.1"), "amount": int64(300)}
	const gap = 200 * time.Millisecond
	seq := []step{
		atomicOn(0, outbox.StoreKey("charge:evt_1", "evt_1", "h1.1.1", "received ch-h1.1.1"),
			outbox.InsertCharge("h1.1.1", "evt_1", "order-1", 300), outbox.LedgerCharge("h1.1.1", "evt_1", 300),
			outbox.OutboxMessage(outbox.Message{ID: "msg-h1.1.1", Event: "evt_1", OpID: "h1.1.1", Kind: outbox.OpCharge, Amount: 300})),
		on(1, db.Begin(), outbox.StoreKey("refund:evt_9/refund", "evt_9/refund", "h2.1.1", "refunded le-h2.1.1"), outbox.FindCharge("evt_9")),
		on(1, mustRefusal(t, d, "refund:evt_9/refund", "h2.1.1", outbox.Code404, "no charge for event evt_9"), db.Commit()),
		on(0, outbox.FindKey("refund:evt_9/refund"), outbox.FindKey("charge:evt_1")),
		atomicOn(0, outbox.StoreKey("refund:evt_1/refund", "evt_1/refund", "h1.1.2", "refunded le-h1.1.2"), outbox.FindCharge("evt_1"),
			d.Reverse("h1.1.2", "evt_1/refund", charge)),
		on(1, db.Begin(), outbox.StoreKey("refund:evt_1/again", "evt_1/again", "h2.1.2", "refunded le-h2.1.2"),
			d.Reverse("h2.1.2", "evt_1/again", charge)), // ON CONFLICT DO NOTHING: Affected 0
		on(1, mustRefusal(t, d, "refund:evt_1/again", "h2.1.2", outbox.Code409, "charge for event evt_1 already refunded"), db.Commit()),
		atomicOn(0, d.MustWith(outbox.DoubleRefundIsError).Reverse("h1.1.3", "evt_1/third", charge)), // 23505
		on(0, outbox.FindKey("refund:evt_1/again"), db.Select(outbox.TLedger).OrderedBy(db.Order{Col: "id"})),
	}
	srv := newServer(t, schema, nil, false, pgexec.Options{})
	server := srv.run(seq, gap)
	model, _ := modelRun(t, schema, db.Config{LockTimeout: d.LockTimeout}, seq, gap)
	compare(t, seq, model, server)
	assert.Equal(t, int64(404), server[3].Results[0].Rows[0].Int("code"), "the refusal is recorded with its key")
	assert.Equal(t, int64(200), server[3].Results[1].Rows[0].Int("code"), "a key stored by the work holds the default code")
	assert.Equal(t, 1, server[4].Results[2].Affected, "the first reversal inserted")
	assert.Equal(t, 0, server[5].Results[2].Affected, "the second reversal of the charge inserted nothing")
	assert.Equal(t, db.CodeUniqueViolation, server[7].Err().Code, "double-refund-is-error: the unique violation")
}

func mustRefusal(t *testing.T, d outbox.Design, key, op string, code int, answer string) db.Stmt {
	st, ok := d.RecordRefusal(key, op, code, answer)
	if !ok {
		t.Fatalf("the default design records refusals")
	}
	return st
}
