package db

// The storage engine: tables of row version chains (MVCC, as PostgreSQL's
// heap), transactions, snapshots and visibility, unique indexes, row locks,
// VACUUM. Everything here is in memory; node.go makes commits durable.

import (
	"cmp"
	"fmt"
	"slices"
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
	row        Row // data as a client Row, made once (rowOf) and shared: never modified
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
	chains    []*chain // heap order (creation order, which is chain id order)
	idx       []map[string]*ilist
	sidx      []secondary // the non-unique indexes (Table.Indexes)
	seq       []int64     // per column: the serial sequence's last value
	nextChain uint64
	kbuf      []byte   // scratch for index keys
	sorted    []*chain // scratch for lookup
	insert    *plan    // the plan of every INSERT into the table
	// The table's chains, versions and index lists, and their first
	// one-element lists, come from slabs.
	chainMem  slab[chain]
	verMem    slab[version]
	ilistMem  slab[ilist]
	chainPtrs ptrs[chain]
	verPtrs   ptrs[version]
}

// newVersion returns a version of the table's.
func (t *table) newVersion(data []Value, xmin *txn, cmin uint32) *version {
	v := t.verMem.new()
	v.data, v.xmin, v.cmin = data, xmin, cmin
	return v
}

// newIlist returns an index list holding c.
func (t *table) newIlist(c *chain) *ilist {
	l := t.ilistMem.new()
	l.chains = t.chainPtrs.one(c)
	return l
}

// ilist is the chains an index key leads to. For a unique index, in the
// order they were indexed (uniqueCheck waits for the first undecided
// writer it meets); for a secondary index, in heap order.
type ilist struct {
	chains []*chain
}

// secondary is a non-unique index: its key's columns and, per key, the
// chains in heap order that may hold a version with that key. Like the
// unique indexes, it is a superset (readers check versions themselves): a
// chain is listed under every key one of its versions has, and a scan drops
// a chain from its key's list once no version with that key can be seen by
// any later snapshot (see scanIndex).
type secondary struct {
	cols []int
	m    map[string]*ilist
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
		t.idx = append(t.idx, map[string]*ilist{})
	}
	for _, ix := range def.Indexes {
		t.sidx = append(t.sidx, secondary{cols: colsOf(ix), m: map[string]*ilist{}})
	}
	t.insert = &plan{t: t, lookup: -1, index: -1}
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
	c := t.chainMem.new()
	c.id, c.tbl, c.vers = t.nextChain, t, t.verPtrs.one(v)
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
		var ok bool
		if t.kbuf, ok = appendKeyOf(t.kbuf[:0], data, cols); !ok {
			continue
		}
		l := t.idx[i][string(t.kbuf)]
		if l == nil {
			t.idx[i][string(t.kbuf)] = t.newIlist(c)
			continue
		}
		found := false
		for _, x := range l.chains {
			if x == c {
				found = true
				break
			}
		}
		if !found {
			l.chains = append(l.chains, c)
		}
	}
	for i := range t.sidx {
		ix := &t.sidx[i]
		var ok bool
		if t.kbuf, ok = appendKeyOf(t.kbuf[:0], data, ix.cols); !ok {
			continue // a NULL in the key: "col = constant" never matches it
		}
		l := ix.m[string(t.kbuf)]
		if l == nil {
			ix.m[string(t.kbuf)] = t.newIlist(c)
			continue
		}
		// Keep heap (chain id) order: most often c is the newest chain.
		cs := l.chains
		j := len(cs)
		if j > 0 && cs[j-1].id >= c.id {
			j = sort.Search(len(cs), func(k int) bool { return cs[k].id >= c.id })
			if j < len(cs) && cs[j] == c {
				continue
			}
		}
		cs = append(cs, nil)
		copy(cs[j+1:], cs[j:])
		cs[j] = c
		l.chains = cs
	}
}

// reindex rebuilds the indexes after VACUUM removed versions or chains.
func (t *table) reindex() {
	for i := range t.idx {
		t.idx[i] = map[string]*ilist{}
	}
	for i := range t.sidx {
		t.sidx[i].m = map[string]*ilist{}
	}
	for _, c := range t.chains {
		for _, v := range c.vers {
			t.index(c, v.data)
		}
	}
}

// lookup returns the chains a unique index key leads to, in heap order.
func (t *table) lookup(i int, key []byte) []*chain {
	l := t.idx[i][string(key)]
	if l == nil {
		return nil
	}
	cs := l.chains
	for j := 1; j < len(cs); j++ {
		if cs[j-1].id > cs[j].id {
			t.sorted = append(t.sorted[:0], cs...)
			slices.SortFunc(t.sorted, func(a, b *chain) int { return cmp.Compare(a.id, b.id) })
			return t.sorted
		}
	}
	return cs
}

// scanIndex returns the chains, in heap order, that may hold a version
// visible to a new snapshot with secondary index i's key (vals: the key's
// values, in the index's column order). A version no new snapshot can see
// again is dead: its creator aborted, or its deleter committed (every
// snapshot taken from now on sees that commit); statuses only move on, so a
// dead version stays dead. A chain whose versions with this key are all dead
// leaves the list here; it comes back if a new version takes the key again.
// A statement's snapshot is taken just before its scan, so the chains
// dropped are exactly ones a full scan would find invisible or not
// matching.
func (t *table) scanIndex(i int, key []byte, vals []Value) []*chain {
	ix := &t.sidx[i]
	l := ix.m[string(key)]
	if l == nil {
		return nil
	}
	kept := l.chains[:0]
	for _, c := range l.chains {
		for _, v := range c.vers {
			if !v.dead() && hasKey(v.data, ix.cols, vals) {
				kept = append(kept, c)
				break
			}
		}
	}
	clear(l.chains[len(kept):])
	l.chains = kept
	return kept
}

// dead reports whether no snapshot taken from now on can see v.
func (v *version) dead() bool {
	return v.xmin.status == aborted || (v.xmax != nil && v.xmax.status == committed)
}

// hasKey reports whether row's cols hold vals (non-NULL values of the
// columns' types, so == is the key's equality).
func hasKey(row []Value, cols []int, vals []Value) bool {
	for j, c := range cols {
		if row[c] != vals[j] {
			return false
		}
	}
	return true
}

// sameKey reports whether a and b have the same non-NULL values in cols
// (keyOf(a, cols) == keyOf(b, cols), both ok).
func sameKey(a, b []Value, cols []int) bool {
	for _, c := range cols {
		if a[c] == nil || a[c] != b[c] {
			return false
		}
	}
	return true
}

// uniqueCheck decides whether data may be written as a version of chain self
// (nil for an insert) under unique index i: ok, a conflict with a live row,
// or a wait for the transaction whose outcome decides (PostgreSQL's
// _bt_check_unique with a dirty snapshot).
func (t *table) uniqueCheck(i int, data []Value, self *chain, me *txn) (conflict bool, wait *txn) {
	cols := t.uniq[i]
	var ok bool
	if t.kbuf, ok = appendKeyOf(t.kbuf[:0], data, cols); !ok {
		return false, nil
	}
	l := t.idx[i][string(t.kbuf)]
	if l == nil {
		return false, nil
	}
	for _, c := range l.chains {
		if c == self {
			continue
		}
		for _, v := range c.vers {
			if !sameKey(v.data, data, cols) {
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
