package outbox

import "github.com/fencesim/fencesim/model/db"

// Tables of the service's database (node "db").
const (
	TKeys    = "idempotency_keys" // key -> stored answer
	TCharges = "charges"          // the business rows
	TLedger  = "ledger"           // append-only entries; reversals are new entries
	TOutbox  = "outbox"           // outgoing messages, written with the business row
)

// Tables of the consumer's own database (node "consumer-db").
const (
	TProcessed = "processed_messages" // message ids already applied
	TEffects   = "effects"            // one row per applied message (the email sent)
)

// Account is the merchant account every ledger entry belongs to.
const Account = "merchant"

// Schema is the service database's schema. The idempotency key is UNIQUE
// (B.2: the part to trust); under check-then-insert the constraint is gone
// and the application checks first. A key's row holds the answer every
// delivery of the key gets: its status code (200 for the work done; a 4xx
// for a refusal, recorded in the same place as a success) and its body. A
// ledger entry reverses at most one other (UNIQUE reversal_of; NULL for
// charges).
func Schema(d Design) db.Schema {
	keys := db.Table{Name: TKeys, Columns: []db.Column{
		{Name: "id", Type: db.Int, Serial: true},
		{Name: "key", Type: db.Text, NotNull: true},
		{Name: "event_id", Type: db.Text, NotNull: true},
		{Name: "op_id", Type: db.Text, NotNull: true},
		{Name: "answer", Type: db.Text, NotNull: true},
		{Name: "code", Type: db.Int, NotNull: true, Default: int64(Code200)},
		{Name: "at", Type: db.Timestamp, Default: db.Now()},
	}, PrimaryKey: []string{"id"}}
	if !d.Has(CheckThenInsert) {
		keys.Unique = [][]string{{"key"}}
	}
	return db.Schema{Tables: []db.Table{
		keys,
		{Name: TCharges, Columns: []db.Column{
			{Name: "id", Type: db.Text},
			{Name: "event_id", Type: db.Text, NotNull: true},
			{Name: "payload", Type: db.Text, NotNull: true},
			{Name: "amount", Type: db.Int, NotNull: true},
			{Name: "at", Type: db.Timestamp, Default: db.Now()},
		}, PrimaryKey: []string{"id"}},
		{Name: TLedger, Columns: []db.Column{
			{Name: "id", Type: db.Text},
			{Name: "account", Type: db.Text, NotNull: true},
			{Name: "event_id", Type: db.Text, NotNull: true},
			{Name: "kind", Type: db.Text, NotNull: true},
			{Name: "amount", Type: db.Int, NotNull: true},
			{Name: "reversal_of", Type: db.Text},
			{Name: "at", Type: db.Timestamp, Default: db.Now()},
		}, PrimaryKey: []string{"id"}, Unique: [][]string{{"reversal_of"}}},
		{Name: TOutbox, Columns: []db.Column{
			{Name: "id", Type: db.Text},
			{Name: "event_id", Type: db.Text, NotNull: true},
			{Name: "op_id", Type: db.Text, NotNull: true},
			{Name: "kind", Type: db.Text, NotNull: true},
			{Name: "amount", Type: db.Int, NotNull: true},
			{Name: "sent", Type: db.Bool, NotNull: true, Default: false},
			{Name: "at", Type: db.Timestamp, Default: db.Now()},
		}, PrimaryKey: []string{"id"}},
	}}
}

// ConsumerSchema is the consumer's database: the dedup table and the
// effects.
func ConsumerSchema() db.Schema {
	return db.Schema{Tables: []db.Table{
		{Name: TProcessed, Columns: []db.Column{
			{Name: "msg_id", Type: db.Text},
			{Name: "at", Type: db.Timestamp, Default: db.Now()},
		}, PrimaryKey: []string{"msg_id"}},
		{Name: TEffects, Columns: []db.Column{
			{Name: "id", Type: db.Int, Serial: true},
			{Name: "msg_id", Type: db.Text, NotNull: true},
			{Name: "event_id", Type: db.Text, NotNull: true},
			{Name: "op_id", Type: db.Text, NotNull: true},
			{Name: "kind", Type: db.Text, NotNull: true},
			{Name: "at", Type: db.Timestamp, Default: db.Now()},
		}, PrimaryKey: []string{"id"}},
	}}
}
