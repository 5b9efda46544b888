package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fencesim/fencesim/internal/changecov"
	"github.com/fencesim/fencesim/internal/summary"
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
	cpuprof   string
	memprof   string
	failfast  bool
	perSeed   string
	hashV     string // --per-seed-hash
	records   *perSeedWriter
	keepWorst multi
	worst     map[string][]*worst // per system
	// --search directed: the seeds are picked by a search (directed.go)
	search     string
	searchSeed uint64
	targets    map[string]*target // per system
	// counting is the code a directed search's target needs counted,
	// when this binary does not count it: explore reruns itself in a
	// build that does (countedExplore).
	counting []codeRange
}

// exhaustiveUses are the flags explore --exhaustive reads: any other
// (seeds, faults, outputs, ...) would be ignored, so it is refused.
var exhaustiveUses = []string{"exhaustive", "system", "knob", "set", "design", "unsafe", "pairs", "workers"}

// exhaustiveFlags refuses the flags given that --exhaustive ignores.
func exhaustiveFlags(fs *flag.FlagSet) error {
	unused, them := flagsUnused(fs, exhaustiveUses)
	if len(unused) == 0 {
		return nil
	}
	return usagef("--exhaustive does not use %s: drop %s (it plays every single fault and fault pair of one small world, not seeds; it takes --%s)",
		strings.Join(unused, ", "), them, strings.Join(exhaustiveUses[1:], ", --"))
}

// flagsUnused returns the flags given (as --name) that a mode does not
// read (uses: the flags it reads), and "it" or "them" for a message.
func flagsUnused(fs *flag.FlagSet, uses []string) (unused []string, them string) {
	fs.Visit(func(f *flag.Flag) {
		if !slices.Contains(uses, f.Name) {
			unused = append(unused, "--"+f.Name)
		}
	})
	them = "it"
	if len(unused) > 1 {
		them = "them"
	}
	return unused, them
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
	fs.Float64Var(&cfg.audit, "audit", 0.05, "share of the seeds run twice to audit determinism (trace hashes compared; the second run about 256 runs after the first)")
	fs.StringVar(&cfg.out, "out", "fencesim-out", "`DIR` for failure artifacts (traces, minimized schedules, reports)")
	fs.IntVar(&cfg.artifacts, "artifacts", 3, "failing seeds per system to minimize and write artifacts for")
	fs.IntVar(&cfg.minBudget, "minimize-budget", 300, "runs a minimization may make")
	fs.BoolVar(&cfg.json, "json", false, "print the summary as JSON (no progress display)")
	fs.StringVar(&cfg.summary, "summary-out", "", "also write the JSON summary to `FILE` (for fencesim merge)")
	fs.StringVar(&cfg.cpuprof, "cpuprofile", "", "write a CPU profile of the whole command to `FILE` (go tool pprof bin/fencesim FILE)")
	fs.StringVar(&cfg.memprof, "memprofile", "", "write a heap profile to `FILE` at the end (go tool pprof -sample_index=alloc_space bin/fencesim FILE)")
	fs.BoolVar(&cfg.failfast, "failfast", false, "stop at the first failing run: minimize it, write its artifacts and print its minimized schedule, one action a line")
	fs.StringVar(&cfg.perSeed, "per-seed", "", "also write every run to `FILE` (JSON Lines, by seed: trace hash, failed properties, metrics); every event is hashed")
	fs.StringVar(&cfg.hashV, "per-seed-hash", "2", "the `VERSION` of --per-seed's hashes: 2 (xxh3-128 of the events' fields) or 1 (sha256 of the trace lines, as fencesim wrote before versions; what diff asks for when the other side's fencesim knows no other)")
	fs.Var(&cfg.keepWorst, "keep-worst", "keep the trace and report of the N passing runs with the highest value of a metric, `METRIC=N` (repeatable; a count's total, a duration's largest sample), e.g. --keep-worst MA1=3, under --out")
	fs.StringVar(&cfg.search, "search", "uniform", "how seeds are chosen: uniform (--first, --first+1, ...) or directed (rounds of runs; later rounds favour the world and fault choices of runs that failed or came closer to the --target; each seed replays alone)")
	targetSpec := fs.String("target", "", "with --search directed: what to steer toward, knob:NAME (its caught-by metrics; the default with one --knob), probe:NAME, or FILE:FROM-TO (lines of code, counted per run by a coverage build); always failures")
	fs.Uint64Var(&cfg.searchSeed, "search-seed", 1, "with --search directed: the search's own seed (which seeds it picks)")
	exhaustive := fs.Bool("exhaustive", false, "system A only: run the bounded exhaustive mode instead of seeds (every single crash and message fault of a small world, then pairs)")
	pairs := fs.Int("pairs", 20000, "with --exhaustive: at most this many fault pairs, an even spread of them (0: every pair)")
	pos, code, done := parse(e, fs, c, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return e.fail(c.name, usagef("unexpected argument %q (explore takes flags only)", pos[0]))
	}
	if *exhaustive {
		if err := exhaustiveFlags(fs); err != nil {
			return e.fail(c.name, err)
		}
		return runExhaustive(e, c.name, &cfg.sel, isSet(fs, "system"), *pairs, *workers)
	}
	if isSet(fs, "pairs") {
		return e.fail(c.name, usagef("--pairs bounds the fault pairs of --exhaustive: add --exhaustive, or drop --pairs"))
	}
	err := func() error {
		var err error
		if cfg.systems, err = cfg.sel.systems(isSet(fs, "system")); err != nil {
			return err
		}
		if cfg.plan, err = sf.plan(fs); err != nil {
			return err
		}
		if cfg.plan, err = sf.steered(fs, cfg.plan, cfg.systems); err != nil {
			return err
		}
		if cfg.plan.steer != "" && cfg.search == "directed" {
			return usagef("--search directed steers the seeds it picks itself: drop --steer")
		}
		if err := cfg.plan.checkSteered(cfg.systems); err != nil {
			return err
		}
		if cfg.faults, err = parseFaults(*faults); err != nil {
			return err
		}
		if err := checkWorkers(*workers); err != nil {
			return err
		}
		cfg.workers = *workers
		if changecov.Enabled() && cfg.workers > 1 {
			return usagef("this binary counts changed code per run (a diff's coverage build): run it with --workers 1")
		}
		if !(cfg.audit >= 0 && cfg.audit <= 1) {
			return usagef("--audit %v: want a share between 0 and 1, e.g. --audit 0.05 (0 turns the audit off)", cfg.audit)
		}
		if cfg.artifacts < 0 {
			return usagef("--artifacts %d: want 0 or more (0 writes none)", cfg.artifacts)
		}
		if cfg.minBudget < 1 {
			return usagef("--minimize-budget %d: want at least 1 run", cfg.minBudget)
		}
		cfg.designs, cfg.texts = map[string]systems.Design{}, map[string]string{}
		for _, sys := range cfg.systems {
			d, err := cfg.sel.designOf(sys)
			if err != nil {
				return err
			}
			cfg.designs[sys.Name()], cfg.texts[sys.Name()] = d, cfg.sel.describe(d)
		}
		if err := cfg.checkSearch(fs, *targetSpec); err != nil {
			return err
		}
		cfg.worst = map[string][]*worst{}
		for _, spec := range cfg.keepWorst {
			if _, _, err := worstSpec(spec); err != nil {
				return err
			}
			var first error
			found := false
			for _, sys := range cfg.systems {
				w, err := parseWorst(spec, sys)
				if err != nil {
					if first == nil || !strings.Contains(err.Error(), "no metric") {
						first = err // an ambiguous name says more than a missing one
					}
					continue // a metric of another system, maybe
				}
				found = true
				for _, o := range cfg.worst[sys.Name()] {
					if o.metric == w.metric {
						return usagef("--keep-worst %q and %q both keep runs by %s: give each metric once", o.spec, spec, w.metric)
					}
				}
				cfg.worst[sys.Name()] = append(cfg.worst[sys.Name()], w)
			}
			if !found {
				return first
			}
		}
		if cfg.artifacts > 0 || len(cfg.keepWorst) > 0 {
			if err := checkOutDir(cfg.out); err != nil {
				return err
			}
		}
		if err := checkOutFile("summary-out", cfg.summary); err != nil {
			return err
		}
		if err := checkOutFile("per-seed", cfg.perSeed); err != nil {
			return err
		}
		if _, err := traces.ParseHashVersion(cfg.hashV); err != nil {
			return usagef("--per-seed-hash: %v", err)
		}
		if isSet(fs, "per-seed-hash") && cfg.perSeed == "" {
			return usagef("--per-seed-hash %s without --per-seed: it is the version of that file's hashes", cfg.hashV)
		}
		if cfg.failfast && !isSet(fs, "artifacts") {
			cfg.artifacts = 1
		}
		if cfg.artifacts == 0 && isSet(fs, "minimize-budget") {
			return usagef("--minimize-budget bounds the minimization of the failures --artifacts writes, and --artifacts 0 writes none: drop --minimize-budget, or give --artifacts N")
		}
		if err := checkOutFile("cpuprofile", cfg.cpuprof); err != nil {
			return err
		}
		if err := checkOutFile("memprofile", cfg.memprof); err != nil {
			return err
		}
		return distinctOutputs([][2]string{{"out", cfg.out}, {"per-seed", cfg.perSeed}, {"summary-out", cfg.summary},
			{"cpuprofile", cfg.cpuprof}, {"memprofile", cfg.memprof}})
	}()
	if err != nil {
		return e.fail(c.name, err)
	}
	if len(cfg.counting) > 0 {
		return countedExplore(e, args, cfg.counting)
	}
	if cfg.sel.warning != "" {
		fmt.Fprintf(e.stderr, "fencesim %s: %s\n", c.name, cfg.sel.warning)
	}
	stopCPU := func() error { return nil }
	if cfg.cpuprof != "" {
		if stopCPU, err = startCPUProfile(cfg.cpuprof); err != nil {
			return e.fail(c.name, usagef("--cpuprofile %s: %v", cfg.cpuprof, unwrapPath(err)))
		}
	}
	hv, _ := traces.ParseHashVersion(cfg.hashV)
	if cfg.records, err = createPerSeed(cfg.perSeed, hv); err != nil {
		return e.fail(c.name, err)
	}
	s := explore(e, &cfg)
	if err := cfg.records.close(); err != nil {
		fmt.Fprintf(e.stderr, "fencesim %s: %v\n", c.name, err)
	}
	if err := stopCPU(); err != nil {
		fmt.Fprintf(e.stderr, "fencesim %s: --cpuprofile %s: %v\n", c.name, cfg.cpuprof, err)
	}
	if cfg.memprof != "" {
		if err := writeHeapProfile(cfg.memprof); err != nil {
			fmt.Fprintf(e.stderr, "fencesim %s: --memprofile %s: %v\n", c.name, cfg.memprof, err)
		}
	}
	return finish(e, c.name, s, cfg.json, cfg.summary)
}

// startCPUProfile starts a CPU profile into path; the function it returns
// stops it and closes the file.
func startCPUProfile(path string) (func() error, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error { pprof.StopCPUProfile(); return f.Close() }, nil
}

// writeHeapProfile writes the heap profile (live objects after a GC, and
// every allocation since the start: -sample_index=alloc_space) to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// distinctOutputs refuses two output flags (name, path) that name one
// path: one file would overwrite the other (a directory and a file, the
// run's artifacts). An empty path is a flag not given.
func distinctOutputs(outs [][2]string) error {
	for i, a := range outs {
		for _, b := range outs[i+1:] {
			if sameFile(a[1], b[1]) {
				return usagef("--%s and --%s name the same path %s: give each its own", a[0], b[0], a[1])
			}
		}
	}
	return nil
}

// sameFile reports whether two paths name one file (as written, or once
// made absolute).
func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	return a == b || (err1 == nil && err2 == nil && x == y)
}

// finish prints a summary (text or JSON), saves it, and returns the exit
// code (130 when the command was interrupted).
func finish(e *env, cmd string, s *summary.Summary, asJSON bool, path string) int {
	if asJSON {
		if err := s.WriteJSON(e.stdout); err != nil {
			return e.fail(cmd, err)
		}
	} else {
		writeText(e.stdout, s)
	}
	return saved(e, cmd, s, path)
}

// saved saves a printed summary (--summary-out) and returns the exit code:
// 130 for an interrupted summary, whatever failed before the signal. A
// merged summary is interrupted when a shard's was: merge, not itself
// stopped by a signal, exits as one machine running every seed would
// have, interrupted where that shard was.
func saved(e *env, cmd string, s *summary.Summary, path string) int {
	if err := s.Save(path); err != nil {
		fmt.Fprintf(e.stderr, "fencesim %s: --summary-out: %v\n", cmd, err)
		return exitUsage
	}
	if s.Interrupted != "" {
		return exitInterrupted
	}
	return exitCode(s)
}

func explore(e *env, cfg *exploreConfig) *summary.Summary {
	s := &summary.Summary{Format: summary.Format, Command: "explore", Faults: string(cfg.faults), Seeds: cfg.plan.text(), FailFast: cfg.failfast}
	if cfg.plan.shard.N > 1 {
		s.Shard = cfg.plan.shard.String()
	}
	if cfg.search == "directed" {
		s.Seeds = fmt.Sprintf("%d picked by a directed search from %d on", cfg.plan.last-cfg.plan.first+1, cfg.plan.first)
	}
	// --time bounds the whole command: each system gets an even share of
	// what is left when it starts (time one system does not use passes to
	// the next), and everything it does (runs, audit, minimization,
	// artifacts) ends with its share.
	end := time.Now().Add(cfg.plan.budget)
	for i, sys := range cfg.systems {
		if e.ctx.Err() != nil || (cfg.failfast && s.Failed()) {
			s.NotRun = append(s.NotRun, sys.Name())
			continue
		}
		ctx, cancel := e.ctx, context.CancelFunc(func() {})
		if cfg.plan.budget > 0 {
			share := time.Until(end) / time.Duration(len(cfg.systems)-i)
			ctx, cancel = context.WithDeadline(e.ctx, time.Now().Add(max(share, 0)))
		}
		var x summary.System
		if cfg.search == "directed" {
			x = exploreDirected(e, ctx, cfg, sys)
		} else {
			x = exploreSystem(e, ctx, cfg, sys)
		}
		cancel()
		s.Systems = append(s.Systems, x)
	}
	s.Interrupted = interruption(e.ctx)
	return s
}

// auditLag is how many runs the pool is given between the two runs of an
// audited seed: the pair runs apart, among other runs (in another worker,
// on another heap), and only the first run's hashes of the last few
// hundred runs wait for their second.
const auditLag = 256

// exploreSystem runs one system's seeds on the pool, audits determinism,
// and writes the artifacts of its first failures. It stops starting runs
// when ctx ends (Ctrl-C, or the end of the system's share of --time).
func exploreSystem(e *env, ctx context.Context, cfg *exploreConfig, sys systems.System) summary.System {
	d := cfg.designs[sys.Name()]
	p := cfg.plan
	start := time.Now()
	deadline, timed := ctx.Deadline()
	// With a time budget, once a run has failed the seeds stop at 80% of
	// the share: the rest is for the minimization and the artifacts.
	reserve := deadline.Sub(start) / 5
	var failing atomic.Bool
	over := func() bool {
		if ctx.Err() != nil {
			return true
		}
		if cfg.failfast && failing.Load() {
			return true
		}
		if timed && failing.Load() && cfg.artifacts > 0 {
			return time.Now().After(deadline.Add(-reserve))
		}
		return false
	}
	var total int64 = -1 // a spinner
	if !timed && shown(e.stderr, !cfg.json) {
		total = p.count(cfg.audit) // counted, not listed: memory stays flat in --runs
	}
	prog := newProgress(e.stderr, !cfg.json, total, sys.Name())
	in := make(chan task)
	// A coverage build counts each run's changed code for its record.
	covering := cfg.records != nil && changecov.Enabled()
	var sent atomic.Int64
	// With a time budget the first run is played whatever is left of it,
	// as go test -benchtime runs a benchmark at least once: a verdict is
	// never one over no run. Only a signal (e.ctx) stops it.
	stop := ctx
	firstDone := func() {}
	if timed {
		var cancel context.CancelFunc
		stop, cancel = context.WithCancel(e.ctx)
		defer cancel()
		got := make(chan struct{})
		var once sync.Once
		firstDone = func() { once.Do(func() { close(got) }) }
		go func() {
			select {
			case <-ctx.Done():
			case <-stop.Done():
				return
			}
			select {
			case <-got:
			case <-stop.Done():
				return
			}
			cancel()
		}()
	}
	go func() {
		defer close(in)
		send := func(seed uint64, hash, second bool) bool {
			done := ctx.Done()
			if timed && sent.Load() == 0 {
				if e.ctx.Err() != nil {
					return false
				}
				done = e.ctx.Done()
			} else if over() {
				return false
			}
			select {
			// --per-seed hashes every event (Digest: as the run goes,
			// keeping what the checkers read; an audited run, whose own
			// hash is of what it recorded, records every event).
			case in <- task{sys: sys, d: d, seed: seed, opts: systems.Options{Hash: hash, Full: cfg.records != nil && hash, Digest: cfg.records.digest()}, second: second, cover: covering}:
				sent.Add(1)
				return true
			case <-done:
				return false
			}
		}
		// The audited seeds waiting for their second run, with the
		// number of runs given to the pool before their first.
		type waiting struct {
			seed uint64
			at   int64
		}
		var queue []waiting
		stopped := false
		p.each(func(seed uint64) bool {
			a := audited(seed, cfg.audit)
			if !send(seed, a, false) {
				stopped = true
				return false
			}
			if a {
				queue = append(queue, waiting{seed, sent.Load()})
			}
			for len(queue) > 0 && sent.Load()-queue[0].at >= auditLag {
				if !send(queue[0].seed, true, true) {
					stopped = true
					return false
				}
				queue = queue[1:]
			}
			return true
		})
		if stopped {
			return
		}
		for _, w := range queue {
			if !send(w.seed, true, true) {
				return
			}
		}
	}()
	agg := newAggregate(sys, d, cfg.texts[sys.Name()])
	cfg.records.begin(p)
	// The audit keeps one hash per audited seed until its second run.
	type firstRun struct {
		hash   string
		second bool
	}
	firsts := map[uint64]firstRun{}
	var odd []mismatchedHashes
	var received int64
	abandoned := collect(stop, runPool(cfg.workers, cfg.faults, in), func(f finished) {
		firstDone()
		received++
		prog.add(1)
		if !f.second {
			for _, w := range cfg.worst[sys.Name()] {
				w.add(f.r)
			}
			if cfg.records != nil { // a record hashes the run: only for --per-seed
				rec := recordOf(f.r, "", cfg.records.version)
				rec.Cover, rec.CoverParts = f.cover, f.coverParts
				cfg.records.add(rec)
			}
			agg.add(f.r, f.dur)
			if len(f.r.Failed()) > 0 {
				failing.Store(true)
			}
		}
		if !f.opts.Hash {
			return
		}
		other, ok := firsts[f.seed]
		if !ok {
			firsts[f.seed] = firstRun{f.r.Hash, f.second}
			return
		}
		delete(firsts, f.seed)
		agg.s.Audit.Runs++
		if other.hash != f.r.Hash {
			m := mismatchedHashes{seed: f.seed, first: other.hash, second: f.r.Hash}
			if other.second {
				m.first, m.second = m.second, m.first
			}
			odd = append(odd, m)
		}
	})
	prog.done()
	x := agg.done(time.Since(start), cfg.workers)
	if abandoned {
		x.Abandoned = int(sent.Load() - received)
	}
	sort.Slice(odd, func(i, j int) bool { return odd[i].seed < odd[j].seed })
	for _, m := range odd {
		x.Audit.Mismatches = append(x.Audit.Mismatches, explain(e, ctx, sys, d, cfg.faults, m))
	}
	x.Artifacts = writeFailures(e, ctx, cfg, sys, d, x)
	for _, w := range cfg.worst[sys.Name()] {
		x.KeepWorst = append(x.KeepWorst, summary.Keep{Metric: w.metric, N: w.n})
	}
	if ctx.Err() == nil {
		x.Kept = keepWorst(cfg.worst[sys.Name()], cfg.out, sys, d, cfg.faults, cfg.texts[sys.Name()])
	}
	return x
}

// mismatchedHashes is an audited seed whose two runs hashed differently.
type mismatchedHashes struct {
	seed          uint64
	first, second string
}

// explain runs a mismatched seed twice more, recording every event, for
// the first differing event. When those two agree, or there is no time
// left to run them, the mismatch shows the two hashes.
func explain(e *env, ctx context.Context, sys systems.System, d systems.Design, f systems.Faults, h mismatchedHashes) summary.Mismatch {
	m := summary.Mismatch{Seed: h.seed, First: "trace hash " + h.first, Second: "trace hash " + h.second}
	var a, b *systems.Result
	ok := ctx.Err() == nil && within(ctx, func() {
		t := task{sys: sys, d: d, seed: h.seed, opts: systems.Options{Full: true, Hash: true}}
		a = play(t, f)
		if ctx.Err() == nil {
			b = play(t, f)
		}
	})
	switch {
	case !ok || b == nil:
		m.Second += " (not run again for the first difference: " + stopReason(e) + ")"
	case a.Hash == b.Hash:
		m.Second += " (two more runs recording every event were identical: the difference did not show again)"
	default:
		m, _ = compareRuns(h.seed, a, b, true)
	}
	return m
}

// stopReason says why a command stopped early: a signal or --time.
func stopReason(e *env) string {
	if sig := interruption(e.ctx); sig != "" {
		return "interrupted by " + sig
	}
	return "the --time budget ran out"
}

// compareRuns compares the two runs of an audited seed; b is the second
// when second is true.
func compareRuns(seed uint64, a, b *systems.Result, second bool) (summary.Mismatch, bool) {
	if !second {
		a, b = b, a
	}
	if a.Hash == b.Hash {
		return summary.Mismatch{}, true
	}
	d := traces.Compare(a.Events, b.Events)
	m := summary.Mismatch{Seed: seed, Index: d.Index + 1, First: "(trace ended)", Second: "(trace ended)"}
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
// in parallel) and writes their artifacts. When ctx ends first (Ctrl-C,
// --time), the artifacts not done are skipped (noted in the summary);
// with a deadline, the minimizer gets three quarters of what is left, the
// last quarter being for the full runs and the files.
func writeFailures(e *env, ctx context.Context, cfg *exploreConfig, sys systems.System, d systems.Design, x summary.System) []summary.Artifact {
	n := min(cfg.artifacts, len(x.Failures))
	if n == 0 {
		return nil
	}
	minCtx := ctx
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		minCtx, cancel = context.WithDeadline(ctx, time.Now().Add(time.Until(deadline)*3/4))
		defer cancel()
	}
	prog := newProgress(e.stderr, !cfg.json, int64(n), sys.Name()+": minimizing")
	probes := probesOf(x)
	var mu sync.Mutex
	out := make([]summary.Artifact, n)
	done := make([]bool, n)
	if ctx.Err() == nil {
		within(ctx, func() {
			sem := make(chan struct{}, cfg.workers)
			var wg sync.WaitGroup
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					sem <- struct{}{}
					defer func() { <-sem }()
					a, ok := artifact(ctx, minCtx, cfg.out, sys, d, x.Failures[i].Seed, cfg.faults, cfg.minBudget, probes, cfg.sel)
					mu.Lock()
					out[i], done[i] = a, ok
					mu.Unlock()
					prog.add(1)
				}(i)
			}
			wg.Wait()
		})
	}
	prog.done()
	mu.Lock()
	defer mu.Unlock()
	res := make([]summary.Artifact, n)
	for i := range res {
		res[i] = out[i]
		if !done[i] {
			res[i] = summary.Artifact{Seed: x.Failures[i].Seed, Skipped: stopReason(e) + " before its minimization and files were done"}
		}
	}
	return res
}
