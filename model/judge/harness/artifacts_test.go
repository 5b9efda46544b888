package harness

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/fencesim/fencesim/model/judge"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	jc "github.com/fencesim/fencesim/checker/judge"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// TestFailingRunLeavesTraceAndVisualisation: a failing run (A-S5's family
// with fence-by-worker-id) is re-run with full recording, written as a
// trace file with porcupine's visualisation beside it, and replaying the
// trace file reproduces it with the same hash.
func TestFailingRunLeavesTraceAndVisualisation(t *testing.T) {
	f, err := FamilyByName("stale")
	require.NoError(t, err)
	d := judge.Default().MustWith(judge.FenceByWorkerID)
	var seed uint64
	for s := uint64(1); s < 50 && seed == 0; s++ {
		ent := sim.NewPCG(s)
		o, err := f.Judged(ent.Stream("family"), d, ent)
		require.NoError(t, err)
		if len(o.Failed()) > 0 {
			seed = s
		}
	}
	require.NotZero(t, seed, "the knob must fail within 50 seeds")

	// Full recording of the failing run.
	ent := sim.NewPCG(seed)
	opts := f.Options(ent.Stream("family"), d)
	opts.Entropy, opts.Seed = ent, seed
	o, err := Play(opts)
	require.NoError(t, err)
	require.NotEmpty(t, o.Failed(), "the full re-run fails the same way")

	dir := t.TempDir()
	path := filepath.Join(dir, "trace.jsonl")
	var buf bytes.Buffer
	w, err := traces.NewWriter(&buf, o.Header)
	require.NoError(t, err)
	for i := range o.Events {
		w.Record(&o.Events[i])
	}
	require.NoError(t, w.Close())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	hash := w.Hash()

	_, info := jc.Linearizable(o.Run, jc.ClientView)
	require.NotNil(t, info, "PA3 fails for the stale result, so porcupine has a failed linearization to show")
	viz := filepath.Join(dir, "linearization.html")
	require.NoError(t, porcupine.VisualizePath(jc.LeaseModel(), *info, viz))
	html, err := os.ReadFile(viz)
	require.NoError(t, err)
	assert.Contains(t, string(html), "<html")

	// Replay from the file: identical events, same hash.
	fh, err := os.Open(path)
	require.NoError(t, err)
	defer fh.Close()
	h, evs, err := traces.ReadAll(fh)
	require.NoError(t, err)
	again, err := Replay(h)
	require.NoError(t, err)
	d2 := traces.Compare(evs, again.Events)
	assert.True(t, d2.Identical, "%s", d2)
	assert.Equal(t, hash, traces.HashOf(h, again.Events), "the replay has the trace's hash")
	t.Logf("seed %d: %s; trace %d events, hash %s", seed, o.Failed()[0], len(evs), hash[:16])
}
