package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	art "github.com/fencesim/fencesim/internal/artifact"
	"github.com/fencesim/fencesim/internal/live"
	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// runLive runs a system's node code for real: child processes, TCP through
// a proxy on every link, a real PostgreSQL, real faults; then the same
// checkers on what they recorded.
func runLive(e *env, args []string) int {
	c := commandByName("live")
	fs := newFlags(c.name)
	var sel selection
	liveSystems := supporting(func(s systems.Support) bool { return s.Live })
	sel.register(fs, firstOf(liveSystems))
	fs.Lookup("system").Usage = "the system to run live, one of " + strings.Join(liveSystems, ", ") + " (each has a live world: docs/live.md)"
	duration := fs.Duration("duration", 60*time.Second, "how long the run lasts, in real time from the instant the nodes are launched (the run's time 0, where its workload and faults are timed from)")
	pg := fs.String("pg", "", "PostgreSQL server `URL`s, comma-separated (postgres://user@host:port/db; twopc uses two, one is shared; outbox puts its two databases on one); default: throw-away servers started with scripts/pg.sh for the run")
	ports := fs.Int("ports", 0, "the first of the `PORT`s the nodes listen on, one per node, in order (default: free ports)")
	schedule := fs.String("schedule", "", "the faults: a `FILE` with a JSON list of actions (a trace header's schedule), or a trace (.jsonl) whose schedule to play; default: the live world's own (arbiter: a kill, a pause, a stall, a broken connection; twopc: the coordinator killed at a crash point and restarted, a broken connection; outbox: the relay and a handler killed at crash points and restarted, a stall on the broker's link to the consumer, a handler's broken database connections)")
	subs := fs.Int("submissions", 0, "system A: the workload's `N` submissions, arriving within the first third of the run (default 12)")
	table := fs.Bool("table", false, "system C: run C.1's five crash positions live (the coordinator kills itself with SIGKILL at each, then recovers from its log) and print the live C.1 and C.4 tables beside the simulated ones, cell by cell")
	seed := fs.Uint64("seed", 1, "the seed `N` of the workload's arrivals and the nodes' entropy")
	out := fs.String("out", "fencesim-out", "`DIR` for the trace, the report and the run's directory (live-<system>-<time>/: node disks, notes, logs)")
	pos, code, done := parse(e, fs, c, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return e.fail(c.name, usagef("unexpected argument %q (live takes flags only, e.g. --system arbiter --duration 60s)", pos[0]))
	}
	var sys systems.System
	var d systems.Design
	var sched sim.Schedule
	err := func() error {
		all, err := sel.systems(true)
		if err != nil {
			return err
		}
		if len(all) != 1 {
			return usagef("live runs one system: pick it with --system (%s)", strings.Join(live.Systems(), " or "))
		}
		sys = all[0]
		if !contains(live.Systems(), sys.Name()) {
			return usagef("--system %s: no live world (live runs: %s)", sys.Name(), strings.Join(live.Systems(), ", "))
		}
		if err := live.CheckDuration(*duration); err != nil {
			return err
		}
		if isSet(fs, "world") {
			return usagef("--world: a live run's world is the design's own fleet (--set home_workers=N, prod_workers=N, arbiters=N), not drawn")
		}
		if isSet(fs, "submissions") {
			if !sys.Supports().LiveWorkload {
				return usagef("--submissions is for --system %s only: the %s world has no submissions", strings.Join(supporting(func(s systems.Support) bool { return s.LiveWorkload }), " or "), sys.Name())
			}
			if *subs < 1 {
				return usagef("--submissions %d: give a positive count (leave it out for the default, 12)", *subs)
			}
		}
		if *table {
			if !sys.Supports().LiveTable {
				return usagef("--table is for --system %s: the live tables of the source", strings.Join(supporting(func(s systems.Support) bool { return s.LiveTable }), " or "))
			}
			if err := tableFlags(fs); err != nil {
				return err
			}
		}
		if isSet(fs, "ports") && (*ports < 1024 || *ports > 65000) {
			return usagef("--ports %d: give a port between 1024 and 65000 (leave it out for free ports)", *ports)
		}
		userSets := sel.sets
		if sel.design == "" {
			// The live world's short parameters first (docs/live.md):
			// --set applies on top.
			sel.sets = append(live.ShortSets(sys.Name()), sel.sets...)
		}
		if d, err = sel.designOf(sys); err != nil {
			return err
		}
		sel.sets = userSets
		if *schedule != "" {
			if sched, err = readSchedule(*schedule, sys.Name()); err != nil {
				return err
			}
		} else {
			if sched, err = live.DefaultSchedule(sys.Name(), d.JSON, *duration); err != nil {
				return usagef("%v", err)
			}
		}
		return checkOutDir(*out)
	}()
	if err != nil {
		return e.fail(c.name, err)
	}
	if sel.warning != "" {
		fmt.Fprintf(e.stderr, "fencesim %s: %s\n", c.name, sel.warning)
	}
	bin, err := os.Executable()
	if err != nil {
		return e.fail(c.name, err)
	}
	dir, err := filepath.Abs(filepath.Join(*out, fmt.Sprintf("live-%s-%s", sys.Name(), time.Now().Format("20060102-150405.000"))))
	if err != nil {
		return e.fail(c.name, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	kept := existing(dir)
	if *table {
		return liveTable(e, ctx, live.Options{Dir: dir, Binary: bin, PG: splitList(*pg), Ports: *ports, Seed: *seed}, kept)
	}
	o := live.Options{System: sys.Name(), Design: d.JSON, Seed: *seed, Submissions: *subs, Duration: *duration, Schedule: sched,
		PG: splitList(*pg), Ports: *ports, Dir: dir, Binary: bin, Log: e.stdout}
	res, err := live.Run(ctx, o)
	if err != nil {
		// A run refused (bad input) or stopped at its start leaves no
		// empty directories behind; a directory with a node's log stays.
		removeEmpty(dir, kept)
		if ctx.Err() != nil {
			// Interrupted before every node was up: nothing ran to judge
			// (the servers started meanwhile are stopped).
			fmt.Fprintf(e.stderr, "fencesim %s: interrupted before the run started: nothing to judge\n", c.name)
			return exitInterrupted
		}
		var ue *live.UsageError
		if errors.As(err, &ue) {
			return e.fail(c.name, usagef("%s", ue.Msg))
		}
		fmt.Fprintf(e.stderr, "fencesim %s: %s\n", c.name, oneLine(err.Error()))
		return exitUsage
	}
	if ctx.Err() != nil {
		fmt.Fprintf(e.stderr, "fencesim %s: interrupted: the run's record is checked as far as it went\n", c.name)
	}
	r := systems.Judge(sys, res.Header, res.Events)
	r.Nodes = res.Nodes
	for _, l := range []struct {
		title  string
		lines  []string
		always bool
	}{
		{"faults injected", res.Faults, true},
		{"faults not made", res.NotMade, false},
		{"workload commands sent", res.Sent, len(res.Unsent) > 0},
		{"workload commands not sent", res.Unsent, false},
	} {
		if l.always || len(l.lines) > 0 {
			fmt.Fprintf(e.stdout, "%s (%d):\n", l.title, len(l.lines))
			for _, f := range l.lines {
				fmt.Fprintf(e.stdout, "  %s\n", f)
			}
		}
	}
	kinds := map[string]int{}
	for _, ev := range res.Events {
		kinds[ev.Kind]++
	}
	var parts []string
	for _, k := range [][2]string{{"call", "calls"}, {"return", "returns"}, {"2pc", "2PC notes"}, {"prepared", "prepared-transaction events"}, {"commit", "commits"}} {
		if n := kinds[k[0]]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k[1]))
		}
	}
	fmt.Fprintf(e.stdout, "operations checked: %s; %d events in all\n", strings.Join(parts, ", "), len(res.Events))
	desc := sel.describe(d)
	if sel.design == "" && len(live.ShortSets(sys.Name())) > 0 {
		desc = "the live short parameters (docs/live-" + sys.Name() + ".json)" + strings.TrimPrefix("; "+desc, "; default")
	}
	what := fmt.Sprintf("%s live %s (design: %s)", sys.Name(), *duration, desc)
	base := filepath.Join(*out, fmt.Sprintf("%s-live-%s", sys.Name(), filepath.Base(dir)[len("live-"+sys.Name()+"-"):]))
	trace, page := base+".jsonl", base+"-report.html"
	hash, err := art.Trace(trace, r)
	if err != nil {
		fmt.Fprintf(e.stderr, "fencesim %s: --out %s: %v\n", c.name, *out, unwrapPath(err))
		return exitUsage
	}
	if _, err := art.Report(page, base+"-porcupine.html", r, art.Page{Story: art.StoryOf(r, "", nil, timelineLines),
		Title: pageTitle(what, r), Hash: hash, Replay: liveReplay(trace), TracePath: trace}); err != nil {
		fmt.Fprintf(e.stderr, "fencesim %s: %s: %v\n", c.name, page, unwrapPath(err))
		return exitUsage
	}
	writeVerdicts(e.stdout, what, r)
	fmt.Fprintf(e.stdout, "trace: %s\nreport: %s\nrun directory: %s\n", trace, page, dir)
	if ctx.Err() != nil {
		return exitInterrupted
	}
	if len(r.Failed()) > 0 {
		return exitFail
	}
	return exitOK
}

// tableUses are the flags live --table reads: it plays C.1's positions
// with the default design and schedules of its own.
var tableUses = []string{"table", "system", "pg", "ports", "seed", "out"}

// tableFlags refuses the flags given that --table ignores.
func tableFlags(fs *flag.FlagSet) error {
	unused, them := flagsUnused(fs, tableUses)
	if len(unused) == 0 {
		return nil
	}
	return usagef("--table plays C.1's five crash positions with the default design, each its own schedule and length: it does not use %s; drop %s (it takes --%s)",
		strings.Join(unused, ", "), them, strings.Join(tableUses[1:], ", --"))
}

// liveTable runs C.1's positions live and prints the live C.1 and C.4
// tables beside the simulated ones; it exits 1 when a cell differs. Its
// first line is printed once the first position's world is up: input the
// live world refuses (--pg, --ports) is one line on stderr, nothing on
// stdout.
func liveTable(e *env, ctx context.Context, o live.Options, kept string) int {
	var once sync.Once
	o.Started = func() {
		once.Do(func() {
			fmt.Fprintf(e.stdout, "live: C.1's five crash positions, each a live world (coordinator, two PostgreSQL servers), about 5 s each\n")
		})
	}
	rows, err := live.TwoPCTable(ctx, o)
	if err != nil {
		// As a run refused: no empty directories left (a position's
		// directory with a node's log stays).
		removeEmptyTree(o.Dir, kept)
		if ctx.Err() != nil {
			// Interrupted: a position cut short has no row, and no table
			// is printed from the positions before it.
			fmt.Fprintf(e.stderr, "fencesim live: interrupted: the table is not complete, nothing compared\n")
			return exitInterrupted
		}
		var ue *live.UsageError
		if errors.As(err, &ue) {
			return e.fail("live", usagef("%s", ue.Msg))
		}
		fmt.Fprintf(e.stderr, "fencesim live: %s\n", oneLine(err.Error()))
		return exitUsage
	}
	differ, err := live.CompareTables(e.stdout, rows)
	if err != nil {
		fmt.Fprintf(e.stderr, "fencesim live: the simulated tables: %s\n", oneLine(err.Error()))
		return exitUsage
	}
	if differ > 0 {
		return exitFail
	}
	return exitOK
}

// readSchedule reads a schedule file for a system: a JSON list of
// actions, or a trace of the same system whose header's schedule to play.
func readSchedule(path, system string) (sim.Schedule, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("--schedule %s: %v", path, unwrapPath(err))
	}
	if strings.HasSuffix(path, ".jsonl") {
		f, err := os.Open(path)
		if err != nil {
			return nil, usagef("--schedule %s: %v", path, unwrapPath(err))
		}
		defer f.Close()
		tr, err := traces.NewReader(f)
		if err != nil {
			return nil, usagef("--schedule %s: not a trace: %v", path, err)
		}
		if tr.Header.System != system {
			return nil, usagef("--schedule %s: a trace of %s, not of %s: give a trace or schedule of %s, or --system %s", path, tr.Header.System, system, system, tr.Header.System)
		}
		b = tr.Header.Schedule
	}
	var s sim.Schedule
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, usagef("--schedule %s: not a JSON list of fault actions (as a trace header's \"schedule\"): %v", path, err)
	}
	return s, nil
}

// existing is the nearest directory at or above dir that exists.
func existing(dir string) string {
	for {
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return dir
		}
		dir = up
	}
}

// removeEmptyTree removes the empty directories under dir, deepest first,
// then dir and its parents while they are empty, up to (not including)
// kept.
func removeEmptyTree(dir, kept string) {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != dir {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = os.Remove(dirs[i]) // only an empty one goes
	}
	removeEmpty(dir, kept)
}

// removeEmpty removes dir and its parents while they are empty, up to (not
// including) kept.
func removeEmpty(dir, kept string) {
	for dir != kept && strings.HasPrefix(dir, kept) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// runNode runs one node of a live world (started by fencesim live).
func runNode(e *env, args []string) int {
	c := commandByName("node")
	fs := newFlags(c.name)
	cfgPath := fs.String("config", "", "the node's configuration `FILE` (written by fencesim live)")
	_, code, done := parse(e, fs, c, args)
	if done {
		return code
	}
	const want = "want the JSON file fencesim live writes for each node (live-<system>-<time>/<node>.json): fencesim live starts fencesim node"
	if *cfgPath == "" {
		return e.fail(c.name, usagef("--config FILE is missing: %s", want))
	}
	b, err := os.ReadFile(*cfgPath)
	if err != nil {
		return e.fail(c.name, usagef("--config %s: %v", *cfgPath, unwrapPath(err)))
	}
	var cfg live.NodeConfig
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return e.fail(c.name, usagef("--config %s: not a node's configuration (%s): %s", *cfgPath, jsonError(b, err), want))
	}
	if cfg.System == "" || cfg.Name == "" {
		return e.fail(c.name, usagef("--config %s: not a node's configuration (no system or node name): %s", *cfgPath, want))
	}
	w, err := live.Wire(cfg)
	if err != nil {
		return e.fail(c.name, usagef("--config %s: %v", *cfgPath, err))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := live.RunNode(ctx, cfg, w); err != nil {
		fmt.Fprintf(e.stderr, "fencesim %s: %s\n", c.name, oneLine(err.Error()))
		return exitUsage
	}
	return exitOK
}

// firstOf is the first name of a list ("" when it is empty).
func firstOf(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return names[0]
}
