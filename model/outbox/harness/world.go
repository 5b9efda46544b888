package harness

import (
	"slices"
	"time"

	"github.com/fencesim/fencesim/model/outbox"

	"github.com/fencesim/fencesim/sim"
)

// The world a run is played in is drawn per run, before its faults (swarm
// testing: the world differs from run to run, as the fault profile does).
// Every count is drawn as an extra above its minimum and every timing as a
// choice whose zero is the design's own value, so that rapid, which
// shrinks draws toward zero, shrinks a failure toward the smallest world
// with the design's own timings: one event, one handler, one sender, one
// relay.

// outbox.World sizes: the largest world DrawWorld draws.
const (
	MaxEvents   = 10 // events of the plan (refunds come on top)
	MaxHandlers = 4
	MaxSenders  = 3
	MaxRelays   = 2
)

// DrawWorld draws a run's world from r: the design with its world's
// parameters drawn (the ones the design pins keep the design's values: the
// ones a user set; the same draws are made either way, so that two designs
// that differ in one pinned setting get the same world otherwise), and a
// workload whose Plan holds the drawn events.
//
//   - 1-4 handlers, 1-3 senders, 1-2 relays;
//   - the sender's timeout and backoff, the relay's poll period, batch and
//     publish timeout, the broker's redelivery, the lock and database
//     timeouts, each the design's value or one of a few others within its
//     valid range; max_attempts is raised, when needed, until the sender
//     outlives the faults and what they leave behind (GiveUpAfter, its
//     backoffs alone, past the heal-all plus db_timeout, lock_timeout and
//     10 s: PB5 judges a sender that stopped on a success, not one that
//     gave up while the design was still recovering; see Patience);
//   - 1-10 events within a window of 10 s, 5 s, 2 s or 500 ms, each a
//     provider's event, a browser's request with a key, or one without a
//     key, sent by one of the senders, with 1-3 concurrent copies up to 20
//     or 200 ms apart, some refunded;
//   - refunds as events of their own: an event may be a refund of an
//     earlier event's charge (Op refund, Ref its key), sent at its own
//     drawn time, so possibly before its charge arrives; two of them may
//     name one charge, and a charge's own refund (Refund) may be a second;
//   - key reuse: an event may send again the key of an earlier one (a
//     provider resending an event id, a client reusing its
//     Idempotency-Key), the same operation, from the same sender or
//     another, with a payload and an amount of its own. The source (docs/systems.md, B) is silent on a reused key with a
//     different payload; PB1 says every delivery of a key gets the same
//     answer and the key has one effect, so the first payload wins (chosen).
func DrawWorld(r sim.Rand, base outbox.Design) (outbox.Design, outbox.Workload) {
	d := base
	d.Knobs = slices.Clone(base.Knobs)
	d.Pinned = slices.Clone(base.Pinned)
	fixed := base.Pinned
	set := func(name string, p *int, v int) {
		if !slices.Contains(fixed, name) {
			*p = v
		}
	}
	dur := func(name string, p *time.Duration, alts ...time.Duration) {
		i := r.Uint64n(name, uint64(len(alts))+1)
		if i > 0 && !slices.Contains(fixed, name) {
			*p = alts[i-1]
		}
	}
	count := func(name string, p *int, alts ...int) {
		i := r.Uint64n(name, uint64(len(alts))+1)
		if i > 0 {
			set(name, p, alts[i-1])
		}
	}
	set("handlers", &d.Handlers, 1+int(r.Uint64n("extra-handlers", MaxHandlers)))
	set("senders", &d.Senders, 1+int(r.Uint64n("extra-senders", MaxSenders)))
	set("relays", &d.Relays, 1+int(r.Uint64n("extra-relays", MaxRelays)))
	dur("request_timeout", &d.RequestTimeout, 250*time.Millisecond, 500*time.Millisecond, 2*time.Second)
	dur("retry_base", &d.RetryBase, 100*time.Millisecond, 250*time.Millisecond, time.Second)
	dur("retry_cap", &d.RetryCap, 2*time.Second, 4*time.Second, 16*time.Second)
	count("max_attempts", &d.MaxAttempts, 4, 6, 20)
	dur("poll_every", &d.PollEvery, 50*time.Millisecond, 100*time.Millisecond, time.Second)
	count("batch", &d.Batch, 1, 2, 4)
	dur("publish_timeout", &d.PublishTimeout, 100*time.Millisecond, 250*time.Millisecond, time.Second)
	dur("redeliver_after", &d.RedeliverAfter, 200*time.Millisecond, 500*time.Millisecond, 2*time.Second)
	dur("lock_timeout", &d.LockTimeout, 200*time.Millisecond, time.Second, 10*time.Second)
	dur("db_timeout", &d.DBTimeout, time.Second, 3*time.Second, 30*time.Second)
	// retry_cap >= retry_base: the drawn one of the two gives way (a
	// pinned cap holds a drawn base down).
	if d.RetryCap < d.RetryBase {
		if !slices.Contains(fixed, "retry_cap") {
			d.RetryCap = d.RetryBase
		} else if !slices.Contains(fixed, "retry_base") {
			d.RetryBase = d.RetryCap
		}
	}
	if !slices.Contains(fixed, "max_attempts") {
		for need := outbox.Patience(d); d.GiveUpAfter() < need; {
			d.MaxAttempts++
		}
	}
	wl := outbox.Workload{Events: 1 + int(r.Uint64n("extra-events", MaxEvents)), MaxCopies: 3}
	wl.Window = []time.Duration{10 * time.Second, 5 * time.Second, 2 * time.Second, 500 * time.Millisecond}[r.Uint64n("window", 4)]
	wl.MaxGap = []time.Duration{20 * time.Millisecond, 200 * time.Millisecond}[r.Uint64n("gap-range", 2)]
	wl.Plan = DrawEvents(wl, r, d.Senders)
	return d, wl
}

// DrawEvents draws the events of a drawn world (see DrawWorld): a live
// run's too. A zero draw is a provider's event sent once by the first
// sender, not refunded, with a key of its own.
func DrawEvents(wl outbox.Workload, r sim.Rand, senders int) []outbox.Event {
	out := make([]outbox.Event, wl.Events)
	for i := range out {
		e := wl.DrawEvent(r, i)
		e.Sender = int(r.Uint64n("sender", uint64(senders)))
		switch {
		case i > 0 && r.Uint64n("reuse", 4) == 3:
			// The key of an earlier event sent again (the same operation:
			// a refund's key names its charge too), by its own sender, or
			// by another one.
			if orig := out[r.Uint64n("reuse-of", uint64(i))]; orig.Event != "" {
				e.Event, e.Op, e.Ref = orig.Event, orig.Op, orig.Ref
				e.Sender = (orig.Sender + int(r.Uint64n("reuse-sender", uint64(senders)))) % senders
			}
		case i > 0 && e.Event != "" && r.Uint64n("refund-event", 4) == 3:
			// A refund of an earlier event's charge, an event of its own
			// with a key of its own, sent at its own time: possibly before
			// its charge arrives (a refund of nothing, refused), or after
			// another refund of the same charge (refused too: a charge is
			// refunded once).
			if orig := out[r.Uint64n("refund-of", uint64(i))]; orig.Event != "" && orig.Op == "" {
				e.Op, e.Ref = outbox.OpRefund, orig.Event
			}
		}
		e.Refund = e.Event != "" && e.Op == "" && r.Uint64n("refund", 4) == 3
		out[i] = e
	}
	return out
}
