package main

import (
	"fmt"

	"github.com/fencesim/fencesim/internal/summary"
)

func runMerge(e *env, args []string) int {
	c := commandByName("merge")
	fs := newFlags(c.name)
	asJSON := fs.Bool("json", false, "print the merged summary as JSON")
	out := fs.String("summary-out", "", "also write the merged JSON summary to `FILE`")
	pos, code, done := parse(e, fs, c, args)
	if done {
		return code
	}
	if len(pos) == 0 {
		return e.fail(c.name, usagef("want one or more summary FILEs (written by explore or mutants --summary-out)"))
	}
	if err := checkOutFile("summary-out", *out); err != nil {
		return e.fail(c.name, err)
	}
	for _, p := range pos {
		if sameFile(*out, p) {
			return e.fail(c.name, usagef("--summary-out %s is one of the summaries to merge: it would be overwritten; name another file", p))
		}
	}
	var parts []*summary.Summary
	for _, p := range pos {
		s, err := summary.Read(p)
		if err != nil {
			return e.fail(c.name, usagef("%v", err))
		}
		parts = append(parts, s)
	}
	s, notes, err := summary.Merge(parts)
	if err != nil {
		return e.fail(c.name, usagef("%v", err))
	}
	for _, n := range notes {
		fmt.Fprintf(e.stderr, "fencesim merge: %s\n", n)
	}
	return finish(e, c.name, s, *asJSON, *out)
}
