package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/traces"
)

// perSeedFormat names the --per-seed file's format, in every record.
const perSeedFormat = "fencesim-per-seed/1"

// seedRecord is one run in a --per-seed file (JSON Lines, one record a
// line, by seed): what diff compares across revisions, and what a user
// greps for the one run a mean hides.
type seedRecord struct {
	Format string `json:"format"`
	System string `json:"system"`
	// Side is compare's "baseline" or "changed"; empty for explore.
	Side string `json:"side,omitempty"`
	Seed uint64 `json:"seed"`
	// Hash is the hash of the run's events (every event recorded, the
	// header left out: two revisions whose designs serialize differently
	// but whose runs do the same have the same hash), of the version
	// explore's --per-seed-hash names: traces.HashV2's "v2:" and 32 hex
	// digits by default, HashV1's 64 hex digits (the only one before hash
	// versions) with --per-seed-hash 1.
	Hash   string `json:"hash"`
	Events int    `json:"events"`
	// Failed lists the properties the run failed (empty: it passed), and
	// Message the first failure in words.
	Failed  []string `json:"failed"`
	Message string   `json:"message,omitempty"`
	// Held lists the properties the run was judged by and passed.
	Held []string `json:"held"`
	// Undecided lists the held properties a check of which could not
	// decide (its bounded search gave up: checker.Undecided): held, but
	// not judged by that check.
	Undecided []string `json:"undecided,omitempty"`
	// Metrics are the run's samples of each metric, in the system's order.
	Metrics []systems.Metric `json:"metrics"`
	// Cover is, in a coverage build (diff's, when the change touches
	// model/), how many times the run executed each changed hunk's lines,
	// by the index of the hunk in the side's targets (diff's JSON lists
	// them).
	Cover []uint64 `json:"cover,omitempty"`
	// CoverParts is, per target in the same order, a mask of the target's
	// parts (its code in each cover block: the targets' parts in --json)
	// that the run executed: bit k for part k, the 64th and later sharing
	// bit 63. Absent from a build whose targets have no parts.
	CoverParts []uint64 `json:"cover_parts,omitempty"`
	// kept: diff did not run it, its base's record was kept from an
	// earlier diff (recordCache).
	kept bool
	// line is the record as its explore wrote it (readPerSeedLines).
	line []byte
}

// recordOf turns a judged run into its per-seed record, its hash of a
// version (traces.HashV1, HashV2). The run must have been digested
// (Options.Digest, of that version) or recorded in full for its hash to
// cover every event.
func recordOf(r *systems.Result, side string, version int) seedRecord {
	rec := seedRecord{Format: perSeedFormat, System: r.System, Side: side, Seed: r.Seed, Events: len(r.Events),
		Failed: []string{}, Held: []string{}, Metrics: r.Metrics}
	if rec.Metrics == nil {
		rec.Metrics = []systems.Metric{}
	}
	switch {
	case r.Digest != "":
		rec.Hash, rec.Events = r.Digest, r.Recorded
	case len(r.Events) > 0:
		rec.Hash = traces.EventsHash(version, r.Events)
	}
	seen := map[string]bool{}
	for _, v := range r.Failed() {
		if !seen[v.Property] {
			seen[v.Property] = true
			rec.Failed = append(rec.Failed, v.Property)
		}
	}
	for _, v := range r.Verdicts {
		if !seen[v.Property] {
			seen[v.Property] = true
			rec.Held = append(rec.Held, v.Property)
		}
	}
	for _, v := range r.Verdicts {
		if checker.IsUndecided(v) && !slices.Contains(rec.Undecided, v.Property) {
			rec.Undecided = append(rec.Undecided, v.Property)
		}
	}
	if f := r.Failed(); len(f) > 0 {
		rec.Message = clip(f[0].String(), 300)
	}
	return rec
}

// undecidedOn reports whether a check of property p could not decide the
// record's run.
func (r *seedRecord) undecidedOn(p string) bool { return slices.Contains(r.Undecided, p) }

// failedOn reports whether the record failed property p.
func (r *seedRecord) failedOn(p string) bool {
	for _, x := range r.Failed {
		if x == p {
			return true
		}
	}
	return false
}

// perSeedWriter writes records by seed although the runs finish in any
// order: a record waits until every seed before it in the plan is written,
// so what waits is bounded by the runs in flight (memory stays flat in the
// number of runs).
type perSeedWriter struct {
	f       *os.File
	w       *bufio.Writer
	next    func(after uint64) (uint64, bool) // the plan's seed after a seed
	expect  uint64                            // the next seed to write
	more    bool                              // expect is a seed of the plan
	pending map[uint64][]seedRecord
	err     error
	version int // the records' hash version
}

// createPerSeed opens path for writing records whose hashes are of a
// version (traces.HashV1, HashV2). An empty path gives a writer that
// writes nothing.
func createPerSeed(path string, version int) (*perSeedWriter, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, usagef("--per-seed %s: %v", path, unwrapPath(err))
	}
	return &perSeedWriter{f: f, w: bufio.NewWriter(f), pending: map[uint64][]seedRecord{}, version: version}, nil
}

// digest is the hash version a run recorded for the file is digested with
// (systems.Options.Digest; 0: no file, no digest).
func (w *perSeedWriter) digest() int {
	if w == nil {
		return 0
	}
	return w.version
}

// begin starts a system's records, in the plan's order of seeds (what an
// earlier system left waiting is written first).
func (w *perSeedWriter) begin(p plan) {
	if w == nil {
		return
	}
	w.flush()
	w.next = p.after
	w.expect, w.more = p.first, true
	if !p.has(p.first) {
		w.expect, w.more = w.next(p.first)
	}
}

// beginPicked starts a system's records for seeds picked as the runs go
// (a directed search): they are all kept and written by seed when the
// next system begins or the file closes.
func (w *perSeedWriter) beginPicked() {
	if w == nil {
		return
	}
	w.flush()
	w.more = false
}

// add writes a record, or keeps it until the seeds before it are written.
// Records of one seed (compare's two sides) are written in the order added.
func (w *perSeedWriter) add(recs ...seedRecord) {
	if w == nil || len(recs) == 0 {
		return
	}
	seed := recs[0].Seed
	w.pending[seed] = append(w.pending[seed], recs...)
	for w.more {
		rs, ok := w.pending[w.expect]
		if !ok {
			return
		}
		delete(w.pending, w.expect)
		w.write(rs)
		w.expect, w.more = w.next(w.expect)
	}
}

func (w *perSeedWriter) write(rs []seedRecord) {
	for _, r := range rs {
		b, err := json.Marshal(r)
		if err == nil {
			_, err = w.w.Write(append(b, '\n'))
		}
		if err != nil && w.err == nil {
			w.err = err
		}
	}
}

// close writes what still waits (the runs an interruption or a time budget
// left out leave gaps), by seed, and closes the file.
func (w *perSeedWriter) close() error {
	if w == nil {
		return nil
	}
	w.flush()
	if err := w.w.Flush(); err != nil && w.err == nil {
		w.err = err
	}
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = err
	}
	if w.err != nil {
		return fmt.Errorf("--per-seed %s: %v", w.f.Name(), w.err)
	}
	return nil
}

// flush writes every waiting record, by seed.
func (w *perSeedWriter) flush() {
	seeds := make([]uint64, 0, len(w.pending))
	for s := range w.pending {
		seeds = append(seeds, s)
	}
	sort.Slice(seeds, func(i, j int) bool { return seeds[i] < seeds[j] })
	for _, s := range seeds {
		w.write(w.pending[s])
	}
	clear(w.pending)
	w.more = false
}

// readPerSeed reads a --per-seed file.
func readPerSeed(r io.Reader, name string) ([]seedRecord, error) {
	return readPerSeedLines(r, name, false)
}

// readPerSeedLines is readPerSeed that, with lines, keeps each record's
// line as it was written (seedRecord.line: diff's record cache keeps a
// base's records as its explore wrote them, fields this binary does not
// know included).
func readPerSeedLines(r io.Reader, name string, lines bool) ([]seedRecord, error) {
	var out []seedRecord
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var rec seedRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("%s:%d: not a per-seed record: %v", name, line, err)
		}
		if rec.Format != perSeedFormat {
			return nil, fmt.Errorf("%s:%d: format %q, want %q", name, line, rec.Format, perSeedFormat)
		}
		if lines {
			rec.line = slices.Clone(sc.Bytes())
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return out, nil
}
