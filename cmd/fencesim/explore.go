package main

import (
	"flag"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/traces"
)

// exploreConfig is everything explore was asked for, checked.
type exploreConfig struct {
	systems   []systems.System
	designs   map[string]systems.Design
	texts     map[string]string // designs in words
	sel       selection
	plan      plan
	faults    systems.Faults
	workers   int
	audit     float64
	out       string
	artifacts int
	minBudget int
	json      bool
	summary   string
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

func runExplore(e *env, args []string) int {
	c := commandByName("explore")
	fs := newFlags(c.name)
	var cfg exploreConfig
	cfg.sel.register(fs, "all")
	var sf seedFlags
	sf.register(fs, 1000, true)
	faults := fs.String("faults", "moderate", "fault intensity: none, moderate or heavy")
	workers := workersFlag(fs)
	fs.Float64Var(&cfg.audit, "audit", 0.05, "share of the seeds run twice to audit determinism (trace hashes compared)")
	fs.StringVar(&cfg.out, "out", "fencesim-out", "`DIR` for failure artifacts (traces, minimized schedules, reports)")
	fs.IntVar(&cfg.artifacts, "artifacts", 3, "failing seeds per system to minimize and write artifacts for")
	fs.IntVar(&cfg.minBudget, "minimize-budget", 300, "runs a minimization may make")
	fs.BoolVar(&cfg.json, "json", false, "print the summary as JSON (no progress display)")
	fs.StringVar(&cfg.summary, "summary-out", "", "also write the JSON summary to `FILE` (for fencesim merge)")
	pos, code, done := parse(e, fs, c, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return e.fail(c.name, usagef("unexpected argument %q (explore takes flags only)", pos[0]))
	}
	err := func() error {
		var err error
		if cfg.systems, err = cfg.sel.systems(isSet(fs, "system")); err != nil {
			return err
		}
		if cfg.plan, err = sf.plan(fs); err != nil {
			return err
		}
		if cfg.faults, err = parseFaults(*faults); err != nil {
			return err
		}
		if err := checkWorkers(*workers); err != nil {
			return err
		}
		cfg.workers = *workers
		if cfg.audit < 0 || cfg.audit > 1 {
			return usagef("--audit %v: want a share between 0 and 1", cfg.audit)
		}
		if cfg.artifacts < 0 || cfg.minBudget < 1 {
			return usagef("--artifacts must be >= 0 and --minimize-budget >= 1")
		}
		cfg.designs, cfg.texts = map[string]systems.Design{}, map[string]string{}
		for _, sys := range cfg.systems {
			d, err := cfg.sel.designOf(sys)
			if err != nil {
				return err
			}
			cfg.designs[sys.Name()], cfg.texts[sys.Name()] = d, cfg.sel.describe(d)
		}
		if cfg.artifacts > 0 {
			if err := checkOutDir(cfg.out); err != nil {
				return err
			}
		}
		return checkOutFile("summary-out", cfg.summary)
	}()
	if err != nil {
		return e.fail(c.name, err)
	}
	s := explore(e, &cfg)
	return finish(e, c.name, s, cfg.json, cfg.summary)
}

// finish prints a summary (text or JSON), saves it, and returns the exit
// code.
func finish(e *env, cmd string, s *Summary, asJSON bool, path string) int {
	if asJSON {
		if err := s.writeJSON(e.stdout); err != nil {
			return e.fail(cmd, err)
		}
	} else {
		s.writeText(e.stdout)
	}
	if err := s.save(path); err != nil {
		fmt.Fprintf(e.stderr, "fencesim %s: --summary-out: %v\n", cmd, err)
		return exitUsage
	}
	return s.exitCode()
}

func explore(e *env, cfg *exploreConfig) *Summary {
	s := &Summary{Format: summaryFormat, Command: "explore", Faults: string(cfg.faults), Seeds: cfg.plan.text()}
	if cfg.plan.shard.N > 1 {
		s.Shard = cfg.plan.shard.String()
	}
	p := cfg.plan
	if p.budget > 0 {
		p.budget /= time.Duration(len(cfg.systems))
	}
	for _, sys := range cfg.systems {
		x := exploreSystem(e, cfg, sys, p)
		s.Systems = append(s.Systems, x)
	}
	return s
}

// exploreSystem runs one system's seeds on the pool, audits determinism,
// and writes the artifacts of its first failures.
func exploreSystem(e *env, cfg *exploreConfig, sys systems.System, p plan) SystemSummary {
	d := cfg.designs[sys.Name()]
	start := time.Now()
	var total int64 = -1
	if p.budget == 0 {
		n := len(p.seeds())
		total = int64(n)
		for _, s := range p.seeds() {
			if audited(s, cfg.audit) {
				total++
			}
		}
	}
	prog := newProgress(e.stderr, !cfg.json, total, sys.Name())
	in := make(chan task)
	go func() {
		defer close(in)
		var twice []uint64
		deadline := start.Add(p.budget)
		for seed := p.first; ; seed++ {
			if p.shard.has(seed) {
				if p.budget > 0 && time.Now().After(deadline) {
					break
				}
				a := audited(seed, cfg.audit)
				in <- task{sys: sys, d: d, seed: seed, opts: systems.Options{Hash: a}}
				if a {
					twice = append(twice, seed)
				}
			}
			if seed == p.last {
				break
			}
		}
		for _, seed := range twice {
			in <- task{sys: sys, d: d, seed: seed, opts: systems.Options{Hash: true}, second: true}
		}
	}()
	agg := newAggregate(sys, d, cfg.texts[sys.Name()])
	pending := map[uint64]*systems.Result{}
	for f := range runPool(cfg.workers, cfg.faults, in) {
		prog.add(1)
		if !f.second {
			agg.add(f.r, f.dur)
		}
		if !f.opts.Hash {
			continue
		}
		other, ok := pending[f.seed]
		if !ok {
			pending[f.seed] = f.r
			continue
		}
		delete(pending, f.seed)
		agg.s.Audit.Runs++
		if m, same := compareRuns(f.seed, other, f.r, f.second); !same {
			agg.s.Audit.Mismatches = append(agg.s.Audit.Mismatches, m)
		}
	}
	prog.done()
	x := agg.done(time.Since(start), cfg.workers)
	sort.Slice(x.Audit.Mismatches, func(i, j int) bool { return x.Audit.Mismatches[i].Seed < x.Audit.Mismatches[j].Seed })
	x.Artifacts = writeFailures(e, cfg, sys, d, x)
	return x
}

// compareRuns compares the two runs of an audited seed; b is the second
// when second is true.
func compareRuns(seed uint64, a, b *systems.Result, second bool) (Mismatch, bool) {
	if !second {
		a, b = b, a
	}
	if a.Hash == b.Hash {
		return Mismatch{}, true
	}
	d := traces.Compare(a.Events, b.Events)
	m := Mismatch{Seed: seed, Index: d.Index + 1, First: "(trace ended)", Second: "(trace ended)"}
	if d.Identical {
		m.Index, m.First, m.Second = 0, "header "+string(a.Header.Schedule), "header "+string(b.Header.Schedule)
		return m, false
	}
	if d.Want != nil {
		m.First = d.Want.String()
	}
	if d.Got != nil {
		m.Second = d.Got.String()
	}
	return m, false
}

// writeFailures minimizes the first failing seeds (up to cfg.artifacts,
// in parallel) and writes their artifacts.
func writeFailures(e *env, cfg *exploreConfig, sys systems.System, d systems.Design, x SystemSummary) []Artifact {
	n := min(cfg.artifacts, len(x.Failures))
	if n == 0 {
		return nil
	}
	prog := newProgress(e.stderr, !cfg.json, int64(n), sys.Name()+": minimizing")
	probes := probesOf(x)
	out := make([]Artifact, n)
	sem := make(chan struct{}, cfg.workers)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = artifact(cfg.out, sys, d, x.Failures[i].Seed, cfg.faults, cfg.minBudget, probes, cfg.sel)
			prog.add(1)
		}(i)
	}
	wg.Wait()
	prog.done()
	return out
}
