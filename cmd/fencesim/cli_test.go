package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	jc "github.com/fencesim/fencesim/checker/judge"
	"github.com/fencesim/fencesim/internal/summary"
	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/traces"
)

// timings is the report's section of checker timings.
var timings = regexp.MustCompile(`(?s)\n<section id="timings">.*?</section>\n`)

var eventsOf = regexp.MustCompile(`\(events (#\d+(?:, #\d+)*)\)`)

// TestEventNumbers: the events a violation names in explore's terminal
// output (a run recorded through the checker's filter) are the numbers of
// those events' lines in the trace file written for the seed, and run,
// replay, the schedule file and the report name the same numbers.
func TestEventNumbers(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := run(t, "explore", "--system", "arbiter", "--knob", "fence-by-worker-id", "--seeds", "3-40", "--artifacts", "1", "--out", out)
	require.Equal(t, exitFail, code, stderr)
	first := regexp.MustCompile(`(?m)^first failure: seed (\d+): (PA1 at-most-one-owner: FAILED: .*)$`).FindStringSubmatch(stdout)
	require.NotNil(t, first, "explore names the first failure (PA1):\n%s", stdout)
	seed, line := first[1], first[2]
	m := eventsOf.FindStringSubmatch(line)
	require.NotNil(t, m, "the failure names its events: %s", line)
	var nums []uint64
	for _, s := range strings.Split(m[1], ", ") {
		n, err := strconv.ParseUint(strings.TrimPrefix(s, "#"), 10, 64)
		require.NoError(t, err)
		nums = append(nums, n)
	}

	trace := filepath.Join(out, "arbiter-seed-"+seed+".jsonl")
	lines := strings.Split(readFile(t, trace), "\n")
	for _, n := range nums {
		require.Less(t, int(n), len(lines), "event #%d is past the trace's end", n)
		var e traces.Event
		require.NoError(t, json.Unmarshal([]byte(lines[n]), &e), "trace line %d", n+1)
		assert.Equal(t, n, e.Seq, "the terminal's #%d is the trace's line %d: event #%d", n, n+1, n)
		assert.Equal(t, "commit", e.Kind, "PA1 names the commit that accepted the stale result; the trace's #%d is %s", n, e.String())
	}

	// The same numbers everywhere else.
	_, runOut, _ := run(t, "run", "--system", "arbiter", "--knob", "fence-by-worker-id", "--seed", seed, "--out", t.TempDir())
	assert.Contains(t, runOut, line, "run prints the violation as explore does")
	_, replayOut, _ := run(t, "replay", trace)
	assert.Contains(t, replayOut, line, "replay names the same events")
	assert.Contains(t, readFile(t, filepath.Join(out, "arbiter-seed-"+seed+"-schedule.txt")), m[0], "the schedule file names the same events")
	// The report draws the minimized run: its numbers are the minimized
	// trace's, the trace the report names.
	page := readFile(t, filepath.Join(out, "arbiter-seed-"+seed+"-report.html"))
	minTrace := filepath.Join(out, "arbiter-seed-"+seed+"-minimized.jsonl")
	assert.Contains(t, page, "fencesim replay "+minTrace)
	cited := regexp.MustCompile(`class="seq" data-seq="(\d+)"`).FindStringSubmatch(page)
	require.NotNil(t, cited, "the report's violation names its event")
	n, err := strconv.ParseUint(cited[1], 10, 64)
	require.NoError(t, err)
	minLines := strings.Split(readFile(t, minTrace), "\n")
	require.Less(t, int(n), len(minLines))
	var e traces.Event
	require.NoError(t, json.Unmarshal([]byte(minLines[n]), &e))
	assert.Equal(t, n, e.Seq, "the report's #%d is the minimized trace's line %d", n, n+1)
	assert.Equal(t, "commit", e.Kind, "the commit that accepted the stale result")
}

// TestRun: run writes the trace and report of a passing seed too, and its
// trace is explore's for the same seed, byte for byte.
func TestRun(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := run(t, "run", "--system", "twopc", "--seed", "3", "--out", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "twopc seed 3 (design: default; faults: moderate): every property held")
	assert.Contains(t, stdout, "PC1 atomicity-after-recovery: ok")
	trace := filepath.Join(out, "twopc-seed-3.jsonl")
	assert.Contains(t, stdout, "trace:     "+trace+" (")
	assert.Contains(t, stdout, "report:    "+filepath.Join(out, "twopc-seed-3-report.html")+"\n")
	assert.Contains(t, stdout, "replay:    fencesim replay "+trace+"\n")
	assert.FileExists(t, filepath.Join(out, "twopc-seed-3-report.html"))
	code, replayed, _ := run(t, "replay", trace)
	assert.Equal(t, exitOK, code)
	assert.Equal(t, "identical\n", replayed)

	// The failing seed explore writes: the same trace.
	dir := t.TempDir()
	code, _, stderr = run(t, "explore", "--system", "twopc", "--knob", "timeout-abort", "--seeds", "1", "--artifacts", "1", "--out", dir, "--json")
	require.Equal(t, exitFail, code, stderr)
	code, stdout, stderr = run(t, "run", "--system", "twopc", "--knob", "timeout-abort", "--seed", "1", "--out", out)
	require.Equal(t, exitFail, code, stderr)
	assert.Regexp(t, `(?m)^twopc seed 1 \(design: knobs timeout-abort; faults: moderate\): \d+ of \d+ properties FAILED$`, stdout)
	assert.Equal(t, readFile(t, filepath.Join(dir, "twopc-seed-1.jsonl")), readFile(t, filepath.Join(out, "twopc-seed-1.jsonl")),
		"run --seed 1 plays explore's seed 1")
}

// TestRunKeepsTheSet: a --set the drawn world would draw is kept (issue
// [trust]: it was echoed and then drawn over): the trace header has it and
// names the pin, the run has the nodes it makes, and replay plays it
// again.
func TestRunKeepsTheSet(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := run(t, "run", "--system", "arbiter", "--seed", "5", "--set", "home_workers=6", "--out", out)
	require.Contains(t, []int{exitOK, exitFail}, code, stderr)
	assert.Contains(t, stdout, "arbiter seed 5 (design: set home_workers=6; world: drawn; faults: moderate)")
	trace := filepath.Join(out, "arbiter-seed-5.jsonl")
	lines := strings.Split(readFile(t, trace), "\n")
	var h traces.Header
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &h))
	var d struct {
		HomeWorkers int      `json:"home_workers"`
		Pinned      []string `json:"pinned"`
	}
	require.NoError(t, json.Unmarshal(h.Design, &d))
	assert.Equal(t, 6, d.HomeWorkers, "the header's design")
	assert.Equal(t, []string{"home_workers"}, d.Pinned)
	homes := map[string]bool{}
	for _, l := range lines[1:] {
		var e struct{ Node string }
		if l != "" && json.Unmarshal([]byte(l), &e) == nil && strings.HasPrefix(e.Node, "home-") && !strings.Contains(e.Node, ".") {
			homes[e.Node] = true
		}
	}
	assert.True(t, homes["home-6"], "the run's events come from six home machines: %v", homes)
	assert.False(t, homes["home-7"], "%v", homes)
	_, replayed, _ := run(t, "replay", trace)
	assert.True(t, strings.HasPrefix(replayed, "identical\n"), replayed)
}

// TestReplayFails: replay exits 1 when the replayed run fails a property,
// naming it, and 0 with "identical" alone when every property holds.
func TestReplayFails(t *testing.T) {
	out := t.TempDir()
	_, _, _ = run(t, "run", "--system", "outbox", "--seed", "1", "--out", out)
	code, stdout, stderr := run(t, "replay", filepath.Join(out, "outbox-seed-1.jsonl"))
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "identical\n", stdout)

	_, _, _ = run(t, "run", "--system", "outbox", "--knob", "edit-in-place-refund", "--seed", "1", "--out", out)
	trace := filepath.Join(out, "outbox-seed-1.jsonl")
	r, err := replayTrace(trace)
	require.NoError(t, err)
	require.NotEmpty(t, r.replayed.Failed(), "edit-in-place-refund fails seed 1")
	code, stdout, _ = run(t, "replay", trace)
	assert.Equal(t, exitFail, code, "a failing property exits 1")
	assert.True(t, strings.HasPrefix(stdout, "identical\n"), stdout)
	for _, v := range r.replayed.Failed() {
		assert.Contains(t, stdout, v.Property+": FAILED: ", "replay names %s", v.Property)
	}
	code, stdout, _ = run(t, "replay", "--json", trace)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stdout, `"identical": true`)
	assert.Contains(t, stdout, `"PB4"`)
}

// TestReport: report renders a trace's page and prints its path.
func TestReport(t *testing.T) {
	out := t.TempDir()
	_, _, _ = run(t, "run", "--system", "arbiter", "--knob", "fence-by-worker-id", "--seed", "2", "--out", out)
	trace := filepath.Join(out, "arbiter-seed-2.jsonl")
	page := filepath.Join(out, "page.html")
	code, stdout, stderr := run(t, "report", "--out", page, trace)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "report: "+page+"\nporcupine: "+filepath.Join(out, "page-porcupine.html")+"\n", stdout)
	html := readFile(t, page)
	assert.Contains(t, html, "PA1 at-most-one-owner")
	assert.Contains(t, html, "fencesim replay "+trace)
	body := func(page string) string { return page[strings.Index(page, "<main>"):] }
	assert.Equal(t, body(timings.ReplaceAllString(readFile(t, filepath.Join(out, "arbiter-seed-2-report.html")), "")), body(html),
		"the report of the trace is run's report (but for its title, and run's checker timings, wall-clock time)")
	assert.Contains(t, html, "<h1>arbiter seed 2 (design: knobs fence-by-worker-id): PA1, PA3 failed</h1>")

	code, stdout, _ = run(t, "report", trace)
	assert.Equal(t, exitOK, code)
	assert.Equal(t, "report: "+filepath.Join(out, "arbiter-seed-2-report.html")+"\nporcupine: "+filepath.Join(out, "arbiter-seed-2-porcupine.html")+"\n", stdout, "next to the trace by default")
}

// TestListings: knobs and params list every registry entry and parameter
// with what the registries and tables hold.
func TestListings(t *testing.T) {
	code, stdout, stderr := run(t, "knobs", "--system", "arbiter")
	require.Equal(t, exitOK, code, stderr)
	for _, k := range (systems.Arbiter{}).Knobs() {
		expected := "harmless"
		if k.Harmful {
			expected = "harmful"
		}
		by := "-"
		if len(k.CaughtBy) > 0 {
			by = strings.Join(k.CaughtBy, ", ")
		}
		assert.Regexp(t, `(?m)^`+regexp.QuoteMeta(k.Name)+`\s+`+expected+`\s+`+regexp.QuoteMeta(by)+`\s+.*`+regexp.QuoteMeta(k.Removes)+`$`, stdout)
	}
	assert.Regexp(t, `(?m)^no-leader-lock\s+harmless\s+-\s`, stdout)

	code, stdout, _ = run(t, "knobs", "--system", "outbox")
	assert.Equal(t, exitOK, code)
	assert.Regexp(t, `(?m)^check-then-insert\s+harmful\s+PB1\s+two handlers racing on one key\s+`, stdout, "outbox knobs show the faults they need")

	code, stdout, _ = run(t, "params", "--system", "arbiter")
	assert.Equal(t, exitOK, code)
	assert.Regexp(t, `(?m)^heartbeat\s+duration\s+20s\s+>= 1ms, < lease\*\s+worker heartbeat interval$`, stdout)
	assert.Regexp(t, `(?m)^lease\s+duration\s+1m0s\s+>= 1ms, >= unconfirmed_lease\*, > heartbeat\*\s`, stdout)
	assert.Regexp(t, `(?m)^legacy_workers\s+count\s+0\s+>= 0, <= home_workers \+ prod_workers\s`, stdout)
	assert.Contains(t, stdout, "* a timing rule allow_unsafe waives")
	code, stdout, _ = run(t, "params", "--system", "twopc")
	assert.Equal(t, exitOK, code)
	assert.Regexp(t, `(?m)^participants\s+count\s+2\s+2 to 9\s`, stdout, "a maximum from the table")

	// Every parameter of every system, with its default: what --set takes.
	code, stdout, _ = run(t, "params", "--json")
	require.Equal(t, exitOK, code)
	var got []listed
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	require.Len(t, got, len(systems.All()))
	for i, sys := range systems.All() {
		assert.Equal(t, sys.Name(), got[i].System)
		var names []string
		for _, p := range got[i].Params {
			names = append(names, p.Name)
			assert.NotEmpty(t, p.Doc, "%s %s has a meaning", sys.Name(), p.Name)
			// The default shown is the default design's value: setting it
			// changes nothing.
			d, err := sys.NewDesign(nil, []string{p.Name + "=" + p.Default}, nil)
			require.NoError(t, err, "%s --set %s=%s", sys.Name(), p.Name, p.Default)
			var a, b map[string]any
			require.NoError(t, json.Unmarshal(d.JSON, &a))
			require.NoError(t, json.Unmarshal(sys.Default().JSON, &b))
			delete(a, "pinned")
			assert.Equal(t, b, a, "%s: %s=%s is the default", sys.Name(), p.Name, p.Default)
		}
		assert.Equal(t, sys.Params(), names)
	}
}

// TestVersion: the module version and the VCS revision, "(modified)" when
// the tree was dirty.
func TestVersion(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/fencesim/fencesim", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abc"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}}
	assert.Equal(t, "fencesim github.com/fencesim/fencesim v1.2.3, revision 0123abc (modified) of 2026-01-02T03:04:05Z, go1.26.0", versionText(info, true))
	info.Settings[2].Value = "false"
	assert.NotContains(t, versionText(info, true), "(modified)")
	info.Settings = nil
	assert.Contains(t, versionText(info, true), "revision unknown")
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
		code, stdout, stderr := run(t, args...)
		assert.Equal(t, exitOK, code, stderr)
		assert.True(t, strings.HasPrefix(stdout, "fencesim "), stdout)
		assert.Equal(t, 1, strings.Count(stdout, "\n"))
	}
}

// TestUndecidedIsNotAFailure: a run whose linearizability search gives up
// within its bound is undecided, not failed: explore exits 0, counts it
// apart per property and names its seed (text and --json), and run prints
// the verdict as "ok (undecided: ...)". The bound is made tiny here so that
// ordinary histories meet it (a steered world of the default design met
// the real one: 9419649430941861698 at --faults heavy).
func TestUndecidedIsNotAFailure(t *testing.T) {
	defer func(n int) { jc.SearchLimit = n }(jc.SearchLimit)
	jc.SearchLimit = 30
	code, stdout, stderr := run(t, "explore", "--system", "arbiter", "--runs", "6", "--workers", "1", "--audit", "0", "--artifacts", "0")
	require.Equal(t, exitOK, code, "undecided runs fail nothing:\n%s%s", stdout, stderr)
	assert.Contains(t, stdout, "failed: 0 (0.0%)")
	m := regexp.MustCompile(`undecided runs: (\d+) \(a check could not decide[^)]*\): (.*); seeds: (.*)`).FindStringSubmatch(stdout)
	require.NotNil(t, m, "explore names the undecided runs:\n%s", stdout)
	assert.Contains(t, m[2], "PA1 at-most-one-owner (porcupine, oracle view) in ")
	seed := strings.Split(m[3], ", ")[0]

	code, stdout, _ = run(t, "explore", "--system", "arbiter", "--runs", "6", "--workers", "1", "--audit", "0", "--artifacts", "0", "--json")
	require.Equal(t, exitOK, code)
	var s summary.Summary
	require.NoError(t, json.Unmarshal([]byte(stdout), &s))
	x := s.Systems[0]
	assert.Zero(t, x.FailedRuns)
	require.NotEmpty(t, x.Undecided)
	assert.Equal(t, seed, strconv.FormatUint(x.Undecided[0].Seed, 10))
	n := 0
	for _, p := range x.Properties {
		assert.Zero(t, p.Failed, p.Property)
		n += p.Undecided
	}
	assert.GreaterOrEqual(t, n, len(x.Undecided), "each undecided run counted under its properties")

	code, stdout, _ = run(t, "run", "--system", "arbiter", "--seed", seed, "--out", t.TempDir())
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "no property failed (15); PA1, PA3 undecided (its check could not decide")
	assert.NotContains(t, stdout, "every property held", "the headline does not say the undecided checks held")
	assert.Contains(t, stdout, ": ok (undecided: search limit: submission ")

	// compare (and diff, from the same records) counts them per side.
	file := filepath.Join(t.TempDir(), "runs.jsonl")
	code, stdout, stderr = run(t, "compare", "--system", "arbiter", "--knob", "no-leader-lock", "--runs", "6", "--workers", "1", "--per-seed", file)
	require.Equal(t, exitOK, code, "%s%s", stdout, stderr)
	assert.Regexp(t, `undecided runs: baseline [1-9]\d*, changed \d+ \(a check could not decide[^)]*\): PA1 at-most-one-owner \(porcupine, oracle view\) in `, stdout)
	assert.Contains(t, stdout, "baseline seeds "+seed)
	undecided := 0
	for _, r := range readRecords(t, file) {
		if r.undecidedOn("PA1 at-most-one-owner (porcupine, oracle view)") {
			undecided++
			assert.Contains(t, r.Held, "PA1 at-most-one-owner (porcupine, oracle view)", "an undecided property held")
		}
	}
	assert.Positive(t, undecided, "the per-seed records name the undecided property")
}

// TestWorldFlag: with every system --world applies to the arbiter's runs
// (the others draw no worlds); a diff's child of systems without worlds
// is not given --world, which it would refuse.
func TestWorldFlag(t *testing.T) {
	code, stdout, stderr := run(t, "explore", "--world", "fixed", "--runs", "1", "--artifacts", "0", "--audit", "0")
	require.Contains(t, []int{exitOK, exitFail}, code, stderr)
	assert.Contains(t, stdout, "world: fixed")
	assert.Equal(t, []string{"--world", "wide"}, worldFlag("wide", []string{"twopc", "arbiter"}))
	assert.Nil(t, worldFlag("wide", []string{"outbox", "twopc"}))
}

// TestShardHeader: a shard's header says which seeds it ran; it said
// "seeds: 1-20" over the 5 runs of --shard 2/4.
func TestShardHeader(t *testing.T) {
	code, out, stderr := run(t, "explore", "--system", "outbox", "--runs", "20", "--shard", "2/4", "--out", t.TempDir())
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "seeds: 1-20, shard 2/4 (the seeds s with s mod 4 = 2)\nruns: 5,")
	code, out, stderr = run(t, "explore", "--system", "outbox", "--runs", "4", "--out", t.TempDir())
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "seeds: 1-4\nruns: 4,", "a whole run's header is as before")
}

// TestRunRefusesAnOutFileThatIsNoFile: a directory in --out where run
// writes its report is refused in one line naming it (not "--out DIR: is a
// directory"), before anything is written: a trace already there is left
// as it was.
func TestRunRefusesAnOutFileThatIsNoFile(t *testing.T) {
	out := t.TempDir()
	trace := filepath.Join(out, "twopc-seed-3.jsonl")
	require.NoError(t, os.WriteFile(trace, []byte("an earlier trace\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(out, "twopc-seed-3-report.html"), 0o755))
	code, stdout, stderr := run(t, "run", "--system", "twopc", "--seed", "3", "--out", out)
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, stdout)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	assert.Contains(t, stderr, filepath.Join(out, "twopc-seed-3-report.html")+" is a directory, not a file")
	assert.Equal(t, "an earlier trace\n", readFile(t, trace), "nothing written")
}

// TestReportNamesThePathItCannotWrite: a directory where report writes
// porcupine's page is named (not the report's own path, which is free),
// and nothing is written.
func TestReportNamesThePathItCannotWrite(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := run(t, "run", "--system", "arbiter", "--knob", "fence-by-worker-id", "--seed", "2", "--out", dir)
	require.Equal(t, exitFail, code, stderr)
	sub := t.TempDir()
	trace := filepath.Join(sub, "arbiter-seed-2.jsonl")
	require.NoError(t, os.WriteFile(trace, []byte(readFile(t, filepath.Join(dir, "arbiter-seed-2.jsonl"))), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(sub, "arbiter-seed-2-porcupine.html"), 0o755))
	code, stdout, stderr := run(t, "report", trace)
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, stdout)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	assert.Contains(t, stderr, filepath.Join(sub, "arbiter-seed-2-porcupine.html")+" is a directory")
	assert.NoFileExists(t, filepath.Join(sub, "arbiter-seed-2-report.html"))
}

// TestReplayOfAMissingFile: a trace that is not there is said in one line
// that names it and what to give instead.
func TestReplayOfAMissingFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "arbiter-seed-9.jsonl")
	for _, cmd := range []string{"replay", "report"} {
		code, stdout, stderr := run(t, cmd, missing)
		assert.Equal(t, exitUsage, code)
		assert.Empty(t, stdout)
		assert.Equal(t, "fencesim "+cmd+": "+missing+": no such file: "+traceWant+"\n", stderr)
	}
}

// TestReplayNamesAnotherCommit: a trace written at another commit that
// does not replay identically says so beside the first difference (a
// change between the commits may be why), and one of this commit does not.
func TestReplayNamesAnotherCommit(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := run(t, "run", "--system", "twopc", "--seed", "3", "--out", out)
	require.Equal(t, exitOK, code, stderr)
	b := readFile(t, filepath.Join(out, "twopc-seed-3.jsonl"))
	lines := strings.SplitN(b, "\n", 3)
	edited := strings.Replace(lines[2], `"incarnation 0"`, `"incarnation 9"`, 1)
	require.NotEqual(t, lines[2], edited)
	same := filepath.Join(out, "same.jsonl")
	require.NoError(t, os.WriteFile(same, []byte(lines[0]+"\n"+lines[1]+"\n"+edited), 0o644))
	code, stdout, _ := run(t, "replay", same)
	assert.Equal(t, exitFail, code)
	assert.NotContains(t, stdout, "written at commit")
	other := filepath.Join(out, "other.jsonl")
	h := regexp.MustCompile(`"commit":"[^"]*"`).ReplaceAllString(lines[0], `"commit":"0123456789abcdef0123456789abcdef01234567"`)
	require.NoError(t, os.WriteFile(other, []byte(h+"\n"+lines[1]+"\n"+edited), 0o644))
	code, stdout, _ = run(t, "replay", other)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stdout, "the trace was written at commit 0123456789abcdef0123456789abcdef01234567, this fencesim is ")
	// report says it too, in its one line.
	code, _, stderr = run(t, "report", other)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	assert.Contains(t, stderr, "; the trace was written at commit 0123456789abcdef0123456789abcdef01234567, this fencesim is ")
}

// TestArtifactWithoutFaults: a failure whose minimized schedule keeps no
// fault action is not said to need "each one" of none.
func TestArtifactWithoutFaults(t *testing.T) {
	code, stdout, stderr := run(t, "explore", "--system", "outbox", "--knob", "check-then-insert", "--seeds", "3", "--artifacts", "1", "--out", t.TempDir())
	require.Equal(t, exitFail, code, stderr)
	assert.Regexp(t, `artifacts: seed 3 \(PB1\): \d+ -> 0 fault actions, none needed: it fails without a fault;`, stdout)
}
