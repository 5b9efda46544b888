package pgexec

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/fencesim/fencesim/model/db"
)

// DDL is the schema's definition on the server: each table as Table.SQL
// renders it, with autovacuum (and autoanalyze) off, since the model has no
// autovacuum and only the statements' VACUUMs may remove row versions; then
// its non-unique indexes (which change no result, only the cost).
func DDL(s db.Schema) []string {
	var out []string
	for _, tb := range s.Tables {
		out = append(out, tb.SQL()+" WITH (autovacuum_enabled = off)")
	}
	for _, tb := range s.Tables {
		for _, cols := range tb.Indexes {
			names := make([]string, len(cols))
			for i, c := range cols {
				names[i] = pgx.Identifier{c}.Sanitize()
			}
			out = append(out, fmt.Sprintf("CREATE INDEX ON %s (%s)", pgx.Identifier{tb.Name}.Sanitize(), strings.Join(names, ", ")))
		}
	}
	return out
}

// SeedSQL inserts initial rows as db.Config.Seed gives them (in batches of
// 500 statements, one round trip each), then moves each serial column's
// sequence past the seeded values, as the model does.
func SeedSQL(s db.Schema, seed map[string][]db.Row) []string {
	var out []string
	for _, tb := range s.Tables {
		var ins []string
		for _, row := range seed[tb.Name] {
			ins = append(ins, db.Insert(tb.Name, row).SQL())
		}
		for len(ins) > 0 {
			n := min(len(ins), 500)
			out = append(out, strings.Join(ins[:n], "; "))
			ins = ins[n:]
		}
		if len(seed[tb.Name]) == 0 {
			continue
		}
		t := pgx.Identifier{tb.Name}.Sanitize()
		for _, c := range tb.Columns {
			if c.Serial {
				col := pgx.Identifier{c.Name}.Sanitize()
				out = append(out, fmt.Sprintf("SELECT setval(pg_get_serial_sequence(%s, %s), max(%s)) FROM %s HAVING max(%s) IS NOT NULL",
					quote(t), quote(c.Name), col, t, col))
			}
		}
	}
	return out
}

// CreateSchema creates the schema's tables and indexes (DDL) in the
// connection's current schema.
func CreateSchema(ctx context.Context, conn *pgx.Conn, s db.Schema) error {
	return execAll(ctx, conn, DDL(s))
}

// Seed inserts the initial rows (SeedSQL), committed before anything runs.
// Timestamps are relative to db.Epoch.
func Seed(ctx context.Context, conn *pgx.Conn, s db.Schema, seed map[string][]db.Row) error {
	return execAll(ctx, conn, SeedSQL(s, seed))
}

func execAll(ctx context.Context, conn *pgx.Conn, sqls []string) error {
	for _, q := range sqls {
		if _, err := conn.Exec(ctx, q, pgx.QueryExecModeSimpleProtocol); err != nil {
			if len(q) > 200 {
				q = q[:200] + "..."
			}
			return fmt.Errorf("pgexec: %s: %w", q, err)
		}
	}
	return nil
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
