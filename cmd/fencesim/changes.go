package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/fencesim/fencesim/internal/changecov"
	"github.com/fencesim/fencesim/internal/revision"
)

// Change coverage: which of the change's lines the runs of a diff
// executed. diff lists the hunks of the change under model/
// (revision.ChangedHunks), builds each side with its hunks' lines counted
// (revision.BuildCounting), and every run's per-seed record carries, per
// target, how often the run executed it (seedRecord.Cover). A hunk that
// never ran is a WARNING line: the verdict says nothing about it. It is
// not a failure and not one of the WARNINGs --strict fails on.

// coverageOff is the environment switch that turns diff's change coverage
// off (diff then builds and runs as it does for a change outside model/):
// for measuring what coverage costs, or a way around a coverage build
// that fails.
const coverageOff = "FENCESIM_DIFF_COVERAGE"

// targetsCommand is the hidden command diff asks a coverage build for the
// targets it counts (with their statements).
const targetsCommand = "changecov-targets"

// runTargets prints the targets the binary counts, as JSON.
func runTargets(w io.Writer) int {
	b, _ := json.Marshal(changecov.Targets())
	fmt.Fprintln(w, string(b))
	return exitOK
}

// diffCoverage is diff's coverage section.
type diffCoverage struct {
	// Targets are each side's counted line ranges (base, working): a
	// per-seed record's cover array is indexed by them.
	Targets [2][]changecov.Target `json:"targets"`
	// NotCounted says why a side was not counted ("" when it was).
	NotCounted [2]string `json:"not_counted"`
	// Runs is how many runs each side made (of every system).
	Runs [2]int `json:"runs"`
	// BySystem, when the diff ran more than one system: each system's
	// runs on each side. A hunk in one system's code can run in that
	// system's runs only: its runs are counted of the runs of the systems
	// that executed it (hunkCoverage.BySystem).
	BySystem []systemRuns   `json:"by_system,omitempty"`
	Hunks    []hunkCoverage `json:"hunks"`
	// Warnings name the hunks whose statements never ran.
	Warnings []string `json:"warnings"`
}

// hunkCoverage is one hunk of the change and what the runs did with it.
type hunkCoverage struct {
	revision.Hunk
	// Target is the hunk's index in each side's targets, -1 on a side
	// where it has no lines.
	Target [2]int `json:"target"`
	// Stmts, Executed (runs that executed the hunk's lines) and
	// Executions (how many times in all), per side.
	Stmts      [2]int    `json:"stmts"`
	Executed   [2]int    `json:"runs_executed"`
	Executions [2]uint64 `json:"executions"`
	// BySystem, when the diff ran more than one system: per system, its
	// runs on each side and how many of them executed the hunk.
	BySystem []systemCoverage `json:"by_system,omitempty"`
	// NotBuilt: the side's fencesim does not link the hunk's file.
	NotBuilt [2]bool `json:"not_built,omitempty"`
	// Unrun lists, per side, the lines of the hunk's code that no run
	// executed while others of its lines ran (its parts: the code in
	// each cover block), when the side's build counts parts.
	Unrun [2][]string `json:"unrun,omitempty"`
	// Start: the hunk holds code that runs when fencesim starts (an init
	// function, a package variable), before any run, which no run counts.
	Start [2]bool `json:"start,omitempty"`
	// warm is how many warm-up runs executed it (a focused diff's choice),
	// of warmRuns, the warm-up runs of the system that executed it most:
	// its rarest part, when its side counts parts; warmAt is that part's
	// lines ("" for the whole hunk), and rareParts the working side's
	// parts that ran in few warm-up runs (a mask of Parts).
	warm      int
	warmRuns  int
	warmAt    string
	rareParts uint64
}

// systemRuns is one system's runs on each side.
type systemRuns struct {
	System string `json:"system"`
	Runs   [2]int `json:"runs"`
}

// systemCoverage is one system's runs on each side and how many of them
// executed a hunk.
type systemCoverage struct {
	System   string `json:"system"`
	Runs     [2]int `json:"runs"`
	Executed [2]int `json:"runs_executed"`
}

// recordSystems names the systems of both sides' records, in the order they
// ran.
func recordSystems(recs [2][]seedRecord) []string {
	var out []string
	for i := range recs {
		for _, r := range recs[i] {
			if !slices.Contains(out, r.System) {
				out = append(out, r.System)
			}
		}
	}
	return out
}

// ranIn is, on side i, the runs of the systems that executed the hunk
// and their names (every system's runs and none when no system did, or
// the diff ran one system).
func (c *diffCoverage) ranIn(h *hunkCoverage, i int) (runs int, names []string) {
	for _, s := range h.BySystem {
		if s.Executed[i] > 0 {
			runs += s.Runs[i]
			names = append(names, s.System)
		}
	}
	if len(names) == 0 {
		return c.Runs[i], nil
	}
	return runs, names
}

// coverageTargets turns the hunks into each side's targets.
func coverageTargets(hunks []revision.Hunk) (*diffCoverage, [2][]changecov.Target) {
	c := &diffCoverage{Warnings: []string{}}
	var ts [2][]changecov.Target
	for _, h := range hunks {
		hc := hunkCoverage{Hunk: h, Target: [2]int{-1, -1}}
		for i, side := range [2]revision.Lines{h.Base, h.Work} {
			if side.Empty() {
				continue
			}
			hc.Target[i] = len(ts[i])
			ts[i] = append(ts[i], changecov.Target{ID: len(ts[i]), File: h.File, From: side.From, To: side.To, Func: [2]string{h.BaseFunc, h.WorkFunc}[i]})
		}
		c.Hunks = append(c.Hunks, hc)
	}
	c.Targets = ts
	return c, ts
}

// counted takes what each side's build counts: its targets with their
// statements, from the binary itself (a base revision that predates
// change coverage is built without it).
func (c *diffCoverage) counted(ctx context.Context, p revision.Pair, asked [2][]changecov.Target, root string) {
	for i := range asked {
		if len(asked[i]) == 0 {
			continue
		}
		if !p.Counted[i] {
			c.NotCounted[i] = [2]string{"not counted: the base revision predates change coverage",
				"not counted: the working tree has no internal/changecov"}[i]
			continue
		}
		out, err := runChildOut(ctx, p.Bins[i], root, []string{targetsCommand})
		var ts []changecov.Target
		if err == nil {
			err = json.Unmarshal([]byte(out), &ts)
		}
		if err == nil && len(ts) > len(asked[i]) {
			err = fmt.Errorf("%d targets, %d asked for", len(ts), len(asked[i]))
		}
		if err != nil {
			c.NotCounted[i] = fmt.Sprintf("not counted: the coverage build does not list its targets (%v)", err)
			continue
		}
		// A target the binary did not register is in a file of a package
		// fencesim does not link: no run can execute it.
		c.Targets[i] = append([]changecov.Target(nil), asked[i]...)
		for k := range c.Targets[i] {
			if k < len(ts) && ts[k].File != "" {
				c.Targets[i][k] = ts[k]
				continue
			}
			for h := range c.Hunks {
				if c.Hunks[h].Target[i] == k {
					c.Hunks[h].NotBuilt[i] = true
				}
			}
		}
	}
}

// bothSides keeps the records of the seeds that ran on both sides (of a
// system): the runs the verdict speaks for. An interrupted diff leaves
// seeds that ran on one side only, which the tables leave out; counted,
// they would say a hunk ran where the verdict has no run of it.
func bothSides(recs [2][]seedRecord) [2][]seedRecord {
	var has [2]map[recKey]bool
	for i := range recs {
		has[i] = map[recKey]bool{}
		for _, r := range recs[i] {
			has[i][recKey{r.System, r.Seed}] = true
		}
	}
	var out [2][]seedRecord
	for i := range recs {
		for _, r := range recs[i] {
			if has[1-i][recKey{r.System, r.Seed}] {
				out[i] = append(out[i], r)
			}
		}
	}
	return out
}

// count fills in the runs of the seeds that ran on both sides
// (bothSides): a side's records must carry a cover array of its targets,
// or the side is not counted.
func (c *diffCoverage) count(recs [2][]seedRecord) {
	recs = bothSides(recs)
	names := recordSystems(recs)
	if len(names) > 1 {
		c.BySystem = nil
		for _, n := range names {
			sc := systemRuns{System: n}
			for i := range recs {
				for _, r := range recs[i] {
					if r.System == n {
						sc.Runs[i]++
					}
				}
			}
			c.BySystem = append(c.BySystem, sc)
		}
	}
	for i := range recs {
		c.Runs[i] = len(recs[i])
		if c.NotCounted[i] != "" || len(c.Targets[i]) == 0 {
			continue // nothing to count on a side the change only adds to (or only deletes from)
		}
		for _, r := range recs[i] {
			if len(r.Cover) > len(c.Targets[i]) || len(r.Cover) == 0 {
				c.NotCounted[i] = fmt.Sprintf("not counted: the %s's runs carry no counts", [2]string{"base revision", "working tree"}[i])
				break
			}
		}
	}
	for k := range c.Hunks {
		h := &c.Hunks[k]
		h.BySystem = nil
		for _, sc := range c.BySystem {
			h.BySystem = append(h.BySystem, systemCoverage{System: sc.System, Runs: sc.Runs})
		}
		for i := range recs {
			t := h.Target[i]
			if t < 0 || c.NotCounted[i] != "" {
				continue
			}
			tg := c.Targets[i][t]
			h.Stmts[i], h.Start[i] = tg.Stmts, tg.Start
			var ran uint64 // the parts some run executed
			parts := len(tg.Parts) > 0
			for _, r := range recs[i] {
				if t >= len(r.Cover) {
					continue // a target the binary did not register, after the last it did
				}
				if n := r.Cover[t]; n > 0 {
					h.Executed[i]++
					h.Executions[i] += n
					if j := slices.IndexFunc(h.BySystem, func(s systemCoverage) bool { return s.System == r.System }); j >= 0 {
						h.BySystem[j].Executed[i]++
					}
				}
				if len(r.CoverParts) == len(r.Cover) {
					ran |= r.CoverParts[t]
				} else {
					parts = false // a record without them (kept from an older build)
				}
			}
			if parts && h.Executed[i] > 0 {
				for k, p := range tg.Parts {
					if p.Stmts > 0 && ran&(1<<min(k, 63)) == 0 {
						h.Unrun[i] = append(h.Unrun[i], revision.Lines{From: p.From, To: p.To}.String())
					}
				}
			}
		}
		// The side that says whether the change ran: the working tree's
		// lines when they hold statements, else the base's (a deletion,
		// or statements turned into declarations or comments).
		if h.NotBuilt[1] || (h.Target[1] < 0 && h.NotBuilt[0]) {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s is in no package fencesim links: no run executes it", h.where()))
			continue
		}
		side := -1
		for _, i := range []int{1, 0} {
			if h.Target[i] >= 0 && c.NotCounted[i] == "" && h.Stmts[i] > 0 {
				side = i
				break
			}
		}
		if side < 0 || c.Runs[side] == 0 {
			continue
		}
		if h.Executed[side] > 0 {
			if len(h.Unrun[side]) > 0 {
				at := fmt.Sprintf("%s:%s (of the hunk at %s)", h.File, strings.Join(h.Unrun[side], ","), [2]revision.Lines{h.Base, h.Work}[side])
				of := ""
				if side == 0 {
					of = " of the base revision"
				}
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s never ran in %d runs%s, though the rest of the hunk did: this verdict says nothing about it", at, c.Runs[side], of))
			}
			continue
		}
		if side == 1 {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s never ran in %d runs: this verdict says nothing about it", h.where(), c.Runs[1]))
		} else {
			at := h.where()
			if !h.Work.Empty() {
				at += fmt.Sprintf(" (the base revision's lines %s)", h.Base)
			}
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s never ran in %d runs of the base revision: this verdict says nothing about it", at, c.Runs[0]))
		}
	}
}

// where is a hunk's file and lines (the working tree's, or the base's for
// a deletion).
func (h *hunkCoverage) where() string {
	if h.Work.Empty() {
		return fmt.Sprintf("%s:%s (deleted)", h.File, h.Base)
	}
	return fmt.Sprintf("%s:%s", h.File, h.Work)
}

// funcs is the function(s) of a hunk, once when both sides agree.
func (h *hunkCoverage) funcs() string {
	switch {
	case h.BaseFunc == h.WorkFunc || h.BaseFunc == "":
		return h.WorkFunc
	case h.WorkFunc == "":
		return h.BaseFunc
	}
	return h.BaseFunc + " -> " + h.WorkFunc
}

// writeText prints the section.
func (c *diffCoverage) writeText(w io.Writer) {
	of := c.Runs[1]
	if c.NotCounted[1] != "" {
		of = c.Runs[0]
	}
	if len(c.BySystem) > 0 {
		side := 1
		if c.NotCounted[1] != "" {
			side = 0
		}
		var per []string
		for _, s := range c.BySystem {
			per = append(per, fmt.Sprintf("%s %d", s.System, s.Runs[side]))
		}
		fmt.Fprintf(w, "\n-- changed code (runs in which each hunk executed, of the runs of the systems that executed it: %s) --\n", strings.Join(per, ", "))
	} else {
		fmt.Fprintf(w, "\n-- changed code (runs in which each hunk executed, of %d) --\n", of)
	}
	for i, why := range c.NotCounted {
		if why != "" {
			fmt.Fprintf(w, "  %s: %s\n", [2]string{"base", "working"}[i], why)
		}
	}
	heads := make([]string, len(c.Hunks))
	cells := make([][2]string, len(c.Hunks))
	var width [2]int
	for k := range c.Hunks {
		h := &c.Hunks[k]
		heads[k] = h.where()
		if f := h.funcs(); f != "" {
			heads[k] += " in " + f
		}
		stmts := false
		for i, name := range [2]string{"base", "working"} {
			switch {
			case h.Target[i] < 0:
				cells[k][i] = name + " -"
			case c.NotCounted[i] != "":
				cells[k][i] = name + " not counted"
			case h.NotBuilt[i]:
				cells[k][i] = name + " not in fencesim's build"
			case h.Stmts[i] == 0 && h.Start[i]:
				cells[k][i] = name + " start-up code"
			case h.Stmts[i] == 0:
				cells[k][i] = name + " no statements"
			default:
				stmts = true
				of, in := c.ranIn(h, i)
				where := ""
				if len(in) > 0 && len(in) < len(c.BySystem) {
					where = " in " + strings.Join(in, ", ")
				}
				cells[k][i] = fmt.Sprintf("%s %d/%d%s (%s)", name, h.Executed[i], of, where, plural(int(min(h.Executions[i], 1<<62)), "execution"))
			}
		}
		if !stmts && c.NotCounted == [2]string{} && h.NotBuilt == [2]bool{} {
			cells[k] = [2]string{"no statements (declarations or comments): not counted", ""}
			if h.Start[0] || h.Start[1] {
				cells[k][0] = "runs when fencesim starts (an init function, a package variable), before any run: not counted"
			}
		}
		width[0] = max(width[0], len(heads[k]))
		if cells[k][1] != "" { // a one-cell line spans both columns
			width[1] = max(width[1], len(cells[k][0]))
		}
	}
	for k := range c.Hunks {
		line := fmt.Sprintf("%-*s  %-*s  %s", width[0], heads[k], width[1], cells[k][0], cells[k][1])
		fmt.Fprintf(w, "  %s\n", strings.TrimRight(line, " "))
	}
	for _, x := range c.Warnings {
		fmt.Fprintf(w, "  WARNING: %s\n", x)
	}
}

// coverageEnabled reports whether diff counts the change's code (on
// unless FENCESIM_DIFF_COVERAGE=off).
func coverageEnabled() bool {
	return os.Getenv(coverageOff) != "off"
}
