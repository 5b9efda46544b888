package harness

import (
	"testing"

	"github.com/fencesim/fencesim/model/contract"
	"github.com/fencesim/fencesim/model/contract/contracttest"
)

// TestJudgeFromFileIsJudgeInMemory: checker/judge reads a run in memory
// from the notes' typed values and a trace file from their JSON; both give
// the same verdicts and metrics, harmless design or not.
func TestJudgeFromFileIsJudgeInMemory(t *testing.T) {
	contracttest.JudgeFromFileIsJudgeInMemory(t, System{}, [][]string{nil, {"fence-by-worker-id"}}, 30, contract.Moderate)
}

// TestFastIsFull: explore's fast path (no Options.Full) judges every
// design, the default and each knob's, as the same run recorded in full.
func TestFastIsFull(t *testing.T) {
	seeds := uint64(12)
	if testing.Short() {
		seeds = 4
	}
	contracttest.FastIsFull(t, System{}, seeds, true)
}
