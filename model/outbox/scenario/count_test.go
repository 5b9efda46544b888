package scenario

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/outbox"
	"github.com/fencesim/fencesim/traces"
)

// TestCountFromFileIsCountInMemory: Metrics.count reads a run in memory
// from the notes' typed values and a trace file from their JSON, with the
// same counts.
func TestCountFromFileIsCountInMemory(t *testing.T) {
	for _, s := range All() {
		for _, knobs := range [][]outbox.Knob{nil, {outbox.CheckThenInsert}} {
			o, _, err := s.Run(knobs...)
			require.NoError(t, err)
			var typed Metrics
			require.NoError(t, typed.count(o.Trace))

			var buf bytes.Buffer
			tw, err := traces.NewWriter(&buf, traces.Header{System: "outbox", Entropy: "pcg"})
			require.NoError(t, err)
			for i := range o.Trace {
				tw.Record(&o.Trace[i])
			}
			require.NoError(t, tw.Close())
			_, evs, err := traces.ReadAll(&buf)
			require.NoError(t, err)
			var read Metrics
			require.NoError(t, read.count(evs))
			assert.Equal(t, typed, read, "%s %v", s.ID, knobs)
			assert.Equal(t, o.Metrics.Charges, typed.Charges, "%s %v", s.ID, knobs)
		}
	}
}
