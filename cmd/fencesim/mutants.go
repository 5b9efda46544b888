package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fencesim/fencesim/internal/summary"
	"github.com/fencesim/fencesim/internal/systems"
)

// knobList names the knobs of the systems (by system when there are
// several), for an error about a --knob.
func knobList(list []systems.System) string {
	var parts []string
	for _, sys := range list {
		var names []string
		for _, k := range sys.Knobs() {
			names = append(names, k.Name)
		}
		if len(list) == 1 {
			return sys.Name() + "'s knobs: " + strings.Join(names, ", ") + "; fencesim knobs describes them"
		}
		parts = append(parts, sys.Name()+": "+strings.Join(names, ", "))
	}
	return "the knobs of " + strings.Join(parts, "; ") + "; fencesim knobs describes them"
}

func runMutants(e *env, args []string) int {
	c := commandByName("mutants")
	fs := newFlags(c.name)
	var sel selection
	fs.StringVar(&sel.system, "system", "all", "the system: "+strings.Join(systems.Names(), ", ")+", or all")
	var only multi
	fs.Var(&only, "knob", "only this knob (repeatable; default every knob of the systems)")
	var sets multi
	fs.Var(&sets, "set", "set a design parameter under every knob, `name=value` (repeatable): the matrix of a changed design, e.g. --set claim_batch=2")
	budget := fs.Int("budget", 0, "seeds per knob: a harmful knob must fail one, a harmless one must pass them all (0: per system, "+budgetText()+")")
	first := fs.Uint64("first", 1, "the first seed of the budget")
	shardFlag := fs.String("shard", "", "run only shard `i/n` of the seeds (seed s belongs to shard s mod n)")
	faults := fs.String("faults", "moderate", "fault intensity: none, moderate or heavy")
	workers := workersFlag(fs)
	minBudget := fs.Int("minimize-budget", 300, "runs the minimization of a knob's first failure may make")
	asJSON := fs.Bool("json", false, "print the matrix as JSON (no progress display)")
	summaryOut := fs.String("summary-out", "", "also write the JSON summary to `FILE` (for fencesim merge)")
	search := fs.String("search", "", "compare searches instead of the matrix: directed prints, per knob, the runs to first failure of uniform seeds and of the directed search (the knob as its target), the median of --searches searches of --budget runs each")
	searches := fs.Int("searches", 5, "with --search directed: searches per knob and mode (search i starts at seed --first + (i-1)*100000)")
	pos, code, done := parse(e, fs, c, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return e.fail(c.name, usagef("unexpected argument %q (mutants takes flags only)", pos[0]))
	}
	type knobOf struct {
		sys systems.System
		k   systems.Knob
	}
	var knobs []knobOf
	var f systems.Faults
	var sh summary.Shard
	err := func() error {
		list, err := sel.systems(true)
		if err != nil {
			return err
		}
		if err := once("--knob", only, func(k string) string { return k }); err != nil {
			return err
		}
		if err := onceSets(sets); err != nil {
			return err
		}
		if *budget < 0 {
			return usagef("--budget %d: want at least 1 (or 0 for each system's default)", *budget)
		}
		for _, sys := range list {
			n := *budget
			if n == 0 {
				n = sys.Supports().Budget
			}
			if *first+uint64(n-1) < *first {
				return usagef("--budget %d from --first %d: the seeds end at %d, lower --first or --budget", n, *first, ^uint64(0))
			}
			if *first+uint64(n-1) >= 1<<63 {
				return usagef("--first %d: mutants runs plain seeds, below 2^63 (a steered seed names levers: explore --steer)", *first)
			}
		}
		if *minBudget < 1 {
			return usagef("--minimize-budget %d: want at least 1", *minBudget)
		}
		if f, err = parseFaults(*faults); err != nil {
			return err
		}
		if sh, err = parseShard(*shardFlag); err != nil {
			return err
		}
		if err := checkWorkers(*workers); err != nil {
			return err
		}
		want := map[string]bool{}
		for _, k := range only {
			owner, ok := systems.OwnerOf(k)
			if !ok {
				return usagef("unknown knob %q (%s)", k, knobList(list))
			}
			if !slices.ContainsFunc(list, func(s systems.System) bool { return s.Name() == owner.Name() }) {
				return usagef("--knob %s is a knob of %s, not of --system %s (%s)", k, owner.Name(), sel.system, knobList(list))
			}
			want[k] = true
		}
		for _, sys := range list {
			if _, err := sys.NewDesign(nil, sets, nil); err != nil {
				return usagef("--set for %s: %v", sys.Name(), err)
			}
			for _, k := range sys.Knobs() {
				if len(want) == 0 || want[k.Name] {
					knobs = append(knobs, knobOf{sys, k})
				}
			}
		}
		if len(knobs) == 0 {
			return usagef("no knob of %s matches --knob %s", sel.system, only.String())
		}
		switch *search {
		case "":
			if isSet(fs, "searches") {
				return usagef("--searches is how many directed searches --search directed makes: add --search directed, or drop --searches")
			}
		case "directed":
			if isSet(fs, "minimize-budget") {
				return usagef("--minimize-budget bounds the minimization of the matrix's failures: --search directed minimizes nothing, drop it")
			}
			if *searches < 1 {
				return usagef("--searches %d: want at least 1", *searches)
			}
			if *budget == 0 {
				return usagef("--search directed needs --budget N: the runs each search may make")
			}
			if sh.N > 1 || *summaryOut != "" {
				return usagef("--search directed does not go with --shard or --summary-out")
			}
		default:
			return usagef("--search %q: want directed (or leave it out for the matrix)", *search)
		}
		return checkOutFile("summary-out", *summaryOut)
	}()
	if err != nil {
		return e.fail(c.name, err)
	}
	if *search == "directed" {
		var list []knobChoice
		for _, ko := range knobs {
			list = append(list, knobChoice{ko.sys, ko.k})
		}
		return searchBench(e, list, sets, f, *workers, *budget, *searches, *first, *asJSON)
	}
	planOf := func(sys systems.System) plan {
		n := *budget
		if n == 0 {
			n = sys.Supports().Budget
		}
		return plan{first: *first, last: *first + uint64(n) - 1, shard: sh}
	}
	s := &summary.Summary{Format: summary.Format, Command: "mutants", Faults: string(f), Seeds: fmt.Sprintf("from %d", *first), Budget: *budget, MinimizeBudget: *minBudget}
	for _, ko := range knobs {
		if n := len(s.Designs); n > 0 && s.Designs[n-1].System == ko.sys.Name() {
			continue
		}
		d, err := ko.sys.NewDesign(nil, sets, nil)
		if err != nil {
			panic(err) // checked above
		}
		words := "default"
		if len(sets) > 0 {
			words = "set " + strings.Join(sets, ", ")
		}
		s.Designs = append(s.Designs, summary.Design{System: ko.sys.Name(), Design: words, DesignJSON: d.JSON})
	}
	if sh.N > 1 {
		s.Shard = sh.String()
	}
	total := 0
	for _, ko := range knobs {
		total += len(planOf(ko.sys).seeds())
	}
	// Text rows are printed as each knob finishes; JSON is one document
	// at the end.
	var tbl *mutantTable
	if !*asJSON {
		var planned []summary.Mutant
		for _, ko := range knobs {
			planned = append(planned, summary.Mutant{System: ko.sys.Name(), Knob: ko.k.Name, Harmful: ko.k.Harmful, Expected: ko.k.CaughtBy})
		}
		tbl = newMutantTable(e.stdout, planned)
		tbl.header(s)
	}
	prog := newProgress(e.stderr, !*asJSON, int64(total), "mutants")
	for _, ko := range knobs {
		if e.ctx.Err() != nil {
			s.NotRun = append(s.NotRun, ko.k.Name)
			continue
		}
		prog.describe(ko.k.Name)
		p := planOf(ko.sys)
		row, ok := huntKnob(e.ctx, ko.sys, ko.k, sets, p.seeds(), f, *workers, *minBudget, prog)
		if !ok {
			s.NotRun = append(s.NotRun, ko.k.Name)
			continue
		}
		row.First, row.Budget = p.first, int(p.last-p.first+1)
		s.Mutants = append(s.Mutants, row)
		if tbl != nil {
			prog.clear()
			tbl.row(row)
		}
	}
	prog.done()
	s.Interrupted = interruption(e.ctx)
	if *asJSON {
		return finish(e, c.name, s, true, *summaryOut)
	}
	tbl.footer(s)
	writeInterrupted(e.stdout, s)
	return saved(e, c.name, s, *summaryOut)
}

// huntKnob runs the seeds of the budget on a design with one knob on, in
// parallel, until the first failure (seeds after a failing one are not
// started; every seed before it runs, so the first failing seed is the
// same as one machine going in order would find). A harmful knob the
// exploration misses is played in the scenarios where the source shows
// its damage. ok is false when ctx ended before the row was complete
// (the runs in progress are given the grace, then abandoned).
func huntKnob(ctx context.Context, sys systems.System, k systems.Knob, sets []string, seeds []uint64, f systems.Faults, workers, minBudget int, prog *progress) (_ summary.Mutant, ok bool) {
	row := summary.Mutant{System: sys.Name(), Knob: k.Name, Harmful: k.Harmful, Expected: k.CaughtBy}
	d, err := sys.NewDesign([]string{k.Name}, sets, nil)
	if err != nil {
		panic(err) // the registry's own knob, and settings checked before
	}
	base, err := sys.NewDesign(nil, sets, nil)
	if err != nil {
		panic(err)
	}
	// ownFailures are the properties a failing seed fails with the knob that
	// the design without it does not fail on the same seed: the knob's damage.
	ownFailures := func(r *systems.Result) []string {
		without := play(task{sys: sys, d: base, seed: r.Seed}, f)
		var out []string
		for _, p := range r.FailedIDs() {
			if !without.Fails(p) {
				out = append(out, p)
			}
		}
		return out
	}
	var stop atomic.Uint64
	in := make(chan task)
	go func() {
		defer close(in)
		for _, seed := range seeds {
			if st := stop.Load(); st != 0 && seed > st {
				return
			}
			select {
			case in <- task{sys: sys, d: d, seed: seed}:
			case <-ctx.Done():
				return
			}
		}
	}()
	var best *systems.Result
	// The runs made, by seed: the ones past the catch (started before it
	// was found) are not counted.
	type made struct {
		seed uint64
		dur  time.Duration
	}
	var runs []made
	collect(ctx, runPool(workers, f, in), func(x finished) {
		runs = append(runs, made{x.seed, x.dur})
		prog.add(1)
		if len(x.r.Failed()) > 0 && (best == nil || x.seed < best.Seed) {
			if len(ownFailures(x.r)) == 0 {
				row.BaseFails = append(row.BaseFails, x.seed)
				return
			}
			best = x.r
			stop.Store(x.seed)
		}
	})
	if ctx.Err() != nil {
		return row, false
	}
	prog.add(len(seeds) - len(runs))
	// Runs counts the seeds up to the catch, every one of which ran: the
	// runs one machine going through the seeds in order makes, however
	// many workers ran past it (and a merge of shards counts the same).
	for _, r := range runs {
		if best == nil || r.seed <= best.Seed {
			row.Runs++
			row.RunNS += int64(r.dur)
		}
	}
	// Seeds past the catch that failed only as the design does are not
	// reported: the search stopped there.
	kept := row.BaseFails[:0]
	for _, s := range row.BaseFails {
		if best == nil || s < best.Seed {
			kept = append(kept, s)
		}
	}
	row.BaseFails = kept
	sort.Slice(row.BaseFails, func(i, j int) bool { return row.BaseFails[i] < row.BaseFails[j] })
	if best != nil {
		row.Seed, row.Failed = best.Seed, ownFailures(best)
		var m *systems.Minimized
		var err error
		if !within(ctx, func() { m, err = systems.MinimizeContext(ctx, sys, d, best.Seed, f, best, minBudget) }) || ctx.Err() != nil {
			return row, false
		}
		if err == nil {
			for i, a := range m.Schedule {
				if systems.Removable(a) {
					row.Kept++
					if m.Needed[i] {
						row.Needed++
					}
				}
			}
			for _, a := range m.Original {
				if systems.Removable(a) {
					row.Faults++
				}
			}
		}
		return row, true
	}
	if k.Harmful {
		var caught, supported bool
		var by string
		var err error
		if !within(ctx, func() { caught, by, supported, err = sys.KnobScenario(k.Name) }) || ctx.Err() != nil {
			return row, false
		}
		if supported && err == nil && caught {
			row.Scenario = by
		}
	}
	return row, true
}

func budgetText() string {
	var parts []string
	for _, sys := range systems.All() {
		parts = append(parts, fmt.Sprintf("%s %d", sys.Name(), sys.Supports().Budget))
	}
	return strings.Join(parts, ", ")
}

// writeMutants renders the whole knob matrix (merge, and a summary read
// back): the same lines mutants printed row by row.
func writeMutants(w io.Writer, s *summary.Summary) {
	t := newMutantTable(w, s.Mutants)
	t.header(s)
	for _, m := range s.Mutants {
		t.row(m)
	}
	t.footer(s)
}

// mutantTable writes the knob matrix a row at a time. The widths of the
// system, knob and expected columns come from the knobs to run; the other
// columns have fixed widths, and "by", the widest, comes last: rows can be
// printed as each knob finishes.
type mutantTable struct {
	w      io.Writer
	widths []int
}

var mutantColumns = []string{"system", "knob", "expected", "caught", "runs to detect", "seconds to detect", "minimized schedule", "verdict", "by"}

func newMutantTable(w io.Writer, rows []summary.Mutant) *mutantTable {
	t := &mutantTable{w: w, widths: make([]int, len(mutantColumns))}
	for i, c := range mutantColumns {
		t.widths[i] = len(c)
	}
	for _, m := range rows {
		t.widths[0] = max(t.widths[0], len(m.System))
		t.widths[1] = max(t.widths[1], len(m.Knob))
		t.widths[2] = max(t.widths[2], len(expectedText(m)))
	}
	t.widths[3] = len("scenario")
	t.widths[6] = len("12 -> 12 faults, 12 needed")
	t.widths[7] = len("FALSE ALARM")
	return t
}

func expectedText(m summary.Mutant) string {
	if m.Harmful {
		return "harmful (" + strings.Join(m.Expected, ",") + ")"
	}
	return "harmless"
}

func (t *mutantTable) line(cells ...string) {
	var b strings.Builder
	for i, c := range cells {
		if i == len(cells)-1 {
			b.WriteString(c)
			break
		}
		fmt.Fprintf(&b, "%-*s  ", t.widths[i], c)
	}
	fmt.Fprintln(t.w, strings.TrimRight(b.String(), " "))
}

func (t *mutantTable) header(s *summary.Summary) {
	fmt.Fprintf(t.w, "== design knobs: faults %s, seeds %s ==\n", s.Faults, seedsText(s))
	t.line(mutantColumns...)
}

func (t *mutantTable) row(m summary.Mutant) {
	caught, by, runs, secs, sched := "no", "-", "-", "-", "-"
	perRun := time.Duration(0)
	if m.Runs > 0 {
		perRun = time.Duration(m.RunNS / int64(m.Runs))
	}
	switch {
	case m.Seed != 0:
		caught, by = "yes", strings.Join(m.Failed, ",")+fmt.Sprintf(" (seed %d)", m.Seed)
		runs = fmt.Sprint(m.RunsToDetect())
		secs = fmt.Sprintf("%.2f", (time.Duration(m.RunsToDetect()) * perRun).Seconds())
		sched = fmt.Sprintf("%d -> %d faults, %d needed", m.Faults, m.Kept, m.Needed)
	case m.Scenario != "":
		caught, by = "scenario", clip(m.Scenario, 70)
	default:
		runs = fmt.Sprintf("none in %d", m.Budget)
	}
	verdict := "ok"
	if !m.AsExpected() {
		verdict = "MISSED"
		if !m.Harmful {
			verdict = "FALSE ALARM"
		}
	}
	t.line(m.System, m.Knob, expectedText(m), caught, runs, secs, sched, verdict, by)
}

func (t *mutantTable) footer(s *summary.Summary) {
	missed := 0
	for _, m := range s.Mutants {
		if !m.AsExpected() {
			missed++
		}
	}
	fmt.Fprintf(t.w, "\n%d knobs, %d as expected", len(s.Mutants), len(s.Mutants)-missed)
	if missed > 0 {
		fmt.Fprintf(t.w, ", %d NOT (a harmful knob no run and no scenario caught, or a harmless knob a property failed on)", missed)
	}
	fmt.Fprintln(t.w)
	for _, sys := range systemsOf(s.Mutants) {
		var seeds []uint64
		seen := map[uint64]bool{}
		for _, m := range s.Mutants {
			for _, x := range m.BaseFails {
				if m.System == sys && !seen[x] {
					seen[x] = true
					seeds = append(seeds, x)
				}
			}
		}
		if len(seeds) > 0 {
			sort.Slice(seeds, func(i, j int) bool { return seeds[i] < seeds[j] })
			word := "seeds"
			if len(seeds) == 1 {
				word = "seed"
			}
			fmt.Fprintf(t.w, "%s: THE DESIGN ITSELF FAILS %s%s without any knob (fencesim run --seed N shows why): not counted for its knobs\n", sys, word, seedList(" ", seeds, 10))
		}
	}
	fmt.Fprintln(t.w, "seconds to detect: runs to detect times the knob's mean run time on one core; \"scenario\": only the named scenario of the source caught it")
}

// systemsOf lists the systems of the rows, in their order.
func systemsOf(rows []summary.Mutant) []string {
	var out []string
	for _, m := range rows {
		if len(out) == 0 || out[len(out)-1] != m.System {
			out = append(out, m.System)
		}
	}
	return out
}
