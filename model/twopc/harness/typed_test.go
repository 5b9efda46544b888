package harness

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/contract"
	"github.com/fencesim/fencesim/traces"
)

// TestJudgeFromFileIsJudgeInMemory: checker/twopc reads a run in memory
// from the notes' typed values (and model/db's, projected) and a trace
// file from their JSON; both give the same verdicts and metrics, harmless
// design or not.
func TestJudgeFromFileIsJudgeInMemory(t *testing.T) {
	seeds := uint64(100)
	if testing.Short() {
		seeds = 20
	}
	s := System{}
	failed := 0
	designs := [][]string{nil, {"commit-before-log"}, {"timeout-abort"}}
	for _, knobs := range designs {
		d, err := s.NewDesign(knobs, nil, nil)
		require.NoError(t, err)
		for seed := uint64(1); seed <= seeds; seed++ {
			o := contract.Options{Full: true}
			w, err := s.Draw(d, seed, contract.Moderate, o)
			require.NoError(t, err)
			out := s.Play(w, o)
			typed := s.Judge(out)

			var buf bytes.Buffer
			tw, err := traces.NewWriter(&buf, out.Header)
			require.NoError(t, err)
			for i := range out.Events {
				tw.Record(&out.Events[i])
			}
			require.NoError(t, tw.Close())
			_, evs, err := traces.ReadAll(&buf)
			require.NoError(t, err)
			file := *out
			file.Events = evs
			read := s.Judge(&file)

			assert.Equal(t, typed.Verdicts, read.Verdicts, "%v seed %d: verdicts", knobs, seed)
			assert.Equal(t, typed.Metrics, read.Metrics, "%v seed %d: metrics", knobs, seed)
			if len(typed.Failed()) > 0 {
				failed++
			}
		}
	}
	assert.Positive(t, failed, "some runs fail: the failing verdicts are compared too")
	t.Logf("%d runs, %d failing", uint64(len(designs))*seeds, failed)
}
