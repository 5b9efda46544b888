package outbox_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/model/outbox"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
)

// script is a client that plays deliveries to one handler, one at a time,
// and writes down what came back.
type script struct {
	t       *testing.T
	replies sim.Queue[outbox.Reply]
	got     []string
	no      uint64
}

// deliver sends one delivery of an event at the client's time and waits a
// second for the answer.
func (s *script) deliver(p *sim.Proc, op, event, ref string) {
	s.no++
	dl := outbox.Delivery{No: s.no, Op: op, Event: event, Ref: ref, Payload: "order-of-" + event, Amount: 250, DeliveredAt: p.Now()}
	p.Send("handler-1", dl)
	r, err := s.replies.Get(p, time.Second, "reply")
	switch {
	case err != nil:
		s.got = append(s.got, fmt.Sprintf("%s %s: no answer", op, event))
	default:
		require.Equal(s.t, s.no, r.No, "the answer is to this delivery")
		s.got = append(s.got, fmt.Sprintf("%s %s: %d %s", op, event, r.Code, r.Value))
	}
}

func (s *script) until(p *sim.Proc, t time.Duration) {
	p.Sleep(time.Duration(clock.Time(t)-p.Now()), "script")
}

// TestHandlerAlone drives one handler against the service database with
// scripted deliveries: a first arrival, a duplicate, a retry after an
// unknown outcome on each side of COMMIT, a refund, a request without a key.
func TestHandlerAlone(t *testing.T) {
	d := outbox.Default()
	s := &script{t: t}
	ms := func(n int) clock.Time { return clock.Time(time.Duration(n) * time.Millisecond) }
	w := sim.New(sim.Config{
		Entropy: sim.NewPCG(1),
		Network: network.Policy{DelayMin: time.Millisecond, DelayMax: time.Millisecond},
		Schedule: sim.Schedule{
			// evt_2: the database crashes with the COMMIT durable and not
			// answered; it is back at 200 ms.
			{At: ms(50), Kind: sim.CrashAt, Node: "db", Point: db.PointCommit},
			{At: ms(200), Kind: sim.Restart, Node: "db"},
			// evt_3: the handler crashes before its COMMIT; it is back at
			// 500 ms, a new incarnation.
			{At: ms(350), Kind: sim.CrashAt, Node: "handler-1", Point: outbox.PointBeforeCommit},
			{At: ms(500), Kind: sim.Restart, Node: "handler-1"},
		},
		Limits: sim.Limits{MaxTime: clock.Time(5 * time.Second), MaxEvents: 100_000},
	})
	t.Cleanup(w.Close)
	w.Add("db", db.New(outbox.Schema(d), db.Config{LockTimeout: d.LockTimeout}))
	w.Add("handler-1", outbox.NewHandler(outbox.HandlerConfig{Design: d, DB: "db", Broker: "broker"}))
	w.Add("sender", func(string, *sim.Disk) sim.Node {
		return sim.Program(func(p *sim.Proc) {
			p.Handle(func(p *sim.Proc, m network.Message) {
				if r, ok := m.Body.(outbox.Reply); ok {
					s.replies.Put(r)
				}
			})
			s.deliver(p, outbox.OpCharge, "evt_1", "") // first arrival
			s.deliver(p, outbox.OpCharge, "evt_1", "") // the same event again, a new timestamp
			s.until(p, 100*time.Millisecond)
			s.deliver(p, outbox.OpCharge, "evt_2", "") // committed, the answer lost with the database
			s.until(p, 300*time.Millisecond)
			s.deliver(p, outbox.OpCharge, "evt_2", "") // the retry
			s.until(p, 400*time.Millisecond)
			s.deliver(p, outbox.OpCharge, "evt_3", "") // the handler dies before COMMIT: no answer
			s.deliver(p, outbox.OpCharge, "evt_3", "") // the retry, to the restarted handler
			s.deliver(p, outbox.OpRefund, "evt_1/refund", "evt_1")
			s.deliver(p, outbox.OpRefund, "evt_1/refund", "evt_1") // a duplicate refund
			s.deliver(p, outbox.OpCharge, "", "")                  // no key
			s.deliver(p, outbox.OpRefund, "evt_4/refund", "evt_4") // a refund of nothing: refused, recorded
			s.deliver(p, outbox.OpCharge, "evt_4", "")             // the charge comes after it
			s.deliver(p, outbox.OpRefund, "evt_4/refund", "evt_4") // the same refusal: the key holds it
			s.deliver(p, outbox.OpRefund, "evt_1/again", "evt_1")  // a second refund of evt_1, another key: refused, recorded
			s.deliver(p, outbox.OpRefund, "evt_1/again", "evt_1")  // the same refusal
		})
	})
	require.NoError(t, w.Run())

	assert.Equal(t, []string{
		"charge evt_1: 200 received ch-handler-1.1.1",
		"charge evt_1: 200 received ch-handler-1.1.1",
		"charge evt_2: 503 database connection lost: outcome unknown, deliver again",
		"charge evt_2: 200 received ch-handler-1.1.3",
		"charge evt_3: no answer",
		"charge evt_3: 200 received ch-handler-1.2.1",
		"refund evt_1/refund: 200 refunded le-handler-1.2.2",
		"refund evt_1/refund: 200 refunded le-handler-1.2.2",
		"charge : 400 refused: the request has no Idempotency-Key; send the same key with every retry",
		"refund evt_4/refund: 404 no charge for event evt_4",
		"charge evt_4: 200 received ch-handler-1.2.5",
		"refund evt_4/refund: 404 no charge for event evt_4",
		"refund evt_1/again: 409 charge for event evt_1 already refunded",
		"refund evt_1/again: 409 charge for event evt_1 already refunded",
	}, s.got, "a duplicate gets the stored answer, a success or a refusal; a retry after an unknown outcome gets the answer of the attempt that committed, or does the work")

	rows := func(table string) []db.Row { return w.Node("db").(*db.Node).Rows(table) }
	var charges []string
	for _, r := range rows(outbox.TCharges) {
		charges = append(charges, r.Text("event_id")+" "+r.Text("id"))
	}
	assert.ElementsMatch(t, []string{"evt_1 ch-handler-1.1.1", "evt_2 ch-handler-1.1.3", "evt_3 ch-handler-1.2.1", "evt_4 ch-handler-1.2.5"}, charges,
		"one charge per event: the duplicate and the retries wrote nothing, the crashed attempt rolled back")
	var keys []string
	for _, r := range rows(outbox.TKeys) {
		keys = append(keys, fmt.Sprintf("%s %d", r.Text("key"), r.Int("code")))
	}
	assert.ElementsMatch(t, []string{"charge:evt_1 200", "charge:evt_2 200", "charge:evt_3 200", "refund:evt_1/refund 200", "charge:evt_4 200",
		"refund:evt_4/refund 404", "refund:evt_1/again 409"}, keys, "one key per event, a refusal recorded with its code as a success is")
	assert.Len(t, rows(outbox.TOutbox), 5, "one message per effect, written with it; none for a refusal")
	ledger := rows(outbox.TLedger)
	assert.Len(t, ledger, 5, "four charges and one compensating entry")
	assert.Equal(t, int64(750), outbox.Balance(ledger))
}

// TestRefusalKnobs: each knob brings back the old answer of one refusal:
// refusal-not-stored rolls the refusal back, so the refund of nothing runs
// again once its charge exists (two answers for one key);
// double-refund-is-error answers the second refund of one charge 503, a
// database error, every time.
func TestRefusalKnobs(t *testing.T) {
	play := func(d outbox.Design, deliveries [][3]string) []string {
		s := &script{t: t}
		w := sim.New(sim.Config{Entropy: sim.NewPCG(1), Network: network.Policy{DelayMin: time.Millisecond, DelayMax: time.Millisecond},
			Limits: sim.Limits{MaxTime: clock.Time(5 * time.Second), MaxEvents: 100_000}})
		t.Cleanup(w.Close)
		w.Add("db", db.New(outbox.Schema(d), db.Config{LockTimeout: d.LockTimeout}))
		w.Add("handler-1", outbox.NewHandler(outbox.HandlerConfig{Design: d, DB: "db", Broker: "broker"}))
		w.Add("sender", func(string, *sim.Disk) sim.Node {
			return sim.Program(func(p *sim.Proc) {
				p.Handle(func(p *sim.Proc, m network.Message) {
					if r, ok := m.Body.(outbox.Reply); ok {
						s.replies.Put(r)
					}
				})
				for _, dl := range deliveries {
					s.deliver(p, dl[0], dl[1], dl[2])
				}
			})
		})
		require.NoError(t, w.Run())
		return s.got
	}
	notStored := [][3]string{{outbox.OpRefund, "r", "c"}, {outbox.OpCharge, "c", ""}, {outbox.OpRefund, "r", "c"}}
	assert.Equal(t, []string{"refund r: 404 no charge for event c", "charge c: 200 received ch-handler-1.1.2", "refund r: 404 no charge for event c"},
		play(outbox.Default(), notStored), "the default keeps the refusal with its key")
	assert.Equal(t, []string{"refund r: 404 no charge for event c", "charge c: 200 received ch-handler-1.1.2", "refund r: 200 refunded le-handler-1.1.3"},
		play(outbox.Default().MustWith(outbox.RefusalNotStored), notStored), "refusal-not-stored: one key, two answers")
	twice := [][3]string{{outbox.OpCharge, "c", ""}, {outbox.OpRefund, "r1", "c"}, {outbox.OpRefund, "r2", "c"}, {outbox.OpRefund, "r2", "c"}}
	assert.Equal(t, []string{"charge c: 200 received ch-handler-1.1.1", "refund r1: 200 refunded le-handler-1.1.2",
		"refund r2: 409 charge for event c already refunded", "refund r2: 409 charge for event c already refunded"},
		play(outbox.Default(), twice), "the default refuses a second refund of one charge, definitively")
	assert.Equal(t, []string{"charge c: 200 received ch-handler-1.1.1", "refund r1: 200 refunded le-handler-1.1.2",
		"refund r2: 503 database error: 23505", "refund r2: 503 database error: 23505"},
		play(outbox.Default().MustWith(outbox.DoubleRefundIsError), twice), "double-refund-is-error: a 503 the sender retries")
	assert.Equal(t, []string{"charge c: 200 received ch-handler-1.1.1", "refund r1: 200 refunded le-handler-1.1.2",
		"refund r2: 200 refunded le-handler-1.1.3", "refund r2: 200 refunded le-handler-1.1.3"},
		play(outbox.Default().MustWith(outbox.EditInPlaceRefund), twice), "edit-in-place-refund still updates the row")
}
