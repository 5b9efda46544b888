package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/fencesim/fencesim/internal/changecov"
	"github.com/fencesim/fencesim/internal/revision"
	"github.com/fencesim/fencesim/internal/summary"
	"github.com/fencesim/fencesim/internal/systems"
)

// searchRow is one knob's runs to first failure under uniform seeds and
// under the directed search, one figure per search seed.
type searchRow struct {
	System   string `json:"system"`
	Knob     string `json:"knob"`
	Harmful  bool   `json:"harmful"`
	Target   string `json:"target"`
	Budget   int    `json:"budget"`
	Uniform  []int  `json:"uniform"`  // runs to the first failure; 0: none within the budget
	Directed []int  `json:"directed"` // the same, directed
	// Seeds are the first failing seed of each search (0: none), uniform
	// then directed: each replays with explore --seeds S --knob KNOB.
	Seeds [2][]uint64 `json:"first_failing_seeds"`
}

// median of runs to first failure; a search that found none counts as
// the budget plus one (a lower bound of its runs to first failure).
func (r searchRow) median(xs []int) float64 {
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = float64(x)
		if x == 0 {
			v[i] = float64(r.Budget + 1)
		}
	}
	slices.Sort(v)
	n := len(v)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// firstFailure runs uniform seeds from first, in order, until a run
// fails or budget runs are done, and returns the runs it took (0: none
// failed) and the failing seed. Rounds run on workers goroutines; the
// count is the failing seed's place in the order, as one core going in
// order would count it.
func firstFailure(ctx context.Context, sys systems.System, d systems.Design, f systems.Faults, workers int, first uint64, budget int) (int, uint64, error) {
	next := first
	done := 0
	round := max(8, 2*workers)
	for done < budget {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		var seeds []uint64
		for range min(round, budget-done) {
			seeds = append(seeds, next)
			next++
		}
		in := make(chan task, len(seeds))
		for _, s := range seeds {
			in <- task{sys: sys, d: d, seed: s}
		}
		close(in)
		got := map[uint64]*systems.Result{}
		collect(ctx, runPool(workers, f, in), func(x finished) { got[x.seed] = x.r })
		for _, s := range seeds {
			r, ok := got[s]
			if !ok {
				return 0, 0, ctx.Err()
			}
			done++
			if len(r.Failed()) > 0 {
				return done, s, nil
			}
		}
	}
	return 0, 0, nil
}

// searchBench is mutants --search directed: for each knob, runs to first
// failure under uniform seeds and under the directed search (the knob as
// its target), searches searches each, the same budget, and the medians.
// Search i starts its seeds at first + (i-1)*100000 in both modes, so the
// uniform searches are disjoint stretches of seeds.
func searchBench(e *env, knobs []knobChoice, sets []string, f systems.Faults, workers, budget, searches int, first uint64, asJSON bool) int {
	// The directed searches target each knob's code: one build counts
	// every knob's sites, and each search runs in a process of its own
	// (the counters are the process's), workers of them at once.
	targets := map[string]*target{}
	var ranges []codeRange
	for _, ko := range knobs {
		t, err := parseTarget("knob:"+ko.k.Name, ko.sys, nil)
		if err != nil {
			return e.fail("mutants", err)
		}
		targets[ko.k.Name] = t
		ranges = append(ranges, t.code...)
	}
	root, err := revision.Root()
	if err != nil {
		return e.fail("mutants", usagef("--search directed counts each knob's code in a build of fencesim's source: %v", err))
	}
	tmp, err := os.MkdirTemp("", "fencesim-search-")
	if err != nil {
		return e.fail("mutants", err)
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "fencesim-counting")
	var ts []changecov.Target
	for i, c := range ranges {
		ts = append(ts, changecov.Target{ID: i, File: c.File, From: c.From, To: c.To})
	}
	if !asJSON {
		fmt.Fprintf(e.stderr, "fencesim mutants: building fencesim with the code of %s counted\n", plural(len(knobs), "knob"))
	}
	if err := revision.BuildCovered(e.ctx, root, bin, ts); err != nil {
		return e.fail("mutants", err)
	}
	var rows []searchRow
	prog := newProgress(e.stderr, !asJSON, int64(len(knobs)*searches*2), "search")
	for _, ko := range knobs {
		d, err := ko.sys.NewDesign([]string{ko.k.Name}, sets, nil)
		if err != nil {
			return e.fail("mutants", err)
		}
		row := searchRow{System: ko.sys.Name(), Knob: ko.k.Name, Harmful: ko.k.Harmful, Target: targets[ko.k.Name].spec, Budget: budget}
		row.Directed = make([]int, searches)
		row.Seeds[1] = make([]uint64, searches)
		prog.describe(ko.k.Name + " directed")
		var wg sync.WaitGroup
		var mu sync.Mutex
		var failed error
		sem := make(chan struct{}, max(workers, 1))
		for i := 1; i <= searches; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				n, seed, err := directedChild(e.ctx, bin, root, ko.sys.Name(), ko.k.Name, sets, f, uint64(i), first+uint64(i-1)*100000, budget)
				mu.Lock()
				defer mu.Unlock()
				if err != nil && failed == nil {
					failed = err
				}
				row.Directed[i-1], row.Seeds[1][i-1] = n, seed
				prog.add(1)
			}()
		}
		wg.Wait()
		if failed != nil {
			prog.done()
			if e.ctx.Err() != nil {
				fmt.Fprintf(e.stderr, "fencesim mutants: interrupted (%s)\n", interruption(e.ctx))
				return exitInterrupted
			}
			return e.fail("mutants", failed)
		}
		prog.describe(ko.k.Name + " uniform")
		for i := 1; i <= searches; i++ {
			n, seed, err := firstFailure(e.ctx, ko.sys, d, f, workers, first+uint64(i-1)*100000, budget)
			if err != nil {
				prog.done()
				fmt.Fprintf(e.stderr, "fencesim mutants: interrupted (%s)\n", interruption(e.ctx))
				return exitInterrupted
			}
			row.Uniform = append(row.Uniform, n)
			row.Seeds[0] = append(row.Seeds[0], seed)
			prog.add(1)
		}
		rows = append(rows, row)
	}
	prog.done()
	if asJSON {
		b, _ := json.MarshalIndent(map[string]any{"format": "fencesim-search/1", "faults": string(f), "budget": budget, "searches": searches, "rows": rows}, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
	} else {
		writeSearchBench(e.stdout, rows, f, budget, searches)
	}
	for _, r := range rows {
		if !r.Harmful && (slices.ContainsFunc(r.Uniform, nonZero) || slices.ContainsFunc(r.Directed, nonZero)) {
			return exitFail // a harmless knob failed: a false alarm
		}
	}
	return exitOK
}

// directedChild runs one directed search of a knob's design, its code the
// target, in the counting build, until its first failure or budget runs.
func directedChild(ctx context.Context, bin, root, sys, knob string, sets []string, f systems.Faults, searchSeed, first uint64, budget int) (int, uint64, error) {
	args := []string{"explore", "--system", sys, "--knob", knob, "--search", "directed", "--target", "knob:" + knob,
		"--search-seed", strconv.FormatUint(searchSeed, 10), "--first", strconv.FormatUint(first, 10), "--runs", strconv.Itoa(budget),
		"--failfast", "--artifacts", "0", "--workers", "1", "--faults", string(f), "--json"}
	for _, x := range sets {
		args = append(args, "--set", x)
	}
	out, err := runChildOut(ctx, bin, root, args)
	if err != nil && out == "" {
		return 0, 0, err
	}
	var s summary.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil || len(s.Systems) != 1 || s.Systems[0].Directed == nil {
		return 0, 0, fmt.Errorf("a directed search of %s printed no summary: %v", knob, err)
	}
	d := s.Systems[0].Directed
	if d.FirstFailure == 0 {
		return 0, 0, nil
	}
	return d.FirstFailure, d.Order[d.FirstFailure-1], nil
}

func nonZero(x int) bool { return x != 0 }

// knobChoice is one knob of one system.
type knobChoice struct {
	sys systems.System
	k   systems.Knob
}

func writeSearchBench(w io.Writer, rows []searchRow, f systems.Faults, budget, searches int) {
	fmt.Fprintf(w, "== runs to first failure, uniform vs directed: faults %s, median of %d searches, budget %d runs each ==\n", f, searches, budget)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "system\tknob\tuniform (median)\tdirected (median)\tuniform / directed\teach search, uniform | directed\n")
	logSum, n := 0.0, 0
	for _, r := range rows {
		if !r.Harmful {
			verdict := "passed every run"
			if slices.ContainsFunc(r.Uniform, nonZero) || slices.ContainsFunc(r.Directed, nonZero) {
				verdict = "FALSE ALARM"
			}
			fmt.Fprintf(tw, "%s\t%s (harmless)\t-\t-\t-\t%s (%d runs each)\n", r.System, r.Knob, verdict, r.Budget)
			continue
		}
		u, d := r.median(r.Uniform), r.median(r.Directed)
		logSum += math.Log(u / d)
		n++
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2fx\t%s | %s\n", r.System, r.Knob, medianText(u, budget), medianText(d, budget), u/d, searchRunsText(r.Uniform, budget), searchRunsText(r.Directed, budget))
	}
	tw.Flush()
	if n > 0 {
		fmt.Fprintf(w, "\ngeometric mean of uniform / directed over %d harmful knobs: %.2fx (a search that found nothing counts as budget+1 runs)\n", n, math.Exp(logSum/float64(n)))
	}
}

func medianText(m float64, budget int) string {
	if m > float64(budget) {
		return fmt.Sprintf(">%d", budget)
	}
	return fmt.Sprintf("%g", m)
}

func searchRunsText(xs []int, budget int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
		if x == 0 {
			s[i] = fmt.Sprintf(">%d", budget)
		}
	}
	return strings.Join(s, " ")
}
