package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	art "github.com/fencesim/fencesim/internal/artifact"
	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/traces"
)

// replayResult is replay's --json output.
type replayResult struct {
	File      string   `json:"file"`
	System    string   `json:"system"`
	Seed      uint64   `json:"seed"`
	Identical bool     `json:"identical"`
	Events    int      `json:"events"`
	Hash      string   `json:"hash"`
	Diff      string   `json:"diff,omitempty"`
	Failed    []string `json:"failed,omitempty"` // the properties the replayed run fails
}

func runReplay(e *env, args []string) int {
	c := commandByName("replay")
	fs := newFlags(c.name)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	verbose := fs.Bool("v", false, "also print the number of events, the trace's hash and the ids of the failing properties")
	pos, code, done := parse(e, fs, c, args)
	if done {
		return code
	}
	if len(pos) != 1 {
		return e.fail(c.name, usagef("want one trace FILE, got %d arguments", len(pos)))
	}
	path := pos[0]
	t, err := replayTrace(path)
	if err != nil {
		return e.fail(c.name, err)
	}
	h, r, d := t.header, t.replayed, t.diff
	out := replayResult{File: path, System: h.System, Seed: h.Seed, Identical: d.Identical, Events: len(r.Events), Hash: r.Hash, Failed: r.FailedIDs()}
	if !d.Identical {
		out.Diff = d.String()
	}
	if *asJSON {
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
	} else {
		fmt.Fprintln(e.stdout, d.String())
		if note := otherCommit(h, d); note != "" {
			fmt.Fprintln(e.stdout, note)
		}
		if *verbose {
			fmt.Fprintf(e.stdout, "%s seed %d: %d events, hash %s; failed properties: %v\n", h.System, h.Seed, len(r.Events), r.Hash, out.Failed)
		}
		for _, v := range r.Failed() {
			fmt.Fprintln(e.stdout, clip(v.String(), 400))
		}
	}
	if !d.Identical || len(out.Failed) > 0 {
		return exitFail
	}
	return exitOK
}

// replayed is a trace file read and played again from its header.
type replayed struct {
	path     string
	header   traces.Header
	recorded []traces.Event // the file's events
	sys      systems.System
	replayed *systems.Result
	diff     traces.Diff
}

// readTrace reads a whole trace file and finds its system. A file that
// cannot be read, is not a trace or names no system is a usage error naming
// the file and the line.
func readTrace(path string) (traces.Header, []traces.Event, systems.System, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return traces.Header{}, nil, nil, usagef("%s: no such file: %s", path, traceWant)
		}
		return traces.Header{}, nil, nil, usagef("%v", err)
	}
	h, recorded, err := traces.ReadAll(f)
	f.Close()
	if err != nil {
		if what := notATrace(path); what != "" {
			return traces.Header{}, nil, nil, usagef("%s: %s, not a trace: %s", path, what, traceWant)
		}
		if strings.HasPrefix(err.Error(), "trace line 1:") {
			return traces.Header{}, nil, nil, usagef("%s: %v: %s", path, err, traceWant)
		}
		return traces.Header{}, nil, nil, usagef("%s: %v", path, err)
	}
	sys, err := systems.ByName(h.System)
	if err != nil {
		return traces.Header{}, nil, nil, usagef("%s: trace line 1: %v", path, err)
	}
	return h, recorded, sys, nil
}

// traceWant says what a trace file is.
const traceWant = "want a trace, the JSON Lines file (.jsonl) that explore, run and live write under --out, a header line then one event a line"

// notATrace names what a file that is not a trace is, when it is one of
// fencesim's other JSON files ("" otherwise): a summary, a design.
func notATrace(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var doc struct {
		Format string `json:"format"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return ""
	}
	switch {
	case strings.HasPrefix(doc.Format, "fencesim-summary/"):
		return "a summary (" + doc.Format + ", what --summary-out writes; fencesim merge reads it)"
	case strings.HasPrefix(doc.Format, "fencesim-") && !strings.HasPrefix(doc.Format, "fencesim-trace/"):
		return "a file of format " + doc.Format
	}
	return ""
}

// replayTrace reads a trace file and replays it. A file that cannot be
// read, is not a trace, names no system, is a live run's record, does not
// replay or was cut short is a usage error naming the file and the line.
func replayTrace(path string) (*replayed, error) {
	h, recorded, sys, err := readTrace(path)
	if err != nil {
		return nil, err
	}
	if h.Live {
		return nil, usagef("%s: trace line 1: the record of a live run (fencesim live): real processes, sockets and PostgreSQL cannot be re-run bit for bit, so it does not replay; fencesim report %s judges it with the same checkers and renders its page", path, path)
	}
	r, err := sys.Replay(h)
	if err != nil {
		return nil, usagef("%s: trace line 1: the header does not replay: %v", path, err)
	}
	d := traces.Compare(recorded, r.Events)
	// A trace that is a strict prefix of its replay was cut short: the run
	// is deterministic, so the file lost its end.
	if !d.Identical && d.Want == nil && len(recorded) < len(r.Events) {
		return nil, usagef("%s: trace line %d: expected event #%d (%s %s), the file ends after %d events: the trace is truncated",
			path, len(recorded)+2, d.Got.Seq, d.Got.Node, d.Got.Kind, len(recorded))
	}
	return &replayed{path: path, header: h, recorded: recorded, sys: sys, replayed: r, diff: d}, nil
}

// otherCommit says, when a trace does not replay identically and was
// written at another commit than this fencesim's, that the code may be
// why ("" otherwise).
func otherCommit(h traces.Header, d traces.Diff) string {
	rev := art.Revision()
	if d.Identical || h.Commit == "" || h.Commit == "unknown" || rev == "unknown" || h.Commit == rev {
		return ""
	}
	return fmt.Sprintf("the trace was written at commit %s, this fencesim is %s: a change of the code between them may be why", h.Commit, rev)
}
