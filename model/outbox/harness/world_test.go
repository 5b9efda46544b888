package harness_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	check "github.com/fencesim/fencesim/checker/outbox"
	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/outbox"
	"github.com/fencesim/fencesim/model/outbox/harness"
	"github.com/fencesim/fencesim/model/outbox/scenario"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// zero draws 0 every time: what rapid shrinks toward.
type zero struct{}

func (zero) Uint64n(string, uint64) uint64 { return 0 }

// TestDrawWorldZeroIsSmallest: the zero draw is the smallest world with the
// design's own timings: one provider event sent once, one handler, one
// sender, one relay.
func TestDrawWorldZeroIsSmallest(t *testing.T) {
	d, wl := harness.DrawWorld(zero{}, outbox.Default())
	want := outbox.Default()
	want.Handlers, want.Senders, want.Relays = 1, 1, 1
	assert.Equal(t, want, d)
	require.Len(t, wl.Plan, 1)
	assert.Equal(t, outbox.Event{Event: "evt-1", Payload: "order-1", Amount: 100, Copies: 1}, wl.Plan[0])
	assert.Equal(t, 10*time.Second, wl.Window)
}

// TestDrawWorldRanges: over many seeds the drawn worlds are valid, stay
// within their ranges, keep the sender patient enough for PB5, and reach
// every shape they promise: several handlers, senders and relays, key
// reuse by the same and by another sender, keyless requests, refunds, and
// timings other than the design's.
func TestDrawWorldRanges(t *testing.T) {
	seen := map[string]int{}
	for seed := uint64(1); seed <= 300; seed++ {
		d, wl := harness.DrawWorld(sim.NewPCG(seed).Stream("world"), outbox.Default())
		require.NoError(t, d.Validate(), "seed %d", seed)
		require.NoError(t, wl.Validate(), "seed %d", seed)
		assert.GreaterOrEqual(t, d.GiveUpAfter(), outbox.Patience(d), "seed %d: the sender outlives the faults", seed)
		assert.LessOrEqual(t, d.Handlers, harness.MaxHandlers)
		assert.LessOrEqual(t, d.Senders, harness.MaxSenders)
		assert.LessOrEqual(t, d.Relays, harness.MaxRelays)
		require.NotEmpty(t, wl.Plan)
		assert.LessOrEqual(t, len(wl.Plan), harness.MaxEvents)
		if d.Handlers > 1 {
			seen["handlers"]++
		}
		if d.Senders > 1 {
			seen["senders"]++
		}
		if d.Relays > 1 {
			seen["relays"]++
		}
		if d.RequestTimeout != outbox.Default().RequestTimeout {
			seen["timing"]++
		}
		first := map[string]int{} // key -> sender of its first event
		for _, e := range wl.Plan {
			assert.Less(t, e.Sender, d.Senders)
			assert.LessOrEqual(t, e.At, wl.Window)
			switch s, ok := first[e.Event]; {
			case e.Event == "":
				seen["keyless"]++
			case !ok:
				first[e.Event] = e.Sender
			case s == e.Sender:
				seen["reuse-same-sender"]++
			default:
				seen["reuse-other-sender"]++
			}
			if e.Refund {
				seen["refund"]++
			}
		}
	}
	for _, k := range []string{"handlers", "senders", "relays", "timing", "keyless", "reuse-same-sender", "reuse-other-sender", "refund"} {
		assert.Greater(t, seen[k], 10, "%s reached in too few worlds: %v", k, seen)
	}
	t.Logf("over 300 worlds: %v", seen)
}

// TestDrawWorldKeepsPinned: parameters the design pins keep its values;
// the others are drawn as before (the same draws are made either way, so
// two designs that differ in one setting get the same world otherwise).
func TestDrawWorldKeepsPinned(t *testing.T) {
	base := outbox.Default()
	base.Handlers, base.DBTimeout, base.MaxAttempts = 7, 2*time.Second, 30
	pinned := base
	pinned.Pinned = []string{"handlers", "db_timeout", "max_attempts"}
	require.NoError(t, pinned.Validate())
	for seed := uint64(1); seed <= 50; seed++ {
		d, wl := harness.DrawWorld(sim.NewPCG(seed).Stream("world"), pinned)
		free, wl2 := harness.DrawWorld(sim.NewPCG(seed).Stream("world"), base)
		assert.Equal(t, 7, d.Handlers)
		assert.Equal(t, 2*time.Second, d.DBTimeout)
		assert.Equal(t, 30, d.MaxAttempts)
		assert.Equal(t, free.Senders, d.Senders, "seed %d: the other draws are the same", seed)
		assert.Equal(t, free.PollEvery, d.PollEvery)
		assert.Equal(t, wl2.Plan, wl.Plan)
		assert.Equal(t, pinned.Pinned, d.Pinned, "the drawn design says what it kept")
	}
	bad := outbox.Default()
	bad.Pinned = []string{"handler"}
	assert.ErrorContains(t, bad.Validate(), `pinned "handler" is not a parameter`)
}

// TestKeyReusedByAnotherSender: a key sent again later, by another sender
// and with another amount, is answered with the first answer and has one
// effect (PB1; the source is silent on a reused key with another payload,
// the first payload wins); the second sender stops on that success (PB5).
func TestKeyReusedByAnotherSender(t *testing.T) {
	d := outbox.Default()
	d.Senders = 2
	plan := []outbox.Event{
		{At: 0, Event: "evt_1", Payload: "order-1", Amount: 300, Copies: 1},
		{At: time.Second, Event: "evt_1", Payload: "order-1-again", Amount: 500, Copies: 2, Gap: time.Millisecond, Sender: 1},
	}
	o := play(t, d, plan, nil)
	require.NotNil(t, o.History)
	h := o.History
	charges := scenario.Rows(o, "db", outbox.TCharges)
	require.Len(t, charges, 1, "one charge for the key")
	assert.Equal(t, int64(300), charges[0]["amount"], "the first payload's amount")
	require.Len(t, h.Calls, 3)
	clients := map[string]bool{}
	for _, c := range h.Calls {
		clients[c.Client] = true
		assert.Equal(t, outbox.Code200, c.Code)
		assert.Equal(t, "received "+charges[0]["id"].(string), c.Value, "every delivery of the key gets the first answer")
	}
	assert.Equal(t, map[string]bool{"sender": true, "sender-2": true}, clients)
	assert.True(t, strings.HasPrefix(h.Calls[1].ID, "s2."), "the second sender's calls have ids of their own: %s", h.Calls[1].ID)
	assert.Len(t, scenario.Rows(o, "consumer-db", outbox.TEffects), 1)
}

// TestTwoRelaysPublishAtLeastOnce: two relays polling one outbox may both
// publish a message; the consumer applies it once (PB2, PB3).
func TestTwoRelaysPublishAtLeastOnce(t *testing.T) {
	d := outbox.Default()
	d.Relays = 2
	var plan []outbox.Event
	for i := range 4 {
		plan = append(plan, outbox.Event{At: time.Duration(i) * 300 * time.Millisecond, Event: "evt_" + string(rune('a'+i)), Payload: "order-" + string(rune('a'+i)), Amount: 100, Copies: 1})
	}
	o := play(t, d, plan, nil)
	require.NotNil(t, o.History)
	h := o.History
	from := map[string]bool{}
	for _, p := range h.Publishes {
		from[p.From] = true
	}
	assert.Equal(t, map[string]bool{"relay": true, "relay-2": true}, from, "both relays publish")
	assert.Len(t, scenario.Rows(o, "consumer-db", outbox.TEffects), 4, "each message applied once")
}

// TestReferenceMatchesFaultyRun: up to its first fault a faulty run is the
// world's reference run, so a fault placed on the reference's n-th message
// of a link hits that message when the reference sent it, and a crash at
// a node's N-th blocking call comes after the reference's protocol event
// it was placed after.
func TestReferenceMatchesFaultyRun(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		d, wl := harness.DrawWorld(sim.NewPCG(seed).Stream("world"), outbox.Default())
		ref, err := harness.NewReference(d, wl, wl.Plan, sim.NewPCG(seed))
		require.NoError(t, err)
		require.NotEmpty(t, ref.Links)
		require.NotEmpty(t, ref.Nodes)
		assert.Positive(t, ref.End)
		l := ref.Links[int(seed)%len(ref.Links)]
		n := len(l.At)/2 + 1
		s := sim.Schedule{{At: 0, Kind: sim.Message, Node: l.From, Peer: l.To, Count: n, Arg: sim.FateDup, FromStart: true},
			{At: outbox.HealAt(outbox.FaultSpec(d)), Kind: sim.HealAll}}
		o := harness.Play(d, wl, wl.Plan, s, sim.NewPCG(seed))
		require.NoError(t, o.Err)
		fired := false
		for _, e := range o.Trace {
			if e.Kind == "fault" && e.Node == l.From && strings.HasSuffix(e.Text, " to "+l.To+": dup") {
				assert.Equal(t, l.At[n-1], clock.Time(e.T), "seed %d: message %d of %s->%s", seed, n, l.From, l.To)
				fired = true
			}
		}
		assert.True(t, fired, "seed %d: the message fault on %s->%s #%d fired", seed, l.From, l.To, n)
	}
}

// TestSearchFaultsZeroIsNoFault: a zero draw of the search is no fault at
// all, only the heal-all.
func TestSearchFaultsZeroIsNoFault(t *testing.T) {
	d, wl := harness.DrawWorld(zero{}, outbox.Default())
	ref, err := harness.NewReference(d, wl, wl.Plan, sim.NewPCG(0))
	require.NoError(t, err)
	s, p := harness.SearchFaults(zero{}, nil, d, ref, 8, 3)
	assert.Equal(t, sim.Schedule{{At: outbox.HealAt(outbox.FaultSpec(d)), Kind: sim.HealAll}}, s)
	assert.Equal(t, "no faults", p.String())
}

// TestSeededRunReplays: what explore plays for a seed is reproduced by the
// drawn design, the plan and the schedule alone (what a trace header
// holds), bit for bit.
func TestSeededRunReplays(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		x, err := harness.DrawSeed(outbox.Default().MustWith(outbox.ConsumerWithoutDedup), seed, harness.Moderate)
		require.NoError(t, err)
		a := harness.Play(x.Design, x.Workload, x.Workload.Plan, x.Schedule, sim.NewPCG(seed))
		d, err := outbox.ParseDesign(x.Design.JSON())
		require.NoError(t, err)
		b := harness.Play(d, x.Workload, x.Workload.Plan, x.Schedule, sim.NewPCG(seed))
		require.NoError(t, a.Err)
		h := traces.Header{System: "outbox", Seed: seed}
		assert.Equal(t, traces.HashOf(h, a.Trace), traces.HashOf(h, b.Trace), "seed %d", seed)
		v, err := check.Decode(a.Trace)
		require.NoError(t, err)
		assert.NotEmpty(t, v.Calls)
	}
}

// play runs a hand-written plan and schedule (scenario.PlayPlan adds the
// heal-all) and requires every property to hold.
func play(t *testing.T, d outbox.Design, plan []outbox.Event, s sim.Schedule) *scenario.Outcome {
	t.Helper()
	o := scenario.PlayPlan(d, plan, s)
	require.NoError(t, o.Err)
	require.True(t, o.Metrics.Settled, "the run must settle:\n%s", o.Summary())
	for _, v := range o.Verdicts {
		assert.True(t, v.OK, "%s", v)
	}
	return o
}
