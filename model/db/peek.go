package db

// AnyCommitted reports whether a committed row of a table holds value in
// column, without building rows: a harness asks it of the world between
// events (is any submission still pending?). A secondary index on exactly
// that column narrows the search to its candidates; it is only read.
func (n *Node) AnyCommitted(table, column string, value Value) bool {
	t := n.byName[table]
	if t == nil {
		return false
	}
	c, found := t.cols[column]
	if !found {
		return false
	}
	chains := t.chains
	for i := range t.sidx {
		if ix := &t.sidx[i]; len(ix.cols) == 1 && ix.cols[0] == c {
			var buf [32]byte
			l := ix.m[string(appendKey(buf[:0], value))]
			if l == nil {
				return false
			}
			chains = l.chains
			break
		}
	}
	for _, ch := range chains {
		if v := ch.committedVersion(); v != nil && v.data[c] == value {
			return true
		}
	}
	return false
}

// CountCommitted returns the number of committed rows of a table.
func (n *Node) CountCommitted(table string) int {
	t := n.byName[table]
	if t == nil {
		return 0
	}
	k := 0
	for _, ch := range t.chains {
		if ch.committedVersion() != nil {
			k++
		}
	}
	return k
}
