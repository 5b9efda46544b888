package twopc

import (
	"testing"

	"github.com/fencesim/fencesim/sim"
)

func TestSmoke(t *testing.T) {
	h := DefaultHarness()
	o := h.Run(Default(), nil, sim.NewPCG(1))
	for _, e := range o.Events {
		t.Log(e.String())
	}
	t.Log(o.Report.String())
}
