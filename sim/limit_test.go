package sim_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/sim/internal/ping"
	"github.com/fencesim/fencesim/traces"
)

// spinner re-arms a zero-delay timer forever: time never moves, the run
// never ends by MaxTime.
type spinner struct{}

func (spinner) Step(env *sim.Env, in sim.Input) {
	if in.Kind == sim.Start || in.Kind == sim.Timer {
		env.After(0, "spin")
	}
}

// flooder sends two datagrams per message it gets, to a peer that does the
// same: the messages in flight double until something stops them.
type flooder struct{ peer network.Addr }

func (f flooder) Step(env *sim.Env, in sim.Input) {
	switch in.Kind {
	case sim.Start, sim.Deliver:
		env.Send(f.peer, "flood")
		env.Send(f.peer, "flood")
	}
}

func TestEndlessRunHitsTheEventLimit(t *testing.T) {
	w := sim.New(sim.Config{Limits: sim.Limits{MaxTime: at(10 * sec), MaxEvents: 10_000, MaxPending: 1000}})
	w.Add("spin", func(string, *sim.Disk) sim.Node { return spinner{} })
	err := w.Run()
	require.Error(t, err, "a run that re-arms a zero-delay timer forever must end")
	assert.ErrorIs(t, err, sim.ErrBudget, "every budget error is an ErrBudget")
	le, ok := sim.IsLimit(err)
	require.True(t, ok, "the error is a *sim.LimitError: %v", err)
	assert.Equal(t, "events", le.Limit)
	assert.Equal(t, uint64(10_000), le.Events)
	assert.Regexp(t, `^limit hit: events: 10000 events run by 0\.000s, 1 pending \(a livelock\? raise Limits\.MaxEvents\)$`, err.Error())
	assert.Zero(t, w.Now(), "the time never moved")
}

func TestFloodHitsThePendingLimit(t *testing.T) {
	w := sim.New(sim.Config{
		Network: network.Policy{DelayMin: time.Millisecond, DelayMax: time.Millisecond},
		Limits:  sim.Limits{MaxTime: at(time.Hour), MaxEvents: 10_000_000, MaxPending: 5000},
	})
	w.Add("a", func(string, *sim.Disk) sim.Node { return flooder{"b"} })
	w.Add("b", func(string, *sim.Disk) sim.Node { return flooder{"a"} })
	err := w.Run()
	require.Error(t, err, "a flood must end before it exhausts memory")
	le, ok := sim.IsLimit(err)
	require.True(t, ok, "the error is a *sim.LimitError: %v", err)
	assert.Equal(t, "pending", le.Limit)
	assert.Greater(t, le.Pending, 5000)
	assert.Less(t, le.Events, uint64(100_000), "it fires long before the event budget")
	assert.True(t, errors.Is(err, sim.ErrBudget))
	assert.Contains(t, err.Error(), "limit hit: pending: ")
	assert.Contains(t, err.Error(), "raise Limits.MaxPending")
	assert.Equal(t, w.PeakPending(), le.Pending)
}

func TestHealthyPingStaysFarBelowThePendingBound(t *testing.T) {
	w, _ := record(t, 8, nil, 10*sec)
	assert.Less(t, w.PeakPending(), 100, "8 pingers hold a few dozen events and messages")
	assert.Less(t, w.PeakPending(), sim.DefaultMaxPending/1000)
}

// TestLazyTraceIsTheEagerTrace: the kernel records message texts and note
// data lazily (traces.Event.Msg, Value); the JSON lines written and the
// canonical hash must be byte for byte those of the eagerly rendered events
// (what the kernel recorded before it was lazy).
func TestLazyTraceIsTheEagerTrace(t *testing.T) {
	sched := sim.Schedule{
		{At: at(2 * sec), Kind: sim.Crash, Node: "p1"},
		{At: at(3 * sec), Kind: sim.Restart, Node: "p1"},
		{At: at(4 * sec), Kind: sim.Dup, Rate: 500_000, For: 2 * sec},
	}
	_, evs := record(t, 4, sched, 8*sec)
	msgs, values := 0, 0
	for _, e := range evs {
		if e.Msg != nil {
			msgs++
		}
		if e.Value != nil && len(e.Data) == 0 {
			values++
		}
	}
	require.Greater(t, msgs, 100, "ping's bodies are plain values: their texts wait")
	require.Greater(t, values, 10, "ping's recv notes wait for their JSON")

	eager := make([]traces.Event, len(evs))
	for i, e := range evs {
		// The eager rendering, as the kernel did it: fmt for the message
		// text, json.Marshal for the data.
		if e.Msg != nil {
			m := e.Msg
			e.Text = fmt.Sprintf("#%d %s->%s", m.ID, m.From, m.To)
			if m.Conn != 0 {
				e.Text += fmt.Sprintf(" conn=%d", m.Conn)
			}
			e.Text += fmt.Sprintf(" %v", m.Body)
			e.Msg = nil
		}
		if e.Value != nil && len(e.Data) == 0 {
			b, err := json.Marshal(e.Value)
			require.NoError(t, err)
			e.Data = b
		}
		e.Value = nil
		eager[i] = e
	}
	h := traces.Header{System: "ping", Seed: 1, Entropy: "pcg"}
	var lz, eg bytes.Buffer
	write := func(buf *bytes.Buffer, evs []traces.Event) string {
		tw, err := traces.NewWriter(buf, h)
		require.NoError(t, err)
		for i := range evs {
			tw.Record(&evs[i])
		}
		require.NoError(t, tw.Close())
		return tw.Hash()
	}
	lh, eh := write(&lz, evs), write(&eg, eager)
	require.Equal(t, eg.String(), lz.String(), "the JSON lines of the lazy events are the eager ones")
	assert.Equal(t, eh, lh)
	assert.Equal(t, eh, traces.HashOf(h, evs), "HashOf renders the lazy parts too")
	hs, he := traces.NewDigest(traces.HashV1, nil, nil), traces.NewDigest(traces.HashV1, nil, nil)
	for i := range evs {
		hs.Record(&evs[i])
		he.Record(&eager[i])
	}
	sumS, _ := hs.Sum()
	sumE, _ := he.Sum()
	assert.Equal(t, sumE, sumS)
	assert.True(t, traces.Compare(eager, evs).Identical, "a replay of an old trace compares identical")
	for i := range evs {
		assert.Equal(t, eager[i].String(), evs[i].String())
	}
	// Reading the file back gives the eager events.
	_, back, err := traces.ReadAll(&lz)
	require.NoError(t, err)
	assert.True(t, traces.Compare(back, evs).Identical)
	traces.Fill(evs)
	for i := range evs {
		require.False(t, evs[i].Lazy())
		assert.Equal(t, eager[i].Text, evs[i].Text)
		assert.Equal(t, string(eager[i].Data), string(evs[i].Data))
	}
}

// reuser sends a body that shares memory with its sender and then changes
// it (a reused buffer): the trace shows the body as it was when sent and
// when delivered, not as it is at the end.
type reuser struct{ buf []string }

type shared struct{ Words []string }

func (s shared) String() string { return strings.Join(s.Words, " ") }

func (r *reuser) Step(env *sim.Env, in sim.Input) {
	if in.Kind == sim.Start && env.Self() == "a" {
		r.buf = append(r.buf[:0], "first")
		env.Send("b", shared{r.buf})
		env.After(time.Second, nil)
	}
	if in.Kind == sim.Timer {
		r.buf[0] = "overwritten"
	}
}

func TestSharedBodyIsRenderedWhenRecorded(t *testing.T) {
	mem := &traces.Memory{}
	w := sim.New(sim.Config{Recorder: mem, Network: network.Policy{DelayMin: time.Millisecond, DelayMax: time.Millisecond}})
	w.Add("a", func(string, *sim.Disk) sim.Node { return &reuser{} })
	w.Add("b", func(string, *sim.Disk) sim.Node { return &reuser{} })
	require.NoError(t, w.Run())
	var texts []string
	for _, e := range mem.Events {
		if e.Kind == "send" || e.Kind == "deliver" {
			texts = append(texts, e.Kind+" "+e.Desc())
		}
	}
	assert.Equal(t, []string{"send #1 a->b first", "deliver #1 a->b first"}, texts)
}

func TestFilterIsAskedOncePerKind(t *testing.T) {
	asked := map[string]int{}
	mem := &traces.Memory{}
	cfg := pingConfig(3, nil, mem)
	cfg.Limits.MaxTime = at(5 * sec)
	cfg.Filter = func(kind string) bool { asked[kind]++; return kind == "recv" || kind == "crash" }
	w := ping.World(4, 100*time.Millisecond, cfg)
	require.NoError(t, w.Run())
	for k, n := range asked {
		assert.Equal(t, 1, n, "kind %q asked %d times", k, n)
	}
	require.NotEmpty(t, mem.Events)
	for _, e := range mem.Events {
		assert.Contains(t, []string{"recv", "crash"}, e.Kind, "a refused kind is not recorded")
	}
}
