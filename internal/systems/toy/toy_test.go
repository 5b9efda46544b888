package toy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/internal/hunt"
	"github.com/fencesim/fencesim/model/contract"
	"github.com/fencesim/fencesim/model/contract/contracttest"
	"github.com/fencesim/fencesim/traces"
)

// TestDefaultPasses: the correct design keeps TL1 and TL2 on 200 seeds of
// every fault intensity.
func TestDefaultPasses(t *testing.T) {
	s := System{}
	for _, f := range []contract.Faults{contract.None, contract.Moderate, contract.Heavy} {
		for seed := uint64(1); seed <= 200; seed++ {
			r := contract.Run(s, s.Default(), seed, f, contract.Options{})
			require.Empty(t, r.Failed(), "%s seed %d", f, seed)
		}
	}
}

// TestKnobCaught: lease-from-receipt fails TL1 within 300 seeds and in
// the rapid property, and the failing seed replays to the same hash.
func TestKnobCaught(t *testing.T) {
	s := System{}
	d, err := s.NewDesign([]string{string(LeaseFromReceipt)}, nil, nil)
	require.NoError(t, err)
	var failed *contract.Result
	for seed := uint64(1); seed <= 300 && failed == nil; seed++ {
		if r := contract.Run(s, d, seed, contract.Moderate, contract.Options{Hash: true}); len(r.Failed()) > 0 {
			failed = r
		}
	}
	require.NotNil(t, failed, "lease-from-receipt fails a seed of 300")
	assert.True(t, failed.Fails("TL1"), "by TL1: %v", failed.Failed())
	again, err := s.Replay(failed.Header)
	require.NoError(t, err)
	assert.Equal(t, failed.Hash, again.Hash, "the failing seed replays bit for bit")

	var last traces.Header
	res := hunt.RunShrink(t.Name(), 500, 1, time.Second, s.Property(d, contract.Moderate, func(h traces.Header) { last = h }))
	require.True(t, res.Found, "the rapid property finds it: %s", res.Output)
	assert.Equal(t, Name, last.System)
}

// TestCheckClauses: TL1 fails an act outside every grant and an act after
// a grant's end; TL2 fails a run with no act after the heal.
func TestCheckClauses(t *testing.T) {
	sec := int64(time.Second)
	ev := func(seq uint64, at int64, kind string, v any) traces.Event {
		return traces.Event{Seq: seq, T: at, Kind: kind, Value: v}
	}
	grant := Grant{Ping: 1, Lease: 2 * time.Second}
	ok := []traces.Event{ev(1, 0, KindGrant, grant), ev(2, sec, KindAct, Act{}), ev(3, 21*sec, KindGrant, grant), ev(4, 21*sec+1, KindAct, Act{})}
	vs, acts, err := Check(ok, 20*sec, 500*time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, 2, acts)
	assert.True(t, vs[0].OK && vs[1].OK, "%v", vs)

	before := []traces.Event{ev(1, sec, KindAct, Act{}), ev(2, 2*sec, KindGrant, grant), ev(3, 21*sec, KindGrant, grant), ev(4, 21*sec+1, KindAct, Act{})}
	vs, _, _ = Check(before, 20*sec, 500*time.Millisecond)
	assert.False(t, vs[0].OK, "an act before any grant")
	expired := []traces.Event{ev(1, 0, KindGrant, grant), ev(2, 2*sec, KindAct, Act{}), ev(3, 21*sec, KindGrant, grant), ev(4, 21*sec+1, KindAct, Act{})}
	vs, _, _ = Check(expired, 20*sec, 500*time.Millisecond)
	assert.False(t, vs[0].OK, "an act at the grant's end")
	assert.True(t, vs[1].OK)
	late := []traces.Event{ev(1, 0, KindGrant, grant), ev(2, sec, KindAct, Act{}), ev(3, 23*sec, KindGrant, grant), ev(4, 23*sec, KindAct, Act{})}
	vs, _, _ = Check(late, 20*sec, 500*time.Millisecond)
	assert.True(t, vs[0].OK)
	assert.False(t, vs[1].OK, "no act within 2 ping_every + 1 s of the heal")
}

// TestJudgeFromFileIsJudgeInMemory: TL1 and TL2 judge a run the same from
// its typed notes and from its trace file.
func TestJudgeFromFileIsJudgeInMemory(t *testing.T) {
	contracttest.JudgeFromFileIsJudgeInMemory(t, System{}, [][]string{nil, {string(LeaseFromReceipt)}}, 120, contract.Moderate)
}
