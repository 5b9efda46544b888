package db

// The storage engine: tables of row version chains (MVCC, as PostgreSQL's
// heap), transactions, snapshots and visibility, unique indexes, row locks,
// VACUUM. Everything here is in memory; node.go makes commits durable.

import (
	"fmt"
	"sort"

	"github.com/fencesim/fencesim/clock"
)

type txStatus uint8

const (
	running txStatus = iota + 1
	prepared
	committed
	aborted
)

func (s txStatus) String() string {
	return [...]string{"?", "running", "prepared", "committed", "aborted"}[s]
}

// txn is a transaction. Versions point at the transactions that created and
// deleted them, so visibility is a pointer walk, never a lookup.
type txn struct {
	xid        uint64
	start      clock.Time // now() of the transaction
	status     txStatus
	csn        uint64 // commit sequence number, once committed
	cid        uint32 // the current statement's command id
	sess       *session
	gid        string
	preparedAt clock.Time
	touched    []*chain // rows written or locked, in first-touch order
	waiters    []waiter // sessions waiting for this transaction to end
	waitingOn  *txn     // the transaction this one's statement waits for
	// hxid is the xid PostgreSQL would give the transaction: at its first
	// write or row lock (0: none yet). It orders VACUUM's horizon, which a
	// transaction without one does not hold back.
	hxid uint64
}

// active reports whether the transaction still holds its locks and hides its
// writes: running or prepared.
func (t *txn) active() bool { return t.status == running || t.status == prepared }

type waiter struct {
	s   *session
	seq uint64
}

// frozen is the creator of rows recovered from disk: committed before every
// snapshot.
var frozen = &txn{status: committed}

// version is one row version (a heap tuple).
type version struct {
	data       []Value
	xmin, xmax *txn // creator; deleter (or updater), nil while live
	cmin, cmax uint32
}

// chain is one logical row: its versions, oldest first (a ctid chain), and
// its row lock.
type chain struct {
	id      uint64
	tbl     *table
	vers    []*version
	locker  *txn // holder of the row lock (FOR UPDATE, UPDATE, DELETE)
	toucher *txn // the last transaction that recorded this chain in touched
	gone    bool // removed by VACUUM
}

// latest returns the newest version not created by an aborted transaction.
func (c *chain) latest() *version {
	for i := len(c.vers) - 1; i >= 0; i-- {
		if c.vers[i].xmin.status != aborted {
			return c.vers[i]
		}
	}
	return nil
}

// committedVersion returns the version a new snapshot without a transaction
// of its own would see: created by a committed transaction and not deleted by
// one.
func (c *chain) committedVersion() *version {
	for i := len(c.vers) - 1; i >= 0; i-- {
		v := c.vers[i]
		if v.xmin.status == committed {
			if v.xmax != nil && v.xmax.status == committed {
				return nil
			}
			return v
		}
	}
	return nil
}

// snap is a statement's snapshot (READ COMMITTED: one per statement).
type snap struct {
	tx   *txn
	cid  uint32
	csn  uint64 // sees commits with csn <= this
	xmin uint64 // oldest active xid when taken: the VACUUM horizon it holds
}

func (s *snap) created(t *txn, c uint32) bool {
	if t == s.tx {
		return c < s.cid
	}
	return t.status == committed && t.csn <= s.csn
}

func (s *snap) sees(v *version) bool {
	if !s.created(v.xmin, v.cmin) {
		return false
	}
	return v.xmax == nil || !s.created(v.xmax, v.cmax)
}

func (s *snap) visible(c *chain) *version {
	for i := len(c.vers) - 1; i >= 0; i-- {
		if s.sees(c.vers[i]) {
			return c.vers[i]
		}
	}
	return nil
}

// table is a table's definition and rows.
type table struct {
	def       Table
	cols      map[string]int
	pk        []int
	uniq      [][]int  // unique indexes; uniq[0] is the primary key
	uniqNames []string // index names for error messages (t_pkey, t_a_b_key)
	chains    []*chain // heap order (creation order)
	idx       []map[string][]*chain
	seq       []int64 // per column: the serial sequence's last value
	nextChain uint64
}

func newTable(def Table) *table {
	t := &table{def: def, cols: map[string]int{}, seq: make([]int64, len(def.Columns))}
	for i, c := range def.Columns {
		if _, dup := t.cols[c.Name]; dup {
			panic(fmt.Sprintf("db: table %q: column %q defined twice", def.Name, c.Name))
		}
		if c.Type < Int || c.Type > Timestamp {
			panic(fmt.Sprintf("db: table %q: column %q has no valid type", def.Name, c.Name))
		}
		t.cols[c.Name] = i
	}
	colsOf := func(names []string) []int {
		out := make([]int, len(names))
		for i, n := range names {
			j, ok := t.cols[n]
			if !ok {
				panic(fmt.Sprintf("db: table %q: index column %q does not exist", def.Name, n))
			}
			out[i] = j
		}
		return out
	}
	if len(def.PrimaryKey) == 0 {
		panic(fmt.Sprintf("db: table %q has no primary key", def.Name))
	}
	t.pk = colsOf(def.PrimaryKey)
	t.uniq = append(t.uniq, t.pk)
	t.uniqNames = append(t.uniqNames, def.Name+"_pkey")
	for _, u := range def.Unique {
		t.uniq = append(t.uniq, colsOf(u))
		name := def.Name
		for _, c := range u {
			name += "_" + c
		}
		t.uniqNames = append(t.uniqNames, name+"_key")
	}
	for range t.uniq {
		t.idx = append(t.idx, map[string][]*chain{})
	}
	return t
}

func (t *table) isPK(col int) bool {
	for _, c := range t.pk {
		if c == col {
			return true
		}
	}
	return false
}

// newChain adds a row with its first version.
func (t *table) newChain(v *version) *chain {
	t.nextChain++
	c := &chain{id: t.nextChain, tbl: t, vers: []*version{v}}
	t.chains = append(t.chains, c)
	t.index(c, v.data)
	return c
}

// addVersion appends a new version to a chain.
func (t *table) addVersion(c *chain, v *version) {
	c.vers = append(c.vers, v)
	t.index(c, v.data)
}

// index records that chain c has (had) a version with data's keys. Index
// lists are supersets: readers check versions themselves.
func (t *table) index(c *chain, data []Value) {
	for i, cols := range t.uniq {
		k, ok := keyOf(data, cols)
		if !ok {
			continue
		}
		list := t.idx[i][k]
		found := false
		for _, x := range list {
			if x == c {
				found = true
				break
			}
		}
		if !found {
			t.idx[i][k] = append(list, c)
		}
	}
}

// reindex rebuilds the indexes after VACUUM removed versions or chains.
func (t *table) reindex() {
	for i := range t.idx {
		t.idx[i] = map[string][]*chain{}
	}
	for _, c := range t.chains {
		for _, v := range c.vers {
			t.index(c, v.data)
		}
	}
}

// uniqueCheck decides whether data may be written as a version of chain self
// (nil for an insert) under unique index i: ok, a conflict with a live row,
// or a wait for the transaction whose outcome decides (PostgreSQL's
// _bt_check_unique with a dirty snapshot).
func (t *table) uniqueCheck(i int, data []Value, self *chain, me *txn) (conflict bool, wait *txn) {
	k, ok := keyOf(data, t.uniq[i])
	if !ok {
		return false, nil
	}
	for _, c := range t.idx[i][k] {
		if c == self {
			continue
		}
		for _, v := range c.vers {
			if k2, ok := keyOf(v.data, t.uniq[i]); !ok || k2 != k {
				continue
			}
			switch {
			case v.xmin.status == aborted:
				continue
			case v.xmax != nil && (v.xmax == me || v.xmax.status == committed):
				continue // dead
			case v.xmin != me && v.xmin.active():
				if wait == nil {
					wait = v.xmin
				}
			case v.xmax != nil && v.xmax != me && v.xmax.active():
				if wait == nil {
					wait = v.xmax
				}
			default:
				return true, nil
			}
		}
	}
	return false, wait
}

// vacuum removes the dead versions no transaction can see any more: created
// by an aborted transaction, or deleted by a committed one whose xid (hxid)
// is below the horizon (the oldest xid of a running or prepared transaction,
// or the oldest snapshot still in use). Like VACUUM VERBOSE's "remain", Remain leaves out
// the versions of running or prepared transactions' inserts and updates.
func (t *table) vacuum(horizon uint64) VacuumStats {
	var st VacuumStats
	kept := t.chains[:0]
	for _, c := range t.chains {
		vs := c.vers[:0]
		for _, v := range c.vers {
			switch {
			case v.xmin.status == aborted:
				st.Removed++
				continue
			case v.xmin.active():
				// Inserted by a running or prepared transaction: kept, but,
				// as in PostgreSQL, not counted among the remaining rows.
				st.Remain--
			case v.xmax != nil && v.xmax.status == committed:
				if v.xmax.hxid < horizon {
					st.Removed++
					continue
				}
				st.DeadNotRemovable++
			}
			vs = append(vs, v)
		}
		for i := len(vs); i < len(c.vers); i++ {
			c.vers[i] = nil
		}
		c.vers = vs
		st.Remain += len(vs)
		if len(vs) == 0 {
			c.gone = true
			continue
		}
		kept = append(kept, c)
	}
	for i := len(kept); i < len(t.chains); i++ {
		t.chains[i] = nil
	}
	t.chains = kept
	t.reindex()
	return st
}

// committedRows returns the table's committed rows ordered by primary key.
func (t *table) committedRows() [][]Value {
	var out [][]Value
	for _, c := range t.chains {
		if v := c.committedVersion(); v != nil {
			out = append(out, v.data)
		}
	}
	sort.Slice(out, func(i, j int) bool { return t.pkLess(out[i], out[j]) })
	return out
}

func (t *table) pkLess(a, b []Value) bool {
	for _, c := range t.pk {
		if d := compare(a[c], b[c]); d != 0 {
			return d < 0
		}
	}
	return false
}

func (t *table) pkValues(data []Value) []Value {
	out := make([]Value, len(t.pk))
	for i, c := range t.pk {
		out[i] = data[c]
	}
	return out
}
