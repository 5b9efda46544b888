package sim_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// script answers scripted values in order and records each draw as
// "label/n", so that a test pins both the values and the draws' order and
// labels (the contract that keeps trace hashes stable).
type script struct {
	vals  []uint64
	draws []string
}

func (s *script) Uint64n(label string, n uint64) uint64 {
	s.draws = append(s.draws, fmt.Sprintf("%s/%d", label, n))
	if len(s.vals) == 0 {
		return 0
	}
	v := s.vals[0]
	s.vals = s.vals[1:]
	return v
}

func ms(n int) clock.Time { return clock.Time(time.Duration(n) * time.Millisecond) }

// TestFaultDraws: each placed kind draws its decisions in a fixed order
// under fixed labels, and turns them into the kernel's actions.
func TestFaultDraws(t *testing.T) {
	ref := &sim.Reference{
		Nodes: []sim.NodeRef{
			{Name: "a", Calls: 10, Anchors: []sim.Anchor{{T: ms(100), Calls: 3}, {T: ms(200), Calls: 7}}},
			{Name: "b", Calls: 5},
		},
		Standby:  []string{"s1", "s2"},
		Links:    []sim.LinkRef{{From: "a", To: "b", At: []clock.Time{ms(100), ms(900)}, Datagrams: true}},
		Until:    ms(1000),
		Timeouts: []time.Duration{time.Second, 3 * time.Second},
		Events:   []clock.Time{ms(100), ms(200)},
	}
	all := []sim.Kind{sim.CrashYield, sim.Message, sim.Pause, sim.Restart}
	for _, tc := range []struct {
		name  string
		on    []sim.Kind
		vals  []uint64
		want  []sim.Action
		draws []string
	}{{
		name:  "crash just after an event, down past the longest timeout",
		on:    all,
		vals:  []uint64{0, 1, 0, 1, 2, 2},
		want:  []sim.Action{{Kind: sim.CrashYield, Node: "a", Count: 7 + 1 + 2, For: 3300 * time.Millisecond, FromStart: true}},
		draws: []string{"placed-kind/4", "yield-event/3", "yield/10", "yield-after-event/2", "calls-after/4", "down/3"},
	}, {
		name:  "crash of a node without events: uniform over its calls, quick restart",
		on:    all,
		vals:  []uint64{0, 2, 4, 0},
		want:  []sim.Action{{Kind: sim.CrashYield, Node: "b", Count: 5, For: time.Millisecond, FromStart: true}},
		draws: []string{"placed-kind/4", "yield-event/3", "yield/5", "down/3"},
	}, {
		name:  "a late message, cut to arrive by Until",
		on:    all,
		vals:  []uint64{1, 0, 1, 2, 1},
		want:  []sim.Action{{Kind: sim.Message, Node: "a", Peer: "b", Count: 2, Arg: sim.FateDelay, Amount: 100 * time.Millisecond, FromStart: true}},
		draws: []string{"placed-kind/4", "link/1", "message/2", "fate/3", "delay/2"},
	}, {
		name:  "a dropped message",
		on:    []sim.Kind{sim.Message},
		want:  []sim.Action{{Kind: sim.Message, Node: "a", Peer: "b", Count: 1, Arg: sim.FateDrop, FromStart: true}},
		draws: []string{"placed-kind/1", "link/1", "message/2", "fate/3"},
	}, {
		name: "a pause just after an event, past a timeout",
		on:   all,
		vals: []uint64{2, 0, 2, 0},
		want: []sim.Action{
			{At: ms(102), Kind: sim.Pause, Node: "a"},
			{At: ms(102).Add(1100 * time.Millisecond), Kind: sim.Resume, Node: "a"},
		},
		draws: []string{"placed-kind/4", "pause-event/3", "pause-after-ms/3", "stuck/2"},
	}, {
		name:  "no pause on a node without events",
		on:    all,
		vals:  []uint64{2, 2},
		draws: []string{"placed-kind/4", "pause-event/3"},
	}, {
		name:  "a standby's takeover just after an event",
		on:    all,
		vals:  []uint64{3, 1, 1, 1},
		want:  []sim.Action{{At: ms(201), Kind: sim.Restart, Node: "s2"}},
		draws: []string{"placed-kind/4", "standby/2", "takeover-after/2", "takeover-after-ms/3"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			r := &script{vals: tc.vals}
			got := ref.Fault(r, tc.on)
			assert.Equal(t, tc.want, got, "the placed fault")
			assert.Equal(t, tc.draws, r.draws, "the draws, in order, with their labels and ranges")
		})
	}

	bare := *ref
	bare.Standby, bare.Links = nil, nil
	for _, k := range []sim.Kind{sim.Restart, sim.Message} {
		r := &script{}
		assert.Nil(t, bare.Fault(r, []sim.Kind{k}), "%s without standbys or links places nothing", k)
		assert.Equal(t, []string{"placed-kind/1"}, r.draws, "%s without standbys or links draws only its kind", k)
	}
}

// TestRefRecorder: sends count on their links (sorted; a link says whether
// it carried datagrams), a watched node's
// other events are its protocol events, nothing after Until counts, and a
// node that made no blocking call is left out.
func TestRefRecorder(t *testing.T) {
	w := sim.New(sim.Config{})
	rec := sim.NewRefRecorder(ms(500), []time.Duration{time.Second})
	rec.Watch(w, []string{"a", "b"})
	for _, e := range []traces.Event{
		{T: int64(ms(10)), Kind: "send", Node: "b", Text: "send b->a x"},
		{T: int64(ms(20)), Kind: "send", Node: "a", Msg: &traces.Msg{From: "a", To: "b", Conn: 3}}, // over a connection
		{T: int64(ms(30)), Kind: "commit", Node: "a"},
		{T: int64(ms(40)), Kind: "commit", Node: "z"}, // not watched
		{T: int64(ms(50)), Kind: "send", Node: "b", Text: "send b->a y"},
		{T: int64(ms(600)), Kind: "commit", Node: "b"},                                     // past Until
		{T: int64(ms(600)), Kind: "send", Node: "a", Msg: &traces.Msg{From: "a", To: "b"}}, // past Until
	} {
		rec.Record(&e)
	}
	ref := rec.Reference([]string{"s"})
	want := &sim.Reference{
		Standby: []string{"s"},
		Links: []sim.LinkRef{
			{From: "a", To: "b", At: []clock.Time{ms(20)}},                          // connections only
			{From: "b", To: "a", At: []clock.Time{ms(10), ms(50)}, Datagrams: true}, // datagrams
		},
		End:      ms(30),
		Until:    ms(500),
		Timeouts: []time.Duration{time.Second},
		Events:   []clock.Time{ms(30)},
		Nodes:    []sim.NodeRef{}, // neither node made a blocking call
	}
	assert.Equal(t, want, ref, "the reference")
}

// TestConnectionLinksNeverDup: a link whose messages all went over
// connections is never given a dup fate (a connection delivers each
// message once); a link that carried datagrams is.
func TestConnectionLinksNeverDup(t *testing.T) {
	for _, datagrams := range []bool{false, true} {
		ref := &sim.Reference{
			Links:    []sim.LinkRef{{From: "a", To: "b", At: []clock.Time{ms(100), ms(900)}, Datagrams: datagrams}},
			Until:    ms(1000),
			Timeouts: []time.Duration{time.Second},
		}
		fates := map[string]int{}
		for seed := uint64(1); seed <= 300; seed++ {
			for _, a := range ref.Fault(sim.NewPCG(seed).Stream("f"), []sim.Kind{sim.Message}) {
				fates[a.Arg]++
			}
		}
		assert.Positive(t, fates[sim.FateDrop], "datagrams %v: %v", datagrams, fates)
		assert.Positive(t, fates[sim.FateDelay], "datagrams %v: %v", datagrams, fates)
		assert.Equal(t, datagrams, fates[sim.FateDup] > 0, "datagrams %v: %v", datagrams, fates)
	}
}
