package systems

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fencesim/fencesim/sim"
)

// Minimized is a failing run's fault schedule reduced to the actions its
// failure needs, with the seed (and so the workload and every decision
// stream) fixed.
type Minimized struct {
	Property string       // the id of the property whose failure was kept
	Original sim.Schedule // the schedule of the failing run
	Schedule sim.Schedule // the minimized schedule (actions that are not faults, such as heal-all, kept)
	// Needed says, per action of Schedule, whether the failure disappears
	// when that action alone is removed. Actions that are not faults are
	// always marked needed.
	Needed   []bool
	Runs     int  // runs the minimization made, attribution included
	Complete bool // the search ended within its budget: Schedule is 1-minimal (and Needed exact)
	Result   *Result
}

// Removable reports whether minimization may remove an action: every fault,
// but not the heal-all that ends the faults (the run's liveness checks
// count on it).
func Removable(a sim.Action) bool { return a.Kind != sim.HealAll }

// Minimize reduces the schedule of a failing run by delta debugging (ddmin)
// while the first property that failed keeps failing, then removes each
// remaining action alone to say which ones the failure needs. budget
// bounds the runs of the search (attribution adds one run per remaining
// action). The last run of the minimized schedule is returned in Result
// (fast path: Options.Full off).
func Minimize(sys System, d Design, seed uint64, f Faults, failing *Result, budget int) (*Minimized, error) {
	return MinimizeContext(context.Background(), sys, d, seed, f, failing, budget)
}

// MinimizeContext is Minimize that also stops when ctx ends (a deadline or
// an interrupt): no run starts after that. A search cut short returns what
// it reached with Complete false, the actions it could not attribute
// marked needed; ending before the failing schedule was played again is
// an error that wraps ctx's.
func MinimizeContext(ctx context.Context, sys System, d Design, seed uint64, f Faults, failing *Result, budget int) (*Minimized, error) {
	ids := failing.FailedIDs()
	if len(ids) == 0 {
		return nil, fmt.Errorf("seed %d did not fail: nothing to minimize", seed)
	}
	// The property kept failing: the first failed verdict's, in verdict order.
	return MinimizeProperty(ctx, sys, d, seed, f, failing, ids[0], budget)
}

// MinimizeProperty is MinimizeContext keeping a given property failing
// (its id, PA1), not the first that failed: diff keeps the property that
// newly fails, which need not be the run's first failure. The run must
// fail it. The schedule minimized is the failing run's own (drawn or
// given).
func MinimizeProperty(ctx context.Context, sys System, d Design, seed uint64, f Faults, failing *Result, prop string, budget int) (*Minimized, error) {
	if !failing.Fails(prop) {
		return nil, fmt.Errorf("seed %d does not fail %s: nothing to minimize", seed, prop)
	}
	m := &Minimized{Property: prop, Original: failing.Schedule}
	var fixed, removable []int
	for i, a := range failing.Schedule {
		if Removable(a) {
			removable = append(removable, i)
		} else {
			fixed = append(fixed, i)
		}
	}
	build := func(keep []int) sim.Schedule {
		all := append(append([]int(nil), fixed...), keep...)
		sort.Ints(all)
		s := make(sim.Schedule, 0, len(all))
		for _, i := range all {
			s = append(s, failing.Schedule[i])
		}
		return s
	}
	cache := map[string]bool{}
	// last is the latest run that failed. Every set that fails when first
	// tested becomes the candidate at once, and the candidate only
	// shrinks, so last is always the candidate's run: only one result is
	// kept, not one per failing test.
	var last *Result
	lastKey := ""
	exhausted := false
	play := func(keep []int) (bool, *Result) {
		m.Runs++
		r := Run(sys, d, seed, f, Options{Schedule: build(keep), Given: true})
		return r.Fails(prop), r
	}
	test := func(keep []int) bool {
		k := key(keep)
		if v, ok := cache[k]; ok {
			return v
		}
		if m.Runs >= budget || ctx.Err() != nil {
			exhausted = true
			return false
		}
		fails, r := play(keep)
		cache[k] = fails
		if fails {
			last, lastKey = r, k
		}
		return fails
	}
	if !test(removable) {
		if err := ctx.Err(); err != nil && m.Runs == 0 {
			return nil, fmt.Errorf("minimization stopped before its first run: %w", err)
		}
		if exhausted {
			return nil, fmt.Errorf("minimization budget %d is too small", budget)
		}
		return nil, fmt.Errorf("seed %d: %s does not fail again when its own schedule is played: the run is not deterministic", seed, prop)
	}
	c := removable
	if test(nil) {
		c = nil
	}
	n := 2
	for len(c) >= 2 && !exhausted {
		chunks := split(c, n)
		found := false
		for _, ch := range chunks {
			if test(ch) {
				c, n, found = ch, 2, true
				break
			}
		}
		if !found && n > 2 {
			for _, ch := range chunks {
				if comp := without(c, ch); test(comp) {
					c, n, found = comp, max(n-1, 2), true
					break
				}
			}
		}
		if !found {
			if n >= len(c) {
				break
			}
			n = min(2*n, len(c))
		}
	}
	m.Complete = !exhausted
	m.Schedule = build(c)
	// Attribution: remove each remaining action alone.
	needed := map[int]bool{}
	for _, i := range c {
		rest := without(c, []int{i})
		fails, ok := cache[key(rest)]
		if !ok {
			if ctx.Err() != nil {
				m.Complete = false
				needed[i] = true
				continue
			}
			fails, _ = play(rest)
			cache[key(rest)] = fails
		}
		needed[i] = !fails
	}
	all := append(append([]int(nil), fixed...), c...)
	sort.Ints(all)
	for _, i := range all {
		m.Needed = append(m.Needed, !Removable(failing.Schedule[i]) || needed[i])
	}
	if lastKey != key(c) {
		// Not expected (see last); play the candidate again rather than
		// return another schedule's run.
		_, last = play(c)
	}
	m.Result = last
	return m, nil
}

func key(xs []int) string {
	var b strings.Builder
	for _, x := range xs {
		b.WriteString(strconv.Itoa(x))
		b.WriteByte(',')
	}
	return b.String()
}

// split cuts xs into n nearly equal consecutive chunks.
func split(xs []int, n int) [][]int {
	var out [][]int
	start := 0
	for i := 0; i < n; i++ {
		end := start + (len(xs)-start)/(n-i)
		if end > start {
			out = append(out, xs[start:end])
		}
		start = end
	}
	return out
}

func without(xs, drop []int) []int {
	d := map[int]bool{}
	for _, x := range drop {
		d[x] = true
	}
	var out []int
	for _, x := range xs {
		if !d[x] {
			out = append(out, x)
		}
	}
	return out
}

// GoLiteral renders a schedule as a Go expression to paste into a
// regression test (it needs the imports clock, sim and time).
func GoLiteral(s sim.Schedule) string {
	if len(s) == 0 {
		return "sim.Schedule{}"
	}
	var b strings.Builder
	b.WriteString("sim.Schedule{\n")
	for _, a := range s {
		b.WriteString("\t" + goAction(a) + ",\n")
	}
	b.WriteString("}")
	return b.String()
}

// GoImports lists the packages GoLiteral's text of s uses, for the hint
// beside it: time only when a duration is written (an unused import does
// not compile).
func GoImports(s sim.Schedule) string {
	if len(s) == 0 {
		return "sim"
	}
	if strings.Contains(GoLiteral(s), "time.") {
		return "clock, sim, time"
	}
	return "clock, sim"
}

var kindNames = map[sim.Kind]string{
	sim.Crash: "Crash", sim.Restart: "Restart", sim.Pause: "Pause", sim.Resume: "Resume", sim.Partition: "Partition",
	sim.Cut: "Cut", sim.Heal: "Heal", sim.Loss: "Loss", sim.Dup: "Dup", sim.Delay: "Delay", sim.Stall: "Stall",
	sim.Break: "Break", sim.Jump: "Jump", sim.Drift: "Drift", sim.CrashAt: "CrashAt", sim.Do: "Do", sim.HealAll: "HealAll",
}

func goAction(a sim.Action) string {
	var f []string
	f = append(f, "At: clock.Time("+goDur(time.Duration(a.At))+")")
	if k, ok := kindNames[a.Kind]; ok {
		f = append(f, "Kind: sim."+k)
	} else {
		f = append(f, "Kind: sim.Kind("+strconv.Quote(string(a.Kind))+")")
	}
	if a.Node != "" {
		f = append(f, "Node: "+strconv.Quote(a.Node))
	}
	if a.Peer != "" {
		f = append(f, "Peer: "+strconv.Quote(a.Peer))
	}
	if len(a.Groups) > 0 {
		gs := make([]string, len(a.Groups))
		for i, g := range a.Groups {
			qs := make([]string, len(g))
			for j, n := range g {
				qs[j] = strconv.Quote(n)
			}
			gs[i] = "{" + strings.Join(qs, ", ") + "}"
		}
		f = append(f, "Groups: [][]string{"+strings.Join(gs, ", ")+"}")
	}
	if a.Rate != 0 {
		f = append(f, "Rate: "+strconv.FormatInt(a.Rate, 10))
	}
	if a.For != 0 {
		f = append(f, "For: "+goDur(a.For))
	}
	if a.Amount != 0 {
		f = append(f, "Amount: "+goDur(a.Amount))
	}
	if a.Point != "" {
		f = append(f, "Point: "+strconv.Quote(a.Point))
	}
	if a.Arg != "" {
		f = append(f, "Arg: "+strconv.Quote(a.Arg))
	}
	if a.Count != 0 {
		f = append(f, "Count: "+strconv.Itoa(a.Count))
	}
	if a.FromStart {
		f = append(f, "FromStart: true")
	}
	return "{" + strings.Join(f, ", ") + "}"
}

// goDur renders a duration as a Go constant expression.
func goDur(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Second, "time.Second"}, {time.Millisecond, "time.Millisecond"}, {time.Microsecond, "time.Microsecond"}} {
		if d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + " * " + u.name
		}
	}
	return "time.Duration(" + strconv.FormatInt(int64(d), 10) + ")"
}
