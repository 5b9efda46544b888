package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	art "github.com/fencesim/fencesim/internal/artifact"
	"github.com/fencesim/fencesim/internal/systems"
)

// liveTrace writes a simulated arbiter run as a live run's record: its
// header marked live (entropy "live", as fencesim live writes it) and, so
// that a replay could not pass for a judgement, a schedule the simulator
// cannot replay (the checkers do not read the header's schedule).
func liveTrace(t *testing.T, path string, knobs []string, seed uint64) *systems.Result {
	t.Helper()
	sys := systems.Arbiter{}
	d, err := sys.NewDesign(knobs, nil, nil)
	require.NoError(t, err)
	r := sys.Run(d, seed, systems.Moderate, systems.Options{Full: true})
	r.Header.Live, r.Header.Entropy = true, "live"
	r.Header.Schedule = json.RawMessage(`[{"at":0,"kind":"no-such-fault"}]`)
	_, err = art.Trace(path, r)
	require.NoError(t, err)
	return r
}

// TestLiveTrace: replay refuses a live run's record in one line naming
// report; report judges the recorded events without replaying them,
// renders the page, and exits 1 when a property failed, 0 when every one
// held.
func TestLiveTrace(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "arbiter-live-bad.jsonl")
	r := liveTrace(t, bad, []string{"fence-by-worker-id"}, 3)
	require.Contains(t, r.FailedIDs(), "PA1", "fence-by-worker-id fails PA1 on seed 3 (TestReport)")

	code, stdout, stderr := run(t, "replay", bad)
	assert.Equal(t, exitUsage, code, "replay of a live trace; stderr: %s", stderr)
	assert.Empty(t, stdout)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
	assert.Contains(t, stderr, "the record of a live run")
	assert.Contains(t, stderr, "cannot be re-run bit for bit")
	assert.Contains(t, stderr, "fencesim report "+bad)

	// The same file unmarked does not replay at all: report below passes
	// only because it does not replay.
	plain := filepath.Join(dir, "plain.jsonl")
	b, err := os.ReadFile(bad)
	require.NoError(t, err)
	b = bytes.Replace(b, []byte(`"entropy":"live"`), []byte(`"entropy":"pcg"`), 1)
	b = bytes.Replace(b, []byte(`,"live":true`), nil, 1)
	require.NoError(t, os.WriteFile(plain, b, 0o644))
	code, _, stderr = run(t, "replay", plain)
	require.Equal(t, exitUsage, code, stderr)
	require.Contains(t, stderr, "the header does not replay")

	page := filepath.Join(dir, "bad.html")
	before := listing(t, dir)
	code, stdout, stderr = run(t, "report", "--out", page, bad)
	assert.Equal(t, exitFail, code, "report of a live trace that fails PA1; stderr: %s", stderr)
	assert.Empty(t, stderr)
	assert.Contains(t, stdout, "arbiter live run (design: knobs fence-by-worker-id): ")
	assert.Contains(t, stdout, "PA1 at-most-one-owner: FAILED: ")
	assert.Contains(t, stdout, "report: "+page+"\n")
	html := readFile(t, page)
	assert.Contains(t, html, "<h1>arbiter live run (design: knobs fence-by-worker-id): PA1")
	assert.Contains(t, html, "PA1 at-most-one-owner")
	assert.Contains(t, html, "a live run: it cannot be replayed (fencesim report "+bad)
	assert.NotContains(t, html, "fencesim replay "+bad)
	var added []string
	for _, p := range listing(t, dir) {
		if !contains(before, p) {
			added = append(added, filepath.Base(p))
		}
	}
	assert.Subset(t, []string{"bad.html", "bad-porcupine.html"}, added, "report writes its page (and porcupine's) only")

	// A run where every property held: exit 0, next to the trace by
	// default.
	good := filepath.Join(dir, "arbiter-live-good.jsonl")
	for seed := uint64(1); ; seed++ {
		require.Less(t, seed, uint64(20), "a seed of the default design where every property holds")
		if r := liveTrace(t, good, nil, seed); len(r.Failed()) == 0 {
			break
		}
	}
	code, stdout, stderr = run(t, "report", good)
	assert.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, "every property held")
	assert.Contains(t, stdout, "report: "+filepath.Join(dir, "arbiter-live-good-report.html")+"\n")
	assert.FileExists(t, filepath.Join(dir, "arbiter-live-good-report.html"))
}
