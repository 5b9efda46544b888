package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/internal/changecov"
	"github.com/fencesim/fencesim/internal/revision"
	"github.com/fencesim/fencesim/internal/summary"
	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// scratchRepo makes a git repository in a temporary directory holding
// this checkout's files as they are now (committed or not): its HEAD is
// the code under test, whatever this checkout's HEAD is.
func scratchRepo(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("diff needs %s on PATH", tool)
		}
	}
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	require.NoError(t, err, "the test runs inside a git checkout")
	root := strings.TrimSpace(string(out))
	ls := exec.Command("git", "ls-files", "-co", "--exclude-standard", "-z")
	ls.Dir = root
	files, err := ls.Output()
	require.NoError(t, err)
	dir := t.TempDir()
	for _, f := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=test", "-c", "user.email=test@example.com"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "the code under test")
	return dir
}

// TestDiff: on an unchanged tree diff reports 0 altered runs and exits 0;
// a harmful change that is not a knob (the heartbeat renews on status and
// worker_id without lease_token, what the heartbeat-by-worker-id knob
// does) exits 1 naming PA1 and the seeds it newly fails on.
func TestDiff(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fencesim twice per diff")
	}
	dir := scratchRepo(t)
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	code := Main([]string{"diff", "--base", "HEAD", "--system", "arbiter", "--runs", "12", "--keep", "0"}, &stdout, &stderr)
	require.Equal(t, exitOK, code, "an unchanged tree: %s%s", stdout.String(), stderr.String())
	assert.Contains(t, stdout.String(), "your change altered 0 of 12 runs")
	assert.Contains(t, stdout.String(), "verdict: unchanged")
	assert.NotContains(t, stdout.String(), "changed code", "nothing changed under model/: nothing to count")
	// --search-seed with --focus=auto is accepted (auto decides as it
	// goes), and said unused when no search ran: it was silently ignored.
	stdout.Reset()
	stderr.Reset()
	code = Main([]string{"diff", "--base", "HEAD", "--system", "arbiter", "--runs", "4", "--keep", "0", "--search-seed", "3"}, &stdout, &stderr)
	require.Equal(t, exitOK, code, "%s%s", stdout.String(), stderr.String())
	assert.Contains(t, stdout.String(), "focus: uniform (no change under model/ was counted: nothing to focus on; --search-seed 3 not used: no directed search ran)")

	sql := filepath.Join(dir, "model", "judge", "sql.go")
	b, err := os.ReadFile(sql)
	require.NoError(t, err)
	changed := strings.Replace(string(b), "if d.Has(HeartbeatByWorkerID) {", "if true { // the heartbeat without lease_token", 1)
	require.NotEqual(t, string(b), changed, "the heartbeat's knob switch is where the test expects it")
	require.NoError(t, os.WriteFile(sql, []byte(changed), 0o644))
	stdout.Reset()
	stderr.Reset()
	kept := t.TempDir()
	code = Main([]string{"diff", "--system", "arbiter", "--runs", "12", "--keep", "1", "--out", kept, "--json"}, &stdout, &stderr)
	require.Equal(t, exitFail, code, "a harmful change: %s%s", stdout.String(), stderr.String())
	var res diffResult
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &res))
	assert.Equal(t, "failed", res.Verdict)
	require.Len(t, res.Systems, 1)
	d := res.Systems[0]
	assert.Positive(t, d.Altered, "the change alters runs")
	var flipped []uint64
	for _, p := range d.Properties {
		if strings.HasPrefix(p.Property, "PA1 ") {
			flipped = append(flipped, p.NewlyFailing...)
		}
		assert.Empty(t, p.NewlyPassing, "%s: nothing passes that failed", p.Property)
	}
	assert.NotEmpty(t, flipped, "PA1 newly fails on some seed: %s", stdout.String())
	require.Len(t, res.Kept, 1, "--keep 1 keeps the most changed seed")
	k := res.Kept[0]
	assert.Contains(t, flipped, k.Seed, "a newly failing seed is the most changed")
	assert.Empty(t, k.Error)
	for i, side := range []string{"base", "working"} {
		assert.FileExists(t, filepath.Join(k.Dirs[i], fmt.Sprintf("arbiter-seed-%d-report.html", k.Seed)), side)
		assert.FileExists(t, filepath.Join(k.Dirs[i], fmt.Sprintf("arbiter-seed-%d.jsonl", k.Seed)), side)
	}
	// The kept newly failing seed is minimized on the working tree, and
	// both sides play the minimized schedule: fewer faults than the seed's
	// own, the same in both traces, failing on working only.
	require.True(t, k.Minimized, "a newly failing seed is minimized: %+v", k)
	assert.Equal(t, "working", k.MinimizedOn)
	assert.Positive(t, k.Faults[0])
	assert.Less(t, k.Faults[1], k.Faults[0], "the minimized schedule is shorter than the seed's")
	sched, err := os.ReadFile(k.Schedule)
	require.NoError(t, err)
	var want sim.Schedule
	require.NoError(t, json.Unmarshal(sched, &want))
	full := systems.Run(systems.Arbiter{}, systems.Arbiter{}.Default(), k.Seed, systems.Moderate, systems.Options{})
	assert.Less(t, len(want), len(full.Schedule), "fewer actions than the seed's drawn schedule")
	for i, side := range []string{"base", "working"} {
		f, err := os.Open(filepath.Join(k.Dirs[i], fmt.Sprintf("arbiter-seed-%d.jsonl", k.Seed)))
		require.NoError(t, err)
		tr, err := traces.NewReader(f)
		require.NoError(t, err)
		f.Close()
		var got sim.Schedule
		require.NoError(t, json.Unmarshal(tr.Header.Schedule, &got))
		assert.Equal(t, want, got, "the %s trace plays the minimized schedule", side)
		page, err := os.ReadFile(filepath.Join(k.Dirs[i], fmt.Sprintf("arbiter-seed-%d-report.html", k.Seed)))
		require.NoError(t, err)
		assert.True(t, strings.Contains(string(page), html.EscapeString(want[0].String())), "the %s report lists the minimized schedule's %s", side, want[0])
	}
}

// fakeFencesim writes a shell script standing for a revision's fencesim:
// it prints out for run and exits with code; with a flag of refuse, it
// refuses as a fencesim without that flag does.
func fakeFencesim(t *testing.T, dir, name, refuse, out string, code int) string {
	t.Helper()
	path := filepath.Join(dir, name)
	script := fmt.Sprintf(`#!/bin/sh
for a in "$@"; do
  if [ "$a" = "%s" ]; then echo "flag provided but not defined: $a" >&2; exit 2; fi
done
while [ $# -gt 0 ]; do
  if [ "$1" = "--out" ]; then mkdir -p "$2"; out="$2"; fi
  if [ "$1" = "--minimize" ]; then echo '[]' > "$out/arbiter-seed-7-schedule.json"; fi
  shift
done
printf '%%s
' '%s'
exit %d
`, refuse, out, code)
	require.NoError(t, os.WriteFile(path, []byte(script), 0o755))
	return path
}

// TestKeepFallsBack: a base revision whose run lacks --schedule keeps the
// full seed on both sides and says why in one line; one that plays the
// minimized schedule and fails the property too keeps the full seed as
// well; with both flags and a difference kept, the runs are minimized.
func TestKeepFallsBack(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("needs sh")
	}
	dir := t.TempDir()
	working := fakeFencesim(t, dir, "working", "-none-", "x (...; 9 -> 2 fault actions): 1 of 2 properties FAILED", exitFail)
	prop := "PA1 at-most-one-owner"
	for _, tc := range []struct {
		name, refuse, says string
		minimized          bool
		note               string
	}{
		{"old base", "--schedule", "x: every property held", false, "the full seed: the base revision's run has no --schedule (it predates it)"},
		{"fails on both", "-none-", "x: 1 of 2 properties FAILED\n  " + prop + ": FAILED: two owners", false, "the full seed: the schedule minimized on the working tree fails PA1 on the base revision too"},
		{"minimized", "-none-", "x: every property held\n  " + prop + ": ok", true, ""},
	} {
		base := fakeFencesim(t, dir, "base-"+strings.ReplaceAll(tc.name, " ", "-"), tc.refuse, tc.says, exitOK)
		k := keptRun{System: "arbiter", Seed: 7, Why: prop + " newly fails", prop: prop, fail: 1}
		keepOne(context.Background(), [2]string{base, working}, dir, selection{world: "drawn"}, systems.Moderate, &k, filepath.Join(dir, "out-"+tc.refuse))
		assert.Empty(t, k.Error, tc.name)
		assert.Equal(t, tc.minimized, k.Minimized, tc.name)
		assert.Equal(t, tc.note, k.Note, tc.name)
		if tc.minimized {
			assert.Equal(t, [2]int{9, 2}, k.Faults, tc.name)
		}
	}
	// A base whose world lacks a node the minimized schedule names
	// refuses it (run --schedule, exit 2): the full seed, and why.
	other := filepath.Join(dir, "base-other-world")
	require.NoError(t, os.WriteFile(other, []byte(`#!/bin/sh
for a in "$@"; do
  if [ "$a" = "--schedule" ]; then echo "fencesim run: --schedule s.json: fault action 1 (crash): node \"x\" is not a node of this world (nodes: a): not a schedule of arbiter seed 7's world: give one of its own" >&2; exit 2; fi
done
echo 'x: every property held'
`), 0o755))
	k := keptRun{System: "arbiter", Seed: 7, Why: prop + " newly fails", prop: prop, fail: 1}
	keepOne(context.Background(), [2]string{other, working}, dir, selection{world: "drawn"}, systems.Moderate, &k, filepath.Join(dir, "out-other-world"))
	assert.Empty(t, k.Error)
	assert.False(t, k.Minimized)
	assert.Equal(t, "the full seed: the schedule minimized on the working tree names nodes the base revision's world does not have", k.Note)

	k = keptRun{System: "arbiter", Seed: 7, Why: "altered; MA1 moved most"}
	keepOne(context.Background(), [2]string{working, working}, dir, selection{world: "drawn"}, systems.Moderate, &k, filepath.Join(dir, "out-move"))
	assert.False(t, k.Minimized)
	assert.Contains(t, k.Note, "a metric move has no failure for minimization to keep")
}

// TestDiffBadInput: what diff refuses, one line each, exit 2.
func TestDiffBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", "--base", "no-such-rev-xyz"}, "--base no-such-rev-xyz: not a commit"},
		{[]string{"diff", "--base", "HEAD", "extra"}, "unexpected argument"},
		{[]string{"diff", "--system", "arbiter", "--fail-on", "nope=+1%"}, `no metric "nope"`},
		{[]string{"diff", "--system", "arbiter", "--fail-on", "MA2=10%"}, "must be signed"},
		{[]string{"diff", "--system", "arbiter", "--fail-on", "MA4=+1"}, "names 2 metrics"},
		{[]string{"diff", "--keep", "-1"}, "--keep -1"},
		{[]string{"diff", "--system", "arbiter", "--fail-on", "MA2=+10%", "--fail-on", "wasted_judgings=+20%"}, `--fail-on "MA2=+10%" and "wasted_judgings=+20%" both bound the mean of wasted_judgings (MA2) on a rise: give each bound once`},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(tc.args, &stdout, &stderr)
		assert.Equal(t, exitUsage, code, "%v", tc.args)
		assert.Contains(t, stderr.String(), tc.want, "%v", tc.args)
		assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "%v: one line: %q", tc.args, stderr.String())
	}
}

// coverageChange changes model/judge/arbiter.go's sweepStmts twice in the
// scratch repository dir: a harmless refactor of the line every sweep
// runs, and a statement in the branch of the arbiter-clock knob, which the
// default design does not set, so that no run of it can reach it. It
// returns the line of that statement in the changed file.
func coverageChange(t *testing.T, dir string) int {
	t.Helper()
	path := filepath.Join(dir, "model", "judge", "arbiter.go")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	src := string(b)
	for _, r := range [][2]string{
		{"\tif a.sweepSQL != nil {\n\t\treturn a.sweepSQL\n\t}\n", "\tif s := a.sweepSQL; s != nil {\n\t\treturn s\n\t}\n"},
		{"\tif !a.d.Has(ArbiterClock) {\n\t\ta.sweepSQL = s\n\t}\n", "\tif !a.d.Has(ArbiterClock) {\n\t\ta.sweepSQL = s\n\t} else {\n\t\t// Under the arbiter's clock the statements differ each time: name them apart.\n\t\ts = named(s, \"sweep-arbiter-clock\")\n\t}\n"},
	} {
		changed := strings.Replace(src, r[0], r[1], 1)
		require.NotEqual(t, src, changed, "sweepStmts holds %q", r[0])
		src = changed
	}
	require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	before, _, _ := strings.Cut(src, "\"sweep-arbiter-clock\")")
	return strings.Count(before, "\n") + 1
}

// TestDiffCoverage: a change under model/ is counted on both sides: the
// hunk every run executes shows its runs on each side, the hunk of a knob's
// branch the default design never takes is a WARNING naming its lines,
// without changing the verdict; --json carries the coverage section and
// --per-seed each run's cover array, indexed by the side's targets. A
// coverage build's explore refuses --workers > 1.
func TestDiffCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fencesim twice per diff")
	}
	dir := scratchRepo(t)
	t.Chdir(dir)
	line := coverageChange(t, dir)
	var stdout, stderr bytes.Buffer
	code := Main([]string{"diff", "--system", "arbiter", "--runs", "12", "--keep", "0"}, &stdout, &stderr)
	require.Equal(t, exitOK, code, "a harmless change: %s%s", stdout.String(), stderr.String())
	text := stdout.String()
	assert.Contains(t, stderr.String(), "counting the 2 hunks of the change under model/ in both builds")
	assert.Contains(t, text, "-- changed code (runs in which each hunk executed, of 12) --")
	never := fmt.Sprintf("model/judge/arbiter.go:%d-%d", line-2, line)
	assert.Contains(t, text, "WARNING: "+never+" never ran in 12 runs: this verdict says nothing about it")
	assert.Regexp(t, `model/judge/arbiter\.go:\d+-\d+ in \(\*Arbiter\)\.sweepStmts +base 12/12 \(\d+ executions\) +working 12/12 `, text, "the refactored line runs in every run")
	assert.Contains(t, text, "verdict: unchanged", "a never-ran hunk does not change the verdict")

	perSeed := filepath.Join(t.TempDir(), "runs.jsonl")
	stdout.Reset()
	stderr.Reset()
	code = Main([]string{"diff", "--system", "arbiter", "--runs", "12", "--keep", "0", "--json", "--per-seed", perSeed, "--workers", "4"}, &stdout, &stderr)
	require.Equal(t, exitOK, code, "%s%s", stdout.String(), stderr.String())
	var res diffResult
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &res))
	cov := res.Coverage
	require.NotNil(t, cov, "a change under model/ has a coverage section")
	assert.Equal(t, [2]int{12, 12}, cov.Runs)
	assert.Equal(t, [2]string{}, cov.NotCounted)
	require.Len(t, cov.Hunks, 2, "%+v", cov.Hunks)
	ran, skipped := cov.Hunks[0], cov.Hunks[1]
	assert.Equal(t, "(*Arbiter).sweepStmts", ran.WorkFunc)
	assert.Equal(t, [2]int{12, 12}, ran.Executed)
	assert.Positive(t, ran.Executions[0])
	assert.Equal(t, ran.Executions[0], ran.Executions[1], "the refactor runs as often as the line it replaced")
	assert.Equal(t, -1, skipped.Target[0], "an insertion has no lines on the base")
	assert.Zero(t, skipped.Executed[1])
	assert.Positive(t, skipped.Stmts[1])
	assert.Equal(t, []string{never + " never ran in 12 runs: this verdict says nothing about it"}, cov.Warnings)
	require.Len(t, cov.Targets[1], 2)
	assert.Equal(t, line, cov.Targets[1][skipped.Target[1]].To)

	f, err := os.Open(perSeed)
	require.NoError(t, err)
	recs, err := readPerSeed(f, perSeed)
	f.Close()
	require.NoError(t, err)
	require.Len(t, recs, 24, "12 seeds on each side, from two children a side")
	for i, r := range recs {
		side := map[string]int{"base": 0, "working": 1}[r.Side]
		require.Len(t, r.Cover, len(cov.Targets[side]), "%s seed %d", r.Side, r.Seed)
		assert.Positive(t, r.Cover[ran.Target[side]], "%s seed %d ran the refactored line", r.Side, r.Seed)
		if side == 1 {
			assert.Zero(t, r.Cover[skipped.Target[1]])
		}
		if i > 0 {
			assert.LessOrEqual(t, recs[i-1].Seed, r.Seed, "by seed")
		}
	}

	// The binary itself: explore with more than one worker is refused.
	bin := filepath.Join(t.TempDir(), "fencesim")
	require.NoError(t, revision.BuildCovered(context.Background(), dir, bin, cov.Targets[1]))
	out, err := exec.Command(bin, "explore", "--system", "arbiter", "--runs", "2", "--workers", "2").CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", out)
	assert.Equal(t, exitUsage, ee.ExitCode())
	assert.Equal(t, "fencesim explore: this binary counts changed code per run (a diff's coverage build): run it with --workers 1\n", string(out))
}

// TestDiffFocus: a change with a hunk no warm-up run executed is
// focused by default: the seeds after the warm-up are picked by the
// directed search, each once, on both sides; --focus=false keeps to the
// seeds in order.
func TestDiffFocus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fencesim twice per diff")
	}
	dir := scratchRepo(t)
	t.Chdir(dir)
	coverageChange(t, dir)
	var stdout, stderr bytes.Buffer
	perSeed := filepath.Join(t.TempDir(), "runs.jsonl")
	code := Main([]string{"diff", "--system", "arbiter", "--runs", "44", "--keep", "0", "--json", "--per-seed", perSeed}, &stdout, &stderr)
	require.Equal(t, exitOK, code, "%s%s", stdout.String(), stderr.String())
	var res diffResult
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &res))
	require.NotNil(t, res.Focus)
	assert.Equal(t, "directed", res.Focus.Mode)
	assert.Regexp(t, `^model/judge/arbiter\.go:\d+-\d+ ran in 0 of the 32 warm-up runs$`, res.Focus.Why)
	require.Len(t, res.Focus.Systems, 1)
	order := res.Focus.Systems[0].Order
	require.Len(t, order, 44)
	seen := map[uint64]bool{}
	for i, s := range order {
		if i < 32 {
			assert.Equal(t, uint64(i+1), s, "the warm-up runs the first seeds in order")
		}
		assert.False(t, seen[s], "seed %d picked twice", s)
		seen[s] = true
	}
	assert.Contains(t, res.Seeds, "44 per system picked by a directed search from 1 on")
	assert.Equal(t, [2]int{44, 44}, res.Coverage.Runs, "both sides ran every picked seed")
	f, err := os.Open(perSeed)
	require.NoError(t, err)
	recs, err := readPerSeed(f, perSeed)
	f.Close()
	require.NoError(t, err)
	require.Len(t, recs, 88)
	for _, r := range recs {
		assert.True(t, seen[r.Seed], "seed %d was picked", r.Seed)
	}

	stdout.Reset()
	stderr.Reset()
	code = Main([]string{"diff", "--system", "arbiter", "--runs", "44", "--keep", "0", "--focus=false"}, &stdout, &stderr)
	require.Equal(t, exitOK, code, "%s%s", stdout.String(), stderr.String())
	assert.Contains(t, stdout.String(), "seeds 1-44\n")
	assert.NotContains(t, stdout.String(), "focus:")

	// With several systems, focus searches only those the change reached
	// in the warm-up; the others run their seeds in order and say why (a
	// change to the arbiter had twopc "directed" by a search with nothing
	// to steer by). The same builds: the cache has them.
	stdout.Reset()
	stderr.Reset()
	code = Main([]string{"diff", "--system", "arbiter,twopc", "--runs", "40", "--keep", "0", "--json"}, &stdout, &stderr)
	require.Equal(t, exitOK, code, "%s%s", stdout.String(), stderr.String())
	res = diffResult{}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &res))
	require.NotNil(t, res.Focus)
	assert.Equal(t, "directed", res.Focus.Mode)
	require.Len(t, res.Focus.Systems, 2)
	a, c := res.Focus.Systems[0], res.Focus.Systems[1]
	assert.Equal(t, "arbiter", a.System)
	assert.Empty(t, a.Uniform, "the arbiter ran the change: searched")
	assert.Equal(t, "twopc", c.System)
	assert.Equal(t, "the change did not reach twopc in the 32 warm-up runs (no changed line ran, no trace altered): its seeds in order", c.Uniform)
	want := make([]uint64, 40)
	for i := range want {
		want[i] = uint64(i + 1)
	}
	assert.Equal(t, want, c.Order, "twopc's seeds are 1-40 in order")
	assert.Equal(t, [2]int{80, 80}, res.Coverage.Runs, "both sides ran every seed of both systems")
	assert.Contains(t, res.Seeds, "; twopc: 1-40 in order (the change did not reach it)")
}

// TestShardsPartition: diff's k children of a side, shard i+n*j of n*k,
// hold every seed of the user's shard i/n exactly once, and no other.
func TestShardsPartition(t *testing.T) {
	for _, tc := range []struct {
		shard summary.Shard
		k     int
	}{{summary.Shard{}, 1}, {summary.Shard{}, 3}, {summary.Shard{I: 1, N: 3}, 1}, {summary.Shard{I: 1, N: 3}, 2}, {summary.Shard{I: 0, N: 2}, 4}} {
		p := plan{first: 1, last: 100, shard: tc.shard}
		shards := p.shards(tc.k)
		require.Len(t, shards, tc.k)
		for s := p.first; s <= p.last; s++ {
			n := 0
			for _, sh := range shards {
				if sh.Has(s) {
					n++
				}
			}
			want := 0
			if tc.shard.Has(s) {
				want = 1
			}
			assert.Equal(t, want, n, "seed %d, shard %v cut in %d", s, tc.shard, tc.k)
		}
	}
}

// TestCoverageText: the changed-code table's cells and WARNINGs, from
// counted records: a hunk that ran, an insertion that never ran, a
// comment, a deletion that never ran on the base, and a hunk in a file
// fencesim does not link.
func TestCoverageText(t *testing.T) {
	hunks := []revision.Hunk{
		{File: "model/judge/sql.go", Base: revision.Lines{From: 10, To: 10}, Work: revision.Lines{From: 10, To: 10}, BaseFunc: "f", WorkFunc: "f"},
		{File: "model/judge/sql.go", Base: revision.Lines{From: 20, To: 19}, Work: revision.Lines{From: 20, To: 22}, WorkFunc: "g"},
		{File: "model/judge/sql.go", Base: revision.Lines{From: 30, To: 30}, Work: revision.Lines{From: 32, To: 32}},
		{File: "model/judge/sql.go", Base: revision.Lines{From: 40, To: 41}, Work: revision.Lines{From: 43, To: 42}, BaseFunc: "h"},
		{File: "model/contract/contracttest/x.go", Base: revision.Lines{From: 5, To: 5}, Work: revision.Lines{From: 5, To: 5}},
	}
	c, asked := coverageTargets(hunks)
	require.Len(t, asked[0], 4)
	require.Len(t, asked[1], 4)
	// What the binaries registered: statements, and nothing for the file
	// fencesim does not link (the last target of each side).
	stmts := [2][]int{{1, 0, 2}, {1, 2, 0}}
	for i := range c.Targets {
		c.Targets[i] = append([]changecov.Target(nil), asked[i]...)
		for k := range stmts[i] {
			c.Targets[i][k].Stmts = stmts[i][k]
		}
		c.Hunks[4].NotBuilt[i] = true
	}
	recs := [2][]seedRecord{
		{{Seed: 1, Cover: []uint64{3, 0, 0}}, {Seed: 2, Cover: []uint64{0, 0, 0}}},
		{{Seed: 1, Cover: []uint64{4, 0, 0}}, {Seed: 2, Cover: []uint64{1, 0, 0}}},
	}
	c.count(recs)
	var b bytes.Buffer
	c.writeText(&b)
	assert.Equal(t, `
-- changed code (runs in which each hunk executed, of 2) --
  model/judge/sql.go:10 in f               base 1/2 (3 executions)       working 2/2 (5 executions)
  model/judge/sql.go:20-22 in g            base -                        working 0/2 (0 executions)
  model/judge/sql.go:32                    no statements (declarations or comments): not counted
  model/judge/sql.go:40-41 (deleted) in h  base 0/2 (0 executions)       working -
  model/contract/contracttest/x.go:5       base not in fencesim's build  working not in fencesim's build
  WARNING: model/judge/sql.go:20-22 never ran in 2 runs: this verdict says nothing about it
  WARNING: model/judge/sql.go:40-41 (deleted) never ran in 2 runs of the base revision: this verdict says nothing about it
  WARNING: model/contract/contracttest/x.go:5 is in no package fencesim links: no run executes it
`, b.String())

	// A base revision that predates change coverage: its side is not
	// counted, and its deletion cannot warn.
	c, _ = coverageTargets(hunks[:1])
	c.NotCounted[0] = "not counted: the base revision predates change coverage"
	c.Targets[1][0].Stmts = 1
	c.count([2][]seedRecord{{{Seed: 1}}, {{Seed: 1, Cover: []uint64{0}}}})
	b.Reset()
	c.writeText(&b)
	assert.Contains(t, b.String(), "  base: not counted: the base revision predates change coverage\n")
	assert.Contains(t, b.String(), "base not counted  working 0/1 (0 executions)")
	assert.Len(t, c.Warnings, 1)

	// A change that only adds (no base lines: nothing to count there), one
	// hunk of which ran in part (its if ran, its body never did), and one
	// of start-up code.
	added := []revision.Hunk{
		{File: "model/judge/sql.go", Base: revision.Lines{From: 50, To: 49}, Work: revision.Lines{From: 50, To: 52}, WorkFunc: "g"},
		{File: "model/judge/sql.go", Base: revision.Lines{From: 60, To: 59}, Work: revision.Lines{From: 61, To: 61}},
	}
	partly := func(records [2][]seedRecord) *diffCoverage {
		c, asked := coverageTargets(added)
		require.Empty(t, asked[0])
		c.Targets[1] = append([]changecov.Target(nil), asked[1]...)
		c.Targets[1][0].Stmts, c.Targets[1][0].Parts = 3, []changecov.Part{{From: 50, To: 50, Stmts: 2}, {From: 51, To: 52, Stmts: 1}}
		c.Targets[1][1].Start = true
		c.count(records)
		return c
	}
	c = partly([2][]seedRecord{
		{{Seed: 1}, {Seed: 2}},
		{{Seed: 1, Cover: []uint64{2, 0}, CoverParts: []uint64{0b01, 0}}, {Seed: 2, Cover: []uint64{1, 0}, CoverParts: []uint64{0b01, 0}}},
	})
	b.Reset()
	c.writeText(&b)
	assert.Equal(t, `
-- changed code (runs in which each hunk executed, of 2) --
  model/judge/sql.go:50-52 in g  base -  working 2/2 (3 executions)
  model/judge/sql.go:61          runs when fencesim starts (an init function, a package variable), before any run: not counted
  WARNING: model/judge/sql.go:51-52 (of the hunk at 50-52) never ran in 2 runs, though the rest of the hunk did: this verdict says nothing about it
`, b.String(), "no base line to count is no 'not counted' line")
	assert.Equal(t, [2][]string{nil, {"51-52"}}, c.Hunks[0].Unrun)
	assert.Equal(t, [2]bool{false, true}, c.Hunks[1].Start)

	c = partly([2][]seedRecord{
		{{Seed: 1}, {Seed: 2}},
		{{Seed: 1, Cover: []uint64{2, 0}, CoverParts: []uint64{0b01, 0}}, {Seed: 2, Cover: []uint64{1, 0}, CoverParts: []uint64{0b10, 0}}},
	})
	assert.Empty(t, c.Warnings, "each part ran in some run")
	c = partly([2][]seedRecord{
		{{Seed: 1}, {Seed: 2}},
		{{Seed: 1, Cover: []uint64{2, 0}, CoverParts: []uint64{0b01, 0}}, {Seed: 2, Cover: []uint64{1, 0}}},
	})
	assert.Empty(t, c.Warnings, "a record without parts (an older build's): the parts are not known")
}

// TestDiffKeepsBaseRecords: a second diff of the same base binary and
// flags takes the base's records from the first instead of running them
// (base_runs_kept) and prints the same records; the records are the
// cache's (one edited there shows in the next diff), and a diff with other
// flags runs its base again.
func TestDiffKeepsBaseRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fencesim twice per diff")
	}
	dir := scratchRepo(t)
	t.Chdir(dir)
	records := filepath.Join(os.Getenv("FENCESIM_BUILD_CACHE"), revision.RecordsDir)
	require.NoError(t, os.RemoveAll(records), "the package's cache: no records from other tests")
	diff := func(file string, extra ...string) diffResult {
		t.Helper()
		var stdout, stderr bytes.Buffer
		args := append([]string{"diff", "--system", "arbiter", "--runs", "8", "--keep", "0", "--json", "--per-seed", file}, extra...)
		code := Main(args, &stdout, &stderr)
		require.Equal(t, exitOK, code, "%s%s", stdout.String(), stderr.String())
		var res diffResult
		require.NoError(t, json.Unmarshal(stdout.Bytes(), &res))
		return res
	}
	out := t.TempDir()
	first := diff(filepath.Join(out, "1.jsonl"))
	assert.Zero(t, first.BaseKept)
	second := diff(filepath.Join(out, "2.jsonl"))
	assert.Equal(t, 8, second.BaseKept)
	a, err := os.ReadFile(filepath.Join(out, "1.jsonl"))
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(out, "2.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, string(a), string(b), "the kept records are the ones run")

	files, err := filepath.Glob(filepath.Join(records, "*", "*.jsonl"))
	require.NoError(t, err)
	require.Len(t, files, 1, "one diff's records")
	kept, err := os.ReadFile(files[0])
	require.NoError(t, err)
	var rec seedRecord
	line, _, _ := strings.Cut(string(kept), "\n")
	require.NoError(t, json.Unmarshal([]byte(line), &rec))
	edited := strings.Replace(string(kept), rec.Hash, "v2:00000000000000000000000000000000", 1)
	require.NoError(t, os.WriteFile(files[0], []byte(edited), 0o644))
	var stdout, stderr bytes.Buffer
	code := Main([]string{"diff", "--system", "arbiter", "--runs", "8", "--keep", "0", "--json"}, &stdout, &stderr)
	require.Equal(t, exitOK, code, "%s%s", stdout.String(), stderr.String())
	var third diffResult
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &third))
	assert.Equal(t, 8, third.BaseKept)
	require.Len(t, third.Systems, 1)
	assert.Equal(t, 1, third.Systems[0].Altered, "the edited record is the base's: its seed differs from the working tree's")

	heavy := diff(filepath.Join(out, "3.jsonl"), "--faults", "heavy")
	assert.Zero(t, heavy.BaseKept, "other flags, another key")
}

// TestRareParts: a hunk is as rare as its rarest part. A hunk whose if
// runs in every warm-up run and whose body in one is rare, named by the
// body's lines, and a run that executes the body is rewarded where a run
// that executes only the if is not; a hunk whose parts all run often is
// not rare; records without parts (an older build's) leave the hunk whole.
func TestRareParts(t *testing.T) {
	hunks := []revision.Hunk{
		{File: "model/judge/sql.go", Base: revision.Lines{From: 50, To: 49}, Work: revision.Lines{From: 50, To: 52}, WorkFunc: "g"},
		{File: "model/judge/sql.go", Base: revision.Lines{From: 70, To: 69}, Work: revision.Lines{From: 70, To: 70}, WorkFunc: "h"},
	}
	cov := func() *diffCoverage {
		c, asked := coverageTargets(hunks)
		c.Targets[1] = append([]changecov.Target(nil), asked[1]...)
		c.Targets[1][0].Stmts, c.Targets[1][0].Parts = 3, []changecov.Part{{From: 50, To: 50, Stmts: 2}, {From: 51, To: 52, Stmts: 1}}
		c.Targets[1][1].Stmts, c.Targets[1][1].Parts = 1, []changecov.Part{{From: 70, To: 70, Stmts: 1}}
		return c
	}
	var warm [2][]seedRecord
	for s := range uint64(8) {
		parts := uint64(0b01)
		if s == 3 {
			parts = 0b11 // the body ran once
		}
		warm[0] = append(warm[0], seedRecord{Seed: s})
		warm[1] = append(warm[1], seedRecord{Seed: s, Cover: []uint64{1, 2}, CoverParts: []uint64{parts, 0b1}})
	}
	c := cov()
	rare := rareHunks(c, warm)
	assert.Equal(t, []int{0}, rare, "the if always ran, its body in 1 of 8")
	assert.Equal(t, 1, c.Hunks[0].warm)
	assert.Equal(t, "51-52", c.Hunks[0].warmAt)
	assert.Equal(t, uint64(0b10), c.Hunks[0].rareParts)
	assert.Equal(t, 8, c.Hunks[1].warm)

	rw := &pairReward{cov: c, rare: rare}
	base := &seedRecord{Seed: 9, Hash: "h"}
	onlyIf := &seedRecord{Seed: 9, Hash: "h", Cover: []uint64{5, 1}, CoverParts: []uint64{0b01, 0b1}}
	body := &seedRecord{Seed: 9, Hash: "h", Cover: []uint64{1, 1}, CoverParts: []uint64{0b11, 0b1}}
	assert.Zero(t, rw.score(base, onlyIf), "the if alone, however often, is not the rare part")
	assert.Positive(t, rw.score(base, body), "the body ran")

	for i := range warm[1] {
		warm[1][i].CoverParts = nil
	}
	c = cov()
	assert.Empty(t, rareHunks(c, warm), "without parts the hunk ran in every run")
	assert.Equal(t, 8, c.Hunks[0].warm)
}

// TestCoverageBySystem: a diff of several systems counts a hunk's runs of
// the runs of the systems that executed it, naming them (a twopc hunk
// that ran in every twopc run is not "2/6", a third of the runs); a hunk
// no run executed is of every run; --json has each system's counts; and
// the focus's warm-up counts a hunk as rare by the system that ran it
// most, not by every system's runs together.
func TestCoverageBySystem(t *testing.T) {
	hunks := []revision.Hunk{
		{File: "model/twopc/coordinator.go", Base: revision.Lines{From: 10, To: 10}, Work: revision.Lines{From: 10, To: 10}, BaseFunc: "f", WorkFunc: "f"},
		{File: "model/twopc/coordinator.go", Base: revision.Lines{From: 20, To: 19}, Work: revision.Lines{From: 20, To: 20}, WorkFunc: "g"},
		{File: "model/db/exec.go", Base: revision.Lines{From: 5, To: 4}, Work: revision.Lines{From: 5, To: 5}, WorkFunc: "h"},
	}
	c, asked := coverageTargets(hunks)
	for i := range c.Targets {
		c.Targets[i] = append([]changecov.Target(nil), asked[i]...)
		for k := range c.Targets[i] {
			c.Targets[i][k].Stmts = 1
		}
	}
	var recs [2][]seedRecord
	for _, sys := range []string{"arbiter", "outbox", "twopc"} {
		for s := range uint64(2) {
			base, work := []uint64{0}, []uint64{0, 0, 0}
			if sys == "twopc" {
				base[0], work[0] = 2, 2
			}
			if sys != "outbox" {
				work[2] = 1 // the shared code: arbiter's and twopc's runs
			}
			recs[0] = append(recs[0], seedRecord{System: sys, Seed: s + 1, Cover: base})
			recs[1] = append(recs[1], seedRecord{System: sys, Seed: s + 1, Cover: work})
		}
	}
	c.count(recs)
	var b bytes.Buffer
	c.writeText(&b)
	assert.Equal(t, `
-- changed code (runs in which each hunk executed, of the runs of the systems that executed it: arbiter 2, outbox 2, twopc 2) --
  model/twopc/coordinator.go:10 in f  base 2/2 in twopc (4 executions)  working 2/2 in twopc (4 executions)
  model/twopc/coordinator.go:20 in g  base -                            working 0/6 (0 executions)
  model/db/exec.go:5 in h             base -                            working 4/4 in arbiter, twopc (4 executions)
  WARNING: model/twopc/coordinator.go:20 never ran in 6 runs: this verdict says nothing about it
`, b.String())
	assert.Equal(t, [2]int{6, 6}, c.Runs, "the totals stay")
	assert.Equal(t, [2]int{2, 2}, c.Hunks[0].Executed)
	assert.Equal(t, []systemCoverage{{System: "arbiter", Runs: [2]int{2, 2}}, {System: "outbox", Runs: [2]int{2, 2}}, {System: "twopc", Runs: [2]int{2, 2}, Executed: [2]int{2, 2}}}, c.Hunks[0].BySystem)

	// The warm-up: 8 runs a system. A hunk that ran in 3 of twopc's 8 runs
	// (and in no other system's, which cannot reach it) is not rare; one
	// that ran in 1 of twopc's 8 is, and says so.
	var warm [2][]seedRecord
	for _, sys := range []string{"arbiter", "outbox", "twopc"} {
		for s := range uint64(8) {
			work := []uint64{0, 0, 0}
			if sys == "twopc" && s < 3 {
				work[0] = 1
			}
			if sys == "twopc" && s == 0 {
				work[1] = 1
			}
			if sys == "arbiter" {
				work[2] = 1
			}
			warm[0] = append(warm[0], seedRecord{System: sys, Seed: s + 1, Cover: []uint64{work[0]}})
			warm[1] = append(warm[1], seedRecord{System: sys, Seed: s + 1, Cover: work})
		}
	}
	rare := rareHunks(c, warm)
	assert.Equal(t, []int{1}, rare, "3 of twopc's 8 warm-up runs is not under a quarter; 1 of 8 is")
	assert.Equal(t, [2]int{3, 8}, [2]int{c.Hunks[0].warm, c.Hunks[0].warmRuns})
	assert.Equal(t, [2]int{1, 8}, [2]int{c.Hunks[1].warm, c.Hunks[1].warmRuns})
	assert.Equal(t, [2]int{8, 8}, [2]int{c.Hunks[2].warm, c.Hunks[2].warmRuns}, "the shared code, by the system that ran it most")
}

// TestCoverageBothSides: an interrupted diff's seeds that ran on one side
// only are left out of the changed-code table as they are of the other
// tables: a hunk that ran only in such runs never ran in a run the
// verdict speaks for, and warns.
func TestCoverageBothSides(t *testing.T) {
	hunks := []revision.Hunk{
		{File: "model/judge/sql.go", Base: revision.Lines{From: 10, To: 10}, Work: revision.Lines{From: 10, To: 10}, BaseFunc: "f", WorkFunc: "f"},
	}
	c, asked := coverageTargets(hunks)
	for i := range c.Targets {
		c.Targets[i] = append([]changecov.Target(nil), asked[i]...)
		c.Targets[i][0].Stmts = 1
	}
	recs := [2][]seedRecord{
		{{System: "arbiter", Seed: 1, Cover: []uint64{0}}, {System: "arbiter", Seed: 2, Cover: []uint64{0}}},
		{{System: "arbiter", Seed: 1, Cover: []uint64{0}}, {System: "arbiter", Seed: 2, Cover: []uint64{0}},
			{System: "arbiter", Seed: 3, Cover: []uint64{4}}, {System: "arbiter", Seed: 4, Cover: []uint64{1}}},
	}
	c.count(recs)
	assert.Equal(t, [2]int{2, 2}, c.Runs, "the seeds that ran on both sides")
	assert.Equal(t, [2]int{0, 0}, c.Hunks[0].Executed)
	assert.Equal(t, []string{"model/judge/sql.go:10 never ran in 2 runs: this verdict says nothing about it"}, c.Warnings)
}
