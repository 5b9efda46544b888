package judge

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

func TestSmokeAllTerminal(t *testing.T) {
	mem := &traces.Memory{}
	w, err := Build(Default(), DefaultWorkload(), sim.Config{
		Entropy: sim.NewPCG(1), Recorder: mem,
		Network: network.Policy{DelayMin: time.Millisecond, DelayMax: 10 * time.Millisecond},
		Limits:  sim.Limits{MaxTime: clock.Time(10 * time.Minute), MaxEvents: 5_000_000},
	})
	require.NoError(t, err)
	require.NoError(t, w.Run())
	defer w.Close()
	n := w.Node("db").(*db.Node)
	for _, r := range n.CommitLog() {
		_ = r
	}
	for _, e := range mem.Events {
		if e.Kind == "return" || e.Kind == "judge" || e.Kind == "state" || e.Kind == "alert" {
			t.Log(e.String())
		}
	}
}
