package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fencesim/fencesim/internal/summary"
	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/sim"
)

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// newFlags returns a flag set that reports errors to its caller only.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("fencesim "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses flags and positional arguments in any order. done is true
// when the command must stop (help printed, or a bad flag), with code.
func parse(e *env, fs *flag.FlagSet, c command, args []string) (pos []string, code int, done bool) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				help(e.stdout, fs, c)
				return nil, exitOK, true
			}
			fmt.Fprintf(e.stderr, "fencesim %s: %s (fencesim %s -h for help)\n", c.name, err, c.name)
			return nil, exitUsage, true
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, 0, false
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), 0, false
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

func help(w io.Writer, fs *flag.FlagSet, c command) {
	fmt.Fprintf(w, "Usage: fencesim %s %s\n\n%s.\n\nFlags (-flag and --flag are the same):\n", c.name, c.args, upperFirst(c.summary))
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	exits := strings.Replace(exitStatus(c.interruptible), "; explore, compare, mutants; merge when a shard was)", ")", 1)
	if x := listingExits(c.name); x != "" {
		exits = x
	}
	fmt.Fprintf(w, "\nExit status: %s.\n", exits)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func commandByName(name string) command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	panic("no command " + name)
}

// ---- systems and designs ----

// selection is the --system, --knob, --set and --design flags.
type selection struct {
	system string
	knobs  multi
	sets   multi
	design string
	unsafe bool
	world  string
	// warning is set by designOf when --unsafe waived a rule: the one line
	// the command prints before it runs.
	warning string
	// fs is the flag set the selection's flags are parsed by (nil when
	// the command registers --system alone): systems reads which flags
	// were given.
	fs *flag.FlagSet
}

func (s *selection) register(fs *flag.FlagSet, def string) {
	s.system, s.fs = def, fs
	fs.StringVar(&s.system, "system", def, "the system: "+strings.Join(systems.Names(), ", ")+", or all (a comma-separated list works too)")
	fs.Var(&s.knobs, "knob", "turn a design knob on (repeatable); see fencesim mutants for the registry")
	fs.Var(&s.sets, "set", "set a design parameter, `name=value` (repeatable), e.g. --set lease=90s")
	fs.StringVar(&s.design, "design", "", "a design `FILE` (JSON, as in a trace header); --knob and --set apply on top")
	fs.StringVar(&s.world, "world", "drawn", "system A: how much of each run's world is drawn: fixed (the design's fleet, 12 submissions), drawn (fleet, sandboxes per worker_id, a zombie, request ids, poison, rejudges, arbiters, 1-50 submissions) or wide (drawn, and the timing parameters too); refused with a --system that draws no worlds (outbox, twopc); with every system it applies to the arbiter's runs")
	fs.BoolVar(&s.unsafe, "unsafe", false, "run a design whose timing rules refuse it (heartbeat >= lease, unconfirmed_lease > lease, backoff_cap < backoff_base), with a warning: to measure such a configuration (the arbiter's design)")
}

// changed reports whether the design differs from the default.
func (s *selection) changed() bool {
	return len(s.knobs) > 0 || len(s.sets) > 0 || s.design != "" || s.unsafe
}

// given reports whether a flag of the selection was on the command line.
func (s *selection) given(name string) bool {
	return s.fs != nil && isSet(s.fs, name)
}

// systems resolves --system. With a design change and no --system, the
// knobs name the system. An empty --system, a system, knob or parameter
// named twice, and --world for systems that draw no worlds are refused.
func (s *selection) systems(explicit bool) ([]systems.System, error) {
	name := strings.TrimSpace(s.system)
	if name == "" && (explicit || s.given("system") || s.system != "") {
		return nil, usagef("--system is empty: name a system (%s) or all", strings.Join(systems.Names(), ", "))
	}
	if err := once("--knob", s.knobs, func(k string) string { return k }); err != nil {
		return nil, err
	}
	if err := onceSets(s.sets); err != nil {
		return nil, err
	}
	if s.changed() && (name == "" || name == "all") && !explicit {
		owner := ""
		for _, k := range s.knobs {
			sys, ok := systems.OwnerOf(k)
			if !ok {
				return nil, usagef("unknown knob %q (%s)", k, knobList(systems.All()))
			}
			if owner != "" && owner != sys.Name() {
				return nil, usagef("knobs %q of %s and of %s: pick one system with --system", s.knobs.String(), owner, sys.Name())
			}
			owner = sys.Name()
		}
		if owner == "" {
			return nil, usagef("--set and --design need --system (one of %s)", strings.Join(systems.Names(), ", "))
		}
		name = owner
	}
	var out []systems.System
	if name == "" || name == "all" {
		out = systems.All()
	} else {
		for _, n := range strings.Split(name, ",") {
			sys, err := systems.ByName(strings.TrimSpace(n))
			if err != nil {
				return nil, &usageError{err.Error()}
			}
			out = append(out, sys)
		}
	}
	for i, sys := range out {
		for _, other := range out[:i] {
			if other.Name() == sys.Name() {
				return nil, usagef("--system %s names %s twice: name each system once", s.system, sys.Name())
			}
		}
	}
	if s.changed() && len(out) > 1 {
		return nil, usagef("--knob, --set and --design change one system's design: pick it with --system (one of %s)", strings.Join(systems.Names(), ", "))
	}
	if s.given("world") {
		var drawn, names []string
		for _, sys := range out {
			names = append(names, sys.Name())
			if len(sys.Supports().Worlds) > 0 {
				drawn = append(drawn, sys.Name())
			}
		}
		if len(drawn) == 0 {
			verb := "draws"
			if len(names) > 1 {
				verb = "draw"
			}
			return nil, usagef("--world %s: %s %s no worlds (--world is for %s): drop --world", s.world, strings.Join(names, " and "), verb,
				strings.Join(supporting(func(x systems.Support) bool { return len(x.Worlds) > 0 }), ", "))
		}
	}
	return out, nil
}

// once refuses an entry of a repeatable flag given twice (key names what
// must differ).
func once(flagName string, vals []string, key func(string) string) error {
	seen := map[string]string{}
	for _, v := range vals {
		k := key(v)
		if prev, dup := seen[k]; dup {
			if prev == v {
				return usagef("%s %s is given twice: give it once", flagName, v)
			}
			return usagef("%s %s is given twice (%s, %s): give it once, with the value you mean", flagName, k, prev, v)
		}
		seen[k] = v
	}
	return nil
}

// onceSets refuses a parameter that --set sets twice (the later would
// win silently).
func onceSets(sets []string) error {
	return once("--set", sets, func(v string) string {
		name, _, ok := strings.Cut(v, "=")
		if !ok {
			return v // malformed: the design reports it
		}
		return strings.TrimSpace(name)
	})
}

// designOf builds the design of a system from the flags (the default when
// there are none).
func (s *selection) designOf(sys systems.System) (systems.Design, error) {
	var file []byte
	if s.design != "" {
		b, err := os.ReadFile(s.design)
		if err != nil {
			return systems.Design{}, usagef("--design: %v", err)
		}
		if err := checkDesignFile("design", s.design, b, sys); err != nil {
			return systems.Design{}, err
		}
		file = b
	}
	sets := s.sets
	if s.unsafe {
		if !slices.Contains(sys.Params(), unsafeParam) {
			return systems.Design{}, usagef("--unsafe: the %s design has no rules to waive (only the arbiter's timing rules can be)", sys.Name())
		}
		sets = append(multi{unsafeParam + "=true"}, sets...)
	}
	d, err := sys.NewDesign(s.knobs, sets, file)
	if err == nil && s.unsafe {
		if _, strict := sys.NewDesign(s.knobs, s.sets, file); strict != nil {
			s.warning = fmt.Sprintf("warning: --unsafe: running the %s design although its rules refuse it: %v", sys.Name(), strict)
		}
	}
	if err == nil && len(sys.Supports().Worlds) > 0 {
		if werr := sys.Supports().WorldCheck(s.world); werr != nil {
			return systems.Design{}, usagef("--world: %v", werr)
		}
		d.World = s.world
	}
	if err != nil {
		msg := err.Error()
		for _, k := range s.knobs {
			if owner, ok := systems.OwnerOf(k); ok && owner.Name() != sys.Name() && strings.Contains(msg, strconv.Quote(k)) {
				msg += fmt.Sprintf(" (%s is a knob of %s)", k, owner.Name())
			}
		}
		if s.design != "" && strings.Contains(msg, "design:") {
			msg = "--design " + s.design + ": " + msg
			if strings.Contains(msg, "json:") {
				msg += ": " + designWant(sys)
			}
		}
		return systems.Design{}, &usageError{msg}
	}
	return d, nil
}

// checkDesignFile refuses a design file (of --design or --baseline) that
// is not a JSON object, naming the file, where it breaks and what it must
// hold. A JSON null would be taken as the default design.
func checkDesignFile(flagName, path string, b []byte, sys systems.System) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return usagef("--%s %s: not a JSON object (%s): %s", flagName, path, jsonError(b, err), designWant(sys))
	}
	if m == nil {
		return usagef("--%s %s: not a JSON object (null): %s", flagName, path, designWant(sys))
	}
	return nil
}

// designWant says what a design file holds.
func designWant(sys systems.System) string {
	return fmt.Sprintf("want the %s design's parameters as a JSON object, as a trace header's \"design\" holds them (fencesim params --system %s lists them)", sys.Name(), sys.Name())
}

// jsonError is a JSON decoding error with the line it is on.
func jsonError(b []byte, err error) string {
	var off int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		if typ.Field == "" {
			return "it is a JSON " + typ.Value
		}
		off = typ.Offset
	}
	if off < 0 || off > int64(len(b)) {
		return err.Error()
	}
	return fmt.Sprintf("line %d: %v", 1+strings.Count(string(b[:off]), "\n"), err)
}

// unsafeParam is the design switch --unsafe turns on.
const unsafeParam = "allow_unsafe"

// describe renders a design for tables: its knobs and set parameters.
func (s *selection) describe(d systems.Design) string {
	var parts []string
	if s.design != "" {
		parts = append(parts, "file "+s.design)
	}
	if len(d.Knobs) > 0 {
		parts = append(parts, "knobs "+strings.Join(d.Knobs, ", "))
	}
	if len(s.sets) > 0 {
		parts = append(parts, "set "+strings.Join(s.sets, ", "))
	}
	if len(parts) == 0 {
		return "default"
	}
	return strings.Join(parts, "; ")
}

// ---- seeds and shards ----

// parseShard parses --shard i/n (summary.ParseShard) as a usage error.
func parseShard(v string) (summary.Shard, error) {
	sh, err := summary.ParseShard(v)
	if err != nil {
		return summary.Shard{}, usagef("%v", err)
	}
	return sh, nil
}

// seedFlags are --seeds, --runs, --first, --time, --shard and --steer.
type seedFlags struct {
	seeds  string
	runs   int
	first  uint64
	budget time.Duration
	shard  string
	steer  string
}

func (s *seedFlags) register(fs *flag.FlagSet, defRuns int, timed bool) {
	fs.StringVar(&s.seeds, "seeds", "", "a seed range `A-B`, one seed, or a list of both (5,9,12-14: the seeds a directed search ran)")
	fs.IntVar(&s.runs, "runs", defRuns, "how many seeds to run, from --first")
	fs.Uint64Var(&s.first, "first", 1, "the first seed")
	if timed {
		fs.DurationVar(&s.budget, "time", 0, "a time budget for the whole command instead of a seed count (e.g. 60s): runs, minimization and artifacts end within it plus a 2s grace; split evenly over the systems; seeds from --first on; each system plays at least one run however short the budget, as go test -benchtime does")
	}
	fs.StringVar(&s.shard, "shard", "", "run only shard `i/n` of the seeds (seed s belongs to shard s mod n; i from 0)")
	fs.StringVar(&s.steer, "steer", "", "steer every seed's world with these `LEVERS` of the system (e.g. arbiters=2,old-leader,on:crash-at; --steer help lists them): the seeds of --first and --runs become steered seeds (docs/directed.md), each one that replays alone")
}

// steered turns a plan's seeds into steered seeds pulling the --steer
// levers of its one system (sim.SteerSeed): the worlds a user wants
// their change tried in, each run a seed that replays alone.
func (s *seedFlags) steered(fs *flag.FlagSet, p plan, list []systems.System) (plan, error) {
	if !isSet(fs, "steer") {
		return p, nil
	}
	var levers []sim.Lever
	if len(list) == 1 {
		levers = list[0].Supports().Levers
	}
	if len(levers) == 0 {
		return p, usagef("--steer %q: pick one system that has levers (--system arbiter)", s.steer)
	}
	var names []string
	for _, l := range levers {
		names = append(names, l.Name)
	}
	if s.steer == "help" || s.steer == "" {
		return p, usagef("--steer: a comma-separated list of %s's levers: %s", list[0].Name(), strings.Join(names, ", "))
	}
	if isSet(fs, "seeds") || p.budget > 0 {
		return p, usagef("--steer steers the seeds of --first and --runs: do not combine it with --seeds or --time")
	}
	var mask uint64
	for _, name := range strings.Split(s.steer, ",") {
		i := slices.Index(names, strings.TrimSpace(name))
		if i < 0 {
			return p, usagef("--steer: %q is not a lever of %s (one of %s)", strings.TrimSpace(name), list[0].Name(), strings.Join(names, ", "))
		}
		mask |= 1 << uint(i)
	}
	if p.last >= sim.SteerBaseLimit {
		return p, usagef("--steer: a steered seed's number is below %d: lower --first or --runs", sim.SteerBaseLimit)
	}
	if p.last-p.first >= maxSteerRuns {
		return p, usagef("--steer: at most %d runs (the seeds are listed): lower --runs, or split them with --first", maxSteerRuns)
	}
	var seeds []uint64
	for n := p.first; n <= p.last; n++ {
		seeds = append(seeds, sim.SteerSeed(n, mask))
	}
	p.list, p.first, p.last = seeds, seeds[0], seeds[len(seeds)-1]
	p.steer = sim.SteerNames(seeds[0], levers)
	return p, nil
}

// plan is the seeds a command runs.
type plan struct {
	first, last uint64        // inclusive; last is unbounded with a time budget
	budget      time.Duration // 0: run first..last
	shard       summary.Shard
	// list, when --seeds is a list, holds its seeds (sorted, unique,
	// first and last among them): the plan is those only.
	list []uint64
	// steer names the levers a --steer plan's seeds pull.
	steer string
}

// maxSteerRuns bounds a --steer plan, whose seeds are listed.
const maxSteerRuns = 1_000_000

// maxListSpan bounds the seeds a --seeds list spans, from its smallest to
// its largest: loops over a plan go seed by seed.
const maxListSpan = 100_000_000

// has reports whether seed s is in the plan's shard (and list).
func (p plan) has(s uint64) bool {
	if !p.shard.Has(s) {
		return false
	}
	if p.list == nil {
		return true
	}
	_, ok := slices.BinarySearch(p.list, s)
	return ok
}

// parseSeedList reads --seeds as a list of seeds and ranges.
func parseSeedList(v string) ([]uint64, error) {
	bad := usagef("--seeds %q: want a range A-B with A <= B (e.g. --seeds 1-1000), one seed, or a list of them (e.g. --seeds 5,9,12-14)", v)
	var out []uint64
	var parts [][2]uint64
	for _, part := range strings.Split(v, ",") {
		a, b, isRange := strings.Cut(part, "-")
		lo, err1 := strconv.ParseUint(strings.TrimSpace(a), 10, 64)
		hi, err2 := lo, error(nil)
		if isRange {
			hi, err2 = strconv.ParseUint(strings.TrimSpace(b), 10, 64)
		}
		if err1 != nil || err2 != nil || hi < lo {
			return nil, bad
		}
		parts = append(parts, [2]uint64{lo, hi})
		if hi-lo > maxListSpan {
			return nil, usagef("--seeds %q: a list spans at most %d seeds", v, maxListSpan)
		}
		for s := lo; ; s++ {
			out = append(out, s)
			if s == hi {
				break
			}
		}
		if len(out) > maxListSpan {
			return nil, usagef("--seeds %q: a list spans at most %d seeds", v, maxListSpan)
		}
	}
	// A seed given twice (a repeat, or ranges that overlap) is refused:
	// the parts sorted by their first seed, each must end before the next.
	slices.SortStableFunc(parts, func(a, b [2]uint64) int { return cmp.Compare(a[0], b[0]) })
	for i := 1; i < len(parts); i++ {
		a, b := parts[i-1], parts[i]
		if b[0] <= a[1] {
			if a == b && a[0] == a[1] {
				return nil, usagef("--seeds %q: seed %d is given twice: give each seed once", v, a[0])
			}
			return nil, usagef("--seeds %q: seed %d is given twice (in %s and %s): give each seed once", v, b[0], rangeText(a[0], a[1]), rangeText(b[0], b[1]))
		}
	}
	slices.Sort(out)
	return out, nil
}

// rangeText renders seeds lo to hi as --seeds writes them.
func rangeText(lo, hi uint64) string {
	if lo == hi {
		return strconv.FormatUint(lo, 10)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// seedList renders sorted seeds as a --seeds list, runs as ranges.
func seedListText(seeds []uint64) string {
	var b strings.Builder
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(seeds[i], 10))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.FormatUint(seeds[j], 10))
		}
		i = j + 1
	}
	return b.String()
}

func (s *seedFlags) plan(fs *flag.FlagSet) (plan, error) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	sh, err := parseShard(s.shard)
	if err != nil {
		return plan{}, err
	}
	p := plan{shard: sh}
	if set["seeds"] {
		if set["runs"] || set["first"] || set["time"] {
			return plan{}, usagef("--seeds is a range: do not combine it with --runs, --first or --time")
		}
		if strings.Contains(s.seeds, ",") {
			list, err := parseSeedList(s.seeds)
			if err != nil {
				return plan{}, err
			}
			p.list, p.first, p.last = list, list[0], list[len(list)-1]
			return p, nil
		}
		a, b, isRange := strings.Cut(s.seeds, "-")
		lo, err1 := strconv.ParseUint(strings.TrimSpace(a), 10, 64)
		hi, err2 := lo, error(nil)
		if isRange {
			hi, err2 = strconv.ParseUint(strings.TrimSpace(b), 10, 64)
		}
		if err1 != nil || err2 != nil || hi < lo {
			return plan{}, usagef("--seeds %q: want a range A-B with A <= B (e.g. --seeds 1-1000) or one seed", s.seeds)
		}
		p.first, p.last = lo, hi
		return p, nil
	}
	if set["time"] {
		if set["runs"] {
			return plan{}, usagef("--time is a budget: do not combine it with --runs")
		}
		if s.budget <= 0 {
			return plan{}, usagef("--time %v: want a positive duration, e.g. --time 60s", s.budget)
		}
		p.first, p.last, p.budget = s.first, ^uint64(0), s.budget
		return p, nil
	}
	if s.runs < 1 {
		return plan{}, usagef("--runs %d: want at least 1", s.runs)
	}
	if s.first+uint64(s.runs-1) < s.first {
		return plan{}, usagef("--runs %d from --first %d: the seeds end at %d, lower --first or --runs", s.runs, s.first, ^uint64(0))
	}
	p.first, p.last = s.first, s.first+uint64(s.runs)-1
	return p, nil
}

// text renders the seeds for summaries (the same in every shard).
func (p plan) text() string {
	if p.budget > 0 {
		return fmt.Sprintf("%d- for %v", p.first, p.budget)
	}
	if p.steer != "" {
		_, a := sim.Steering(p.first)
		_, b := sim.Steering(p.last)
		return fmt.Sprintf("%s (numbers %d-%d steered: %s)", seedListText(p.list), a, b, p.steer)
	}
	if p.list != nil {
		return seedListText(p.list)
	}
	if p.first == p.last {
		return strconv.FormatUint(p.first, 10)
	}
	return fmt.Sprintf("%d-%d", p.first, p.last)
}

// hasSteered reports whether the plan holds a steered seed.
func (p plan) hasSteered() bool {
	if mask, _ := sim.Steering(p.last); mask != 0 {
		return true
	}
	return false
}

// steerable says why a plan's steered seeds cannot be played by a binary
// that shares only shared[system] levers with this one.
func (p plan) steerable(list []systems.System, shared map[string]int) error {
	for _, sys := range list {
		n := shared[sys.Name()]
		var bad bool
		p.each(func(s uint64) bool {
			mask, _ := sim.Steering(s)
			bad = mask>>uint(n) != 0
			return !bad
		})
		if bad {
			if n == 0 {
				return fmt.Errorf("it shares none of %s's levers (a revision before `fencesim levers` lists none, and one before steered seeds plays one as another, plain seed): diff plain seeds, or against a later base", sys.Name())
			}
			return fmt.Errorf("it pulls only the first %d of %s's levers: steer by those", n, sys.Name())
		}
	}
	return nil
}

// checkSteered refuses a plan's steered seeds that a system cannot play
// (sim.CheckSteer): a steered seed of a system without levers, or one
// naming levers it does not have. A range is checked at its ends (the
// lever sets of the seeds between lie between theirs).
func (p plan) checkSteered(list []systems.System) error {
	ends := []uint64{p.first, p.last}
	if p.list != nil {
		ends = p.list
	}
	if p.budget > 0 {
		ends = ends[:1]
	}
	for _, sys := range list {
		for _, s := range ends {
			if err := sim.CheckSteer(s, sys.Name(), sys.Supports().Levers); err != nil {
				return usagef("%v", err)
			}
		}
	}
	return nil
}

// each calls f with the plan's seeds in this shard, in order, until f
// returns false (a list's seeds only: steered seeds lie far apart).
func (p plan) each(f func(uint64) bool) {
	if p.list != nil {
		for _, s := range p.list {
			if p.shard.Has(s) && !f(s) {
				return
			}
		}
		return
	}
	for s := p.first; ; s++ {
		if p.shard.Has(s) && !f(s) {
			return
		}
		if s == p.last {
			return
		}
	}
}

// after is the plan's next seed in this shard after s.
func (p plan) after(s uint64) (uint64, bool) {
	if p.list != nil {
		i, found := slices.BinarySearch(p.list, s)
		if found {
			i++
		}
		for ; i < len(p.list); i++ {
			if p.shard.Has(p.list[i]) {
				return p.list[i], true
			}
		}
		return 0, false
	}
	for s != p.last {
		s++
		if p.has(s) {
			return s, true
		}
	}
	return 0, false
}

// count is how many runs a bounded plan makes in this shard, the audit's
// second runs included, without listing the seeds.
func (p plan) count(audit float64) int64 {
	var n int64
	p.each(func(s uint64) bool {
		n++
		if audited(s, audit) {
			n++
		}
		return true
	})
	return n
}

// seeds lists the seeds of a bounded plan in this shard.
func (p plan) seeds() []uint64 {
	var out []uint64
	p.each(func(s uint64) bool {
		out = append(out, s)
		return true
	})
	return out
}

// workersFlag registers --workers.
func workersFlag(fs *flag.FlagSet) *int {
	return fs.Int("workers", runtime.GOMAXPROCS(0), "parallel runs (one run per goroutine)")
}

// maxWorkers bounds --workers: each worker is a goroutine with its own
// buffers, and a pool sized by a mistyped number exhausts memory before
// it runs anything.
const maxWorkers = 1024

func checkWorkers(n int) error {
	if n < 1 || n > maxWorkers {
		return usagef("--workers %d: want 1 to %d (this machine has %d CPUs)", n, maxWorkers, runtime.NumCPU())
	}
	return nil
}

func parseFaults(v string) (systems.Faults, error) {
	f, err := systems.ParseFaults(v)
	if err != nil {
		return "", usagef("--faults: %v", err)
	}
	return f, nil
}

// ---- output places ----

// checkOutDir checks that artifacts can be written under dir without
// writing anything that stays: an existing directory must take a file; a
// missing one must be creatable under its nearest existing parent.
func checkOutDir(dir string) error {
	if dir == "" {
		return usagef("--out is empty")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return usagef("--out %s: %v", dir, err)
	}
	p := abs
	for {
		st, err := os.Stat(p)
		if err == nil {
			if !st.IsDir() {
				return usagef("--out %s: %s is not a directory", dir, p)
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return usagef("--out %s: %v", dir, unwrapPath(err))
		}
		parent := filepath.Dir(p)
		if parent == p {
			return usagef("--out %s: no existing parent directory", dir)
		}
		p = parent
	}
	probe, err := os.MkdirTemp(p, ".fencesim-probe-*")
	if err != nil {
		return usagef("--out %s: cannot write in %s: %v", dir, p, unwrapPath(err))
	}
	return os.Remove(probe)
}

// checkOutFile checks that a file can be written (its directory exists and
// takes a file), without creating it.
func checkOutFile(flagName, path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return usagef("--%s %s: is a directory", flagName, path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return usagef("--%s %s: %v", flagName, path, unwrapPath(err))
	}
	if !st.IsDir() {
		return usagef("--%s %s: %s is not a directory", flagName, path, dir)
	}
	probe, err := os.CreateTemp(dir, ".fencesim-probe-*")
	if err != nil {
		return usagef("--%s %s: cannot write in %s: %v", flagName, path, dir, unwrapPath(err))
	}
	probe.Close()
	return os.Remove(probe.Name())
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
