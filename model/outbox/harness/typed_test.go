package harness

import (
	"testing"

	"github.com/fencesim/fencesim/model/contract"
	"github.com/fencesim/fencesim/model/contract/contracttest"
)

// TestJudgeFromFileIsJudgeInMemory: checker/outbox reads a run in memory
// from the notes' typed values and a trace file from their JSON; both give
// the same verdicts, probes and metrics, harmless design or not.
func TestJudgeFromFileIsJudgeInMemory(t *testing.T) {
	seeds := uint64(100)
	if testing.Short() {
		seeds = 20
	}
	contracttest.JudgeFromFileIsJudgeInMemory(t, System{}, [][]string{nil, {"check-then-insert"}}, seeds, contract.Heavy)
}

// TestFastIsFull: explore's fast path (no Options.Full) judges every
// design, the default and each knob's, as the same run recorded in full.
func TestFastIsFull(t *testing.T) {
	seeds := uint64(40)
	if testing.Short() {
		seeds = 10
	}
	contracttest.FastIsFull(t, System{}, seeds, true)
}
