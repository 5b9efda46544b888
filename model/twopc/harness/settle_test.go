package harness

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/twopc"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// TestSettleCoversTheRetry: a run is noted quiesced only after the time
// its design needs to settle. With retry_base = retry_cap = 1h (valid
// values; explore --set retry_base=1h --set retry_cap=1h, heavy seed
// 34700002, failed PC2 and PC4 on 186 of 1,500 seeds) a COMMIT PREPARED
// whose connection broke is sent again an hour later: the coordinator is
// right, only slow. The harness used to end every run 30 s after the heal
// and call it quiesced, with inventory still prepared: PC2 and PC4 failed
// a correct design.
func TestSettleCoversTheRetry(t *testing.T) {
	d := twopc.Default()
	d.RetryBase, d.RetryCap = time.Hour, time.Hour
	require.NoError(t, d.Validate())
	h := DefaultHarness()
	// Message 1 of coordinator->inventory is the start's recovery query,
	// 2 x1's PREPARE batch, 3 its COMMIT PREPARED: dropped, the connection
	// breaks, the retry waits retry_base.
	s := sim.Schedule{{At: 0, Kind: sim.Message, Node: "coordinator", Peer: "inventory", Count: 3, Arg: sim.FateDrop, FromStart: true}}
	o := h.Run(d, s, sim.NewPCG(1))
	require.NoError(t, o.Err)
	var notes []string
	for _, e := range o.Events {
		if e.Kind == hist.KindTxn || e.Kind == "prepared" || e.Kind == "fault" {
			notes = append(notes, e.String())
		}
	}
	assert.True(t, o.OK(), "%v\n%s\n%s", o.Failed(), o.Report.String(), strings.Join(notes, "\n"))
	assert.Equal(t, hist.OutcomeCommit, o.World.Decision("x1"))
	inv := o.World.DB("inventory")
	require.NotNil(t, inv)
	assert.Empty(t, inv.Prepared(), "the retry committed x1 at the inventory")
}

// TestSettleCoversTheWorkload: a transaction asked for just before the
// harness's end (explore --set first_txn=49999ms failed PC4 and PC5 on
// 200 of 200 heavy seeds from 40000001; first_txn=49995ms PC2 too) is
// given the time to finish: it is not left prepared, mid-flight, in a run
// noted quiesced.
func TestSettleCoversTheWorkload(t *testing.T) {
	h := DefaultHarness()
	for _, at := range []time.Duration{h.HealAt + h.Settle - 5*time.Millisecond, h.HealAt + h.Settle - time.Millisecond} {
		d := twopc.Default()
		d.FirstTxn = at
		require.NoError(t, d.Validate())
		o := h.Run(d, nil, sim.NewPCG(1))
		require.NoError(t, o.Err)
		assert.True(t, o.OK(), "x1 asked for at %v: %v\n%s\n%s", at, o.Failed(), o.Report.String(), o.Tail(20))
	}
}
