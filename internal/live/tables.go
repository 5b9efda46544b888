package live

import (
	"fmt"
	"io"

	twopcscenario "github.com/fencesim/fencesim/model/twopc/scenario"
)

// CompareTables prints the live C.1 and C.4 tables (rows: TwoPCTable's)
// beside the simulated ones and the cells where they differ; it returns
// how many cells differ. An error is the simulated tables'.
func CompareTables(w io.Writer, rows []twopcscenario.CrashRow) (int, error) {
	c1, err := twopcscenario.C1()
	if err != nil {
		return 0, err
	}
	c4, err := twopcscenario.C4()
	if err != nil {
		return 0, err
	}
	differ := 0
	for _, pair := range [][2]twopcscenario.Table{
		{twopcscenario.TableC1(rows), twopcscenario.TableC1(c1)},
		{twopcscenario.TableC4(rows), twopcscenario.TableC4(c4)},
	} {
		lv, sm := pair[0], pair[1]
		lv.Title += " -- LIVE"
		sm.Title += " -- simulated"
		fmt.Fprintf(w, "\n%s\n%s", lv.String(), sm.String())
		cells, bad := 0, 0
		for i := range sm.Rows {
			for j := range sm.Rows[i] {
				cells++
				if i >= len(lv.Rows) || j >= len(lv.Rows[i]) || lv.Rows[i][j] != sm.Rows[i][j] {
					bad++
					got := "(none)"
					if i < len(lv.Rows) && j < len(lv.Rows[i]) {
						got = lv.Rows[i][j]
					}
					fmt.Fprintf(w, "  %s pos %d, %s: live %q, simulated %q\n", sm.ID, i, sm.Header[j], got, sm.Rows[i][j])
				}
			}
		}
		if bad == 0 {
			fmt.Fprintf(w, "%s: live and simulated agree on every cell (%d)\n", sm.ID, cells)
		}
		differ += bad
	}
	if differ > 0 {
		fmt.Fprintf(w, "live and simulated tables differ in %d cells\n", differ)
	}
	return differ, nil
}
