package harness

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/contract"
	"github.com/fencesim/fencesim/model/contract/contracttest"
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
	contracttest.JudgeFromFileIsJudgeInMemory(t, System{}, [][]string{nil, {"commit-before-log"}, {"timeout-abort"}}, seeds, contract.Moderate)
}

// TestFastIsFull: explore's fast path (no Options.Full) judges every
// design, the default and each knob's, as the same run recorded in full.
// Seed 96 of the default design times out a lock (lock_timeouts, read from
// the databases' statements).
func TestFastIsFull(t *testing.T) {
	seeds := uint64(40)
	if testing.Short() {
		seeds = 10
	}
	d := (System{}).Default()
	r := contract.Run(System{}, d, 96, contract.Moderate, contract.Options{Full: true})
	require.Equal(t, "lock_timeouts", r.Metrics[3].Name)
	require.Positive(t, r.Metrics[3].Values[0], "seed 96 times out a lock")
	contracttest.FastIsFull(t, System{}, seeds, true, 96)
}
