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
	k := keptRun{System: "arbiter", Seed: 7, Why: "altered; MA1 moved most"}
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
	} {
		var stdout, stderr bytes.Buffer
		code := Main(tc.args, &stdout, &stderr)
		assert.Equal(t, exitUsage, code, "%v", tc.args)
		assert.Contains(t, stderr.String(), tc.want, "%v", tc.args)
		assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "%v: one line: %q", tc.args, stderr.String())
	}
}
