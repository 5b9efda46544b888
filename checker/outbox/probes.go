package outbox

import (
	"strings"

	"github.com/fencesim/fencesim/traces/hist"
)

// Probes are sometimes-assertions: situations a sweep must reach often
// enough for its passing runs to mean something.
const (
	ProbeRace         = "handlers-race"            // two handlers worked on one key at the same time
	ProbeRelayBetween = "relay-crash-unmarked"     // the relay crashed between a publish and its mark
	ProbeRedelivery   = "redelivery-new-time"      // an event was delivered again with a new timestamp
	ProbeDuplicate    = "duplicate-from-store"     // a duplicate was answered from the stored key
	ProbeDoublePub    = "double-publish"           // a message was published twice
	ProbeBrokerRedo   = "broker-redelivery"        // the broker pushed a message again
	ProbeDedup        = "consumer-dedup"           // the consumer skipped a message it had applied
	ProbeRefund       = "refund"                   // a refund committed (not a refusal recorded with its key)
	ProbeKeyless      = "keyless-refused"          // a request without a key was refused
	ProbeGaveUp       = "sender-gave-up"           // the sender gave up on an event
	ProbeHandlerCrash = "handler-crash-mid-flight" // a handler crashed with a delivery in progress
	ProbeRefusal      = "refusal-recorded"         // a refusal (a refund of nothing, a second refund of a charge) was recorded with its key
)

// ProbeNames lists the probes in a fixed order.
var ProbeNames = []string{ProbeRace, ProbeRelayBetween, ProbeRedelivery, ProbeDuplicate, ProbeDoublePub, ProbeBrokerRedo,
	ProbeDedup, ProbeRefund, ProbeKeyless, ProbeGaveUp, ProbeHandlerCrash, ProbeRefusal}

// Probes reports which probes a run hit.
func Probes(h *History) map[string]bool {
	p := map[string]bool{}
	// Handler intervals per key; crashes end a handler's open intervals.
	type open struct {
		handler, key string
		start        int64
	}
	var intervals []open
	type ival struct {
		handler, key string
		start, end   int64
	}
	var closed []ival
	crashAt := func(node string, after int64) int64 {
		for _, c := range h.Crashes {
			if c.Node == node && c.T >= after {
				return c.T
			}
		}
		return h.End
	}
	for _, x := range h.Handles {
		if x.Key == "" {
			continue
		}
		if x.Phase == hist.HandleStart {
			intervals = append(intervals, open{x.Handler, x.Key, x.T})
			continue
		}
		for i, o := range intervals {
			if o.handler == x.Handler && o.key == x.Key {
				closed = append(closed, ival{o.handler, o.key, o.start, x.T})
				intervals = append(intervals[:i], intervals[i+1:]...)
				break
			}
		}
		if x.Path == "duplicate" {
			p[ProbeDuplicate] = true
		}
	}
	for _, o := range intervals {
		end := crashAt(o.handler, o.start)
		if end < h.End {
			p[ProbeHandlerCrash] = true
		}
		closed = append(closed, ival{o.handler, o.key, o.start, end})
	}
	for i := range closed {
		for j := i + 1; j < len(closed); j++ {
			a, b := closed[i], closed[j]
			if a.key == b.key && a.handler != b.handler && a.start < b.end && b.start < a.end {
				p[ProbeRace] = true
			}
		}
	}
	// A redelivery (a retry, not a first copy) with a new timestamp.
	first := map[string]int64{}
	for _, c := range h.Calls {
		if c.Key == "" || c.Attempt == 0 {
			if _, ok := first[c.Payload]; !ok && c.Key != "" {
				first[c.Payload] = c.DeliveredAt
			}
			continue
		}
		if t, ok := first[c.Payload]; ok && t != c.DeliveredAt {
			p[ProbeRedelivery] = true
		}
	}
	// A relay crashed with a published, unmarked message (each relay
	// instance on its own: the nodes that wrote relay notes).
	var relays []string
	steps := map[string][]Step{}
	for _, s := range h.Relay {
		if _, ok := steps[s.Node]; !ok {
			relays = append(relays, s.Node)
		}
		steps[s.Node] = append(steps[s.Node], s)
	}
	for _, relay := range relays {
		if relayCrashedUnmarked(relay, steps[relay], h.Crashes) {
			p[ProbeRelayBetween] = true
		}
	}
	pubs := map[string]int{}
	for _, x := range h.Publishes {
		pubs[x.Msg.ID]++
		if pubs[x.Msg.ID] > 1 {
			p[ProbeDoublePub] = true
		}
	}
	if len(h.Pushes) > 0 {
		p[ProbeBrokerRedo] = true
	}
	for _, a := range h.Applies {
		if a.What == hist.ApplyDuplicate {
			p[ProbeDedup] = true
		}
	}
	for _, r := range h.inserts(TKeys) {
		if strings.HasPrefix(str(r, "key"), OpRefund+":") && !refusal(r) {
			p[ProbeRefund] = true
		}
		if refusal(r) {
			p[ProbeRefusal] = true
		}
	}
	for _, c := range h.Calls {
		if c.Key == "" && c.Code == 400 {
			p[ProbeKeyless] = true
		}
	}
	for _, e := range h.Events {
		if e.What == hist.SenderGiveUp {
			p[ProbeGaveUp] = true
		}
	}
	return p
}

// relayCrashedUnmarked reports whether a relay crashed while a message it
// had published was not marked yet.
func relayCrashedUnmarked(relay string, steps []Step, crashes []Crash) bool {
	var at []int64
	for _, c := range crashes {
		if c.Node == relay {
			at = append(at, c.T)
		}
	}
	pending := map[string]bool{}
	ci := 0
	for _, s := range steps {
		for ci < len(at) && at[ci] < s.T {
			if len(pending) > 0 {
				return true
			}
			pending = map[string]bool{}
			ci++
		}
		if s.What == hist.RelayPublished {
			pending[s.Msg] = true
		} else {
			delete(pending, s.Msg)
		}
	}
	return ci < len(at) && len(pending) > 0
}
