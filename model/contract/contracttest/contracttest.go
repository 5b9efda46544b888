// Package contracttest holds the tests every implementation of the system
// contract (model/contract.System) shares, for their packages' own tests
// to call. It imports testing and is never linked into fencesim.
package contracttest

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/contract"
	"github.com/fencesim/fencesim/traces"
)

// JudgeFromFileIsJudgeInMemory holds that a system's checkers judge a run
// the same from the notes' typed values (a fresh run in memory) and from
// their JSON (the run's trace written and read back, as replay and report
// read a file): the same verdicts, probes and metrics, for every design
// (its knobs) and seeds 1..seeds at fault intensity f. Some runs must fail,
// so that failing verdicts are compared too.
func JudgeFromFileIsJudgeInMemory(t *testing.T, s contract.System, designs [][]string, seeds uint64, f contract.Faults) {
	t.Helper()
	failed := 0
	for _, knobs := range designs {
		d, err := s.NewDesign(knobs, nil, nil)
		require.NoError(t, err)
		for seed := uint64(1); seed <= seeds; seed++ {
			o := contract.Options{Full: true}
			w, err := s.Draw(d, seed, f, o)
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
				require.Nil(t, evs[i].Value, "an event read from a file has no typed value")
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
