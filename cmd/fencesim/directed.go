package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fencesim/fencesim/internal/changecov"
	"github.com/fencesim/fencesim/internal/directed"
	"github.com/fencesim/fencesim/internal/revision"
	"github.com/fencesim/fencesim/internal/summary"
	"github.com/fencesim/fencesim/internal/systems"
)

// target is what a directed search steers toward. Every search rewards a
// failing run most; a target adds what a run can show short of failing:
// the knob's caught-by metrics (a knob), a probe hit, or the execution of
// code (a knob's code or a line range, counted by a coverage build).
type target struct {
	spec    string
	kind    string // "failures", "knob", "probe", "code"
	probe   string
	metrics []string // metric names whose high values are rewarded
	code    []codeRange
	// ids are the code's targets in this binary's coverage build
	// (changecov.Targets), once resolved: nil in a plain build.
	ids []int
	// the rewards' memories: one per metric, one for the code
	mc []directed.Counts
	// runs and ran: the runs so far and those that executed the code
	runs, ran float64
}

// codeRange is lines of one file, repository-relative.
type codeRange struct {
	File     string
	From, To int
}

func (r codeRange) String() string { return fmt.Sprintf("%s:%d-%d", r.File, r.From, r.To) }

// parseTarget reads --target for a system: knob:NAME (or a knob's name),
// probe:NAME, FILE:FROM-TO, or "" (failures and the system's promise
// metrics). knobs are the design's knobs: a directed search of a knob's
// design defaults to the knob as its target.
func parseTarget(spec string, sys systems.System, knobs []string) (*target, error) {
	names, _ := metricsOf(sys)
	t := &target{spec: spec}
	switch {
	case spec == "" && len(knobs) == 1:
		// The knob's metrics, without its code: no coverage build.
		t.spec, t.kind = "failures and "+knobs[0]+"'s caught-by metrics", "failures"
		k, _ := knobOf(sys, knobs[0])
		t.metrics = caughtByMetrics(k, names)
	case spec == "":
		t.spec, t.kind = "failures", "failures"
		t.metrics = promiseMetrics(sys, names)
	case strings.HasPrefix(spec, "probe:"):
		t.kind, t.probe = "probe", strings.TrimPrefix(spec, "probe:")
		if !slices.Contains(sys.Probes(), t.probe) {
			return nil, usagef("--target %s: %s has no probe %q (probes: %s)", spec, sys.Name(), t.probe, orNone(sys.Probes()))
		}
	case isRange(spec):
		r, err := parseRange(spec)
		if err != nil {
			return nil, err
		}
		t.kind, t.code = "code", []codeRange{r}
	default:
		name := strings.TrimPrefix(spec, "knob:")
		k, ok := knobOf(sys, name)
		if !ok {
			return nil, usagef("--target %s: want knob:NAME (a knob of %s), probe:NAME or FILE:FROM-TO (e.g. model/judge/sql.go:219-233)", spec, sys.Name())
		}
		t.spec, t.kind = "knob:"+name, "knob"
		t.metrics = caughtByMetrics(k, names)
		root, err := revision.Root()
		if err != nil {
			return nil, usagef("--target %s: a knob's code is found in fencesim's source: %v", spec, err)
		}
		sites, err := directed.KnobSites(root, name)
		if err != nil {
			return nil, err
		}
		for _, x := range sites {
			t.code = append(t.code, codeRange{File: x.File, From: x.From, To: x.To})
		}
	}
	t.mc = make([]directed.Counts, len(t.metrics))
	return t, nil
}

// knobOf finds a system's knob by name.
func knobOf(sys systems.System, name string) (systems.Knob, bool) {
	for _, x := range sys.Knobs() {
		if x.Name == name {
			return x, true
		}
	}
	return systems.Knob{}, false
}

// caughtByMetrics are the metrics of the properties a knob is caught by
// (none when they are all invariants: another metric's high values would
// steer the search toward worlds that say nothing of the knob; twopc's
// commit-before-log took twice uniform's runs steered by blocked_max).
func caughtByMetrics(k systems.Knob, names []string) []string {
	var out []string
	for _, id := range k.CaughtBy {
		if m, err := matchMetric(id, names); err == nil {
			out = append(out, m)
		}
	}
	return out
}

// resolve finds the target's code among this binary's counted targets
// (a coverage build's): it sets ids, or says which range is not counted.
func (t *target) resolve() error {
	have := changecov.Targets()
	t.ids = nil
	for _, c := range t.code {
		found := false
		for _, h := range have {
			if h.File == c.File && h.From == c.From && h.To == c.To {
				t.ids = append(t.ids, h.ID)
				found = true
			}
		}
		if !found {
			return usagef("--target %s: this coverage build does not count %s", t.spec, c)
		}
	}
	return nil
}

// coverOf is a run's executions of the target's code.
func (t *target) coverOf(cover []uint64) uint64 {
	var x uint64
	for _, id := range t.ids {
		if id < len(cover) {
			x += cover[id]
		}
	}
	return x
}

// promiseMetrics are the metrics diff watches for a system (its promise
// metrics), by name.
func promiseMetrics(sys systems.System, names []string) []string {
	var out []string
	for _, p := range sys.Supports().Promises {
		if m, err := matchMetric(p, names); err == nil {
			out = append(out, m)
		}
	}
	return out
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

// isRange reports whether a target names lines: FILE:FROM-TO.
func isRange(s string) bool {
	i := strings.LastIndex(s, ":")
	return i > 0 && strings.HasSuffix(s[:i], ".go")
}

// parseRange reads FILE:FROM-TO (or FILE:LINE).
func parseRange(s string) (codeRange, error) {
	i := strings.LastIndex(s, ":")
	file, lines := s[:i], s[i+1:]
	a, b, isSpan := strings.Cut(lines, "-")
	from, err1 := strconv.Atoi(a)
	to, err2 := from, error(nil)
	if isSpan {
		to, err2 = strconv.Atoi(b)
	}
	if err1 != nil || err2 != nil || from < 1 || to < from {
		return codeRange{}, usagef("--target %s: want FILE:FROM-TO with 1 <= FROM <= TO, e.g. model/judge/sql.go:219-233", s)
	}
	return codeRange{File: strings.TrimPrefix(file, "./"), From: from, To: to}, nil
}

// reward scores a judged run for the search, in [0, 1]: 1 for a failure;
// else the best of the target's signals, each at most 0.8: a metric's
// value high among earlier runs' (sharp at the top), a probe hit, the
// target's code executed when most runs do not execute it.
func (t *target) reward(r *systems.Result, cover uint64, counted bool) float64 {
	if len(r.Failed()) > 0 {
		return 1
	}
	best := 0.0
	if t.kind == "probe" && r.Probes[t.probe] {
		best = 0.8
	}
	for i, m := range t.metrics {
		if v, ok := runValue(r, m); ok && v > 0 {
			best = max(best, 0.8*t.mc[i].Reward(uint64(v*1000)))
		}
	}
	if counted {
		// Code that runs in most runs says nothing of where the damage is
		// (how often it runs tracks the world's size): only a run that
		// executes code most runs do not is rewarded, the more the rarer.
		share := (t.ran + 1) / (t.runs + 2)
		if cover > 0 && share < 0.5 {
			best = max(best, 0.8*(1-share))
		}
		t.runs++
		if cover > 0 {
			t.ran++
		}
	}
	return best
}

// exploreDirected is explore --search directed for one system: rounds of
// runs, each round's seeds picked by the search from what the runs before
// it showed. The seeds are plain seeds: each replays alone.
func exploreDirected(e *env, ctx context.Context, cfg *exploreConfig, sys systems.System) summary.System {
	d := cfg.designs[sys.Name()]
	t := cfg.targets[sys.Name()]
	p := cfg.plan
	start := time.Now()
	budget := int(p.last - p.first + 1)
	search := directed.New(directed.Config{Seed: cfg.searchSeed, First: p.first, Levers: leverNames(sys)}, func(seed uint64) ([]string, error) {
		w, err := sys.Draw(d, seed, cfg.faults, systems.Options{})
		if err != nil {
			return nil, err
		}
		return directed.Features(w), nil
	})
	prog := newProgress(e.stderr, !cfg.json, int64(budget), sys.Name()+": directed")
	agg := newAggregate(sys, d, cfg.texts[sys.Name()])
	dir := &summary.Directed{Target: t.spec, SearchSeed: cfg.searchSeed}
	// Rounds of 8 whatever --workers: its default is the machine's CPUs,
	// and the seeds a search picks must not depend on the machine.
	round := 8
	cfg.records.beginPicked()
	for len(dir.Order) < budget && ctx.Err() == nil && !(cfg.failfast && dir.FirstFailure > 0) {
		seeds, err := search.Next(min(round, budget-len(dir.Order)))
		if err != nil {
			fmt.Fprintf(e.stderr, "fencesim explore: %s: %v\n", sys.Name(), err)
			break
		}
		in := make(chan task, len(seeds))
		for _, s := range seeds {
			in <- task{sys: sys, d: d, seed: s, opts: systems.Options{Digest: cfg.records.digest()}, cover: t.ids != nil}
		}
		close(in)
		got := map[uint64]finished{}
		collect(ctx, runPool(cfg.workers, cfg.faults, in), func(f finished) { got[f.seed] = f })
		for _, s := range seeds {
			f, ok := got[s]
			if !ok {
				continue // interrupted
			}
			prog.add(1)
			agg.add(f.r, f.dur)
			if cfg.records != nil {
				rec := recordOf(f.r, "", cfg.records.version)
				rec.Cover, rec.CoverParts = f.cover, f.coverParts
				cfg.records.add(rec)
			}
			dir.Order = append(dir.Order, s)
			if len(f.r.Failed()) > 0 && dir.FirstFailure == 0 {
				dir.FirstFailure = len(dir.Order)
			}
			search.Observe(s, t.reward(f.r, t.coverOf(f.cover), t.ids != nil))
		}
	}
	prog.done()
	for _, f := range search.Favoured(5) {
		dir.Favoured = append(dir.Favoured, summary.Favoured{Feature: f.Name, Runs: f.Runs, Rate: f.Rate, Mean: f.Mean})
	}
	x := agg.done(time.Since(start), cfg.workers)
	x.Directed = dir
	x.Artifacts = writeFailures(e, ctx, cfg, sys, d, x)
	return x
}

// checkSearch checks --search, --target and what a directed search
// cannot do, and parses each system's target.
func (cfg *exploreConfig) checkSearch(fs *flag.FlagSet, spec string) error {
	switch cfg.search {
	case "uniform":
		for _, f := range []string{"target", "search-seed"} {
			if isSet(fs, f) {
				return usagef("--%s steers a directed search: add --search directed", f)
			}
		}
		return nil
	case "directed":
	default:
		return usagef("--search %q: want uniform or directed", cfg.search)
	}
	if cfg.plan.list != nil {
		return usagef("--seeds with a list does not go with --search directed: give --runs or a range")
	}
	for _, f := range []string{"time", "shard", "audit", "keep-worst"} {
		if isSet(fs, f) {
			return usagef("--%s does not go with --search directed (its seeds are picked as it runs): give --runs or --seeds", f)
		}
	}
	cfg.audit = 0
	cfg.targets = map[string]*target{}
	for _, sys := range cfg.systems {
		var own []string
		for _, k := range cfg.sel.knobs {
			if o, ok := systems.OwnerOf(k); ok && o.Name() == sys.Name() {
				own = append(own, k)
			}
		}
		t, err := parseTarget(spec, sys, own)
		if err != nil {
			if len(cfg.systems) > 1 && spec != "" {
				return usagef("--target %s names one system's code: pick it with --system", spec)
			}
			return err
		}
		if len(t.code) > 0 {
			if changecov.Enabled() {
				if err := t.resolve(); err != nil {
					return err
				}
			} else {
				cfg.counting = append(cfg.counting, t.code...)
			}
		}
		cfg.targets[sys.Name()] = t
	}
	return nil
}

// countedExplore is explore --search directed with a code target in a
// plain binary: it builds fencesim from the source tree with the target's
// lines counted (revision.BuildCovered, cached by tree and targets as
// diff's builds are) and runs the same command in it, one run at a time
// (the counters are the process's: --workers 1).
func countedExplore(e *env, args []string, code []codeRange) int {
	root, err := revision.Root()
	if err != nil {
		return e.fail("explore", usagef("--target: a code target is counted by a build of fencesim's source: %v", err))
	}
	var ts []changecov.Target
	for i, c := range code {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(c.File))); err != nil {
			return e.fail("explore", usagef("--target %s: no such file in %s", c, root))
		}
		ts = append(ts, changecov.Target{ID: i, File: c.File, From: c.From, To: c.To})
	}
	tmp, err := os.MkdirTemp("", "fencesim-target-")
	if err != nil {
		return e.fail("explore", err)
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "fencesim-counting")
	fmt.Fprintf(e.stderr, "fencesim explore: building fencesim with %s counted (a code target)\n", plural(len(ts), "range"))
	if err := revision.BuildCovered(e.ctx, root, bin, ts); err != nil {
		return e.fail("explore", err)
	}
	cmd := exec.CommandContext(e.ctx, bin, append(append([]string{"explore"}, args...), "--workers", "1")...)
	cmd.Stdout, cmd.Stderr = e.stdout, e.stderr
	if err := cmd.Run(); err != nil {
		var x *exec.ExitError
		if errors.As(err, &x) && x.ExitCode() >= 0 {
			return x.ExitCode()
		}
		return e.fail("explore", err)
	}
	return exitOK
}

// leverNames are the names of a system's levers, in its seed format's
// order: the features a directed search can steer a seed to.
func leverNames(sys systems.System) []string {
	var out []string
	for _, l := range sys.Supports().Levers {
		out = append(out, l.Name)
	}
	return out
}
