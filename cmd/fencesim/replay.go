package main

import (
	"encoding/json"
	"fmt"
	"os"

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
	verbose := fs.Bool("v", false, "also print the trace's hash and the properties the run fails")
	pos, code, done := parse(e, fs, c, args)
	if done {
		return code
	}
	if len(pos) != 1 {
		return e.fail(c.name, usagef("want one trace FILE, got %d arguments", len(pos)))
	}
	path := pos[0]
	f, err := os.Open(path)
	if err != nil {
		return e.fail(c.name, usagef("%v", err))
	}
	h, recorded, err := traces.ReadAll(f)
	f.Close()
	if err != nil {
		return e.fail(c.name, usagef("%s: %v", path, err))
	}
	sys, err := systems.ByName(h.System)
	if err != nil {
		return e.fail(c.name, usagef("%s: trace line 1: %v", path, err))
	}
	r, err := sys.Replay(h)
	if err != nil {
		return e.fail(c.name, usagef("%s: trace line 1: the header does not replay: %v", path, err))
	}
	d := traces.Compare(recorded, r.Events)
	// A trace that is a strict prefix of its replay was cut short: the run
	// is deterministic, so the file lost its end.
	if !d.Identical && d.Want == nil && len(recorded) < len(r.Events) {
		return e.fail(c.name, usagef("%s: trace line %d: expected event #%d (%s %s), the file ends after %d events: the trace is truncated",
			path, len(recorded)+2, d.Got.Seq, d.Got.Node, d.Got.Kind, len(recorded)))
	}
	out := replayResult{File: path, System: h.System, Seed: h.Seed, Identical: d.Identical, Events: len(r.Events), Hash: r.Hash, Failed: r.FailedIDs()}
	if !d.Identical {
		out.Diff = d.String()
	}
	if *asJSON {
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
	} else {
		fmt.Fprintln(e.stdout, d.String())
		if *verbose {
			fmt.Fprintf(e.stdout, "%s seed %d: %d events, hash %s; failed properties: %v\n", h.System, h.Seed, len(r.Events), r.Hash, out.Failed)
		}
	}
	if !d.Identical {
		return exitFail
	}
	return exitOK
}
