package db

// The commit log and the durable state: every committed transaction that
// changed something is one CommitRecord, written to the node's disk (its
// WAL) before the COMMIT is answered, noted in the trace as a "commit" event,
// and kept in memory for tests. A restart rebuilds the tables by replaying
// the WAL, then re-creates the prepared transactions from their records.

import (
	"fmt"
	"strconv"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/traces/hist"
)

// CommitRecord is one committed transaction's changes, as the checkers read
// it: hist.CommitRecord (see it for the JSON), with its rendering for a
// trace line. seq numbers commits from 1 in commit order; tx is the
// transaction id (0 for Config.Seed's rows); at is the database clock at
// commit in nanoseconds; gid is set when the transaction was committed with
// COMMIT PREPARED. Changes are net per row (an insert then update in one
// transaction is one insert), in the order the transaction first touched the
// rows. Timestamps appear as integers (nanoseconds). Records are shared:
// never modify one.
type CommitRecord hist.CommitRecord

// Change is one row's net change within a committed transaction (Before
// and After are Rows).
type Change = hist.Change

// Change ops.
const (
	OpInsert = "insert"
	OpUpdate = "update"
	OpDelete = "delete"
)

// String renders a record for a trace line.
func (r CommitRecord) String() string { return string(r.AppendString(make([]byte, 0, 128))) }

// AppendString appends the record's String to b (a trace renders every
// commit; traces.StringAppender).
func (r CommitRecord) AppendString(b []byte) []byte {
	b = append(b, "commit #"...)
	b = strconv.AppendUint(b, r.Seq, 10)
	b = append(b, " tx "...)
	b = strconv.AppendUint(b, r.Tx, 10)
	if r.GID != "" {
		b = append(b, " gid "...)
		b = appendQuoted(b, r.GID)
	}
	b = append(b, " at "...)
	b = r.At.Append(b)
	b = append(b, ':')
	for i, c := range r.Changes {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, ' ')
		b = append(b, c.Op...)
		b = append(b, ' ')
		b = append(b, c.Table...)
		b = appendKeyText(b, c.Key)
	}
	if len(r.Changes) == 0 {
		b = append(b, " (no changes)"...)
	}
	return b
}

func renderKey(k []Value) string { return string(appendKeyText(nil, k)) }

// appendKeyText appends a primary key's values for a trace: "(1,'a')".
func appendKeyText(b []byte, k []Value) []byte {
	b = append(b, '(')
	for i, v := range k {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendLiteral(b, v)
	}
	return append(b, ')')
}

// preparedRecord is a prepared transaction on disk.
type preparedRecord struct {
	GID        string
	Xid        uint64
	Start      clock.Time
	PreparedAt clock.Time
	Changes    []Change
	Locked     []lockedRow // rows locked (FOR UPDATE) without a change
}

type lockedRow struct {
	Table string
	Key   []Value
}

const (
	walPrefix  = "wal/"
	prepPrefix = "prep/"
	seqPrefix  = "seq/"
)

func walKey(seq uint64) string         { return fmt.Sprintf("%s%020d", walPrefix, seq) }
func prepKey(gid string) string        { return prepPrefix + gid }
func seqKey(t string, c string) string { return seqPrefix + t + "/" + c }

// netChange returns the row's net change by t: the version t replaced (nil
// for an insert) and the version it left (nil for a delete).
func netChange(c *chain, t *txn) (before, after *version) {
	for _, v := range c.vers {
		if v.xmax == t && v.xmin != t && before == nil {
			before = v
		}
		if v.xmin == t && v.xmax != t {
			after = v
		}
	}
	return before, after
}

// changesOf lists t's net changes and the rows it only locked.
func changesOf(t *txn) ([]Change, []lockedRow) {
	var out []Change
	var locked []lockedRow
	for _, c := range t.touched {
		tb := c.tbl
		before, after := netChange(c, t)
		switch {
		case before == nil && after == nil:
			if c.locker == t && !c.gone {
				if v := c.latest(); v != nil {
					locked = append(locked, lockedRow{Table: tb.def.Name, Key: tb.pkValues(v.data)})
				}
			}
		case before == nil:
			out = append(out, Change{Table: tb.def.Name, Op: OpInsert, Key: tb.pkValues(after.data), After: tb.rowOf(after)})
		case after == nil:
			out = append(out, Change{Table: tb.def.Name, Op: OpDelete, Key: tb.pkValues(before.data), Before: tb.rowOf(before)})
		default:
			out = append(out, Change{Table: tb.def.Name, Op: OpUpdate, Key: tb.pkValues(after.data), Before: tb.rowOf(before), After: tb.rowOf(after)})
		}
	}
	return out, locked
}

// rowData converts a record's Row back to stored values.
func (t *table) rowData(r Row) []Value {
	data := make([]Value, len(t.def.Columns))
	for i, c := range t.def.Columns {
		data[i] = r[c.Name]
	}
	return data
}

// findCommitted returns the chain whose committed version has primary key k.
func (t *table) findCommitted(k []Value) *chain {
	var buf []byte
	for _, v := range k {
		buf = appendKey(buf, v)
	}
	l := t.idx[0][string(buf)]
	if l == nil {
		return nil
	}
	for _, c := range l.chains {
		if v := c.committedVersion(); v != nil {
			if kk, _ := keyOf(v.data, t.pk); kk == string(buf) {
				return c
			}
		}
	}
	return nil
}

// replay applies a committed record to the recovered (frozen) state. The
// rows the record updates or deletes are all found first, by their keys
// before the transaction, and only then is anything changed: one
// transaction may delete a row and give its key to another (DELETE k = 3,
// then UPDATE ... SET k = 3), and its changes come in no particular order
// (found by TestPropertyInvariants: an insert of key 3 listed before the
// delete of the old key 3 lost the new row on recovery).
func (n *Node) replay(rec CommitRecord) {
	tables := make([]*table, len(rec.Changes))
	found := make([]*chain, len(rec.Changes))
	for i, ch := range rec.Changes {
		t := n.byName[ch.Table]
		if t == nil {
			panic(fmt.Sprintf("db: WAL record %d names unknown table %q", rec.Seq, ch.Table))
		}
		tables[i] = t
		switch ch.Op {
		case OpInsert:
		case OpUpdate, OpDelete:
			if found[i] = t.findCommitted(t.pkValues(t.rowData(ch.Before))); found[i] == nil {
				panic(fmt.Sprintf("db: WAL record %d: %s of a missing row %s%s", rec.Seq, ch.Op, ch.Table, renderKey(ch.Key)))
			}
		default:
			panic(fmt.Sprintf("db: WAL record %d: unknown op %q", rec.Seq, ch.Op))
		}
	}
	for i, ch := range rec.Changes {
		t, c := tables[i], found[i]
		switch ch.Op {
		case OpInsert:
			t.newChain(&version{data: t.rowData(ch.After), xmin: frozen})
		case OpDelete:
			c.vers = nil
			c.gone = true
		case OpUpdate:
			c.vers = []*version{{data: t.rowData(ch.After), xmin: frozen}}
			t.index(c, c.vers[0].data)
		}
	}
}

// recover rebuilds the node's state from its disk.
func (n *Node) recover() {
	for _, k := range n.disk.Keys(walPrefix) {
		v, _ := n.disk.Get(k)
		rec := v.(CommitRecord)
		n.replay(rec)
		n.log = append(n.log, rec)
		n.csn = rec.Seq
		if rec.Tx > n.nextXid {
			n.nextXid = rec.Tx
		}
	}
	for _, t := range n.tables {
		kept := t.chains[:0]
		for _, c := range t.chains {
			if !c.gone {
				kept = append(kept, c)
			}
		}
		t.chains = kept
		t.reindex()
		for i, col := range t.def.Columns {
			if !col.Serial {
				continue
			}
			if v, ok := n.disk.Get(seqKey(t.def.Name, col.Name)); ok {
				t.seq[i] = v.(int64)
			}
			for _, c := range t.chains {
				if x, ok := c.vers[0].data[i].(int64); ok && x > t.seq[i] {
					t.seq[i] = x
				}
			}
		}
	}
	// Prepared transactions, in xid order.
	var recs []preparedRecord
	for _, k := range n.disk.Keys(prepPrefix) {
		v, _ := n.disk.Get(k)
		recs = append(recs, v.(preparedRecord))
	}
	sortPrepared(recs)
	for _, r := range recs {
		t := &txn{xid: r.Xid, start: r.Start, status: prepared, gid: r.GID, preparedAt: r.PreparedAt, cid: 1}
		if r.Xid > n.nextXid {
			n.nextXid = r.Xid
		}
		for _, ch := range r.Changes {
			tb := n.byName[ch.Table]
			switch ch.Op {
			case OpInsert:
				c := tb.newChain(&version{data: tb.rowData(ch.After), xmin: t})
				lockRow(c, t)
			case OpUpdate, OpDelete:
				c := tb.findCommitted(tb.pkValues(tb.rowData(ch.Before)))
				if c == nil {
					panic(fmt.Sprintf("db: prepared %q: %s of a missing row %s%s", r.GID, ch.Op, ch.Table, renderKey(ch.Key)))
				}
				old := c.committedVersion()
				old.xmax = t
				if ch.Op == OpUpdate {
					tb.addVersion(c, &version{data: tb.rowData(ch.After), xmin: t})
				}
				lockRow(c, t)
			}
		}
		for _, l := range r.Locked {
			tb := n.byName[l.Table]
			if c := tb.findCommitted(l.Key); c != nil {
				lockRow(c, t)
			}
		}
		n.active = append(n.active, t)
		n.prepared[r.GID] = t
	}
}

func sortPrepared(rs []preparedRecord) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].Xid < rs[j-1].Xid; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

// lockRow gives t the row lock of c and records c among t's rows.
func lockRow(c *chain, t *txn) {
	c.locker = t
	if c.toucher != t {
		c.toucher = t
		t.touched = append(t.touched, c)
	}
}
