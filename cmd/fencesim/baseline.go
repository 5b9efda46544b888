package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/fencesim/fencesim/internal/baseline"
)

// runBaseline prints the baseline matrix: every system's default design in
// every world and at every fault level (and system A with batch claims),
// --runs seeds a cell; exit 1 when any run of any cell fails.
func runBaseline(e *env, args []string) int {
	c := commandByName("baseline")
	fs := newFlags(c.name)
	runs := fs.Int("runs", 3000, "seeds per cell, from --first")
	first := fs.Uint64("first", 1, "the first seed")
	workers := fs.Int("workers", 2, "parallel runs (one run per goroutine)")
	asJSON := fs.Bool("json", false, "print the matrix as JSON")
	pos, code, done := parse(e, fs, c, args)
	if done {
		return code
	}
	switch {
	case len(pos) > 0:
		return e.fail(c.name, usagef("unexpected argument %q: the baseline takes flags only", pos[0]))
	case *runs < 1:
		return e.fail(c.name, usagef("--runs must be at least 1, got %d", *runs))
	case checkWorkers(*workers) != nil:
		return e.fail(c.name, checkWorkers(*workers))
	case *first < 1:
		return e.fail(c.name, usagef("--first must be at least 1 (seed 0 is not a seed)"))
	case *first >= 1<<63 || *first+uint64(*runs)-1 >= 1<<63:
		return e.fail(c.name, usagef("--first %d: the baseline runs plain seeds, below 2^63 (a steered seed names levers)", *first))
	}
	start := time.Now()
	var out []baseline.Result
	const row = "%-8s %-6s %-14s %-9s %6s %6s %9s %8s  %s\n"
	if !*asJSON {
		fmt.Fprintf(e.stdout, "baseline: the default designs, seeds %d-%d in every cell, %d workers\n\n", *first, *first+uint64(*runs)-1, *workers)
		fmt.Fprintf(e.stdout, row, "system", "world", "design", "faults", "runs", "failed", "undecided", "seconds", "failing, undecided (first seeds)")
	}
	failed, undecided, total := 0, 0, 0
	for _, cell := range baseline.Cells() {
		r, err := baseline.Run(e.ctx, cell, *first, *runs, *workers)
		if err != nil {
			return e.fail(c.name, err)
		}
		out = append(out, r)
		failed += r.Failed
		undecided += r.Undecided
		total += r.Runs
		if !*asJSON {
			world := cell.World
			if world == "" {
				world = "drawn"
			}
			seeds := r.FailedText()
			if u := r.UndecidedText(); u != "" {
				seeds = strings.TrimPrefix(seeds+"; "+u, "; ")
			}
			fmt.Fprintf(e.stdout, row, cell.System, world, cell.Name(), cell.Faults, fmt.Sprint(r.Runs), fmt.Sprint(r.Failed), fmt.Sprint(r.Undecided), fmt.Sprintf("%.1f", r.Elapsed.Seconds()), seeds)
		}
		if e.ctx.Err() != nil {
			break
		}
	}
	verdict := "PASS"
	if failed > 0 {
		verdict = "FAIL"
	}
	stop := interruption(e.ctx)
	if *asJSON {
		code := printJSON(e, c.name, struct {
			Cells       []baseline.Result `json:"cells"`
			Runs        int               `json:"runs"`
			Failed      int               `json:"failed"`
			Undecided   int               `json:"undecided"`
			Verdict     string            `json:"verdict"`
			Interrupted string            `json:"interrupted,omitempty"`
		}{out, total, failed, undecided, verdict, stop})
		if code != exitOK {
			return code
		}
	} else {
		if stop != "" {
			fmt.Fprintf(e.stdout, "\nINTERRUPTED (%s): the matrix covers the runs that finished\n", stop)
		}
		und := ""
		if undecided > 0 {
			// As explore says them: not failed, and not judged by the
			// check that gave up.
			und = fmt.Sprintf("; %d undecided: a check could not decide, fencesim run --seed S says why", undecided)
		}
		fmt.Fprintf(e.stdout, "\nresult: %s (%d of %d runs failed%s) in %s\n", verdict, failed, total, und, time.Since(start).Round(time.Second))
	}
	switch {
	case stop != "":
		return exitInterrupted
	case failed > 0:
		return exitFail
	}
	return exitOK
}
