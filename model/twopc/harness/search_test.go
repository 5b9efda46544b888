package harness

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/twopc"
	"github.com/fencesim/fencesim/sim"
)

// zero draws 0 every time: what rapid shrinks toward.
type zero struct{}

func (zero) Uint64n(string, uint64) uint64 { return 0 }

// TestReferenceMatchesFaultyRun: up to its first fault a faulty run is the
// world's reference run, so a fault placed on the reference's n-th message
// of a link hits that message when the reference sent it.
func TestReferenceMatchesFaultyRun(t *testing.T) {
	h := DefaultHarness()
	for seed := uint64(1); seed <= 20; seed++ {
		d := DrawWorld(sim.NewPCG(seed).Stream("world"), twopc.Default())
		ref, err := h.NewReference(d, sim.NewPCG(seed))
		require.NoError(t, err)
		require.NotEmpty(t, ref.Links)
		require.NotEmpty(t, ref.Nodes)
		assert.Positive(t, ref.End)
		l := ref.Links[int(seed)%len(ref.Links)]
		n := len(l.At)/2 + 1
		o := h.Run(d, sim.Schedule{{At: 0, Kind: sim.Message, Node: l.From, Peer: l.To, Count: n, Arg: sim.FateDup, FromStart: true}}, sim.NewPCG(seed))
		require.NoError(t, o.Err)
		fired := false
		for _, e := range o.Events {
			if e.Kind == "fault" && e.Node == l.From && strings.HasSuffix(e.Text, " to "+l.To+": dup") {
				assert.Equal(t, l.At[n-1], clock.Time(e.T), "seed %d: message %d of %s->%s", seed, n, l.From, l.To)
				fired = true
			}
		}
		assert.True(t, fired, "seed %d: the message fault on %s->%s #%d fired", seed, l.From, l.To, n)
	}
}

// TestSearchFaultsZeroIsNoFault: a zero draw of the search is no fault.
func TestSearchFaultsZeroIsNoFault(t *testing.T) {
	h := DefaultHarness()
	d := DrawWorld(zero{}, twopc.Default())
	ref, err := h.NewReference(d, sim.NewPCG(0))
	require.NoError(t, err)
	s, p := h.SearchFaults(zero{}, nil, d, ref, Moderate)
	assert.Empty(t, s)
	assert.Equal(t, "no faults", p.String())
}

// TestSearchReachesEveryFault: over seeded draws the search places every
// kind of fault it has, on every kind of node: crashes at blocking calls of
// coordinators, participants and agents, with quick and late restarts,
// message fates, pauses and takeovers by a standby coordinator.
func TestSearchReachesEveryFault(t *testing.T) {
	h := DefaultHarness()
	seen := map[string]int{}
	for seed := uint64(1); seed <= 200; seed++ {
		x, err := h.DrawSeed(twopc.Default(), seed, Moderate)
		require.NoError(t, err)
		standby := twopc.NamesOf(x.Design).Standby
		for _, a := range x.Schedule {
			k := string(a.Kind)
			switch {
			case a.Kind == sim.CrashYield && strings.HasPrefix(a.Node, "coordinator"):
				k += "/coordinator"
			case a.Kind == sim.CrashYield && strings.HasSuffix(a.Node, "-agent"):
				k += "/agent"
			case a.Kind == sim.CrashYield:
				k += "/participant"
			case a.Kind == sim.Message:
				k += "/" + a.Arg
			case a.Kind == sim.Restart && slices.Contains(standby, a.Node):
				k = "takeover"
			}
			if a.Kind == sim.CrashYield && a.For > twopc.Default().AbortAfter {
				seen["crash-yield/late-restart"]++
			}
			seen[k]++
		}
	}
	for _, k := range []string{"crash-yield/coordinator", "crash-yield/participant", "crash-yield/agent", "crash-yield/late-restart",
		"message/drop", "message/delay", "pause", "crash", "crash-at", "break", "takeover"} {
		assert.Positive(t, seen[k], "%s never drawn: %v", k, seen)
	}
	assert.Zero(t, seen["message/dup"], "2PC's links are connections, which never deliver a message twice: no dup is drawn")
	t.Logf("faults over 200 seeds: %v", seen)
}
