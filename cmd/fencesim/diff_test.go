package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
