package scenario

import (
	"fmt"
	"strings"
	"time"
)

// Table is one rendered scenario table.
type Table struct {
	ID     string // "C.1", ...
	Title  string
	Header []string
	Rows   [][]string
	Notes  []string // lines printed under the table
}

// String renders the table as aligned text, like the source's output.
func (t Table) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", t.ID, t.Title)
	if len(t.Header) > 0 {
		w := make([]int, len(t.Header))
		for i, h := range t.Header {
			w[i] = len(h)
		}
		for _, r := range t.Rows {
			for i, c := range r {
				if len(c) > w[i] {
					w[i] = len(c)
				}
			}
		}
		line := func(cells []string) {
			parts := make([]string, len(cells))
			for i, c := range cells {
				parts[i] = c + strings.Repeat(" ", w[i]-len(c))
			}
			b.WriteString("  " + strings.TrimRight(strings.Join(parts, " | "), " ") + "\n")
		}
		line(t.Header)
		seps := make([]string, len(w))
		for i := range w {
			seps[i] = strings.Repeat("-", w[i])
		}
		b.WriteString("  " + strings.Join(seps, "-+-") + "\n")
		for _, r := range t.Rows {
			line(r)
		}
	}
	for _, n := range t.Notes {
		b.WriteString("  " + n + "\n")
	}
	return b.String()
}

func itoa(n int) string {
	if n < 0 {
		return "down"
	}
	return fmt.Sprint(n)
}

func consistentText(ok bool) string {
	if ok {
		return "consistent"
	}
	return "INCONSISTENT"
}

// TableC1 renders C.1.
func TableC1(rows []CrashRow) Table {
	t := Table{ID: "C.1", Title: "crash positions (coordinator killed, not restarted)",
		Header: []string{"pos", "where the coordinator was killed", "prepared (orders)", "prepared (inventory)", "orders", "stock", "decision log"}}
	stuck := 0
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{fmt.Sprint(r.Pos), r.Where, itoa(r.Crash.Prepared[0]), itoa(r.Crash.Prepared[1]),
			fmt.Sprint(r.Crash.Orders), r.Crash.stockText(), logText(r.Log)})
		for _, p := range r.Crash.Prepared {
			if p > 0 {
				stuck++
				break
			}
		}
	}
	t.Notes = append(t.Notes, fmt.Sprintf("%d of %d positions leave a participant prepared, waiting for a decision", stuck, len(rows)))
	return t
}

func recoveryTable(id, title string, rows []CrashRow) Table {
	t := Table{ID: id, Title: title, Header: []string{"pos", "where the coordinator was killed", "recovery action", "orders", "stock", "result", "properties"}}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{fmt.Sprint(r.Pos), r.Where, r.Action, fmt.Sprint(r.After.Orders), r.After.stockText(),
			consistentText(r.Consistent), r.Verdicts})
	}
	return t
}

// TableC4 renders C.4.
func TableC4(rows []CrashRow) Table {
	return recoveryTable("C.4", "recovery from the decision log (the coordinator restarts)", rows)
}

// TableC5 renders C.5.
func TableC5(rows []CrashRow) Table {
	t := recoveryTable("C.5", "the decision log is lost before the restart (recovery can only roll back)", rows)
	t.Notes = []string{"position 3 ends 'consistent' but rolled back a transaction already decided COMMIT (PC2); position 4 committed orders and cannot be repaired by recovery"}
	return t
}

// TableC6 renders C.6.
func TableC6(rows []C6Row) Table {
	t := Table{ID: "C.6", Title: "write order (killed after the first COMMIT PREPARED, then restarted)",
		Header: []string{"the coordinator's write order", "decision log at the crash", "recovery action", "orders", "stock", "result", "properties"}}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{r.Order, logText(r.Log), r.Action, fmt.Sprint(r.After.Orders), r.After.stockText(), consistentText(r.Consistent), r.Verdicts})
	}
	return t
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) }

func msecs(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// TableC2 renders C.2.
func TableC2(r C2Result) Table {
	return Table{ID: "C.2", Title: "the cost of blocking ('xw' left prepared at the inventory)", Notes: []string{
		fmt.Sprintf("inventory pg_prepared_xacts (gid, seconds prepared): [('xw', %s)]", secs(r.Age0)),
		fmt.Sprintf("business session UPDATE sku-1 (the prepared row): waited %s, then %s (LockNotAvailable)", msecs(r.BlockedWait), r.Blocked),
		fmt.Sprintf("same session UPDATE sku-2 (another row): %s in %s, not blocked: the lock granularity is the prepared row", r.Free, msecs(r.FreeWait)),
		fmt.Sprintf("a while later, pg_prepared_xacts: [('xw', %s)]: with the coordinator gone it only grows older", secs(r.Age1)),
		"with the prepared transaction, after updating the 2000-row churn table 3 times, VACUUM churn:",
		fmt.Sprintf("  tuples: %d removed, %d remain, %d are dead but not yet removable", r.Pinned.Removed, r.Pinned.Remain, r.Pinned.DeadNotRemovable),
		"after ROLLBACK PREPARED 'xw', VACUUM churn:",
		fmt.Sprintf("  tuples: %d removed, %d remain, %d are dead but not yet removable", r.Removed.Removed, r.Removed.Remain, r.Removed.DeadNotRemovable),
	}}
}

// TableC3 renders C.3.
func TableC3(rows []C3Row) Table {
	t := Table{ID: "C.3", Title: "a participant cannot decide alone",
		Header: []string{"approach", "action", "orders", "stock", "result", "properties"}}
	if len(rows) > 0 {
		s := rows[0].Scene
		t.Notes = append(t.Notes, fmt.Sprintf("scene: orders prepared=%d, orders=%d (committed); inventory prepared=%d, stock=%s (the decrement not visible); decision log: %s",
			s.Prepared[0], s.Orders, s.Prepared[1], s.stockText(), logText(rows[0].Log)))
		t.Notes = append(t.Notes, "from the inventory's side, 'no longer prepared at orders' may mean committed or rolled back: it cannot tell")
	}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{r.Approach, r.Action, fmt.Sprint(r.After.Orders), r.After.stockText(), consistentText(r.Consistent), r.Verdicts})
	}
	return t
}

// TableC7 renders C.7.
func TableC7(r C7Result) Table {
	t := Table{ID: "C.7", Title: "a participant dies before voting (inventory killed when the prepare of 'xp' reaches it)"}
	for _, l := range r.Lines {
		t.Notes = append(t.Notes, "[coordinator] "+l)
	}
	t.Notes = append(t.Notes,
		fmt.Sprintf("coordinator's conclusion: %s; decision log: %s", strings.ToUpper(r.Decision), logText(r.Log)),
		fmt.Sprintf("orders prepared: %d, orders: %d (its prepared transaction was rolled back by the coordinator)", r.After.Prepared[0], r.After.Orders),
		fmt.Sprintf("inventory after its restart: prepared: %d, stock: %s: it died before voting and left nothing behind", r.After.Prepared[1], r.After.stockText()),
		"properties: "+r.Verdicts)
	return t
}

// Scenarios runs every scenario of the source (C.1-C.7) and of C.8 and
// returns their tables, in order: the command line's "fencesim scenarios".
func Scenarios() ([]Table, error) {
	var out []Table
	c1, err := C1()
	if err != nil {
		return nil, fmt.Errorf("C.1: %w", err)
	}
	out = append(out, TableC1(c1))
	c2, err := C2()
	if err != nil {
		return nil, fmt.Errorf("C.2: %w", err)
	}
	out = append(out, TableC2(c2))
	c3, err := C3()
	if err != nil {
		return nil, fmt.Errorf("C.3: %w", err)
	}
	out = append(out, TableC3(c3))
	c4, err := C4()
	if err != nil {
		return nil, fmt.Errorf("C.4: %w", err)
	}
	out = append(out, TableC4(c4))
	c5, err := C5()
	if err != nil {
		return nil, fmt.Errorf("C.5: %w", err)
	}
	out = append(out, TableC5(c5))
	c6, err := C6()
	if err != nil {
		return nil, fmt.Errorf("C.6: %w", err)
	}
	out = append(out, TableC6(c6))
	c7, err := C7()
	if err != nil {
		return nil, fmt.Errorf("C.7: %w", err)
	}
	out = append(out, TableC7(c7))
	c8, err := C8()
	if err != nil {
		return nil, fmt.Errorf("C.8: %w", err)
	}
	return append(out, c8...), nil
}

// Render renders tables one after another.
func Render(ts []Table) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.String()
	}
	return strings.Join(parts, "\n")
}
