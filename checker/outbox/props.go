package outbox

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/traces/hist"
)

// Property ids.
const (
	PB1 = "PB1" // one effect per key (linearizable per key)
	PB2 = "PB2" // outbox atomicity
	PB3 = "PB3" // effectively once
	PB4 = "PB4" // append-only ledger
	PB5 = "PB5" // the sender can stop
	PB6 = "PB6" // no key, no change
)

// Properties lists the ids in order, with their names.
var Properties = []struct{ ID, Name string }{
	{PB1, "one effect per key"},
	{PB2, "outbox atomicity"},
	{PB3, "effectively once"},
	{PB4, "append-only ledger"},
	{PB5, "the sender can stop"},
	{PB6, "no key, no change"},
}

// Verdict is one property's judgement of a run.
type Verdict struct {
	Property string   `json:"property"`
	OK       bool     `json:"ok"`
	Why      []string `json:"why,omitempty"` // sorted; at most maxWhy
	// Events are the trace events that break it (the commits of the rows
	// an event has too many of), by Seq; empty when a failure names none.
	Events []uint64 `json:"events,omitempty"`
}

const maxWhy = 8

func (v Verdict) String() string {
	if v.OK && len(v.Why) > 0 {
		return v.Property + " ok (" + v.Why[0] + ")"
	}
	if v.OK {
		return v.Property + " ok"
	}
	return v.Property + " FAILED: " + strings.Join(v.Why, "; ")
}

type verdict struct {
	id        string
	why       []string
	undecided []string // what the check could not judge (a run that ended with it open)
	events    map[uint64]bool
}

func (v *verdict) fail(format string, a ...any) { v.why = append(v.why, fmt.Sprintf(format, a...)) }

// open records what the run ended before the check could judge: with no
// failure, the verdict holds but says it is undecided.
func (v *verdict) open(format string, a ...any) {
	v.undecided = append(v.undecided, fmt.Sprintf(format, a...))
}

// at names the trace events of a failure.
func (v *verdict) at(events ...uint64) {
	if v.events == nil {
		v.events = map[uint64]bool{}
	}
	for _, e := range events {
		if e != 0 {
			v.events[e] = true
		}
	}
}

func (v *verdict) done() Verdict {
	sort.Strings(v.why)
	if len(v.why) > maxWhy {
		n := len(v.why)
		v.why = append(v.why[:maxWhy], fmt.Sprintf("(and %d more)", n-maxWhy))
	}
	var evs []uint64
	for e := range v.events {
		evs = append(evs, e)
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i] < evs[j] })
	if len(v.why) == 0 && len(v.undecided) > 0 {
		sort.Strings(v.undecided)
		return Verdict{Property: v.id, OK: true, Why: []string{checker.UndecidedPrefix + strings.Join(v.undecided, "; ")}}
	}
	return Verdict{Property: v.id, OK: len(v.why) == 0, Why: v.why, Events: evs}
}

// Failed returns the ids of the failed properties.
func Failed(vs []Verdict) []string {
	var out []string
	for _, v := range vs {
		if !v.OK {
			out = append(out, v.Property)
		}
	}
	return out
}

// Find returns the verdict of a property.
func Find(vs []Verdict, id string) (Verdict, bool) {
	for _, v := range vs {
		if v.Property == id {
			return v, true
		}
	}
	return Verdict{}, false
}

// Check judges a run: PB1..PB6, in order. The liveness halves (every
// committed message published, every published message applied, every
// sender stopped on a success) assume the run was allowed to settle after
// its faults healed.
func Check(h *History) []Verdict {
	return []Verdict{CheckPB1(h), CheckPB2(h), CheckPB3(h), CheckPB4(h), CheckPB5(h), CheckPB6(h)}
}

// inserts returns the rows a table gained, over every commit, in commit
// order.
func (h *History) inserts(table string) []map[string]any {
	var out []map[string]any
	for _, r := range h.insertsAt(table) {
		out = append(out, r.row)
	}
	return out
}

// inserted is an inserted row and the trace event of its commit.
type inserted struct {
	row   map[string]any
	event uint64
}

// insertsAt returns the rows inserted into a table, with their commits'
// trace events.
func (h *History) insertsAt(table string) []inserted {
	var out []inserted
	for _, c := range h.Commits {
		for _, ch := range c.Changes {
			if ch.Table == table && ch.Op == "insert" {
				out = append(out, inserted{ch.After, c.Event})
			}
		}
	}
	return out
}

// committedOps returns the operations whose work committed: the op id of
// every stored key but a recorded refusal (no work, no message), charge and
// ledger entry (ids are ch-<op>, le-<op>).
func (h *History) committedOps() map[string]string {
	ops := map[string]string{}
	for _, r := range h.inserts(TKeys) {
		if !refusal(r) {
			ops[str(r, "op_id")] = str(r, "event_id")
		}
	}
	for _, r := range h.inserts(TCharges) {
		ops[strings.TrimPrefix(str(r, "id"), "ch-")] = str(r, "event_id")
	}
	for _, r := range h.inserts(TLedger) {
		ops[strings.TrimPrefix(str(r, "id"), "le-")] = str(r, "event_id")
	}
	return ops
}

// CheckPB1: however many deliveries, retries and concurrent handlers, each
// key produces one business row and one side effect, and every answered
// delivery gets the same answer, a success or a refusal (linearizable per
// key, decided by porcupine; PB1Info returns porcupine's record for the
// visualisation); a refusal recorded with its key has no effect (its
// transaction wrote no business row and no message).
func CheckPB1(h *History) Verdict {
	v := verdict{id: PB1}
	for _, p := range checkKeys(PB1Operations(h)).illegal {
		v.fail("answers not linearizable: %s", p)
	}
	for _, c := range h.Commits {
		for _, k := range c.Changes {
			if k.Table != TKeys || k.Op != "insert" || !refusal(k.After) {
				continue
			}
			for _, ch := range c.Changes {
				if serviceTables[ch.Table] {
					v.fail("key %s recorded the refusal %d %q, but its transaction wrote %s (%s %s)", str(k.After, "key"), keyCode(k.After), str(k.After, "answer"), ch.Table, ch.Op, rowKey(ch.Key))
					v.at(c.Event)
				}
			}
		}
	}
	count := func(rows []inserted, what string, keep func(map[string]any) bool) {
		n := map[string][]string{}
		at := map[string][]uint64{}
		for _, r := range rows {
			if keep(r.row) {
				ev := str(r.row, "event_id")
				n[ev] = append(n[ev], str(r.row, "id"))
				at[ev] = append(at[ev], r.event)
			}
		}
		for _, ev := range sortedKeys(n) {
			if len(n[ev]) > 1 {
				v.fail("event %s has %d %s: %s", ev, len(n[ev]), what, strings.Join(n[ev], ", "))
				v.at(at[ev][1:]...) // the rows after the first: the effects too many
			}
		}
	}
	all := func(map[string]any) bool { return true }
	count(h.insertsAt(TCharges), "charge rows", all)
	count(h.insertsAt(TLedger), "refund entries", func(r map[string]any) bool { return str(r, "kind") == OpRefund })
	effects := map[string][]string{}
	effectAt := map[string][]uint64{}
	for _, r := range h.insertsAt(TEffects) {
		ev := str(r.row, "event_id")
		effects[ev] = append(effects[ev], str(r.row, "msg_id"))
		effectAt[ev] = append(effectAt[ev], r.event)
	}
	for _, ev := range sortedKeys(effects) {
		if len(effects[ev]) > 1 {
			v.fail("event %s has %d side effects (messages %s)", ev, len(effects[ev]), strings.Join(effects[ev], ", "))
			v.at(effectAt[ev][1:]...)
		}
	}
	return v.done()
}

// CheckPB2: every committed business transaction has its message published
// at least once; no message is published for a transaction that did not
// commit.
func CheckPB2(h *History) Verdict {
	v := verdict{id: PB2}
	committed := h.committedOps()
	published := map[string]int{}
	for _, p := range h.Publishes {
		published[p.Msg.OpID]++
		if _, ok := committed[p.Msg.OpID]; !ok {
			v.fail("message %s (event %s) published at %.3fs but its transaction never committed", p.Msg.ID, p.Msg.Event, float64(p.T)/1e9)
		}
	}
	for _, op := range sortedKeys(committed) {
		if published[op] == 0 {
			v.fail("operation %s (event %s) committed but its message was never published", op, committed[op])
		}
	}
	return v.done()
}

// CheckPB3: the consumer applies each published message exactly once.
func CheckPB3(h *History) Verdict {
	v := verdict{id: PB3}
	applied := map[string]int{}
	for _, r := range h.inserts(TEffects) {
		applied[str(r, "msg_id")]++
	}
	published := map[string]int{}
	for _, p := range h.Publishes {
		published[p.Msg.ID]++
	}
	for _, id := range sortedKeys(published) {
		switch n := applied[id]; {
		case n == 0:
			v.fail("message %s published %d time(s) but never applied", id, published[id])
		case n > 1:
			v.fail("message %s applied %d times (published %d time(s))", id, n, published[id])
		}
	}
	for _, id := range sortedKeys(applied) {
		if published[id] == 0 {
			v.fail("message %s applied but never published", id)
		}
	}
	return v.done()
}

// CheckPB4: no ledger row is ever changed or deleted; a reversal is a new
// entry naming the entry it reverses, for the opposite amount; the balance
// believed after every commit is reconstructible from the final ledger.
func CheckPB4(h *History) Verdict {
	v := verdict{id: PB4}
	state := map[string]map[string]any{} // the ledger as believed after each commit
	type snapshot struct {
		at      int64
		balance int64
		ids     []string
	}
	var snaps []snapshot
	for _, c := range h.Commits {
		touched := false
		for _, ch := range c.Changes {
			if ch.Table != TLedger {
				continue
			}
			touched = true
			switch ch.Op {
			case "insert":
				state[rowKey(ch.Key)] = ch.After
			case "update":
				v.fail("ledger row %s changed in place at %.3fs: amount %d -> %d", rowKey(ch.Key), float64(c.At)/1e9, num(ch.Before, "amount"), num(ch.After, "amount"))
				state[rowKey(ch.Key)] = ch.After
			case "delete":
				v.fail("ledger row %s deleted at %.3fs", rowKey(ch.Key), float64(c.At)/1e9)
				delete(state, rowKey(ch.Key))
			}
		}
		if touched {
			s := snapshot{at: c.At}
			for _, id := range sortedKeys(state) {
				s.balance += num(state[id], "amount")
				s.ids = append(s.ids, id)
			}
			snaps = append(snaps, s)
		}
	}
	// Reconstruct each believed balance from the final rows.
	for _, s := range snaps {
		var b int64
		for _, id := range s.ids {
			if r, ok := state[id]; ok {
				b += num(r, "amount")
			}
		}
		if b != s.balance {
			v.fail("balance believed at %.3fs was %d; the ledger now says %d for the same entries", float64(s.at)/1e9, s.balance, b)
		}
	}
	for _, id := range sortedKeys(state) {
		r := state[id]
		if str(r, "kind") != OpRefund {
			continue
		}
		orig, ok := state[str(r, "reversal_of")]
		switch {
		case !ok:
			v.fail("refund entry %s reverses %q, which is not in the ledger", id, str(r, "reversal_of"))
		case num(orig, "amount") != -num(r, "amount"):
			v.fail("refund entry %s of %d does not reverse entry %s of %d", id, num(r, "amount"), str(r, "reversal_of"), num(orig, "amount"))
		}
	}
	return v.done()
}

// CheckPB5: a duplicate is answered as the first arrival was, so the
// sender can stop: deliveries per event stay within the sender's policy;
// the sender gives up on no event (the judged worlds give it the patience
// to outlast their faults: outbox.Patience); every event whose work
// committed was answered with a success (the sender stopped on it, not by
// giving up or still delivering at the end); and every event whose key
// recorded an answer (a success, or a refusal kept with the key) stopped
// on that answer's code.
func CheckPB5(h *History) Verdict {
	v := verdict{id: PB5}
	deliveries := map[string]int{}
	for _, c := range h.Calls {
		deliveries[c.Payload]++
	}
	committed := map[string]bool{}
	for _, ev := range h.committedOps() {
		committed[ev] = true
	}
	recorded := map[string]map[string]any{} // op:event -> the first row stored for it
	for _, r := range h.inserts(TKeys) {
		k := keyOp(r) + ":" + str(r, "event_id")
		if _, ok := recorded[k]; !ok {
			recorded[k] = r
		}
	}
	for _, e := range h.Events {
		if e.Bound > 0 && deliveries[e.Payload] > e.Bound {
			v.fail("event %s delivered %d times, above the sender's bound %d", e.Payload, deliveries[e.Payload], e.Bound)
		}
		rec, isRec := recorded[e.Op+":"+e.Event]
		isRec = isRec && e.Event != ""
		comm := e.Event != "" && committed[e.Event] // a keyless request's work is PB6's
		done := e.What == hist.SenderDone
		switch {
		case e.What == "" && comm:
			v.fail("event %s committed but the sender was still delivering it at the end (%d deliveries)", e.Event, deliveries[e.Payload])
		case e.What == "" && isRec:
			v.fail("event %s was refused (%d, recorded with its key) but the sender was still delivering it at the end (%d deliveries)", e.Event, keyCode(rec), deliveries[e.Payload])
		case e.What == "" && e.Event != "":
			// Nothing committed or recorded for its key, and the run
			// ended while its sender still delivered it (a live run's
			// wait for the work ran out): whether the sender would stop,
			// or give up, is not known (found live: double-refund-is-error,
			// seed 2, a second refund answered 503 twenty times).
			v.open("event %s (%s) was still being delivered at the end (%d deliveries, nothing recorded for its key): whether its sender would stop is not known", e.Event, e.Payload, deliveries[e.Payload])
		case comm && (!done || e.Code < 200 || e.Code >= 300):
			v.fail("event %s committed but the sender never heard a success: %s after %d attempts", e.Event, e.What, e.Attempts)
		case e.What == hist.SenderGiveUp:
			v.fail("the sender gave up on event %s (%s) after %d attempts", e.Event, e.Payload, e.Attempts)
		case done && isRec && int64(e.Code) != keyCode(rec):
			v.fail("event %s (%s) stopped on %d, but its key recorded %d %q", e.Event, e.Payload, e.Code, keyCode(rec), str(rec, "answer"))
		}
	}
	return v.done()
}

// serviceTables are the business tables of the service's database, whose
// rows name their event (the keys' own table aside: an empty key is PB6's
// other clause).
var serviceTables = map[string]bool{TCharges: true, TLedger: true, TOutbox: true}

// CheckPB6: a request without a key is refused with a clear error and
// changes nothing. Its changes are the rows that carry its payload, and
// any row of the service's tables with an empty event id (a keyed request
// always has one; a keyless refund's ledger entry and message carry no
// payload).
func CheckPB6(h *History) Verdict {
	v := verdict{id: PB6}
	keyless := map[string]bool{}
	for _, c := range h.Calls {
		if c.Key != "" {
			continue
		}
		keyless[c.Payload] = true
		if c.Answered() && (c.Code != 400 || !strings.Contains(c.Value, "Idempotency-Key")) {
			v.fail("keyless request %s (%s) answered %d %q, not a 400 naming the missing key", c.ID, c.Payload, c.Code, c.Value)
		}
	}
	for _, c := range h.Commits {
		for _, ch := range c.Changes {
			_, hasEvent := ch.After["event_id"]
			if p := str(ch.After, "payload"); p != "" && keyless[p] {
				v.fail("keyless request %s changed %s (%s %s)", p, ch.Table, ch.Op, rowKey(ch.Key))
			} else if serviceTables[ch.Table] && hasEvent && str(ch.After, "event_id") == "" {
				v.fail("a keyless request changed %s (%s %s)", ch.Table, ch.Op, rowKey(ch.Key))
			}
			if ch.Table == TKeys && str(ch.After, "event_id") == "" && ch.After != nil {
				v.fail("an empty key was stored (row %s)", rowKey(ch.Key))
			}
		}
	}
	return v.done()
}
