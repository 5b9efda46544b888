package twopc

// The participants' schemas and every statement system C sends, one function
// each. A knob changes a statement at the one place it lives.

import (
	"fmt"

	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/traces/hist"
)

// Table names.
const (
	TOrders = "orders" // the orders database: one row per order
	TStock  = "stock"  // an inventory database: stock per sku
	TTxlog  = "txlog"  // every participant: one row per global transaction it committed, or refused
	TChurn  = "churn"  // an inventory's churn table (C.2's VACUUM test)
)

// txlog states.
const (
	TxCommitted = "committed" // written by the transaction's own work: visible once it commits
	TxRefused   = "refused"   // a tombstone written by the participant's agent: the gid can never prepare here
)

var txlog = db.Table{
	Name:       TTxlog,
	Columns:    []db.Column{{Name: "gid", Type: db.Text}, {Name: "state", Type: db.Text, NotNull: true}},
	PrimaryKey: []string{"gid"},
}

// Schema returns the tables of participant i (0: orders, else an
// inventory) and its seed rows.
func Schema(d Design, i int) (db.Schema, map[string][]db.Row) {
	if i == 0 {
		return db.Schema{Tables: []db.Table{{
			Name: TOrders,
			Columns: []db.Column{
				{Name: "id", Type: db.Int, Serial: true},
				{Name: "gid", Type: db.Text, NotNull: true},
				{Name: "sku", Type: db.Text, NotNull: true},
				{Name: "qty", Type: db.Int, NotNull: true},
			},
			PrimaryKey: []string{"id"},
			Unique:     [][]string{{"gid"}},
		}, txlog}}, nil
	}
	tables := []db.Table{{
		Name:       TStock,
		Columns:    []db.Column{{Name: "sku", Type: db.Text}, {Name: "n", Type: db.Int, NotNull: true}},
		PrimaryKey: []string{"sku"},
	}, txlog}
	seed := map[string][]db.Row{TStock: {
		{"sku": "sku-1", "n": int64(d.Stock)},
		{"sku": "sku-2", "n": int64(d.Stock)},
	}}
	if d.ChurnRows > 0 {
		tables = append(tables, db.Table{
			Name:       TChurn,
			Columns:    []db.Column{{Name: "id", Type: db.Int}, {Name: "v", Type: db.Int, NotNull: true}},
			PrimaryKey: []string{"id"},
		})
		rows := make([]db.Row, d.ChurnRows)
		for j := range rows {
			rows[j] = db.Row{"id": int64(j + 1), "v": int64(0)}
		}
		seed[TChurn] = rows
	}
	return db.Schema{Tables: tables}, seed
}

// Work is participant i's part of global transaction gid: orders inserts
// one order, an inventory takes one sku-1 off its stock; both record the gid
// in txlog (what the cooperative termination protocol asks about).
func Work(i int, gid string) []db.Stmt {
	mark := db.Insert(TTxlog, db.Row{"gid": gid, "state": TxCommitted})
	if i == 0 {
		return []db.Stmt{db.Insert(TOrders, db.Row{"gid": gid, "sku": "sku-1", "qty": int64(1)}), mark}
	}
	return []db.Stmt{Decrement("sku-1"), mark}
}

// Decrement takes one item of a sku off the stock.
func Decrement(sku string) db.Stmt {
	return db.Update(TStock, []db.Assign{db.Set("n", db.Plus(db.Col("n"), db.Const(int64(-1))))}, db.W("sku", db.Eq, sku))
}

// PrepareBatch is phase one at participant i: the work and PREPARE
// TRANSACTION, in one round trip (an atomic batch that ends prepared).
func PrepareBatch(i int, gid string) []db.Stmt {
	return append(Work(i, gid), db.Prepare(gid))
}

// Finish is phase two: COMMIT PREPARED or ROLLBACK PREPARED.
func Finish(gid, outcome string) db.Stmt {
	if outcome == hist.OutcomeCommit {
		return db.CommitPrepared(gid)
	}
	return db.RollbackPrepared(gid)
}

// Refuse is the agent's tombstone: the participant will never prepare gid
// (its own work's txlog insert would conflict). The SELECT reads the row
// that is there, the tombstone or the committed work's mark.
func Refuse(gid string) []db.Stmt {
	return []db.Stmt{db.InsertOrNothing(TTxlog, db.Row{"gid": gid, "state": TxRefused}), db.Select(TTxlog, db.W("gid", db.Eq, gid))}
}

// Churn updates every row of the churn table (C.2).
func Churn() db.Stmt {
	return db.Update(TChurn, []db.Assign{db.Set("v", db.Plus(db.Col("v"), db.Const(int64(1))))})
}

// ParticipantName is the node name of participant i: "orders", "inventory",
// then "inventory-2", "inventory-3", ...
func ParticipantName(i int) string {
	switch i {
	case 0:
		return "orders"
	case 1:
		return "inventory"
	}
	return fmt.Sprintf("inventory-%d", i)
}
