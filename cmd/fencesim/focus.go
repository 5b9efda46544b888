package main

import (
	"fmt"
	"math/bits"
	"reflect"
	"slices"
	"strings"

	"github.com/fencesim/fencesim/internal/directed"
	"github.com/fencesim/fencesim/internal/revision"
	"github.com/fencesim/fencesim/internal/summary"
	"github.com/fencesim/fencesim/internal/systems"
)

// focusFlag is diff's --focus: auto (the default), on (--focus) or off
// (--focus=false).
type focusFlag struct{ mode string }

func (f *focusFlag) String() string {
	if f == nil || f.mode == "" {
		return "auto"
	}
	return f.mode
}

func (f *focusFlag) Set(v string) error {
	switch v {
	case "true", "on":
		f.mode = "on"
	case "false", "off":
		f.mode = "off"
	case "auto":
		f.mode = "auto"
	default:
		return fmt.Errorf("want --focus, --focus=false or --focus=auto")
	}
	return nil
}

func (f *focusFlag) IsBoolFlag() bool { return true }

// focusWarmup is how many seeds a focused diff runs in order first: the
// runs its choice (auto) and its first rewards come from.
const focusWarmup = 32

// focusRare is the share of the warm-up's runs under which a hunk counts
// as rarely run: --focus=auto focuses then.
const focusRare = 0.25

// diffFocus is what a diff's focus did, in its result.
type diffFocus struct {
	// Mode is "directed" (the seeds after the warm-up were picked by the
	// search) or "uniform".
	Mode string `json:"mode"`
	Why  string `json:"why"`
	// Seeds is the seeds in words when directed.
	Seeds   string        `json:"seeds,omitempty"`
	Systems []focusSystem `json:"systems,omitempty"`
}

// focusSystem is one system's directed search in a diff.
type focusSystem struct {
	System string `json:"system"`
	// Order is the seeds in the order they were picked (each runs on both
	// sides; each replays with explore --seeds S on either build).
	Order    []uint64           `json:"order"`
	Favoured []summary.Favoured `json:"favoured,omitempty"`
	// Uniform, when set, says why this system's seeds were not picked by
	// the search but run in order: the warm-up showed the change never
	// reached it (no changed line ran, no trace altered).
	Uniform string `json:"uniform,omitempty"`
}

// focuser runs a diff's seeds under --focus.
type focuser struct {
	mode       string // auto, on, off
	searchSeed uint64
	// shared is, per system, how many of its levers the base pulls as
	// the working tree does (sharedLevers): the levers the search may
	// pull (a base that plays none plays a steered seed as another, plain
	// seed).
	shared  map[string]int
	designs map[string]systems.Design
	res     *diffFocus
}

// levers are the levers the search may pull: those both sides pull alike.
func (fo *focuser) levers(sys systems.System) []string {
	return leverNames(sys)[:fo.shared[sys.Name()]]
}

// run runs the plan under focus: a warm-up of the first seeds in order,
// then (on, or auto when a hunk of the change ran in few warm-up runs)
// rounds of seeds picked per system by a directed search rewarded by what
// each seed's pair of runs showed: a property flipped, the trace altered,
// a metric moved, the change's rarely run hunks executed. Otherwise the
// rest of the seeds in order, as without focus.
func (fo *focuser) run(sr *sideRunner, p plan, list []systems.System, cov *diffCoverage, say func(string, ...any)) ([2][]seedRecord, error) {
	n := int(p.last - p.first + 1)
	w := min(focusWarmup, n)
	fo.res = &diffFocus{Mode: "uniform"}
	warm := plan{first: p.first, last: p.first + uint64(w) - 1}
	say("focus: a warm-up of %d seeds in order on both sides", w)
	recs, err := sr.run(warm, sr.names)
	if err != nil || sr.ctx.Err() != nil {
		return recs, err
	}
	rare := rareHunks(cov, recs)
	switch {
	case fo.mode == "on":
		fo.res.Why = "--focus"
	case cov == nil:
		fo.res.Why = "no change under model/ was counted: nothing to focus on"
	case len(rare) == 0:
		fo.res.Why = fmt.Sprintf("every hunk of the change ran in at least %.0f%% of the %d warm-up runs", 100*focusRare, w)
	default:
		h := cov.Hunks[rare[0]]
		at := h.where()
		if h.warmAt != "" {
			at = fmt.Sprintf("%s:%s (of the hunk at %s)", h.File, h.warmAt, h.Work)
		}
		fo.res.Why = fmt.Sprintf("%s ran in %d of the %d warm-up runs", at, h.warm, h.warmRuns)
	}
	if n == w {
		fo.res.Why = fmt.Sprintf("the %d seeds are all the warm-up's", n)
	}
	if (fo.mode == "auto" && len(rare) == 0) || n == w {
		if n > w {
			say("focus: uniform seeds (%s)", fo.res.Why)
			rest, err := sr.run(plan{first: warm.last + 1, last: p.last}, sr.names)
			recs = concat(recs, rest)
			if err != nil {
				return recs, err
			}
		}
		return recs, nil
	}
	fo.res.Mode = "directed"
	sr.pre.dropRest() // the rest of the seeds in order, run ahead on the base: the search picks its own
	say("focus: directed (%s): the other %d seeds of each system are picked in rounds", fo.res.Why, n-w)
	for _, sys := range list {
		if why := unreached(sys.Name(), recs, w); why != "" {
			// A search with nothing to steer by spends the seeds as
			// uniform ones would, under a "directed" label: in order.
			fs := focusSystem{System: sys.Name(), Uniform: why}
			for s := warm.first; s <= p.last; s++ {
				fs.Order = append(fs.Order, s)
			}
			fo.res.Systems = append(fo.res.Systems, fs)
			rest, err := sr.run(plan{first: warm.last + 1, last: p.last}, []string{sys.Name()})
			recs = concat(recs, rest)
			if err != nil || sr.ctx.Err() != nil {
				return recs, err
			}
			continue
		}
		fs, more, err := fo.system(sr, sys, p, n, w, recs, cov, rare)
		fo.res.Systems = append(fo.res.Systems, fs)
		recs = concat(recs, more)
		if err != nil || sr.ctx.Err() != nil {
			return recs, err
		}
	}
	fo.res.Seeds = fmt.Sprintf("%d per system picked by a directed search from %d on (search seed %d; the first %d in order)", n, p.first, fo.searchSeed, w)
	var inOrder []string
	for _, x := range fo.res.Systems {
		if x.Uniform != "" {
			inOrder = append(inOrder, x.System)
		}
	}
	if len(inOrder) > 0 {
		fo.res.Seeds += fmt.Sprintf("; %s: %d-%d in order (the change did not reach it)", strings.Join(inOrder, ", "), p.first, p.last)
	}
	for i := range recs {
		bySystemSeed(recs[i], sr.names)
	}
	return recs, nil
}

// unreached says why the change did not reach a system in the warm-up
// (none of its w runs executed a changed line on either side, and none's
// trace differs between the sides), or "" when it did.
func unreached(system string, recs [2][]seedRecord, w int) string {
	hash := map[uint64]string{}
	counted := false
	for side := range recs {
		for _, r := range recs[side] {
			if r.System != system {
				continue
			}
			counted = counted || len(r.Cover) > 0
			for _, c := range r.Cover {
				if c > 0 {
					return ""
				}
			}
			if side == 0 {
				hash[r.Seed] = r.Hash
			} else if h, ok := hash[r.Seed]; ok && h != r.Hash {
				return ""
			}
		}
	}
	if !counted {
		return "" // no coverage to tell by: the search decides
	}
	return fmt.Sprintf("the change did not reach %s in the %d warm-up runs (no changed line ran, no trace altered): its seeds in order", system, w)
}

// system runs one system's directed rounds after the warm-up.
func (fo *focuser) system(sr *sideRunner, sys systems.System, p plan, n, w int, warm [2][]seedRecord, cov *diffCoverage, rare []int) (focusSystem, [2][]seedRecord, error) {
	fs := focusSystem{System: sys.Name()}
	var out [2][]seedRecord
	d := fo.designs[sys.Name()]
	faults := systems.Faults(sr.faults())
	search := directed.New(directed.Config{Seed: fo.searchSeed, First: p.first, Warmup: w, Levers: fo.levers(sys)}, func(seed uint64) ([]string, error) {
		x, err := sys.Draw(d, seed, faults, systems.Options{})
		if err != nil {
			return nil, err
		}
		return directed.Features(x), nil
	})
	// The hunks whose executions reward a run: the rarely run ones, or
	// (--focus on a change whose hunks all run often) every counted one.
	counted := rare
	if len(counted) == 0 && cov != nil {
		counted = countedHunks(cov)
	}
	rw := &pairReward{cov: cov, rare: counted}
	// The warm-up's seeds are the search's first picks, in order.
	first, err := search.Next(w)
	if err != nil {
		return fs, out, err
	}
	fs.Order = append(fs.Order, first...)
	rw.observe(search, sys.Name(), warm)
	round := 16 // whatever --workers: the picks must not depend on the machine
	for len(fs.Order) < n && sr.ctx.Err() == nil {
		seeds, err := search.Next(min(round, n-len(fs.Order)))
		if err != nil {
			return fs, out, err
		}
		fs.Order = append(fs.Order, seeds...)
		sorted := slices.Clone(seeds)
		slices.Sort(sorted)
		got, err := sr.run(plan{first: sorted[0], last: sorted[len(sorted)-1], list: sorted}, []string{sys.Name()})
		out = concat(out, got)
		if err != nil {
			return fs, out, err
		}
		rw.observe(search, sys.Name(), got)
	}
	for _, f := range search.Favoured(5) {
		fs.Favoured = append(fs.Favoured, summary.Favoured{Feature: f.Name, Runs: f.Runs, Rate: f.Rate, Mean: f.Mean})
	}
	return fs, out, nil
}

// faults is the fault intensity the children run under.
func (sr *sideRunner) faults() string {
	for i, a := range sr.common {
		if a == "--faults" && i+1 < len(sr.common) {
			return sr.common[i+1]
		}
	}
	return string(systems.Moderate)
}

// pairReward scores a seed by its two runs. Each signal is weighted by
// how rare it has been so far (a signal every run shows says nothing of
// where the change matters): a property that flipped (1), the trace
// altered, a metric moved, and the rarely run hunks' executions on the
// working side (their count's place among earlier runs', sharp at the
// top).
type pairReward struct {
	cov     *diffCoverage
	rare    []int
	runs    float64
	altered float64
	moved   float64
	counts  directed.Counts
}

func (rw *pairReward) observe(s *directed.Search, system string, recs [2][]seedRecord) {
	base := map[uint64]*seedRecord{}
	for i := range recs[0] {
		if recs[0][i].System == system {
			base[recs[0][i].Seed] = &recs[0][i]
		}
	}
	for i := range recs[1] {
		w := &recs[1][i]
		b := base[w.Seed]
		if w.System != system || b == nil {
			continue
		}
		s.Observe(w.Seed, rw.score(b, w))
	}
}

func (rw *pairReward) score(b, w *seedRecord) float64 {
	if !slices.Equal(b.Failed, w.Failed) {
		return 1
	}
	altered := b.Hash != w.Hash
	moved := !reflect.DeepEqual(b.Metrics, w.Metrics)
	r := 0.0
	if altered {
		r = max(r, 0.7*(1-(rw.altered+1)/(rw.runs+2)))
	}
	if moved {
		r = max(r, 0.8*(1-(rw.moved+1)/(rw.runs+2)))
	}
	rw.runs++
	if altered {
		rw.altered++
	}
	if moved {
		rw.moved++
	}
	if rw.cov != nil && len(w.Cover) > 0 {
		var x uint64
		for _, h := range rw.rare {
			hc := &rw.cov.Hunks[h]
			t := hc.Target[1]
			switch {
			case t < 0 || t >= len(w.Cover):
			case hc.rareParts != 0 && len(w.CoverParts) == len(w.Cover):
				// A hunk that ran in part: the rarely run parts it ran.
				x += uint64(bits.OnesCount64(w.CoverParts[t] & hc.rareParts))
			default:
				x += w.Cover[t]
			}
		}
		r = max(r, 0.8*rw.counts.Reward(x))
	}
	return r
}

// rareHunks are the hunks (their indexes in cov.Hunks) with statements
// that ran in fewer than focusRare of the warm-up's runs of their side
// (working, or base for a hunk the change deletes), most rarely run first;
// it sets each hunk's warm count. Where the side counts a hunk's parts
// (its code block by block), a hunk is as rare as its rarest part: a new
// if whose condition runs in every run and whose body in none is rare.
// The runs are counted system by system, and a hunk (or a part) is as
// rare as in the system whose runs executed it most: a hunk in one
// system's code never runs in another's, whose runs say nothing of it.
func rareHunks(cov *diffCoverage, recs [2][]seedRecord) []int {
	if cov == nil {
		return nil
	}
	var out []int
	stmts := func(h *hunkCoverage, side int) int {
		t := h.Target[side]
		if t < 0 || cov.NotCounted[side] != "" || h.NotBuilt[side] || t >= len(cov.Targets[side]) {
			return 0
		}
		return cov.Targets[side][t].Stmts
	}
	// share is ran of runs, as a number to compare (1 for no run).
	type share struct{ ran, runs int }
	less := func(a, b share) bool { return a.ran*max(b.runs, 1) < b.ran*max(a.runs, 1) }
	rare := func(x share) bool { return x.runs > 0 && float64(x.ran) < focusRare*float64(x.runs) }
	for i := range cov.Hunks {
		h := &cov.Hunks[i]
		side := 1
		if stmts(h, 1) == 0 {
			side = 0
		}
		t := h.Target[side]
		if stmts(h, side) == 0 {
			continue
		}
		parts := cov.Targets[side][t].Parts
		// Per system (in the order they ran): its runs, those that
		// executed the hunk, and those that executed each part.
		type tally struct {
			runs, ran int
			parts     []int
		}
		var order []string
		by := map[string]*tally{}
		for _, r := range recs[side] {
			if len(r.Cover) == 0 {
				continue
			}
			x := by[r.System]
			if x == nil {
				x = &tally{parts: make([]int, len(parts))}
				by[r.System] = x
				order = append(order, r.System)
			}
			x.runs++
			if t < len(r.Cover) && r.Cover[t] > 0 {
				x.ran++
			}
			if len(r.CoverParts) != len(r.Cover) {
				parts = nil // a record without parts: the hunk as a whole
			}
			for k := range x.parts {
				if t < len(r.CoverParts) && r.CoverParts[t]&(1<<min(k, 63)) != 0 {
					x.parts[k]++
				}
			}
		}
		// The system whose runs executed the hunk (or the part) most.
		most := func(of func(*tally) int) share {
			var best share
			for j, n := range order {
				x := share{of(by[n]), by[n].runs}
				if j == 0 || less(best, x) {
					best = x
				}
			}
			return best
		}
		whole := most(func(x *tally) int { return x.ran })
		h.warm, h.warmRuns, h.warmAt, h.rareParts = whole.ran, whole.runs, "", 0
		for k, p := range parts {
			if p.Stmts == 0 {
				continue
			}
			x := most(func(y *tally) int { return y.parts[k] })
			if rare(x) && side == 1 {
				h.rareParts |= 1 << min(k, 63)
			}
			if less(x, share{h.warm, h.warmRuns}) {
				h.warm, h.warmRuns, h.warmAt = x.ran, x.runs, revision.Lines{From: p.From, To: p.To}.String()
			}
		}
		if rare(share{h.warm, h.warmRuns}) {
			out = append(out, i)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int {
		x, y := cov.Hunks[a], cov.Hunks[b]
		return x.warm*max(y.warmRuns, 1) - y.warm*max(x.warmRuns, 1)
	})
	return out
}

// countedHunks are the hunks with statements counted on the working side.
func countedHunks(cov *diffCoverage) []int {
	var out []int
	for i, h := range cov.Hunks {
		t := h.Target[1]
		if t >= 0 && cov.NotCounted[1] == "" && !h.NotBuilt[1] && t < len(cov.Targets[1]) && cov.Targets[1][t].Stmts > 0 {
			out = append(out, i)
		}
	}
	return out
}

// concat appends each side's records.
func concat(a, b [2][]seedRecord) [2][]seedRecord {
	return [2][]seedRecord{append(a[0], b[0]...), append(a[1], b[1]...)}
}
