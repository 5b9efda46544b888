package main

import (
	"fmt"
	"os"
	"strings"

	art "github.com/fencesim/fencesim/internal/artifact"
	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/traces"
)

// runReport renders the HTML report of a trace file: the trace is replayed
// from its header (the checkers judge the replayed run) and drawn as
// explore draws its failures' reports. A live run's record is not replayed
// (it cannot be): the checkers judge the recorded events themselves, and the
// exit status is the verdict's, as fencesim live's own.
func runReport(e *env, args []string) int {
	c := commandByName("report")
	fs := newFlags(c.name)
	out := fs.String("out", "", "write the report to `FILE` (default: next to the trace, TRACE without .jsonl plus -report.html)")
	pos, code, done := parse(e, fs, c, args)
	if done {
		return code
	}
	if len(pos) != 1 {
		return e.fail(c.name, usagef("want one trace FILE, got %d arguments (e.g. fencesim report fencesim-out/arbiter-seed-7.jsonl)", len(pos)))
	}
	path := pos[0]
	page := *out
	if page == "" {
		page = strings.TrimSuffix(path, ".jsonl") + "-report.html"
	}
	base := strings.TrimSuffix(strings.TrimSuffix(page, ".html"), "-report")
	if err := checkOutFile("out", page); err != nil {
		return e.fail(c.name, err)
	}
	if sameFile(page, path) {
		return e.fail(c.name, usagef("--out %s is the trace itself: the report would overwrite it; name another file (or leave --out out: %s)", page, strings.TrimSuffix(path, ".jsonl")+"-report.html"))
	}
	{
		por := base + "-porcupine.html"
		if st, err := os.Stat(por); err == nil && !st.Mode().IsRegular() {
			return e.fail(c.name, usagef("%s is a %s, not a file report can write (porcupine's page of the report %s): move it away or give another --out", por, kindOf(st.Mode()), page))
		}
	}
	h, recorded, sys, err := readTrace(path)
	if err != nil {
		return e.fail(c.name, err)
	}
	if h.Live {
		return reportLive(e, c.name, path, page, base, sys, h, recorded)
	}
	t, err := replayTrace(path)
	if err != nil {
		return e.fail(c.name, err)
	}
	r := *t.replayed
	if t.diff.Identical {
		r.Events = t.recorded // the file's own lines: what the page shows is what the file holds
	} else {
		traces.Fill(r.Events)
	}
	what := fmt.Sprintf("%s seed %d (%s)", t.sys.Name(), t.header.Seed, headerDesign(t.sys, t.header.Design))
	por, err := writePage(page, base, &r, pageTitle(what, &r), path, r.Hash, nil, runProbes(t.sys, &r))
	if err != nil {
		fmt.Fprintf(e.stderr, "fencesim %s: %s: %v\n", c.name, page, unwrapPath(err))
		return exitUsage
	}
	fmt.Fprintf(e.stdout, "report: %s\n", page)
	if por != "" {
		fmt.Fprintf(e.stdout, "porcupine: %s\n", por)
	}
	if !t.diff.Identical {
		why := ""
		if note := otherCommit(t.header, t.diff); note != "" {
			why = "; " + note // as replay says it
		}
		fmt.Fprintf(e.stderr, "fencesim %s: %s does not replay identically, the report shows the replayed run: %s%s\n", c.name, path, oneLine(t.diff.String()), why)
		return exitFail
	}
	return exitOK
}

// liveReplay is what a live run's page says in place of a replay command.
func liveReplay(trace string) string {
	return "a live run: it cannot be replayed (fencesim report " + trace + " judges and renders it again)"
}

// reportLive judges a live run's record with its system's checkers and
// renders its page: exit 0 when every property held, 1 when one failed.
func reportLive(e *env, cmd, path, page, base string, sys systems.System, h traces.Header, evs []traces.Event) int {
	if !sys.Supports().Live {
		return e.fail(cmd, usagef("%s: trace line 1: a live record of %s, whose checkers do not judge a record made elsewhere", path, sys.Name()))
	}
	r := systems.Judge(sys, h, evs)
	what := fmt.Sprintf("%s live run (%s)", sys.Name(), headerDesign(sys, h.Design))
	title := pageTitle(what, r)
	por, err := art.Report(page, base+"-porcupine.html", r, art.Page{Story: art.StoryOf(r, "", nil, timelineLines),
		Title: title, Hash: traces.HashOf(h, evs), Replay: liveReplay(path), TracePath: path})
	if err != nil {
		fmt.Fprintf(e.stderr, "fencesim %s: %s: %v\n", cmd, page, unwrapPath(err))
		return exitUsage
	}
	writeVerdicts(e.stdout, what, r)
	fmt.Fprintf(e.stdout, "report: %s\n", page)
	if por != "" {
		fmt.Fprintf(e.stdout, "porcupine: %s\n", por)
	}
	if len(r.Failed()) > 0 {
		return exitFail
	}
	return exitOK
}

// headerDesign describes a trace header's design for a title: its knobs,
// when it has some (its parameters are in the report's Run section).
func headerDesign(sys systems.System, js []byte) string {
	d, err := sys.NewDesign(nil, nil, js)
	if err != nil || len(d.Knobs) == 0 {
		return "design: the trace header's"
	}
	return "design: knobs " + strings.Join(d.Knobs, ", ")
}
