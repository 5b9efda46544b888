package harness_test

import (
	"fmt"
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
		// Refunds as events of their own: before their charge, and two
		// of one charge under two keys (a charge's own refund counts).
		refunds := map[string]map[string]bool{} // charge -> refund keys
		for _, e := range wl.Plan {
			if e.Refund {
				refunds[e.Event] = map[string]bool{e.Event + "/refund": true}
			}
		}
		for _, e := range wl.Plan {
			if e.Op != outbox.OpRefund {
				continue
			}
			seen["refund-event"]++
			for _, c := range wl.Plan {
				if c.Event == e.Ref && c.Op == "" && c.At > e.At {
					seen["refund-before-charge"]++
					break
				}
			}
			if refunds[e.Ref] == nil {
				refunds[e.Ref] = map[string]bool{}
			}
			refunds[e.Ref][e.Event] = true
		}
		for _, keys := range refunds {
			if len(keys) > 1 {
				seen["second-refund"]++
			}
		}
	}
	for _, k := range []string{"handlers", "senders", "relays", "timing", "keyless", "reuse-same-sender", "reuse-other-sender", "refund",
		"refund-event", "refund-before-charge", "second-refund"} {
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

// TestRefusalIsTheKeysAnswer: a refund delivered before its charge is
// refused 404 and the refusal is recorded with its key; the same key sent
// again by another sender after the charge committed gets the same 404,
// and nothing is refunded (the source: failure recorded in the same place
// as success). Before the fix the second delivery refunded the charge and
// answered 200: one key, two answers.
func TestRefusalIsTheKeysAnswer(t *testing.T) {
	d := outbox.Default()
	d.Senders = 2
	plan := []outbox.Event{
		{At: 0, Event: "evt_r", Payload: "r", Op: outbox.OpRefund, Ref: "evt_c", Copies: 1},
		{At: 500 * time.Millisecond, Event: "evt_c", Payload: "c", Amount: 100, Copies: 1},
		{At: 2 * time.Second, Event: "evt_r", Payload: "r2", Op: outbox.OpRefund, Ref: "evt_c", Copies: 1, Sender: 1},
	}
	o := play(t, d, plan, nil)
	var got []string
	for _, c := range o.History.Calls {
		got = append(got, fmt.Sprintf("%s %s %d %s", c.Op, c.Key, c.Code, c.Value))
	}
	assert.Equal(t, []string{"refund evt_r 404 no charge for event evt_c", "charge evt_c 200 received " + chargeID(t, o), "refund evt_r 404 no charge for event evt_c"}, got)
	assert.Len(t, scenario.Rows(o, "db", outbox.TLedger), 1, "the charge alone: the refused refund changed nothing")
	assert.True(t, o.Probes[check.ProbeRefusal])
}

// TestSecondRefundIsRefused: a second refund of one charge under another
// key is answered 409, recorded with its key, and the sender stops on it.
// Before the fix it was answered 503 ("database error: 23505") until the
// sender gave up after max_attempts.
func TestSecondRefundIsRefused(t *testing.T) {
	plan := []outbox.Event{
		{At: 0, Event: "evt_c", Payload: "c", Amount: 100, Copies: 1},
		{At: 500 * time.Millisecond, Event: "evt_r1", Payload: "r1", Op: outbox.OpRefund, Ref: "evt_c", Copies: 1},
		{At: time.Second, Event: "evt_r2", Payload: "r2", Op: outbox.OpRefund, Ref: "evt_c", Copies: 2, Gap: time.Millisecond},
	}
	o := play(t, outbox.Default(), plan, nil)
	assert.Zero(t, o.Metrics.GaveUp)
	var codes []int
	for _, c := range o.History.Calls {
		if c.Key == "evt_r2" {
			codes = append(codes, c.Code)
			assert.Equal(t, "charge for event evt_c already refunded", c.Value)
		}
	}
	assert.Equal(t, []int{409, 409}, codes, "both copies refused alike")
	assert.Len(t, scenario.Rows(o, "db", outbox.TLedger), 2, "the charge and one reversal")
	assert.Len(t, scenario.Rows(o, "db", outbox.TOutbox), 2, "no message for the refusal")
}

func chargeID(t *testing.T, o *scenario.Outcome) string {
	rows := scenario.Rows(o, "db", outbox.TCharges)
	require.Len(t, rows, 1)
	return rows[0]["id"].(string)
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
