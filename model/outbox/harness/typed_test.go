package harness

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/contract"
	"github.com/fencesim/fencesim/traces"
)

// TestJudgeFromFileIsJudgeInMemory: checker/outbox reads a run in memory
// from the notes' typed values and a trace file from their JSON; both give
// the same verdicts, probes and metrics, harmless design or not.
func TestJudgeFromFileIsJudgeInMemory(t *testing.T) {
	seeds := uint64(100)
	if testing.Short() {
		seeds = 20
	}
	judgeBothWays(t, System{}, [][]string{nil, {"check-then-insert"}}, seeds)
}

func judgeBothWays(t *testing.T, s contract.System, designs [][]string, seeds uint64) {
	failed := 0
	for _, knobs := range designs {
		d, err := s.NewDesign(knobs, nil, nil)
		require.NoError(t, err)
		for seed := uint64(1); seed <= seeds; seed++ {
			o := contract.Options{Full: true}
			w, err := s.Draw(d, seed, contract.Heavy, o)
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
			for i := range evs {
				require.Nil(t, evs[i].Value)
			}
			file := *out
			file.Events = evs
			read := s.Judge(&file)

			assert.Equal(t, typed.Verdicts, read.Verdicts, "%v seed %d: verdicts", knobs, seed)
			assert.Equal(t, typed.Probes, read.Probes, "%v seed %d: probes", knobs, seed)
			assert.Equal(t, typed.Metrics, read.Metrics, "%v seed %d: metrics", knobs, seed)
			if len(typed.Failed()) > 0 {
				failed++
			}
		}
	}
	assert.Positive(t, failed, "some runs fail: the failing verdicts are compared too")
	t.Logf("%d runs, %d failing", uint64(len(designs))*seeds, failed)
}
