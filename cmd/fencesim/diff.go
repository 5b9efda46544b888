package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fencesim/fencesim/internal/changecov"
	"github.com/fencesim/fencesim/internal/revision"
	"github.com/fencesim/fencesim/internal/stats"
	"github.com/fencesim/fencesim/internal/summary"
	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/traces"
)

// diffFormat names diff's JSON output.
const diffFormat = "fencesim-diff/1"

// diffResult is what diff prints.
type diffResult struct {
	Format  string `json:"format"`
	Base    string `json:"base"`        // the revision asked for
	BaseRev string `json:"base_commit"` // what it resolved to
	Working string `json:"working"`     // HEAD, and whether the tree had changes
	Design  string `json:"design"`
	Faults  string `json:"faults"`
	Seeds   string `json:"seeds"`
	// Systems is one delta per system, base first.
	Systems []*runDelta `json:"systems"`
	Kept    []keptRun   `json:"kept,omitempty"`
	// Strict: a WARNING (a promise metric significantly worse) fails the
	// diff.
	Strict bool `json:"strict,omitempty"`
	// Verdict: "unchanged", "changed" (runs differ, nothing newly fails,
	// no threshold crossed, no WARNING under --strict) or "failed".
	// Focus says how the seeds were chosen (--focus).
	Focus       *diffFocus `json:"focus,omitempty"`
	Verdict     string     `json:"verdict"`
	Interrupted string     `json:"interrupted,omitempty"`
	Timing      [2]int64   `json:"timing_ns"` // building, running
	// BaseKept is how many of the base's runs were not run again: their
	// records kept from an earlier diff of the same base binary and flags
	// (recordCache).
	BaseKept int `json:"base_runs_kept,omitempty"`
	// Coverage: how many runs executed each hunk of the change under
	// model/ (absent when the change has none there).
	Coverage *diffCoverage `json:"coverage,omitempty"`
}

// keptRun is one seed whose two runs were written in full (trace and
// report). A seed kept for a property that flipped is minimized: the side
// that fails the property minimizes the seed's fault schedule while it
// keeps failing (run --minimize), and the other side plays that schedule
// (run --schedule), so both reports show the same few faults with their
// two outcomes. A seed kept for a metric move is the full seed.
type keptRun struct {
	System string    `json:"system"`
	Seed   uint64    `json:"seed"`
	Why    string    `json:"why"`
	Dirs   [2]string `json:"dirs"` // base, working
	Error  string    `json:"error,omitempty"`
	// Minimized: both runs played Schedule, the schedule the side
	// MinimizedOn found; Faults counts the fault actions of the seed's
	// schedule and of the minimized one.
	Minimized   bool   `json:"minimized"`
	MinimizedOn string `json:"minimized_on,omitempty"`
	Schedule    string `json:"schedule,omitempty"`
	Faults      [2]int `json:"faults,omitempty"`
	// Note says why the runs are not minimized, in a line.
	Note string `json:"note,omitempty"`
	prop string // the property that flipped (its full name)
	fail int    // the side that fails it
}

func runDiff(e *env, args []string) int {
	c := commandByName("diff")
	fs := newFlags(c.name)
	var sel selection
	sel.register(fs, "all")
	var sf seedFlags
	sf.register(fs, 200, false)
	base := fs.String("base", "HEAD", "the git `REV` to compare the working tree with (a commit, branch or tag: HEAD~1, origin/main)")
	faults := fs.String("faults", "moderate", "fault intensity: none, moderate or heavy")
	workers := workersFlag(fs)
	var failOn multi
	fs.Var(&failOn, "fail-on", "exit 1 when a metric moves past a bound from base to working tree, `METRIC[.STAT]=+X%` (repeatable), e.g. --fail-on MA2=+10%; as in compare")
	keep := fs.Int("keep", 3, "seeds per system whose two runs are kept in full (trace and report), the most changed first: newly failing, newly passing, then the largest metric moves")
	out := fs.String("out", "fencesim-out/diff", "`DIR` for the kept runs")
	perSeed := fs.String("per-seed", "", "also write every run of both sides to `FILE` (JSON Lines, side base or working); with a change under model/, each run's cover counts how often it executed each hunk, indexed by the side's targets in --json's coverage.targets")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	strict := fs.Bool("strict", false, "exit 1 on a WARNING too: a promise metric (MA1, MA2, MA3, MA5; the outbox's deliveries and gave_up; twopc's blocked_max and still_prepared) significantly worse seed by seed (sign test, p < 0.01); a changed hunk that never ran is a WARNING line too, but not one --strict fails on (set FENCESIM_DIFF_COVERAGE=off to skip counting the change's code)")
	var fo focuser
	focus := &focusFlag{mode: "auto"}
	fs.Var(focus, "focus", "spend the seeds where the change matters: after a warm-up of 32 seeds in order, each system's seeds are picked in rounds by a directed search favouring the worlds of runs that executed the change's rarely run hunks, altered the trace, moved a metric or flipped a property (each seed replays alone); auto (the default) focuses when a hunk of the change ran in under a quarter of the warm-up's runs; --focus=false never")
	fs.Uint64Var(&fo.searchSeed, "search-seed", 1, "the directed search's own seed under --focus (which seeds it picks)")
	pos, code, done := parse(e, fs, c, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return e.fail(c.name, usagef("unexpected argument %q (diff takes flags only; the revision is --base REV)", pos[0]))
	}
	fo.mode = focus.mode
	var list []systems.System
	var p plan
	var f systems.Faults
	limits := map[string][]threshold{}
	var root, rev string
	err := func() error {
		var err error
		if list, err = sel.systems(isSet(fs, "system")); err != nil {
			return err
		}
		if p, err = sf.plan(fs); err != nil {
			return err
		}
		if p, err = sf.steered(fs, p, list); err != nil {
			return err
		}
		if err := p.checkSteered(list); err != nil {
			return err
		}
		if f, err = parseFaults(*faults); err != nil {
			return err
		}
		if err := checkWorkers(*workers); err != nil {
			return err
		}
		fo.designs = map[string]systems.Design{}
		for _, sys := range list {
			d, err := sel.designOf(sys)
			if err != nil {
				return err
			}
			fo.designs[sys.Name()] = d
		}
		if p.shard.N > 1 || p.list != nil {
			if fo.mode == "on" {
				if p.steer != "" {
					return usagef("--focus picks its own seeds: it does not go with --steer")
				}
				return usagef("--focus picks its own seeds: it does not go with --shard or a --seeds list")
			}
			fo.mode = "off"
		}
		if fo.mode == "off" && isSet(fs, "search-seed") {
			if focus.mode == "off" {
				return usagef("--search-seed is the seed of --focus's directed search, and --focus=false turns it off: drop --search-seed")
			}
			return usagef("--search-seed is the seed of --focus's directed search, which does not go with --shard, --steer or a --seeds list: drop --search-seed")
		}
		if limits, err = diffThresholds(failOn, list); err != nil {
			return err
		}
		if *keep < 0 {
			return usagef("--keep %d: want 0 or more (0 keeps none)", *keep)
		}
		if *keep > 0 {
			if err := checkOutDir(*out); err != nil {
				return err
			}
		}
		if err := checkOutFile("per-seed", *perSeed); err != nil {
			return err
		}
		if root, err = revision.Root(); err != nil {
			return err
		}
		rev, err = revision.Resolve(root, *base)
		return err
	}()
	if err != nil {
		return e.fail(c.name, err)
	}
	if sel.warning != "" {
		fmt.Fprintf(e.stderr, "fencesim %s: %s\n", c.name, sel.warning)
	}
	res := &diffResult{Format: diffFormat, Base: *base, BaseRev: rev, Design: sel.describe(systems.Design{Knobs: sel.knobs}),
		Faults: string(f), Seeds: p.text(), Strict: *strict}
	say := func(format string, args ...any) {
		if !*asJSON {
			fmt.Fprintf(e.stderr, "fencesim diff: "+format+"\n", args...)
		}
	}
	tmp, err := os.MkdirTemp("", "fencesim-diff-")
	if err != nil {
		return e.fail(c.name, err)
	}
	defer os.RemoveAll(tmp)
	start := time.Now()
	// Change coverage: the hunks under model/, counted on both sides.
	var cov *diffCoverage
	var targets [2][]changecov.Target
	if coverageEnabled() {
		hunks, err := revision.ChangedHunks(root, rev)
		if err != nil {
			return e.fail(c.name, err)
		}
		if len(hunks) > 0 {
			cov, targets = coverageTargets(hunks)
		}
	}
	if fo.mode == "auto" && cov == nil {
		fo.mode = "off" // nothing counted, nothing to focus on: the seeds in order, as always
	}
	names := make([]string, len(list))
	for i, sys := range list {
		names[i] = sys.Name()
	}
	sr := &sideRunner{ctx: e.ctx, root: root, tmp: tmp, workers: *workers, names: names,
		common: append(sel.forward(), "--faults", string(f)), world: sel.world}
	// The base's seeds run as soon as its binary is there, while the
	// working tree builds (prefetch).
	parts := prefetchParts(p, fo.mode, len(list))
	var pf *prefetch
	defer func() { pf.stop() }()
	baseReady := func(bin string, counted bool) {
		if parts == nil {
			return
		}
		base := *sr
		base.bins[0], base.counted[0] = bin, counted
		if hasHashFlag(e.ctx, bin, root) {
			base.hashArgs[0] = []string{"--per-seed-hash", "2"}
		}
		base.baseRecs = keptRecords(&base)
		pf = startPrefetch(base, parts)
	}
	say("building %s (%s) and the working tree", *base, revision.Short(rev))
	if cov != nil {
		say("counting the %s of the change under model/ in both builds", plural(len(cov.Hunks), "hunk"))
	}
	pair, cleanup, err := revision.BuildCounting(e.ctx, root, rev, tmp, targets, baseReady)
	bins, fromCache := pair.Bins, pair.Cached
	if fromCache[0] || fromCache[1] {
		var which []string
		for i, w := range [2]string{"base " + revision.Short(rev), "working tree"} {
			if fromCache[i] {
				which = append(which, w)
			}
		}
		say("from the build cache: %s", strings.Join(which, ", "))
	}
	defer cleanup()
	if err != nil {
		if e.ctx.Err() != nil {
			fmt.Fprintf(e.stderr, "fencesim diff: interrupted (%s) while building: nothing was compared\n", interruption(e.ctx))
			return exitInterrupted
		}
		return e.fail(c.name, err)
	}
	if cov != nil {
		cov.counted(e.ctx, pair, targets, root)
	}
	res.Timing[0] = int64(time.Since(start))
	start = time.Now()
	res.Working = revision.Working(root) // after the build: the base runs the sooner
	sides := [2]string{"base", "working"}
	sr.bins, sr.counted = bins, pair.Counted
	// Steered seeds need the base to pull the same levers: its lever
	// lists (fencesim levers), as far as they agree with the working
	// tree's (a base from before a lever was added plays fewer, one from
	// before steered seeds none: it would play a steered seed as another,
	// plain seed).
	fo.shared = sharedLevers(e.ctx, bins[0], root, list)
	sr.hashArgs = hashArgs(e.ctx, bins, root)
	if pf != nil && !slices.Equal(pf.args, sr.hashArgs[0]) {
		pf.stop() // the working tree writes another hash version: the base's seeds run again
		pf = nil
	}
	sr.pre = pf
	if pf != nil {
		sr.baseRecs = pf.recs
	} else {
		sr.baseRecs = keptRecords(sr)
	}
	if p.steer != "" || p.hasSteered() {
		if err := p.steerable(list, fo.shared); err != nil {
			return e.fail(c.name, usagef("--base %s: %v", *base, err))
		}
	}
	var recs [2][]seedRecord
	if fo.mode == "off" || len(list) == 0 {
		say("running %s on the base %s and on the working tree", p.text(), revision.Short(rev))
		recs, err = sr.run(p, names)
		if isSet(fs, "search-seed") {
			// --focus=auto with nothing counted: the search never ran.
			res.Focus = &diffFocus{Mode: "uniform", Why: "no change under model/ was counted: nothing to focus on"}
		}
	} else {
		recs, err = fo.run(sr, p, list, cov, say)
		if fo.res != nil {
			res.Focus = fo.res
			if fo.res.Mode == "directed" {
				res.Seeds = fo.res.Seeds
			}
		}
	}
	if res.Focus != nil && res.Focus.Mode == "uniform" && isSet(fs, "search-seed") {
		// It was accepted (auto decides after the warm-up), and is said
		// unused rather than silently ignored.
		res.Focus.Why += fmt.Sprintf("; --search-seed %d not used: no directed search ran", fo.searchSeed)
	}
	if err != nil && e.ctx.Err() == nil {
		return e.fail(c.name, err)
	}
	if e.ctx.Err() != nil {
		// What the interrupted children finished is in their files.
		res.Interrupted = interruption(e.ctx)
	}
	for i := range recs {
		for j := range recs[i] {
			recs[i][j].Side = sides[i]
		}
	}
	if err := sameHashVersion(recs); err != nil {
		return e.fail(c.name, err)
	}
	if cov != nil {
		cov.count(recs)
		res.Coverage = cov
	}
	res.Timing[1] = int64(time.Since(start))
	for _, r := range recs[0] {
		if r.kept {
			res.BaseKept++
		}
	}
	if res.BaseKept > 0 {
		say("the base's records of %s were kept from an earlier diff of the same base binary and flags (FENCESIM_BUILD_CACHE=off runs them again)", plural(res.BaseKept, "run"))
	}
	if *perSeed != "" {
		if err := writeBothSides(*perSeed, recs); err != nil {
			return e.fail(c.name, err)
		}
	}
	for _, sys := range list {
		d := newDelta(sys.Name(), sides, recs[0], recs[1])
		for _, t := range limits[sys.Name()] {
			t.judge(d)
			d.Thresholds = append(d.Thresholds, t)
		}
		res.Systems = append(res.Systems, d)
	}
	res.judge()
	if *keep > 0 && res.Interrupted == "" {
		res.Kept = keepChanged(e.ctx, bins, root, sel, f, res.Systems, recs, *keep, *out, say)
		if res.Interrupted == "" {
			res.Interrupted = interruption(e.ctx)
		}
	}
	if *asJSON {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return e.fail(c.name, err)
		}
		fmt.Fprintln(e.stdout, string(b))
	} else {
		res.writeText(e.stdout)
	}
	switch {
	case res.Interrupted != "":
		return exitInterrupted
	case res.Verdict == "failed" || res.Verdict == "incomplete":
		return exitFail
	}
	return exitOK
}

func (r *diffResult) writeText(w io.Writer) {
	fmt.Fprintf(w, "== diff: base %s (%s) vs working tree (%s) ==\n   design %s; faults %s; seeds %s\n",
		r.Base, revision.Short(r.BaseRev), r.Working, r.Design, r.Faults, r.Seeds)
	if f := r.Focus; f != nil {
		fmt.Fprintf(w, "   focus: %s (%s)\n", f.Mode, f.Why)
		for _, x := range f.Systems {
			if x.Uniform != "" {
				fmt.Fprintf(w, "   %s: uniform (%s)\n", x.System, x.Uniform)
			}
			if len(x.Favoured) > 0 {
				var fav []string
				for _, v := range x.Favoured {
					fav = append(fav, fmt.Sprintf("%s (%.2f over %d runs)", v.Feature, v.Rate, v.Runs))
				}
				fmt.Fprintf(w, "   %s favoured (mean reward %.2f): %s\n", x.System, x.Favoured[0].Mean, strings.Join(fav, ", "))
			}
		}
	}
	for _, d := range r.Systems {
		fmt.Fprintf(w, "\n-- %s --\n", d.System)
		d.writeText(w, "your change")
	}
	if r.Coverage != nil {
		r.Coverage.writeText(w)
	}
	if len(r.Kept) > 0 {
		fmt.Fprintf(w, "\nkept (trace and report of both runs; fencesim replay FILE replays one):\n")
		for _, k := range r.Kept {
			fmt.Fprintf(w, "  %s seed %d: %s\n", k.System, k.Seed, k.Why)
			switch {
			case k.Error != "":
				fmt.Fprintf(w, "    %s\n", k.Error)
				continue
			case k.Minimized:
				on := map[string]string{"base": "base revision", "working": "working tree"}[k.MinimizedOn]
				fmt.Fprintf(w, "    minimized on the %s, %d -> %d fault actions; both sides play %s\n",
					on, k.Faults[0], k.Faults[1], filepath.Base(k.Schedule))
			default:
				fmt.Fprintf(w, "    %s\n", k.Note)
			}
			fmt.Fprintf(w, "    base %s\n    working %s\n", k.Dirs[0], k.Dirs[1])
		}
	}
	fmt.Fprintln(w)
	switch r.Verdict {
	case "incomplete":
		fmt.Fprintf(w, "verdict: incomplete: the seeds did not run on both sides\n")
	case "unchanged":
		fmt.Fprintf(w, "verdict: unchanged: every run identical on both sides\n")
	case "changed":
		warned := ""
		if n := r.warnings(); n > 0 {
			warned = fmt.Sprintf("; %s (--strict would exit 1)", plural(n, "WARNING"))
		}
		fmt.Fprintf(w, "verdict: changed, nothing newly failing and no threshold crossed%s\n", warned)
	default:
		var why []string
		for _, d := range r.Systems {
			for _, p := range d.Properties {
				if len(p.NewlyFailing) > 0 {
					why = append(why, fmt.Sprintf("%s %s newly fails on%s", d.System, propertyLabel(p.Property), seedList(" seeds ", p.NewlyFailing, 8)))
				}
			}
			for _, t := range d.Thresholds {
				if t.Crossed {
					why = append(why, fmt.Sprintf("%s --fail-on %s crossed", d.System, t.Spec))
				}
			}
			if r.Strict {
				for _, x := range d.Warnings {
					why = append(why, fmt.Sprintf("%s %s worse (WARNING, --strict)", d.System, x.Metric))
				}
			}
		}
		if n := r.warnings(); n > 0 && !r.Strict {
			why = append(why, fmt.Sprintf("also %s above", plural(n, "WARNING")))
		}
		// One reason a line, in 100 columns.
		fmt.Fprintf(w, "verdict: FAILED: %s\n", strings.Join(why, ";\n  "))
	}
	if r.Interrupted != "" {
		fmt.Fprintf(w, "INTERRUPTED (%s): the diff covers the seeds that ran on both sides\n", r.Interrupted)
	}
}

// plural is "1 WARNING", "2 WARNINGs".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// judge sets the verdict from the systems' deltas.
func (r *diffResult) judge() {
	r.Verdict = "unchanged"
	for _, d := range r.Systems {
		if d.Altered > 0 && r.Verdict == "unchanged" {
			r.Verdict = "changed"
		}
		if d.Seeds == 0 && r.Verdict == "unchanged" {
			r.Verdict = "incomplete" // nothing to compare: not "identical"
		}
		if d.newlyFailing() || d.crossed() || (r.Strict && len(d.Warnings) > 0) {
			r.Verdict = "failed"
		}
	}
	if r.Interrupted != "" && r.Verdict != "failed" {
		r.Verdict = "incomplete"
	}
}

// warnings counts the WARNINGs of every system.
func (r *diffResult) warnings() int {
	n := 0
	for _, d := range r.Systems {
		n += len(d.Warnings)
	}
	return n
}

// sideRunner runs seeds on both sides of a diff as explore children.
type sideRunner struct {
	ctx     context.Context
	bins    [2]string
	counted [2]bool // the side's binary counts the change: one seed at a time per process
	root    string
	tmp     string
	workers int
	names   []string // every system of the diff, in order
	common  []string // the selection and faults, for every child
	world   string   // --world, for the children of a system that draws worlds (worldFlag)
	// hashArgs are each side's flags for its records' hash version: the
	// same version on both sides (hashArgs).
	hashArgs [2][]string
	rounds   int
	// pre holds the base's seeds run while the working tree built (nil:
	// none).
	pre *prefetch
	// baseRecs are the base's records kept from earlier diffs (nil: none).
	baseRecs *recordCache
}

// sameHashVersion refuses records whose hashes are of two versions (a
// side that ignored --per-seed-hash): compared, every run would count as
// altered.
func sameHashVersion(recs [2][]seedRecord) error {
	var v [2]int
	for i := range recs {
		for _, r := range recs[i] {
			if r.Hash != "" {
				v[i] = traces.HashVersion(r.Hash)
				break
			}
		}
	}
	if v[0] != 0 && v[1] != 0 && v[0] != v[1] {
		return fmt.Errorf("the base's run hashes are version %d, the working tree's version %d: they cannot be compared (a fencesim that knows both versions takes --per-seed-hash)", v[0], v[1])
	}
	return nil
}

// hashArgs picks the hash version of both sides' --per-seed records: 2
// when both binaries can write it (their explore has --per-seed-hash),
// else 1, which a binary from before hash versions writes without the
// flag. Hashes of two versions never meet: every run would look altered.
func hashArgs(ctx context.Context, bins [2]string, root string) [2][]string {
	var has [2]bool
	for i, bin := range bins {
		has[i] = hasHashFlag(ctx, bin, root)
	}
	v := "1"
	if has[0] && has[1] {
		v = "2"
	}
	var out [2][]string
	for i := range bins {
		if has[i] {
			out[i] = []string{"--per-seed-hash", v}
		}
	}
	return out
}

// hasHashFlag reports whether a fencesim's explore takes --per-seed-hash.
func hasHashFlag(ctx context.Context, bin, root string) bool {
	help, err := runChildOut(ctx, bin, root, []string{"explore", "-h"})
	return err == nil && strings.Contains(help, "-per-seed-hash")
}

// run runs a plan's seeds of the given systems on both sides and returns
// each side's records, by system then seed. Both sides run at once, the
// workers split between them: the seeds of base and working tree
// interleave on the machine's cores, and neither side's slowest seeds
// leave a core idle at its end. One worker runs the sides one after the
// other. On an interruption, what the children finished is returned.
func (sr *sideRunner) run(p plan, names []string) ([2][]seedRecord, error) {
	sr.rounds++
	split := [2]int{max(sr.workers/2, 1), max(sr.workers-sr.workers/2, 1)}
	// The base's seeds that ran while the working tree built: the
	// working side gets every worker when they hold the whole plan.
	covered := sr.pre.covers(p)
	if covered {
		split[1] = sr.workers
	}
	slots := make(chan struct{}, min(sr.workers, 2))
	var recs [2][]seedRecord
	var wg sync.WaitGroup
	var errs [2]error
	for i := range sr.bins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			todo := p
			if i == 0 && sr.pre != nil {
				served, missing, err := sr.pre.take(p, names)
				recs[0] = served
				if err != nil || missing == nil {
					errs[0] = err
					return
				}
				var whole bool
				if todo, whole = missingPlan(p, missing); whole {
					recs[0] = nil
				}
			}
			if i == 1 || !covered {
				slots <- struct{}{}
				defer func() { <-slots }()
			}
			got, err := sr.side(sr.ctx, i, todo, names, split[i], fmt.Sprintf("%d", sr.rounds))
			recs[i] = append(recs[i], got...)
			errs[i] = err
		}()
	}
	wg.Wait()
	what := [2]string{"base revision", "working tree"}
	for i := range sr.bins {
		if errs[i] != nil && sr.ctx.Err() == nil {
			return recs, fmt.Errorf("the %s: %v", what[i], errs[i])
		}
	}
	for i := range recs {
		bySystemSeed(recs[i], sr.names)
	}
	return recs, nil
}

// side runs a plan's seeds of the given systems on one side, with that
// many workers, and returns its records. A side whose binary counts the
// change runs one seed at a time per process (the counters are the
// process's): as many explore --workers 1 children as it has workers,
// each a shard of the seeds (of the user's shard). On an interruption,
// what the children finished is returned.
func (sr *sideRunner) side(ctx context.Context, i int, p plan, names []string, workers int, round string) ([]seedRecord, error) {
	if i == 0 && sr.baseRecs != nil {
		kept, missing := sr.baseRecs.lookup(p, names)
		if missing == nil {
			return kept, nil
		}
		todo, whole := missingPlan(p, missing)
		if whole {
			kept = nil
		}
		ran, err := sr.run1(ctx, i, todo, names, workers, round)
		if err == nil && ctx.Err() == nil {
			sr.baseRecs.store(ran)
		}
		return append(kept, ran...), err
	}
	return sr.run1(ctx, i, p, names, workers, round)
}

// childArgs are the flags of every explore child of a diff, writing its
// records to file.
func childArgs(file string) []string {
	return []string{"explore", "--artifacts", "0", "--audit", "0", "--json", "--per-seed", file}
}

// run1 is side without the base's kept records.
func (sr *sideRunner) run1(ctx context.Context, i int, p plan, names []string, workers int, round string) ([]seedRecord, error) {
	sides := [2]string{"base", "working"}
	common := append(append(append([]string(nil), sr.common...), "--system", strings.Join(names, ",")), worldFlag(sr.world, names)...)
	children := [][]string{append(p.forward(), "--workers", strconv.Itoa(workers))}
	if sr.counted[i] {
		children = nil
		seeds := p.forward()[:2] // --seeds and the range or list
		for _, sh := range p.shards(workers) {
			children = append(children, append(append([]string(nil), seeds...), "--shard", sh.String(), "--workers", "1"))
		}
	}
	var files []string
	var mu sync.Mutex
	var err error
	var wg sync.WaitGroup
	for j, extra := range children {
		file := filepath.Join(sr.tmp, fmt.Sprintf("%s-%s-%d.jsonl", sides[i], round, j))
		files = append(files, file)
		a := append(append(append(childArgs(file), common...), sr.hashArgs[i]...), extra...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if e := runChild(ctx, sr.bins[i], sr.root, a); e != nil {
				mu.Lock()
				err = e
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err != nil && ctx.Err() == nil {
		return nil, err
	}
	var recs []seedRecord
	for _, file := range files {
		fh, err := os.Open(file)
		if err != nil {
			if ctx.Err() != nil {
				continue
			}
			return recs, err
		}
		rs, err := readPerSeedLines(fh, file, i == 0 && sr.baseRecs != nil)
		fh.Close()
		os.Remove(file)
		if err != nil {
			return recs, err
		}
		recs = append(recs, rs...)
	}
	return recs, nil
}

// worldFlag is --world for a child fencesim running the named systems:
// nothing when none of them draws worlds (the child would refuse it).
func worldFlag(world string, names []string) []string {
	for _, n := range names {
		if sys, err := systems.ByName(n); err == nil && len(sys.Supports().Worlds) > 0 {
			return []string{"--world", world}
		}
	}
	return nil
}

// forward renders the selection as flags for a child fencesim, but for
// --world (worldFlag: only a system that draws worlds takes it).
func (s *selection) forward() []string {
	var out []string
	for _, k := range s.knobs {
		out = append(out, "--knob", k)
	}
	for _, x := range s.sets {
		out = append(out, "--set", x)
	}
	if s.design != "" {
		abs, err := filepath.Abs(s.design)
		if err != nil {
			abs = s.design
		}
		out = append(out, "--design", abs)
	}
	if s.unsafe {
		out = append(out, "--unsafe")
	}
	return out
}

// sharedLevers is, per system, how many of its levers the base binary
// pulls as the working tree does: the length of the prefix their lever
// lists share (fencesim levers --json; none from a binary without it).
func sharedLevers(ctx context.Context, base, root string, list []systems.System) map[string]int {
	out := map[string]int{}
	var names []string
	for _, sys := range list {
		names = append(names, sys.Name())
	}
	got, err := runChildOut(ctx, base, root, []string{"levers", "--json", "--system", strings.Join(names, ",")})
	if err != nil {
		return out
	}
	var ls []listed
	if json.Unmarshal([]byte(got), &ls) != nil {
		return out
	}
	for _, sys := range list {
		for _, b := range ls {
			if b.System != sys.Name() {
				continue
			}
			n := 0
			for i, l := range sys.Supports().Levers {
				if i >= len(b.Levers) || b.Levers[i] != (leverInfo{Name: l.Name, Label: l.Label, Value: leverValue(l)}) {
					break
				}
				n++
			}
			out[sys.Name()] = n
		}
	}
	return out
}

// forward renders a bounded plan as flags for a child fencesim.
func (p plan) forward() []string {
	out := []string{"--seeds", fmt.Sprintf("%d-%d", p.first, p.last)}
	if p.list != nil {
		out[1] = seedListText(p.list)
	}
	if p.shard.N > 1 {
		out = append(out, "--shard", p.shard.String())
	}
	return out
}

// shards cuts a bounded plan's shard into k: shard i+n*j of n*k, for j
// in 0..k-1, holds the seeds s of shard i/n with s/n mod k = j, so the k
// shards partition shard i/n (every seed when the plan is not cut: i 0,
// n 1).
func (p plan) shards(k int) []summary.Shard {
	i, n := p.shard.I, p.shard.N
	if n <= 1 {
		i, n = 0, 1
	}
	out := make([]summary.Shard, k)
	for j := range out {
		out[j] = summary.Shard{I: i + n*uint64(j), N: n * uint64(k)}
	}
	return out
}

// bySystemSeed sorts one side's records, which k children wrote, as one
// explore writes them: by system (in the order they ran), then by seed.
func bySystemSeed(recs []seedRecord, names []string) {
	rank := map[string]int{}
	for i, n := range names {
		rank[n] = i
	}
	sort.SliceStable(recs, func(a, b int) bool {
		if recs[a].System != recs[b].System {
			return rank[recs[a].System] < rank[recs[b].System]
		}
		return recs[a].Seed < recs[b].Seed
	})
}

// diffThresholds parses --fail-on for each system that has the metric.
func diffThresholds(specs []string, list []systems.System) (map[string][]threshold, error) {
	out := map[string][]threshold{}
	for _, spec := range specs {
		var first error
		found := false
		for _, sys := range list {
			names, units := metricsOf(sys)
			t, err := parseThreshold(spec, names, units)
			if err != nil {
				if first == nil {
					first = err
				}
				continue
			}
			found = true
			for _, o := range out[sys.Name()] {
				if o.Metric == t.Metric && o.Stat == t.Stat && o.fall == t.fall {
					return nil, usagef("--fail-on %q and %q both bound the %s of %s on a %s: give each bound once", o.Spec, t.Spec, t.Stat, t.Metric, map[bool]string{true: "fall", false: "rise"}[t.fall])
				}
			}
			out[sys.Name()] = append(out[sys.Name()], t)
		}
		if !found {
			return nil, first
		}
	}
	return out, nil
}

// ---- the child fencesims ----

// runChild runs a fencesim binary. Exit 0 and 1 (a property failed) are
// results; exit 2 is the child's refusal, returned with its message.
func runChild(ctx context.Context, bin, dir string, args []string) error {
	_, err := runChildOut(ctx, bin, dir, args)
	return err
}

// errPredates marks a child's refusal of a flag it does not have: the
// revision predates it.
const errPredates = "flag provided but not defined"

// runChildOut is runChild that returns what the child printed.
func runChildOut(ctx context.Context, bin, dir string, args []string) (string, error) {
	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	// Interrupted, the child stops as fencesim does on Ctrl-C (it prints
	// and writes what finished); killed only past the grace.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = grace + time.Second
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == exitFail {
		return stdout.String(), nil
	}
	if err != nil {
		msg := revision.FirstLine(stderr.Bytes(), err)
		if strings.Contains(msg, errPredates) {
			msg += " (this revision predates what diff needs: pick a later --base)"
		}
		return stdout.String(), errors.New(msg)
	}
	return stdout.String(), nil
}

// keepOne runs a kept seed on both binaries with `fencesim run` under
// out/<system>-seed-<N>/{base,working}. A seed whose property flipped is
// minimized on the side that fails it and the schedule found is played on
// the other; when that cannot be done (a revision without run's
// --minimize or --schedule, a failure that does not come back, a
// minimized schedule that fails on both sides) both runs are the full
// seed, and Note says why.
func keepOne(ctx context.Context, bins [2]string, root string, sel selection, f systems.Faults, k *keptRun, out string) {
	sides := [2]string{"base", "working"}
	names := [2]string{"base revision", "working tree"}
	args := func(i int, extra ...string) []string {
		k.Dirs[i] = filepath.Join(out, fmt.Sprintf("%s-seed-%d", k.System, k.Seed), sides[i])
		a := append([]string{"run", "--system", k.System, "--seed", strconv.FormatUint(k.Seed, 10), "--faults", string(f), "--out", k.Dirs[i]}, sel.forward()...)
		a = append(a, worldFlag(sel.world, []string{k.System})...)
		return append(a, extra...)
	}
	full := func(note string) {
		k.Note, k.Minimized, k.MinimizedOn, k.Schedule, k.Faults = note, false, "", "", [2]int{}
		for i, bin := range bins {
			a := args(i)
			_ = os.RemoveAll(k.Dirs[i]) // what a minimizing attempt left
			if err := runChild(ctx, bin, root, a); err != nil && k.Error == "" {
				k.Error = fmt.Sprintf("%s: %v", sides[i], err)
			}
		}
	}
	if k.prop == "" {
		full("the full seed: a metric move has no failure for minimization to keep")
		return
	}
	m, o := k.fail, 1-k.fail
	id := systems.PropertyID(k.prop)
	said, err := runChildOut(ctx, bins[m], root, args(m, "--minimize", id))
	switch {
	case err != nil && strings.Contains(err.Error(), errPredates):
		full(fmt.Sprintf("the full seed: the %s's run has no --minimize (it predates it)", names[m]))
		return
	case err != nil:
		k.Error = fmt.Sprintf("%s: %v", sides[m], err)
		return
	}
	sched := filepath.Join(k.Dirs[m], fmt.Sprintf("%s-seed-%d-schedule.json", k.System, k.Seed))
	if _, err := os.Stat(sched); err != nil {
		full(fmt.Sprintf("the full seed: %s did not fail again on the %s to be minimized", id, names[m]))
		return
	}
	other, err := runChildOut(ctx, bins[o], root, args(o, "--schedule", sched))
	switch {
	case err != nil && strings.Contains(err.Error(), errPredates):
		full(fmt.Sprintf("the full seed: the %s's run has no --schedule (it predates it)", names[o]))
		return
	case err != nil && strings.Contains(err.Error(), "not a schedule of"):
		full(fmt.Sprintf("the full seed: the schedule minimized on the %s names nodes the %s's world does not have", names[m], names[o]))
		return
	case err != nil:
		k.Error = fmt.Sprintf("%s: %v", sides[o], err)
		return
	case strings.Contains(other, "\n  "+k.prop+": FAILED"):
		full(fmt.Sprintf("the full seed: the schedule minimized on the %s fails %s on the %s too", names[m], id, names[o]))
		return
	}
	k.Minimized, k.MinimizedOn, k.Schedule = true, sides[m], sched
	if x := faultsMoved.FindStringSubmatch(said); x != nil {
		k.Faults[0], _ = strconv.Atoi(x[1])
		k.Faults[1], _ = strconv.Atoi(x[2])
	}
}

// faultsMoved reads run --minimize's "N -> M fault actions".
var faultsMoved = regexp.MustCompile(`(\d+) -> (\d+) fault actions`)

// writeBothSides writes both sides' records, by seed, base first.
func writeBothSides(path string, recs [2][]seedRecord) error {
	all := append(append([]seedRecord(nil), recs[0]...), recs[1]...)
	rank := map[string]int{} // the systems in the order they ran
	for _, r := range all {
		if _, ok := rank[r.System]; !ok {
			rank[r.System] = len(rank)
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].System != all[j].System {
			return rank[all[i].System] < rank[all[j].System]
		}
		return all[i].Seed < all[j].Seed
	})
	var b bytes.Buffer
	for _, r := range all {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return usagef("--per-seed %s: %v", path, unwrapPath(err))
	}
	return nil
}

// ---- the most changed seeds ----

// mostChanged ranks a delta's altered seeds: newly failing first, then
// newly passing, then by how far their metrics moved (each metric's move
// over its spread, summed).
func mostChanged(d *runDelta, recs map[uint64][2]*seedRecord, n int) []keptRun {
	why := map[uint64]string{}
	score := map[uint64]float64{}
	prop := map[uint64]string{}
	fail := map[uint64]int{}
	for _, p := range d.Properties {
		for _, s := range p.NewlyFailing {
			if why[s] == "" {
				why[s] = p.Property + " newly fails"
				prop[s], fail[s] = p.Property, 1
			}
			score[s] = math.Inf(1)
		}
	}
	for _, p := range d.Properties {
		for _, s := range p.NewlyPassing {
			if why[s] == "" {
				why[s] = p.Property + " newly passes"
				prop[s], fail[s] = p.Property, 0
				score[s] = math.MaxFloat64
			}
		}
	}
	spread := map[string]float64{}
	for _, m := range d.Metrics {
		spread[m.Name] = math.Max(math.Abs(m.Sides[0].Mean), 1e-9)
	}
	for _, s := range d.AlteredSeeds {
		if why[s] != "" {
			continue
		}
		pair := recs[s]
		if pair[0] == nil || pair[1] == nil {
			continue
		}
		var t float64
		moved := ""
		best := 0.0
		for i, m := range pair[0].Metrics {
			if i >= len(pair[1].Metrics) || pair[1].Metrics[i].Name != m.Name {
				continue
			}
			x := math.Abs(stats.Sum(pair[1].Metrics[i].Values)-stats.Sum(m.Values)) / spread[m.Name]
			if math.IsNaN(x) {
				continue // a metric without a value on one side: no move to rank
			}
			// Finite and below a newly passing seed's score, so that the
			// order is total (a NaN or an infinite score would leave the
			// sort's result to the map order the seeds came in).
			t = math.Min(t+x, math.MaxFloat64/2)
			if x > best {
				best, moved = x, m.Name
			}
		}
		score[s] = t
		why[s] = "altered"
		if moved != "" {
			why[s] = "altered; " + moved + " moved most"
		}
	}
	seeds := make([]uint64, 0, len(score))
	for s := range score {
		seeds = append(seeds, s)
	}
	sort.Slice(seeds, func(i, j int) bool {
		if score[seeds[i]] != score[seeds[j]] {
			return score[seeds[i]] > score[seeds[j]]
		}
		return seeds[i] < seeds[j]
	})
	var out []keptRun
	for _, s := range seeds {
		if len(out) == n {
			break
		}
		out = append(out, keptRun{System: d.System, Seed: s, Why: why[s], prop: prop[s], fail: fail[s]})
	}
	return out
}

// keepChanged runs the most changed seeds of each system again on both
// binaries with `fencesim run`, which writes each run's trace and report.
func keepChanged(ctx context.Context, bins [2]string, root string, sel selection, f systems.Faults, ds []*runDelta, recs [2][]seedRecord, n int, out string, say func(string, ...any)) []keptRun {
	abs, err := filepath.Abs(out)
	if err != nil {
		abs = out
	}
	var kept []keptRun
	for _, d := range ds {
		if d.Altered == 0 {
			continue
		}
		pairs := map[uint64][2]*seedRecord{}
		for i := range recs {
			for j := range recs[i] {
				if r := &recs[i][j]; r.System == d.System {
					p := pairs[r.Seed]
					p[i] = r
					pairs[r.Seed] = p
				}
			}
		}
		for _, k := range mostChanged(d, pairs, n) {
			if ctx.Err() != nil {
				break
			}
			keepOne(ctx, bins, root, sel, f, &k, abs)
			kept = append(kept, k)
		}
	}
	if len(kept) > 0 {
		say("kept %d seeds under %s", len(kept), out)
	}
	return kept
}
