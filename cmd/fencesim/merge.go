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
	partial := fs.Bool("partial", false, "merge the shards given although some of the run's shards are missing (the summary then covers only their seeds: a line on stderr names the missing ones); without it a missing shard is refused")
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
	if named, count := summary.Missing(parts); count > 0 && !*partial {
		n := "shard"
		if count > 1 {
			n = "shards"
		}
		return e.fail(c.name, usagef("%s %s missing: the summaries given cover only part of the run's seeds; pass every shard's summary (or --partial to merge these alone)", n, summary.MissingText(named, count)))
	}
	for _, n := range notes {
		fmt.Fprintf(e.stderr, "fencesim merge: %s\n", n)
	}
	return finish(e, c.name, s, *asJSON, *out)
}
