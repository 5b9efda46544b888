package db

// AllCommitted reports whether ok holds for one column of every committed
// row of a table (false for an unknown table or column), without building
// rows: a harness asks it of the world between events (is every
// submission terminal?).
func (n *Node) AllCommitted(table, column string, ok func(Value) bool) bool {
	t := n.byName[table]
	if t == nil {
		return false
	}
	c, found := t.cols[column]
	if !found {
		return false
	}
	for _, ch := range t.chains {
		if v := ch.committedVersion(); v != nil && !ok(v.data[c]) {
			return false
		}
	}
	return true
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
