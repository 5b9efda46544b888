package sim_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type echoReq struct{ N int }
type echoRep struct{ N int }

func (r echoReq) String() string { return fmt.Sprintf("req %d", r.N) }
func (r echoRep) String() string { return fmt.Sprintf("rep %d", r.N) }

// server answers every request after a delay, in a process per request.
func server(delay time.Duration) sim.Factory {
	return func(string, *sim.Disk) sim.Node {
		return sim.Program(func(p *sim.Proc) {
			p.Handle(func(p *sim.Proc, m network.Message) {
				p.Sleep(delay, "think")
				p.SendConn(m.Conn, echoRep{N: m.Body.(echoReq).N})
			})
		})
	}
}

// client calls the server n times in a row with a timeout, noting each
// outcome; log collects what ran, across incarnations.
type client struct {
	log     *[]string
	n       int
	timeout time.Duration
}

func (c client) factory(name string, disk *sim.Disk) sim.Node {
	return sim.Program(func(p *sim.Proc) {
		conn := p.Dial("server")
		for i := 1; i <= c.n; i++ {
			p.SendConn(conn, echoReq{N: i})
			m, err := p.Recv(conn, c.timeout, fmt.Sprintf("call %d", i))
			switch {
			case err != nil:
				*c.log = append(*c.log, fmt.Sprintf("%v %d: %v", p.Now(), i, err))
				p.Close(conn)
				conn = p.Dial("server")
			default:
				*c.log = append(*c.log, fmt.Sprintf("%v %d: %v", p.Now(), i, m.Body))
			}
		}
		*c.log = append(*c.log, "done")
	})
}

func world(t *testing.T, sched sim.Schedule, log *[]string, rec sim.Recorder) *sim.World {
	w := sim.New(sim.Config{Entropy: sim.NewPCG(1), Network: network.Policy{DelayMin: time.Millisecond, DelayMax: time.Millisecond},
		Schedule: sched, Recorder: rec, Limits: sim.Limits{MaxTime: clock.Time(time.Minute), MaxEvents: 100_000}})
	w.Add("server", server(10*time.Millisecond))
	w.Add("client", client{log: log, n: 3, timeout: time.Second}.factory)
	t.Cleanup(w.Close)
	return w
}

func TestProcessCallsInSequence(t *testing.T) {
	var log []string
	w := world(t, nil, &log, nil)
	require.NoError(t, w.Run())
	assert.Equal(t, []string{"0.012s 1: rep 1", "0.024s 2: rep 2", "0.036s 3: rep 3", "done"}, log,
		"each call waits for its reply: 1 ms there, 10 ms thinking, 1 ms back")
}

func TestProcessTimeoutAndBrokenConnection(t *testing.T) {
	var log []string
	// The server is paused for the first call (timeout), then crashes during
	// the third (the connection breaks).
	w := world(t, sim.Schedule{
		{At: 0, Kind: sim.Pause, Node: "server"},
		{At: clock.Time(1500 * time.Millisecond), Kind: sim.Resume, Node: "server"},
		{At: clock.Time(1505 * time.Millisecond), Kind: sim.Crash, Node: "server"},
	}, &log, nil)
	require.NoError(t, w.Run())
	require.Len(t, log, 4)
	assert.Equal(t, "1.000s 1: timeout", log[0])
	assert.Contains(t, log[1], "2: connection broken", "the redial lands while the server is paused, then it crashes")
}

// TestCrashUnwindsEveryProcess: a crash stops each process in its blocking
// call; no code after the yield runs, and a restart starts main again.
func TestCrashUnwindsEveryProcess(t *testing.T) {
	var log []string
	f := func(string, *sim.Disk) sim.Node {
		return sim.Program(func(p *sim.Proc) {
			log = append(log, fmt.Sprintf("%v start", p.Now()))
			p.Go("ticker", func(p *sim.Proc) {
				for {
					p.Sleep(time.Second, "tick")
					log = append(log, fmt.Sprintf("%v tick", p.Now()))
				}
			})
			var q sim.Queue[int]
			_, err := q.Get(p, 0, "forever")
			log = append(log, fmt.Sprintf("main woke: %v", err)) // never
		})
	}
	w := sim.New(sim.Config{Entropy: sim.NewPCG(1), Schedule: sim.Schedule{
		{At: clock.Time(2500 * time.Millisecond), Kind: sim.Crash, Node: "n"},
		{At: clock.Time(3 * time.Second), Kind: sim.Restart, Node: "n"},
	}, Limits: sim.Limits{MaxTime: clock.Time(4200 * time.Millisecond)}})
	w.Add("n", f)
	require.NoError(t, w.Run())
	w.Close()
	assert.Equal(t, []string{"0.000s start", "1.000s tick", "2.000s tick", "3.000s start", "4.000s tick"}, log)
}

// TestQueueHandsItemsInOrder: Put never blocks; waiting processes get items
// first come, first served; a timeout leaves the queue as it was.
func TestQueueHandsItemsInOrder(t *testing.T) {
	var log []string
	f := func(string, *sim.Disk) sim.Node {
		return sim.Program(func(p *sim.Proc) {
			var q sim.Queue[string]
			for _, name := range []string{"a", "b"} {
				p.Go(name, func(p *sim.Proc) {
					for {
						v, err := q.Get(p, 1500*time.Millisecond, "get")
						log = append(log, fmt.Sprintf("%v %s %q %v", p.Now(), p.Name(), v, err))
						if err != nil {
							return
						}
					}
				})
			}
			p.Sleep(time.Second, "wait")
			q.Put("x")
			q.Put("y")
			q.Put("z")
		})
	}
	w := sim.New(sim.Config{Entropy: sim.NewPCG(1)})
	w.Add("n", f)
	require.NoError(t, w.Run())
	w.Close()
	assert.Equal(t, []string{`1.000s a "x" <nil>`, `1.000s a "z" <nil>`, `1.000s b "y" <nil>`,
		`2.500s a "" timeout`, `2.500s b "" timeout`}, log, "x and y are handed to the waiters; z waits in the queue, and a, which runs first, takes it")
}

type textRec struct{ lines []string }

func (r *textRec) Record(e *traces.Event) {
	r.lines = append(r.lines, fmt.Sprintf("%s %s %s", e.Node, e.Kind, e.Desc()))
}

// TestCrashYieldCrashesAtTheNthBlockingCall: the fault names no place in
// the code; the trace names the blocking call it hit.
func TestCrashYieldCrashesAtTheNthBlockingCall(t *testing.T) {
	var log []string
	rec := &textRec{}
	// The client's blocking calls: dial (1) and call 1 (2) run at its start,
	// before the fault is armed at time 0; the first one after it is call 2.
	w := world(t, sim.Schedule{{At: 0, Kind: sim.CrashYield, Node: "client", Count: 1}}, &log, rec)
	require.NoError(t, w.Run())
	assert.Equal(t, []string{"0.012s 1: rep 1"}, log, "the crash at the first blocking call after the arming stops the client in call 2")
	var hit string
	for _, l := range rec.lines {
		if strings.Contains(l, "crash at blocking call") {
			hit = l
		}
	}
	assert.Equal(t, "client fault crash at blocking call 3: call 2", hit)
	// The same label as a named crash point.
	log = nil
	w = world(t, sim.Schedule{{At: 0, Kind: sim.CrashAt, Node: "client", Point: "call 3"}}, &log, nil)
	require.NoError(t, w.Run())
	assert.Equal(t, []string{"0.012s 1: rep 1", "0.024s 2: rep 2"}, log)
}

// TestClosedWorldsLeaveNoCoroutines: memory stays flat in the number of runs.
func TestClosedWorldsLeaveNoCoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	for i := 0; i < 200; i++ {
		var log []string
		w := sim.New(sim.Config{Entropy: sim.NewPCG(uint64(i)), Limits: sim.Limits{MaxTime: clock.Time(5 * time.Millisecond)}})
		w.Add("server", server(time.Hour))
		w.Add("client", client{log: &log, n: 3}.factory)
		require.NoError(t, w.Run())
		w.Close()
	}
	runtime.GC()
	assert.LessOrEqual(t, runtime.NumGoroutine(), before+2, "every process of a closed world is unwound")
}

// TestCrashPointDiscardsWhatDefersAsk: effects before a crash point are
// carried out; what deferred calls ask for while the process unwinds is not.
func TestCrashPointDiscardsWhatDefersAsk(t *testing.T) {
	rec := &textRec{}
	f := func(string, *sim.Disk) sim.Node {
		return sim.Program(func(p *sim.Proc) {
			p.Send("peer", echoReq{N: 1})
			defer p.Send("peer", echoReq{N: 2})
			p.Point("here")
			p.Send("peer", echoReq{N: 3})
		})
	}
	// The node starts after the fault is armed: a restart at 1 ms.
	w := sim.New(sim.Config{Entropy: sim.NewPCG(1), Recorder: rec, Limits: sim.Limits{MaxTime: clock.Time(time.Second)},
		Schedule: sim.Schedule{{At: 0, Kind: sim.CrashAt, Node: "n", Point: "here"}, {At: clock.Time(time.Millisecond), Kind: sim.Restart, Node: "n"}}})
	w.Add("peer", server(time.Second))
	w.Add("n", f, sim.Down())
	require.NoError(t, w.Run())
	w.Close()
	var sent []string
	for _, l := range rec.lines {
		if strings.HasPrefix(l, "n send") {
			sent = append(sent, l[strings.LastIndex(l, " ")+1:])
		}
	}
	assert.Equal(t, []string{"1"}, sent, "only the send before the crash point goes out")
}

// TestReusedProcessIgnoresItsPredecessorsWaits: a finished process's struct
// is reused by the next spawn; what its last wait left behind (the timer of
// a wait a queue item ended early) must not reach the new process, and the
// trace's timer text names the wait of the process that really waits.
func TestReusedProcessIgnoresItsPredecessorsWaits(t *testing.T) {
	var log []string
	mem := &traces.Memory{}
	w := sim.New(sim.Config{Entropy: sim.NewPCG(1), Recorder: mem, Limits: sim.Limits{MaxTime: clock.Time(time.Minute), MaxEvents: 10_000}})
	w.Add("n", func(string, *sim.Disk) sim.Node {
		return sim.Program(func(p *sim.Proc) {
			var q sim.Queue[int]
			p.Go("first", func(p *sim.Proc) {
				// Woken by the item at 1 s, long before its 10 s timeout.
				v, err := q.Get(p, 10*time.Second, "get")
				log = append(log, fmt.Sprintf("%v first got %d %v", p.Now(), v, err))
			})
			p.Sleep(time.Second, "before put")
			q.Put(7)
			p.Yield("handoff") // first finishes: its struct is free
			p.Go("second", func(p *sim.Proc) {
				_, err := q.Get(p, 20*time.Second, "second get")
				log = append(log, fmt.Sprintf("%v second %v", p.Now(), err))
			})
			p.Sleep(30*time.Second, "after")
		})
	})
	t.Cleanup(w.Close)
	require.NoError(t, w.Run())
	assert.Equal(t, []string{"1.000s first got 7 <nil>", "21.000s second timeout"}, log,
		"the first process's cancelled 10 s timer does not wake the second at 11 s")
	var timers []string
	for _, e := range mem.Events {
		if e.Kind == "timer" {
			timers = append(timers, e.Desc())
		}
	}
	assert.Contains(t, strings.Join(timers, "\n"), "second: second get")
	assert.NotContains(t, strings.Join(timers, "\n"), "first: get")
}

// TestNoteIsItsOwnGuard: Proc.Note needs no guard at its call site. Without
// a recorder nothing is recorded; a kind the Filter refuses is left out but
// keeps its event number, so the events after it are numbered as in the
// full record of the same run; and a kept note's text is built only when
// read (Desc), its event the full record's all the same.
func TestNoteIsItsOwnGuard(t *testing.T) {
	rendered := 0
	noter := func(string, *sim.Disk) sim.Node {
		return sim.Program(func(p *sim.Proc) {
			for i := range 3 {
				p.Note(countedNote{"kept", i, &rendered})
				p.Note(countedNote{"refused", i, &rendered})
				p.Sleep(time.Second, "tick")
			}
		})
	}
	run := func(rec sim.Recorder, filter func(string) bool) {
		w := sim.New(sim.Config{Entropy: sim.NewPCG(1), Recorder: rec, Filter: filter})
		w.Add("n", noter)
		t.Cleanup(w.Close)
		require.NoError(t, w.Run())
	}
	lines := func(m *traces.Memory, skip string) []string {
		var out []string
		for _, e := range m.Events {
			if e.Kind != skip {
				out = append(out, fmt.Sprintf("%d %s %s", e.Seq, e.Kind, e.Desc()))
			}
		}
		return out
	}
	run(nil, nil)
	assert.Zero(t, rendered, "no note's text is built when nothing records")
	full, filtered := &traces.Memory{}, &traces.Memory{}
	run(full, nil)
	built := rendered
	run(filtered, func(kind string) bool { return kind != "refused" })
	assert.Equal(t, built, rendered, "a record that is the checkers' alone (a Filter) builds no note's text")
	for _, e := range filtered.Events {
		if e.Kind == "kept" {
			assert.True(t, e.TextOfValue && e.Text == "", "#%d: its text is left to its value", e.Seq)
		}
	}
	assert.Len(t, lines(full, ""), len(lines(full, "refused"))+3, "the full record has the three refused notes")
	assert.Equal(t, lines(full, "refused"), lines(filtered, ""),
		"the filtered record is the full one without the refused notes, numbered the same")
}

// countedNote is a note that counts how often its text is built.
type countedNote struct {
	kind     string
	i        int
	rendered *int
}

func (n countedNote) Kind() string { return n.kind }

func (n countedNote) String() string {
	*n.rendered++
	return fmt.Sprint(n.kind, " ", n.i)
}

// TestNoDeliveryToTheNextIncarnation: a request sent on a connection while
// its server was down, and held up past the server's restart, is not
// handed to the new incarnation: nothing listened when it was sent, the
// connection was refused, and the client hears that it broke (found in
// system B, heavy faults, seed 28007935: a handler's BEGIN and INSERT sent
// while the database was down opened a session of the restarted database
// that no client closed, and its transaction held a lock to the end).
func TestNoDeliveryToTheNextIncarnation(t *testing.T) {
	var log []string
	mem := &traces.Memory{}
	w := sim.New(sim.Config{Entropy: sim.NewPCG(1), Network: network.Policy{DelayMin: 3 * time.Second, DelayMax: 3 * time.Second},
		Schedule: sim.Schedule{
			{At: clock.Time(time.Second), Kind: sim.Crash, Node: "server"},
			{At: clock.Time(3 * time.Second), Kind: sim.Restart, Node: "server"},
		},
		Recorder: mem, Limits: sim.Limits{MaxTime: clock.Time(time.Minute), MaxEvents: 100_000}})
	w.Add("server", server(0))
	w.Add("client", func(string, *sim.Disk) sim.Node {
		return sim.Program(func(p *sim.Proc) {
			p.Sleep(2*time.Second, "wait for the crash")
			conn := p.Dial("server")
			p.SendConn(conn, echoReq{N: 1})
			_, err := p.Recv(conn, 10*time.Second, "call")
			log = append(log, fmt.Sprintf("%v: %v", p.Now(), err))
		})
	})
	t.Cleanup(w.Close)
	require.NoError(t, w.Run())
	require.Len(t, log, 1)
	assert.NotContains(t, log[0], "timeout", "the client hears of the refusal, not a timeout")
	assert.Equal(t, "5.000s: connection broken", log[0], "when the request reached the restarted server")
	for _, e := range mem.Events {
		assert.False(t, e.Node == "server" && e.Kind == "deliver", "delivered to the new incarnation: %s", e.Desc())
	}
}
