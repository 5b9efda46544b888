package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/internal/summary"
	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/traces"
)

// TestMain runs the command line itself when FENCESIM_TEST_MAIN is set, so
// that a test can start this binary as fencesim and send it signals.
func TestMain(m *testing.M) {
	if os.Getenv("FENCESIM_TEST_MAIN") == "1" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	// diff's build cache: one of the package's own, so that its diffs
	// share builds (the same base in every scratch repository) and leave
	// the user's cache alone.
	cache, err := os.MkdirTemp("", "fencesim-build-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("FENCESIM_BUILD_CACHE", cache)
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}

// fencesim starts this test binary as the command line with args.
func fencesim(t *testing.T, args ...string) (*exec.Cmd, io.ReadCloser, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "FENCESIM_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	return cmd, stdout, &stderr
}

// exited waits for cmd (at most limit) and returns its exit code.
func exited(t *testing.T, cmd *exec.Cmd, limit time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		t.Fatalf("fencesim %v did not exit within %v of the signal", cmd.Args[1:], limit)
		return -1
	}
}

// TestInterruptExplore: SIGINT during an explore stops it: the runs that
// finished are summarized (JSON), marked interrupted, the systems not
// started are listed, and the exit code is 130.
func TestInterruptExplore(t *testing.T) {
	out := t.TempDir()
	cmd, stdout, stderr := fencesim(t, "explore", "--system", "twopc,outbox", "--runs", "1000000", "--json", "--out", out)
	var b []byte
	read := make(chan struct{})
	go func() { b, _ = io.ReadAll(stdout); close(read) }()
	time.Sleep(2 * time.Second)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	sent := time.Now()
	<-read
	code := exited(t, cmd, 10*time.Second)
	assert.Less(t, time.Since(sent), grace+3*time.Second, "the runs in progress are waited for at most the grace")
	require.Equal(t, exitInterrupted, code, "stderr: %s", stderr)
	var s summary.Summary
	require.NoError(t, json.Unmarshal(b, &s), "stdout: %s", b)
	assert.Equal(t, "SIGINT", s.Interrupted)
	assert.Equal(t, []string{"outbox"}, s.NotRun)
	require.Len(t, s.Systems, 1)
	x := s.Systems[0]
	assert.Equal(t, "twopc", x.System)
	assert.Greater(t, x.Runs, 0, "the runs that finished before the signal are counted")
	assert.Less(t, x.Runs, 1000000)
	require.NotEmpty(t, x.Metrics)
	for _, m := range x.Metrics {
		assert.Len(t, m.Values, x.Runs, "%s: one sample per finished run", m.Name)
	}
}

// TestInterruptMutants: mutants prints each row as its knob finishes;
// SIGTERM after the first row stops it with the rows done, marked
// interrupted, exit 130.
func TestInterruptMutants(t *testing.T) {
	cmd, stdout, stderr := fencesim(t, "mutants", "--system", "twopc,arbiter", "--budget", "1000000", "--knob", "timeout-abort", "--knob", "no-leader-lock")
	r := bufio.NewReader(stdout)
	var lines []string
	for {
		l, err := r.ReadString('\n')
		require.NoError(t, err, "stdout so far: %q; stderr: %s", lines, stderr)
		lines = append(lines, l)
		if strings.HasPrefix(l, "twopc ") {
			break // the first row, while the second knob runs
		}
	}
	assert.Contains(t, lines[len(lines)-1], "timeout-abort")
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	rest, _ := io.ReadAll(r)
	code := exited(t, cmd, 10*time.Second)
	require.Equal(t, exitInterrupted, code, "stderr: %s", stderr)
	text := strings.Join(lines, "") + string(rest)
	assert.Contains(t, text, "1 knobs, 1 as expected")
	assert.Contains(t, text, "INTERRUPTED (SIGTERM): the summary covers only the runs that finished; knobs not run or not finished (no row): no-leader-lock")
	assert.NotContains(t, string(rest), "arbiter ", "the unfinished knob has no row")
}

// TestInterruptCompare: Ctrl-C during compare prints the seeds whose two
// runs finished, as text, and exits 130.
func TestInterruptCompare(t *testing.T) {
	cmd, stdout, stderr := fencesim(t, "compare", "--system", "twopc", "--knob", "timeout-abort", "--runs", "1000000")
	var b []byte
	read := make(chan struct{})
	go func() { b, _ = io.ReadAll(stdout); close(read) }()
	time.Sleep(2 * time.Second)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	<-read
	require.Equal(t, exitInterrupted, exited(t, cmd, 10*time.Second), "stderr: %s", stderr)
	assert.Regexp(t, `INTERRUPTED \(SIGINT\): the comparison covers only the [1-9]\d* seeds whose two runs both finished`, string(b))
	assert.Contains(t, string(b), "runs failing each property")
}

// TestTimeBoundsEverything: --time bounds the whole command, the
// minimization and artifacts of a failing design included (artifacts not
// finished in time are skipped and said so).
func TestTimeBoundsEverything(t *testing.T) {
	out := t.TempDir()
	budget := 2 * time.Second * slowdown
	start := time.Now()
	// Seed 60 is the first of 1-60 this knob fails.
	code, stdout, stderr := run(t, "explore", "--system", "arbiter", "--knob", "fence-by-worker-id", "--time", budget.String(), "--first", "60",
		"--artifacts", "3", "--minimize-budget", "100000", "--out", out, "--json")
	took := time.Since(start)
	require.Equal(t, exitFail, code, stderr)
	assert.Less(t, took, budget+grace+time.Second, "the whole command ends within --time plus the grace")
	var s summary.Summary
	require.NoError(t, json.Unmarshal([]byte(stdout), &s))
	require.Len(t, s.Systems, 1)
	x := s.Systems[0]
	require.Greater(t, x.FailedRuns, 0, "fence-by-worker-id fails within %v", budget)
	require.NotEmpty(t, x.Artifacts)
	for _, a := range x.Artifacts {
		if a.Skipped != "" {
			assert.Contains(t, a.Skipped, "the --time budget ran out")
			continue
		}
		assert.Empty(t, a.Error)
		assert.FileExists(t, a.Trace) // complete or cut at the deadline: either way within the budget
	}
}

// TestProfiles: --cpuprofile and --memprofile write pprof files.
func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof")
	code, _, stderr := run(t, "explore", "--system", "twopc", "--runs", "30", "--cpuprofile", cpu, "--memprofile", mem)
	require.Equal(t, exitOK, code, stderr)
	for _, p := range []string{cpu, mem} {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Greater(t, len(b), 2)
		assert.Equal(t, []byte{0x1f, 0x8b}, b[:2], "%s is a gzipped pprof profile", p)
	}
}

// flaky is system C with a nondeterminism planted: every second run of a
// seed changes one event.
type flaky struct {
	systems.TwoPC
	mu   *sync.Mutex
	runs map[uint64]int
}

func (f flaky) Play(w *systems.World, o systems.Options) *systems.Outcome {
	out := f.TwoPC.Play(w, o)
	f.mu.Lock()
	f.runs[w.Seed]++
	even := f.runs[w.Seed]%2 == 0
	f.mu.Unlock()
	if even {
		out.Events = append([]traces.Event(nil), out.Events...)
		out.Events[3].Fill()
		out.Events[3].Text += " (changed)"
	}
	return out
}

// TestAuditKeepsHashes: the audit compares the hashes of a seed's two runs
// and, on a mismatch, runs the seed twice more recording everything to
// show the first differing event.
func TestAuditKeepsHashes(t *testing.T) {
	sys := flaky{mu: &sync.Mutex{}, runs: map[uint64]int{}}
	cfg := &exploreConfig{systems: []systems.System{sys}, designs: map[string]systems.Design{"twopc": sys.Default()},
		texts: map[string]string{"twopc": "default"}, plan: plan{first: 1, last: 300, shard: summary.Shard{I: 0, N: 1}},
		faults: systems.Moderate, workers: 2, audit: 0.05}
	e := &env{stdout: io.Discard, stderr: io.Discard, ctx: context.Background()}
	x := exploreSystem(e, e.ctx, cfg, sys)
	assert.Equal(t, 300, x.Runs)
	var want []uint64
	for s := uint64(1); s <= 300; s++ {
		if audited(s, 0.05) {
			want = append(want, s)
		}
	}
	require.NotEmpty(t, want)
	assert.Equal(t, len(want), x.Audit.Runs)
	require.Len(t, x.Audit.Mismatches, len(want), "every audited seed's second run differs")
	for i, m := range x.Audit.Mismatches {
		assert.Equal(t, want[i], m.Seed)
		assert.Equal(t, 4, m.Index, "the first differing event of the re-runs")
		assert.NotContains(t, m.First, "(changed)")
		assert.Contains(t, m.Second, "(changed)")
	}

	// Every seed audited, more runs than the lag: every pair is compared.
	cfg.plan.last, cfg.audit, cfg.systems = 2*auditLag, 1, []systems.System{systems.TwoPC{}}
	x = exploreSystem(e, e.ctx, cfg, systems.TwoPC{})
	assert.Equal(t, 2*auditLag, x.Runs)
	assert.Equal(t, 2*auditLag, x.Audit.Runs)
	assert.Empty(t, x.Audit.Mismatches)
}

// TestMergeInterrupted: merging an interrupted shard marks the merged
// summary interrupted, lists what did not run once, and says so; merge
// exits 130, as that shard did (and one machine interrupted would),
// whatever failed before the signal.
func TestMergeInterrupted(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i := 0; i < 2; i++ {
		f := filepath.Join(dir, "shard-"+string(rune('0'+i))+".json")
		s := summary.Summary{Format: summary.Format, Command: "explore", Faults: "moderate", Seeds: "1-10", Shard: string(rune('0'+i)) + "/2",
			Systems: []summary.System{{System: "twopc", Runs: 3}}, Interrupted: "SIGINT", NotRun: []string{"outbox"}}
		require.NoError(t, s.Save(f))
		files = append(files, f)
	}
	merged := filepath.Join(dir, "merged.json")
	code, stdout, stderr := run(t, append([]string{"merge", "--summary-out", merged}, files...)...)
	assert.Equal(t, exitInterrupted, code, stderr)
	assert.Contains(t, stderr, "was interrupted")
	assert.Contains(t, stdout, "INTERRUPTED (SIGINT): the summary covers only the runs that finished; systems not run: outbox\n")
	s, err := summary.Read(merged)
	require.NoError(t, err, "the merged summary is written all the same")
	assert.Equal(t, "SIGINT", s.Interrupted)

	// A failure before the signal: still 130, as explore exits.
	one, err := summary.Read(files[0])
	require.NoError(t, err)
	one.Systems[0].FailedRuns = 1
	one.Systems[0].Failures = []summary.Failure{{Seed: 3, Properties: []string{"PC1"}, Message: "PC1: FAILED"}}
	require.NoError(t, one.Save(files[0]))
	code, stdout, stderr = run(t, append([]string{"merge"}, files...)...)
	assert.Equal(t, exitInterrupted, code, stderr)
	assert.Contains(t, stdout, "failing seeds: 3\n")

	// Only one shard interrupted, the other complete.
	two, err := summary.Read(files[1])
	require.NoError(t, err)
	two.Interrupted, two.NotRun = "", nil
	two.Systems = append(two.Systems, summary.System{System: "outbox", Runs: 5})
	require.NoError(t, two.Save(files[1]))
	code, stdout, stderr = run(t, append([]string{"merge"}, files...)...)
	assert.Equal(t, exitInterrupted, code, stderr)
	assert.Contains(t, stdout, "INTERRUPTED (SIGINT)")
	assert.NotContains(t, stdout, "== outbox", "outbox, run by one shard alone, is left out")
	assert.Contains(t, stderr, "fencesim merge: outbox left out: an interrupted shard did not run them")
}
