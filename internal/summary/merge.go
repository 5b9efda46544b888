package summary

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Merge combines shard summaries into the summary one run over every seed
// prints. The shards must come from the same command, seeds, faults,
// systems (or knobs), designs, worlds and --failfast (mutants: the same
// --minimize-budget too), each shard once; a mutants summary that does
// not record its designs is refused. The notes say what the merged
// summary does not cover (shards missing, shards interrupted, what an
// interrupted shard or --failfast left out).
func Merge(parts []*Summary) (_ *Summary, notes []string, _ error) {
	if len(parts) == 0 {
		return nil, nil, errors.New("nothing to merge")
	}
	first := parts[0]
	out := &Summary{Format: Format, Command: first.Command, Faults: first.Faults, Seeds: first.Seeds, Budget: first.Budget,
		FailFast: first.FailFast, Designs: first.Designs, MinimizeBudget: first.MinimizeBudget}
	seen := map[string]bool{}
	var n uint64
	for i, p := range parts {
		if p.Format != Format {
			return nil, nil, fmt.Errorf("summary %d: format %q is not %q", i+1, p.Format, Format)
		}
		if p.Command != first.Command || p.Faults != first.Faults || p.Seeds != first.Seeds || p.Budget != first.Budget {
			return nil, nil, fmt.Errorf("summary %d is of %s --faults %s --seeds %s, summary 1 of %s --faults %s --seeds %s: not shards of one run",
				i+1, p.Command, p.Faults, p.Seeds, first.Command, first.Faults, first.Seeds)
		}
		key := p.Shard
		if key == "" {
			key = "0/1"
		}
		sh, err := ParseShard(key)
		if err != nil {
			return nil, nil, fmt.Errorf("summary %d: %v", i+1, err)
		}
		if n == 0 {
			n = sh.N
		}
		if sh.N != n {
			return nil, nil, fmt.Errorf("summary %d is shard %s, summary 1 is of %d shards", i+1, key, n)
		}
		if seen[key] {
			return nil, nil, fmt.Errorf("shard %s is given twice", key)
		}
		seen[key] = true
	}
	if err := sameRun(parts); err != nil {
		return nil, nil, err
	}
	if named, count := Missing(parts); count > 0 {
		notes = append(notes, fmt.Sprintf("shards missing: %s (the summary covers only the others)", MissingText(named, count)))
	}
	left := map[string]bool{} // what some shard did not run
	for i, p := range parts {
		for _, x := range p.Systems {
			out.mergeSystem(x)
		}
		for _, m := range p.Mutants {
			out.mergeMutant(m)
		}
		for _, n := range p.NotRun {
			left[n] = true
		}
		if p.Interrupted != "" {
			out.Interrupted = p.Interrupted
			notes = append(notes, fmt.Sprintf("summary %d (shard %s) was interrupted: the merged summary covers only what finished", i+1, p.Shard))
		}
	}
	if out.FailFast {
		// One machine's --failfast starts no system after the first that
		// failed: the systems after it are left out.
		var cut []string
		for i, x := range out.Systems {
			if x.FailedRuns > 0 || len(x.Audit.Mismatches) > 0 {
				for _, y := range out.Systems[i+1:] {
					cut = append(cut, y.System)
					left[y.System] = true
				}
				out.Systems = out.Systems[:i+1]
				break
			}
		}
		if out.Failed() {
			note := "the shards ran --failfast: each stopped at its own first failing run, so the merged summary counts the runs they made, not every seed"
			if len(cut) > 0 {
				note += fmt.Sprintf("; %s left out, as one machine would not have started them after %s failed (the shards' own summaries hold their runs)",
					strings.Join(cut, ", "), out.Systems[len(out.Systems)-1].System)
			}
			notes = append(notes, note)
		}
	}
	if out.Command == "mutants" {
		out.matrixDone(parts)
	}
	// A system (a knob) some shard did not run, interrupted before it,
	// would cover only the others' seeds: it is left out and listed as
	// not run, as one machine's interrupted run lists what it did not
	// start (or, mutants, finish).
	var dropped []string
	drop := func(name string) bool {
		if left[name] {
			dropped = append(dropped, name)
		}
		return left[name]
	}
	out.Systems = slices.DeleteFunc(out.Systems, func(x System) bool { return drop(x.System) })
	out.Mutants = slices.DeleteFunc(out.Mutants, func(m Mutant) bool { return drop(m.Knob) })
	if len(dropped) > 0 {
		notes = append(notes, fmt.Sprintf("%s left out: an interrupted shard did not run them (the other shards' summaries hold their runs)", strings.Join(dropped, ", ")))
	}
	for _, n := range first.planned() {
		if left[n] {
			out.NotRun = append(out.NotRun, n)
		}
	}
	for i := range out.Systems {
		x := &out.Systems[i]
		sort.Slice(x.Failures, func(a, b int) bool { return x.Failures[a].Seed < x.Failures[b].Seed })
		sort.Slice(x.Undecided, func(a, b int) bool { return x.Undecided[a].Seed < x.Undecided[b].Seed })
		sort.Slice(x.Audit.Mismatches, func(a, b int) bool { return x.Audit.Mismatches[a].Seed < x.Audit.Mismatches[b].Seed })
		sort.Slice(x.Artifacts, func(a, b int) bool { return x.Artifacts[a].Seed < x.Artifacts[b].Seed })
		x.Kept = TopKept(x.Kept, x.KeepWorst)
		for j := range x.Metrics {
			sort.Float64s(x.Metrics[j].Values)
		}
	}
	return out, notes, nil
}

// sameRun refuses parts that are not shards of one command line: all or
// none ran --failfast, each planned the same systems (knobs), a matrix's
// knobs were switched on in the same designs, and each system two of
// them ran has the same design and world.
func sameRun(parts []*Summary) error {
	first := parts[0]
	for i, p := range parts[1:] {
		if p.FailFast != first.FailFast {
			with, without := i+2, 1
			if first.FailFast {
				with, without = 1, i+2
			}
			return fmt.Errorf("summary %d ran with --failfast, summary %d without: not shards of one run (a --failfast shard stops at its first failing run and leaves its other seeds out); run every shard with --failfast, or none",
				with, without)
		}
		if err := sameList(i+2, p.Command, p.planned(), first.planned()); err != nil {
			return err
		}
	}
	if first.Command == "mutants" {
		if err := sameMatrix(parts); err != nil {
			return err
		}
	}
	type ran struct {
		i int // the first summary that ran the system, from 1
		x System
	}
	seen := map[string]ran{}
	for i, p := range parts {
		for _, x := range p.Systems {
			y, ok := seen[x.System]
			if !ok {
				seen[x.System] = ran{i + 1, x}
				continue
			}
			if !sameJSON(x.DesignJSON, y.x.DesignJSON) {
				return fmt.Errorf("summary %d ran another design of %s (%s) than summary %d (%s): not shards of one run; run every shard with the same --knob, --set and --design",
					i+1, x.System, x.Design, y.i, y.x.Design)
			}
			if x.World != y.x.World {
				return fmt.Errorf("summary %d ran %s in world %s, summary %d in world %s: not shards of one run; run every shard with the same --world",
					i+1, x.System, orNone(x.World), y.i, orNone(y.x.World))
			}
			if !slices.Equal(x.KeepWorst, y.x.KeepWorst) {
				return fmt.Errorf("summary %d kept other runs of %s (--keep-worst %s) than summary %d (--keep-worst %s): not shards of one run; run every shard with the same --keep-worst",
					i+1, x.System, keepText(x.KeepWorst), y.i, keepText(y.x.KeepWorst))
			}
		}
	}
	return nil
}

// sameMatrix refuses mutants summaries whose knobs were switched on in
// other designs, or whose catches were minimized with another budget; a
// summary that does not say (an older fencesim's) is refused too.
func sameMatrix(parts []*Summary) error {
	first := parts[0]
	for i, p := range parts {
		if len(p.Designs) == 0 {
			return fmt.Errorf("summary %d records no design for its knobs (an older fencesim wrote it): merge cannot tell whether its shards ran one matrix; run every shard again with this fencesim", i+1)
		}
		if i == 0 {
			continue
		}
		for _, x := range p.Designs {
			for _, y := range first.Designs {
				if x.System == y.System && !sameJSON(x.DesignJSON, y.DesignJSON) {
					return fmt.Errorf("summary %d switched the knobs of %s on in another design (%s) than summary 1 (%s): not shards of one run; run every shard with the same --set",
						i+1, x.System, x.Design, y.Design)
				}
			}
		}
		if p.MinimizeBudget != first.MinimizeBudget {
			return fmt.Errorf("summary %d minimized its catches with --minimize-budget %d, summary 1 with %d: not shards of one run; run every shard with the same --minimize-budget",
				i+1, p.MinimizeBudget, first.MinimizeBudget)
		}
	}
	return nil
}

// planned lists what the command was given to run, in its order: the
// systems explore explored, the knobs of mutants' matrix. Each one is in
// the summary (a system, a knob's row) or in NotRun (an interruption, or
// --failfast after a failure, left it out), in the order they ran.
func (s *Summary) planned() []string {
	var out []string
	for _, x := range s.Systems {
		out = append(out, x.System)
	}
	for _, m := range s.Mutants {
		out = append(out, m.Knob)
	}
	return append(out, s.NotRun...)
}

// sameList refuses a summary (the i-th) that planned other systems or
// knobs than summary 1.
func sameList(i int, command string, got, want []string) error {
	what, flags := "systems", "--system"
	if command == "mutants" {
		what, flags = "knobs", "--system and --knob"
	}
	var more, fewer []string
	for _, x := range got {
		if !slices.Contains(want, x) {
			more = append(more, x)
		}
	}
	for _, x := range want {
		if !slices.Contains(got, x) {
			fewer = append(fewer, x)
		}
	}
	// the system(s) x
	named := func(xs []string) string {
		w := what
		if len(xs) == 1 {
			w = strings.TrimSuffix(what, "s")
		}
		return "the " + w + " " + strings.Join(xs, ", ")
	}
	var diff string
	switch {
	case len(more) > 0 && len(fewer) > 0:
		diff = fmt.Sprintf("ran %s and not %s, unlike summary 1", named(more), named(fewer))
	case len(more) > 0:
		diff = fmt.Sprintf("ran %s, which summary 1 did not", named(more))
	case len(fewer) > 0:
		diff = fmt.Sprintf("did not run %s, which summary 1 did", named(fewer))
	case !slices.Equal(got, want):
		diff = fmt.Sprintf("ran the %s in another order (%s) than summary 1 (%s)", what, strings.Join(got, ", "), strings.Join(want, ", "))
	default:
		return nil
	}
	return fmt.Errorf("summary %d %s: not shards of one run (the merged summary would cover some %s with only part of the seeds); run every shard with the same %s", i, diff, what, flags)
}

// sameJSON reports whether two JSON documents are the same, however
// indented (a saved summary indents its designs).
func sameJSON(a, b json.RawMessage) bool {
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return string(a) == string(b)
	}
	return x.String() == y.String()
}

// keepText is --keep-worst as a summary recorded it ("none" for none).
func keepText(keep []Keep) string {
	var specs []string
	for _, k := range keep {
		specs = append(specs, fmt.Sprintf("%s=%d", k.Metric, k.N))
	}
	return orNone(strings.Join(specs, ","))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// Missing counts the shards of the run that parts, shards of one run,
// leave out (a merge of them covers only the seeds of the others), and
// names the first of them (i/n), at most missingNamed.
func Missing(parts []*Summary) (named []string, count uint64) {
	seen := map[uint64]bool{}
	var n uint64
	for _, p := range parts {
		key := p.Shard
		if key == "" {
			key = "0/1"
		}
		sh, err := ParseShard(key)
		if err != nil {
			continue // Merge refuses it
		}
		n = max(n, sh.N)
		seen[sh.I] = true
	}
	count = n - uint64(len(seen))
	for i := uint64(0); i < n && len(named) < missingNamed && uint64(len(named)) < count; i++ {
		if !seen[i] {
			named = append(named, fmt.Sprintf("%d/%d", i, n))
		}
	}
	return named, count
}

// missingNamed is how many missing shards Missing names.
const missingNamed = 8

// MissingText renders Missing's result: "1/3, 2/3", or the first shards
// and how many more.
func MissingText(named []string, count uint64) string {
	s := strings.Join(named, ", ")
	if more := count - uint64(len(named)); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

func (s *Summary) mergeSystem(x System) {
	for i := range s.Systems {
		y := &s.Systems[i]
		if y.System != x.System {
			continue
		}
		y.Runs += x.Runs
		y.FailedRuns += x.FailedRuns
		y.Properties = mergeCounts(y.Properties, x.Properties)
		y.Failures = append(y.Failures, x.Failures...)
		y.Undecided = append(y.Undecided, x.Undecided...)
		for j, p := range x.Probes {
			if j < len(y.Probes) && y.Probes[j].Name == p.Name {
				y.Probes[j].Runs += p.Runs
			}
		}
		for _, m := range x.Metrics {
			found := false
			for j := range y.Metrics {
				if y.Metrics[j].Name == m.Name {
					y.Metrics[j].Values = append(y.Metrics[j].Values, m.Values...)
					found = true
				}
			}
			if !found {
				y.Metrics = append(y.Metrics, m)
			}
		}
		y.Audit.Runs += x.Audit.Runs
		y.Audit.Mismatches = append(y.Audit.Mismatches, x.Audit.Mismatches...)
		y.Artifacts = append(y.Artifacts, x.Artifacts...)
		y.Kept = append(y.Kept, x.Kept...)
		y.Abandoned += x.Abandoned
		y.Timing.WallNS = max(y.Timing.WallNS, x.Timing.WallNS)
		y.Timing.RunNS += x.Timing.RunNS
		y.Timing.CheckNS += x.Timing.CheckNS
		y.Timing.Workers += x.Timing.Workers
		return
	}
	x.Metrics = append([]MetricSamples(nil), x.Metrics...)
	for j := range x.Metrics {
		x.Metrics[j].Values = append([]float64{}, x.Metrics[j].Values...)
	}
	s.Systems = append(s.Systems, x)
}

func mergeCounts(a, b []PropertyCount) []PropertyCount {
	m := map[string]PropertyCount{}
	for _, p := range append(append([]PropertyCount(nil), a...), b...) {
		c := m[p.Property]
		c.Property = p.Property
		c.Failed += p.Failed
		c.Undecided += p.Undecided
		m[p.Property] = c
	}
	var out []PropertyCount
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

func (s *Summary) mergeMutant(m Mutant) {
	for i := range s.Mutants {
		y := &s.Mutants[i]
		if y.System != m.System || y.Knob != m.Knob {
			continue
		}
		y.Runs += m.Runs
		y.RunNS += m.RunNS
		y.BaseFails = append(y.BaseFails, m.BaseFails...)
		if m.Seed != 0 && (y.Seed == 0 || m.Seed < y.Seed) {
			y.Seed, y.Failed, y.Faults, y.Kept, y.Needed = m.Seed, m.Failed, m.Faults, m.Kept, m.Needed
		}
		// As one machine would have: the design's own failures before the
		// catch, by seed (a shard's past another's catch are not).
		kept := y.BaseFails[:0]
		for _, x := range y.BaseFails {
			if y.Seed == 0 || x < y.Seed {
				kept = append(kept, x)
			}
		}
		y.BaseFails = kept
		sort.Slice(y.BaseFails, func(i, j int) bool { return y.BaseFails[i] < y.BaseFails[j] })
		if y.Scenario == "" {
			y.Scenario = m.Scenario
		}
		return
	}
	m.BaseFails = append([]uint64(nil), m.BaseFails...)
	s.Mutants = append(s.Mutants, m)
}

// matrixDone finishes the merged rows of the knob matrix as one machine
// going through the seeds in order makes them. A knob a seed caught was
// played in no scenario (a shard that missed it played them); its runs
// are the seeds up to the catch, of the shards given, whatever each
// shard ran past it; the time of a run is the shards' mean.
func (s *Summary) matrixDone(parts []*Summary) {
	var shards []Shard
	for _, p := range parts {
		sh, _ := ParseShard(p.Shard) // checked
		shards = append(shards, sh)
	}
	for i := range s.Mutants {
		y := &s.Mutants[i]
		if y.Seed != 0 {
			y.Scenario = ""
		}
		last := y.First + uint64(max(y.Budget, 1)-1)
		if y.Seed != 0 {
			last = y.Seed
		}
		runs := 0
		for _, sh := range shards {
			runs += int(sh.count(y.First, last))
		}
		if y.Runs > 0 {
			y.RunNS = int64(float64(y.RunNS) / float64(y.Runs) * float64(runs))
		}
		y.Runs = runs
	}
}
