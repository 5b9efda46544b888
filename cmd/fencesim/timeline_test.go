package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTimelineTellsTheStaleResult: for fence-by-worker-id, the terminal
// timeline of the minimized run names the pause, the stale submit and the
// accepted stale result, in that order, in at most 25 lines.
func TestTimelineTellsTheStaleResult(t *testing.T) {
	var stdout, stderr bytes.Buffer
	// Seed 6 of explore fails by a worker paused past its lease.
	code := Main([]string{"explore", "--system", "arbiter", "--knob", "fence-by-worker-id", "--seeds", "6-6", "--out", t.TempDir()}, &stdout, &stderr)
	require.Equal(t, exitFail, code, "%s", stderr.String())
	out := stdout.String()
	i := strings.Index(out, "timeline of submission ")
	require.GreaterOrEqual(t, i, 0, "the timeline is printed:\n%s", out)
	var lines []string
	for _, l := range strings.Split(out[i:], "\n") {
		lines = append(lines, l)
		if strings.HasPrefix(l, "  => ") {
			break
		}
	}
	assert.LessOrEqual(t, len(lines), 25, "at most 25 lines:\n%s", strings.Join(lines, "\n"))
	find := func(from int, what func(string) bool) int {
		for j := from; j < len(lines); j++ {
			if what(lines[j]) {
				return j
			}
		}
		return -1
	}
	pause := find(0, func(l string) bool { return strings.Contains(l, " fault ") && strings.Contains(l, "pause home-1") })
	submit := find(max(pause, 0), func(l string) bool {
		return strings.Contains(l, "home-1: submit (token ") && strings.Contains(l, "gen 1)")
	})
	accepted := find(max(submit, 0), func(l string) bool { return strings.Contains(l, "VIOLATES") && strings.Contains(l, "judging -> AC") })
	verdict := find(max(accepted, 0), func(l string) bool {
		return strings.Contains(l, "=> PA1") && strings.Contains(l, "was accepted while the lease was")
	})
	timeline := strings.Join(lines, "\n")
	assert.Positive(t, pause, "the pause is named:\n%s", timeline)
	assert.Greater(t, submit, pause, "then the stale submit (gen 1):\n%s", timeline)
	assert.Greater(t, accepted, submit, "then the accepted stale result:\n%s", timeline)
	assert.Greater(t, verdict, accepted, "then the verdict:\n%s", timeline)
}
