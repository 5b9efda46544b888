package pgexec

// Commit capture: the simulator's db node writes one hist.CommitRecord per
// committed transaction; on a real server the same records are rebuilt
// afterwards from an audit table that row triggers fill inside each
// transaction (so only committed transactions' rows are ever visible), and
// ordered by the server's commit timestamps (track_commit_timestamp).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/traces/hist"
)

// The capture's objects, in the schema's own namespace.
const (
	auditTable = "fencesim_audit" // one row per row change: xid, table, op, old and new images
	gidTable   = "fencesim_gid"   // xid -> gid of prepared transactions (Options.RecordGID)
	auditFunc  = "fencesim_audit_row"
)

// recordGIDSQL is the statement a RecordGID session sends before PREPARE
// TRANSACTION: part of the prepared transaction, visible once it commits.
func recordGIDSQL(gid string) string {
	return fmt.Sprintf("INSERT INTO %s (xid, gid) VALUES (txid_current(), %s)", gidTable, quote(gid))
}

// InstallCapture creates the audit table and an AFTER INSERT/UPDATE/DELETE
// FOR EACH ROW trigger on every table of s, in conn's current schema (where
// CreateSchema put the tables). The server must run with
// track_commit_timestamp = on (scripts/pg.sh's does); InstallCapture
// refuses otherwise. Commits made before it are not captured (Seed's rows
// among them).
func InstallCapture(ctx context.Context, conn *pgx.Conn, s db.Schema) error {
	if err := commitTimestampsOn(ctx, conn); err != nil {
		return err
	}
	var ns string
	if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&ns); err != nil {
		return fmt.Errorf("pgexec: current schema: %w", err)
	}
	q := func(name string) string { return pgx.Identifier{ns, name}.Sanitize() }
	sqls := []string{
		fmt.Sprintf(`CREATE TABLE %s (id bigserial PRIMARY KEY, xid bigint NOT NULL, tbl text NOT NULL, op text NOT NULL, old jsonb, new jsonb) WITH (autovacuum_enabled = off)`, q(auditTable)),
		fmt.Sprintf(`CREATE TABLE %s (xid bigint PRIMARY KEY, gid text NOT NULL) WITH (autovacuum_enabled = off)`, q(gidTable)),
		fmt.Sprintf(`CREATE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
	INSERT INTO %s (xid, tbl, op, old, new) VALUES (txid_current(), TG_TABLE_NAME, TG_OP,
		CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) END,
		CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) END);
	RETURN NULL;
END $f$`, q(auditFunc), q(auditTable)),
	}
	for _, tb := range s.Tables {
		sqls = append(sqls, fmt.Sprintf("CREATE TRIGGER %s AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION %s()",
			pgx.Identifier{auditFunc}.Sanitize(), q(tb.Name), q(auditFunc)))
	}
	return execAll(ctx, conn, sqls)
}

func commitTimestampsOn(ctx context.Context, conn *pgx.Conn) error {
	var on string
	if err := conn.QueryRow(ctx, "SHOW track_commit_timestamp").Scan(&on); err != nil {
		return fmt.Errorf("pgexec: SHOW track_commit_timestamp: %w", err)
	}
	if on != "on" {
		return fmt.Errorf("pgexec: the server runs with track_commit_timestamp = %s: commits cannot be ordered; set it on (scripts/pg.sh does) and restart the server", on)
	}
	return nil
}

// ReadCommits reads the capture of InstallCapture (in conn's current
// schema, which must be the one InstallCapture used). It returns one record per committed transaction that changed a
// row of s since InstallCapture, in commit order (by the server's commit
// timestamp; ties, which need two commits in one microsecond, by xid), as
// the model's db node writes them: Seq from 1, Tx the server's xid, At the
// commit timestamp since db.Epoch, GID when the transaction was prepared by
// a RecordGID session, Changes net per row in the order the transaction
// first touched the rows (an insert then an update is one insert; an insert
// then a delete is nothing), values of the model's types by the schema's
// column types.
func ReadCommits(ctx context.Context, conn *pgx.Conn, s db.Schema) ([]hist.CommitRecord, error) {
	if err := commitTimestampsOn(ctx, conn); err != nil {
		return nil, err
	}
	tables := map[string]*db.Table{}
	for i := range s.Tables {
		tables[s.Tables[i].Name] = &s.Tables[i]
	}
	rows, err := conn.Query(ctx, fmt.Sprintf(`
		SELECT a.xid, pg_xact_commit_timestamp((a.xid %% 4294967296)::text::xid) AS at, coalesce(g.gid, ''),
		       a.tbl, a.op, coalesce(a.old::text, ''), coalesce(a.new::text, '')
		FROM %s a LEFT JOIN %s g ON g.xid = a.xid
		ORDER BY at, a.xid, a.id`, auditTable, gidTable))
	if err != nil {
		return nil, fmt.Errorf("pgexec: read the audit table: %w", err)
	}
	defer rows.Close()
	var out []hist.CommitRecord
	var cur *txChanges
	flush := func() {
		if cur != nil {
			if ch := cur.changes(); len(ch) > 0 {
				out = append(out, hist.CommitRecord{Seq: uint64(len(out) + 1), Tx: cur.xid, At: cur.at, GID: cur.gid, Changes: ch})
			}
		}
		cur = nil
	}
	for rows.Next() {
		var (
			xid              int64
			at               *time.Time
			gid, tbl, op     string
			oldJSON, newJSON string
		)
		if err := rows.Scan(&xid, &at, &gid, &tbl, &op, &oldJSON, &newJSON); err != nil {
			return nil, fmt.Errorf("pgexec: read the audit table: %w", err)
		}
		if at == nil {
			return nil, fmt.Errorf("pgexec: transaction %d has no commit timestamp (committed before track_commit_timestamp was on?)", xid)
		}
		tb := tables[tbl]
		if tb == nil {
			continue // a table outside the schema
		}
		if cur == nil || cur.xid != uint64(xid) {
			flush()
			cur = &txChanges{xid: uint64(xid), at: clock.Time(at.Sub(db.Epoch)), gid: gid}
		}
		var before, after map[string]any
		if oldJSON != "" {
			if before, err = image(tb, oldJSON); err != nil {
				return nil, err
			}
		}
		if newJSON != "" {
			if after, err = image(tb, newJSON); err != nil {
				return nil, err
			}
		}
		cur.add(tb, op, before, after)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgexec: read the audit table: %w", err)
	}
	flush()
	return out, nil
}

// txChanges merges one transaction's row events into net changes.
type txChanges struct {
	xid   uint64
	at    clock.Time
	gid   string
	rows  []*netRow
	byKey map[string]*netRow // the live rows by table and current key
}

type netRow struct {
	tb            *db.Table
	before, after map[string]any // before nil: inserted by the transaction; after nil: deleted
	gone          bool           // inserted, then deleted: nets out
}

func rowKey(tb *db.Table, img map[string]any) string {
	return tb.Name + "\x00" + fmt.Sprint(pkValues(tb, img))
}

func pkValues(tb *db.Table, img map[string]any) []any {
	k := make([]any, len(tb.PrimaryKey))
	for i, c := range tb.PrimaryKey {
		k[i] = img[c]
	}
	return k
}

func (t *txChanges) add(tb *db.Table, op string, before, after map[string]any) {
	if t.byKey == nil {
		t.byKey = map[string]*netRow{}
	}
	switch op {
	case "INSERT":
		r := &netRow{tb: tb, after: after}
		t.rows = append(t.rows, r)
		t.byKey[rowKey(tb, after)] = r
	case "UPDATE", "DELETE":
		k := rowKey(tb, before)
		r := t.byKey[k]
		if r == nil {
			r = &netRow{tb: tb, before: before}
			t.rows = append(t.rows, r)
		}
		delete(t.byKey, k)
		r.after = after
		if after != nil {
			t.byKey[rowKey(tb, after)] = r
		} else if r.before == nil {
			r.gone = true
		}
	}
}

func (t *txChanges) changes() []hist.Change {
	var out []hist.Change
	for _, r := range t.rows {
		switch {
		case r.gone:
		case r.before == nil:
			out = append(out, hist.Change{Table: r.tb.Name, Op: db.OpInsert, Key: pkValues(r.tb, r.after), After: r.after})
		case r.after == nil:
			out = append(out, hist.Change{Table: r.tb.Name, Op: db.OpDelete, Key: pkValues(r.tb, r.before), Before: r.before})
		default:
			out = append(out, hist.Change{Table: r.tb.Name, Op: db.OpUpdate, Key: pkValues(r.tb, r.after), Before: r.before, After: r.after})
		}
	}
	return out
}

// image converts a row image (to_jsonb of the row) to the model's values
// by the table's column types: Int int64, Text string, Bool bool,
// Timestamp clock.Time since db.Epoch.
func image(tb *db.Table, js string) (map[string]any, error) {
	var raw map[string]any
	dec := json.NewDecoder(bytes.NewReader([]byte(js)))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("pgexec: row image of %s: %w", tb.Name, err)
	}
	out := make(map[string]any, len(tb.Columns))
	for _, c := range tb.Columns {
		v := raw[c.Name]
		if v == nil {
			out[c.Name] = nil
			continue
		}
		var err error
		switch c.Type {
		case db.Int:
			n, ok := v.(json.Number)
			if !ok {
				err = fmt.Errorf("not a number")
				break
			}
			out[c.Name], err = n.Int64()
		case db.Text:
			s, ok := v.(string)
			if !ok {
				err = fmt.Errorf("not a string")
			}
			out[c.Name] = s
		case db.Bool:
			b, ok := v.(bool)
			if !ok {
				err = fmt.Errorf("not a boolean")
			}
			out[c.Name] = b
		case db.Timestamp:
			s, _ := v.(string)
			var ts time.Time
			ts, err = time.Parse(time.RFC3339Nano, s)
			out[c.Name] = clock.Time(ts.Sub(db.Epoch))
		default:
			err = fmt.Errorf("unknown column type %d", c.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("pgexec: row image of %s, column %s = %v: %v", tb.Name, c.Name, v, err)
		}
	}
	return out, nil
}
