package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/traces/hist"

	check "github.com/fencesim/fencesim/checker/outbox"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/model/outbox"
	"github.com/fencesim/fencesim/sim"
)

// Scenario is one of the source's named cases.
type Scenario struct {
	ID      string // "B.1"
	Title   string
	Promise string // what the source says must come of it
	// Design adapts the default design (nil: the default as it is).
	Design   func(d *outbox.Design)
	Plan     []outbox.Event
	Schedule sim.Schedule // the faults (Play adds the heal-all)
	// Expect measures the run and lists what did not come as promised.
	Expect func(o *Outcome) (measured string, broken []string)
}

// Result is what a scenario's run measured.
type Result struct {
	Measured string
	Broken   []string // expectations that did not hold
	Failed   []string // properties that failed ("run" when the run did not end)
}

// OK reports whether the scenario kept its promise.
func (r Result) OK() bool { return len(r.Broken) == 0 && len(r.Failed) == 0 }

// PlayPlan plays a hand-written plan and fault schedule on a design, a
// heal-all added at the design's heal time, and judges the run.
func PlayPlan(d outbox.Design, plan []outbox.Event, s sim.Schedule) *Outcome {
	s = append(append(sim.Schedule(nil), s...), sim.Action{At: outbox.HealAt(outbox.FaultSpec(d)), Kind: sim.HealAll})
	wl := outbox.DefaultWorkload()
	wl.Plan = plan
	return Simulate(d, wl, plan, s, sim.NewPCG(1))
}

// Rows reads a table of a node's database at the end of a run.
func Rows(o *Outcome, node, table string) []db.Row {
	return o.World.Node(node).(*db.Node).Rows(table)
}

// Run plays the scenario, the knobs given turned on.
func (s Scenario) Run(knobs ...outbox.Knob) (*Outcome, Result, error) {
	d, err := outbox.Default().With(knobs...)
	if err != nil {
		return nil, Result{}, err
	}
	if s.Design != nil {
		s.Design(&d)
	}
	o := PlayPlan(d, s.Plan, s.Schedule)
	var r Result
	r.Failed = o.Failed()
	if o.Err == nil && o.History != nil {
		r.Measured, r.Broken = s.Expect(o)
		if !o.Metrics.Settled {
			r.Broken = append(r.Broken, "the run did not settle")
		}
	}
	return o, r, nil
}

// expect collects what did not come as promised.
type expect []string

func (e *expect) eq(what string, got, want any) {
	if fmt.Sprint(got) != fmt.Sprint(want) {
		*e = append(*e, fmt.Sprintf("%s: %v, want %v", what, got, want))
	}
}

// answers counts the answered deliveries and checks they all got the
// first one's answer with code.
func answers(o *Outcome, e *expect, code int) int {
	n, first := 0, ""
	for _, c := range o.History.Calls {
		if !c.Answered() {
			continue
		}
		n++
		if first == "" {
			first = c.Value
		}
		e.eq("the code of "+c.ID, c.Code, code)
		e.eq("the answer of "+c.ID, c.Value, first)
	}
	return n
}

func counts(o *Outcome) string {
	return fmt.Sprintf("%d deliveries, %d charges, %d publishes, %d effects", len(o.History.Calls), len(Rows(o, "db", outbox.TCharges)),
		len(o.History.Publishes), len(Rows(o, "consumer-db", outbox.TEffects)))
}

var event1 = outbox.Event{Event: "evt_1", Payload: "order-1", Amount: 250, Copies: 1}

func copies(n int, gap time.Duration) []outbox.Event {
	e := event1
	e.Copies, e.Gap = n, gap
	return []outbox.Event{e}
}

// All returns B.1-B.7 in order.
func All() []Scenario {
	lostAnswers := func() sim.Schedule {
		var s sim.Schedule
		for _, h := range outbox.NamesOf(outbox.Default()).Handlers {
			s = append(s, sim.Action{At: 0, Kind: sim.Loss, Node: h, Peer: "sender", Rate: 1_000_000, For: 200 * time.Millisecond})
		}
		return s
	}
	once := func(o *Outcome) (string, []string) {
		var e expect
		e.eq("charge rows", len(Rows(o, "db", outbox.TCharges)), 1)
		e.eq("ledger entries", len(Rows(o, "db", outbox.TLedger)), 1)
		e.eq("outbox messages", len(Rows(o, "db", outbox.TOutbox)), 1)
		e.eq("side effects", len(Rows(o, "consumer-db", outbox.TEffects)), 1)
		answers(o, &e, outbox.Code200)
		return counts(o), e
	}
	return []Scenario{
		{ID: "B.1", Title: "idempotency key", Promise: "the same event three times at once, every answer lost, redelivered: one charge, one entry, one message, one effect",
			Plan: copies(3, 2*time.Millisecond), Schedule: lostAnswers(), Expect: once},
		{ID: "B.2", Title: "trust the unique constraint", Promise: "two handlers wake at once on one key: the constraint lets one through; the other's unique violation is answered as done",
			Plan: copies(2, 0), Expect: func(o *Outcome) (string, []string) {
				m, e := once(o)
				dup := 0
				for _, h := range o.History.Handles {
					if h.Path == "duplicate" {
						dup++
					}
				}
				if dup == 0 {
					e = append(e, "no delivery was answered from the stored key")
				}
				return m + fmt.Sprintf(", %d answered from the key", dup), e
			}},
		{ID: "B.3", Title: "the message goes with the write", Promise: "the relay down from before the commit until 3 s, then killed after it marks the row: the message waits in the outbox and goes out once after the restart",
			Plan: []outbox.Event{event1}, Schedule: sim.Schedule{
				{At: 0, Kind: sim.Crash, Node: "relay"},
				{At: clock.Time(3 * time.Second), Kind: sim.Restart, Node: "relay"},
				{At: clock.Time(3 * time.Second), Kind: sim.CrashAt, Node: "relay", Point: outbox.PointAfterMark},
				{At: clock.Time(6 * time.Second), Kind: sim.Restart, Node: "relay"},
			},
			Expect: func(o *Outcome) (string, []string) {
				var e expect
				e.eq("publishes", len(o.History.Publishes), 1)
				if len(o.History.Publishes) > 0 && o.History.Publishes[0].T <= int64(3*time.Second) {
					e = append(e, "published before the relay's restart")
				}
				e.eq("side effects", len(Rows(o, "consumer-db", outbox.TEffects)), 1)
				out := Rows(o, "db", outbox.TOutbox)
				if len(out) != 1 || out[0]["sent"] != true {
					e = append(e, "the outbox row is not marked sent")
				}
				return counts(o), e
			}},
		{ID: "B.4", Title: "undo is a new entry", Promise: "a refund is a compensating entry: the charge stays readable, the balance as believed after the charge is still 300",
			Plan: []outbox.Event{
				{At: time.Second, Event: "evt_1", Payload: "order-1", Amount: 300, Copies: 1, Refund: true},
				{At: 2 * time.Second, Event: "evt_2", Payload: "order-2", Amount: 200, Copies: 1},
			}, Expect: func(o *Outcome) (string, []string) {
				var e expect
				ledger := Rows(o, "db", outbox.TLedger)
				e.eq("ledger entries", len(ledger), 3)
				var charge, refund db.Row
				for _, r := range ledger {
					switch {
					case r["event_id"] == "evt_1" && r["kind"] == outbox.OpCharge:
						charge = r
					case r["kind"] == outbox.OpRefund:
						refund = r
					}
				}
				if charge == nil || refund == nil {
					return counts(o), append(e, "no charge and refund of evt_1 in the ledger")
				}
				e.eq("the charge's amount", charge["amount"], 300)
				e.eq("the refund's amount", refund["amount"], -300)
				e.eq("the refund reverses", refund["reversal_of"], charge["id"])
				at := outbox.BalanceAt(ledger, charge["at"].(clock.Time))
				e.eq("the balance believed after the charge", at, 300)
				e.eq("the balance now", outbox.Balance(ledger), 200)
				return fmt.Sprintf("%d ledger entries, balance after the charge %d, now %d", len(ledger), at, outbox.Balance(ledger)), e
			}},
		{ID: "B.5", Title: "name the key first", Promise: "a request without a key: 400 naming the Idempotency-Key, nothing written, the sender stops",
			Plan: []outbox.Event{{Payload: "order-9", Amount: 100, Copies: 2}}, Expect: func(o *Outcome) (string, []string) {
				var e expect
				for _, c := range o.History.Calls {
					e.eq("the code of "+c.ID, c.Code, outbox.Code400)
					if !strings.Contains(c.Value, "Idempotency-Key") {
						e = append(e, c.ID+"'s answer does not name the Idempotency-Key")
					}
				}
				for _, tb := range []string{outbox.TKeys, outbox.TCharges, outbox.TLedger, outbox.TOutbox} {
					e.eq("rows of "+tb, len(Rows(o, "db", tb)), 0)
				}
				if len(o.History.Events) != 1 || o.History.Events[0].What != hist.SenderDone {
					e = append(e, "the sender did not stop on the 400")
				}
				return fmt.Sprintf("%d deliveries answered 400, nothing written", len(o.History.Calls)), e
			}},
		{ID: "B.6", Title: "a conflict is a success answer", Promise: "a duplicate is answered as the first arrival was, 200 with the stored answer, and the sender stops",
			Plan: copies(2, time.Millisecond), Expect: func(o *Outcome) (string, []string) {
				var e expect
				n := answers(o, &e, outbox.Code200)
				e.eq("deliveries", len(o.History.Calls), 2)
				done := 0
				for _, x := range o.History.Events {
					if x.What == hist.SenderDone {
						done++
					}
				}
				e.eq("events the sender finished", done, 1)
				return fmt.Sprintf("%d deliveries, %d answered 200 alike", len(o.History.Calls), n), e
			}},
		{ID: "B.7", Title: "done means tested", Promise: "the relay killed after the publish, before the mark: published again, the same message id, applied once",
			Plan: []outbox.Event{event1}, Schedule: sim.Schedule{
				{At: 0, Kind: sim.CrashAt, Node: "relay", Point: outbox.PointAfterPublish},
				{At: clock.Time(3 * time.Second), Kind: sim.Restart, Node: "relay"},
			}, Expect: func(o *Outcome) (string, []string) {
				var e expect
				h := o.History
				e.eq("publishes", len(h.Publishes), 2)
				if len(h.Publishes) == 2 {
					e.eq("the second publish's message id", h.Publishes[1].Msg.ID, h.Publishes[0].Msg.ID)
				}
				e.eq("side effects", len(Rows(o, "consumer-db", outbox.TEffects)), 1)
				if !o.Probes[check.ProbeRelayBetween] {
					e = append(e, "the relay was not stopped between publish and mark")
				}
				return counts(o), e
			}},
	}
}

// ByID returns a scenario by its id.
func ByID(id string) (Scenario, bool) {
	for _, s := range All() {
		if s.ID == id {
			return s, true
		}
	}
	return Scenario{}, false
}

// Table renders the scenarios' results, in order.
func Table(ss []Scenario, rs map[string]Result) string {
	var b strings.Builder
	b.WriteString("B: the source's mechanisms, each played on its own plan and faults (model/outbox/scenario)\n")
	for _, s := range ss {
		r := rs[s.ID]
		verdict := "ok"
		if !r.OK() {
			verdict = "BROKEN: " + strings.Join(append(append([]string(nil), r.Broken...), r.Failed...), "; ")
		}
		fmt.Fprintf(&b, "%s %s\n  promised: %s\n  measured: %s\n  %s\n", s.ID, s.Title, s.Promise, r.Measured, verdict)
	}
	return b.String()
}
