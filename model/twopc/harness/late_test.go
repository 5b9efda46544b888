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

// TestLatePrepareIsRefused is the generic search's finding in system C
// (rapid seed 3404 of the default design, explore seeds 417, 487, 633,
// ...): the PREPARE batch to the inventory is late on its connection, past
// vote_timeout. The coordinator gives up on the vote (unknown), decides
// ABORT, logs it and sends ROLLBACK PREPARED on a new connection, which
// arrives first: "no such prepared transaction" (42704). Then the late
// PREPARE arrives (a graceful close lets data already sent arrive, as TCP
// does) and prepares a transaction nobody will ever finish: it holds its
// row lock and the VACUUM horizon until some coordinator restarts and
// recovers (C.2's cost, for good). The coordinator therefore refuses the
// gid at a participant whose vote timed out once the rollback finds
// nothing: the tombstone in txlog makes the late PREPARE's work fail.
func TestLatePrepareIsRefused(t *testing.T) {
	d := twopc.Default()
	h := DefaultHarness()
	// Message 1 of coordinator->inventory is the start's recovery query;
	// message 2 is x1's PREPARE batch.
	s := sim.Schedule{{At: 0, Kind: sim.Message, Node: "coordinator", Peer: "inventory", Count: 2, Arg: sim.FateDelay, Amount: d.VoteTimeout + time.Second, FromStart: true}}
	o := h.Run(d, s, sim.NewPCG(1))
	require.NoError(t, o.Err)
	var notes []string
	for _, e := range o.Events {
		if e.Kind == hist.KindTxn || e.Kind == "prepared" || (e.Kind == "fault" && strings.Contains(e.Text, "delay")) {
			notes = append(notes, e.String())
		}
	}
	assert.True(t, o.OK(), "%v\n%s\n%s", o.Failed(), o.Report.String(), strings.Join(notes, "\n"))
	assert.Equal(t, hist.OutcomeAbort, o.World.Decision("x1"))
	inv := o.World.DB("inventory")
	require.NotNil(t, inv)
	assert.Empty(t, inv.Prepared(), "nothing is left prepared at the inventory")
	rows := inv.Rows(twopc.TTxlog)
	require.Len(t, rows, 1, "the tombstone")
	assert.Equal(t, "x1", rows[0].Text("gid"))
	assert.Equal(t, twopc.TxRefused, rows[0].Text("state"))
	assert.Contains(t, strings.Join(notes, "\n"), "2pc refuse x1 inventory", "the coordinator notes the refusal")
	assert.Equal(t, 100, int(inv.Rows(twopc.TStock)[0].Int("n")), "the late PREPARE's decrement never happened")

	// A vote lost to a broken connection (C.7: the participant died) needs
	// no refusal: the request died with the connection.
	s = sim.Schedule{{At: 0, Kind: sim.CrashYield, Node: "inventory", Count: 2, For: time.Second, FromStart: true}}
	o = h.Run(d, s, sim.NewPCG(1))
	require.NoError(t, o.Err)
	assert.True(t, o.OK(), "%v", o.Failed())
	assert.Equal(t, hist.OutcomeAbort, o.World.Decision("x1"), "the inventory died with the PREPARE: its vote is unknown")
	assert.Empty(t, o.World.DB("inventory").Rows(twopc.TTxlog), "no tombstone after a broken connection")
}

// TestRefusalOutwaitsTheLatePrepare: found by the soak (seeds 3525 and
// 4994 of the default design): a paused participant prepared x2 after its
// abort, the coordinator's tombstone waited on the late PREPARE's row past
// request_timeout, and it retried the tombstone for ever instead of rolling
// the late PREPARE back; x2 stayed prepared (PC4, PC5).
func TestRefusalOutwaitsTheLatePrepare(t *testing.T) {
	for _, seed := range []uint64{3525, 4994} {
		o := RunSeed(twopc.Default(), seed)
		require.NoError(t, o.Err, "seed %d", seed)
		assert.Empty(t, o.Failed(), "seed %d: %s", seed, o.Report.String())
	}
}
