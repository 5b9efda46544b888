package sim_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
)

// msgFault hits the n-th message from -> to, counted from the run's start.
func msgFault(from, to, fate string, n int, amount time.Duration) sim.Action {
	return sim.Action{At: 0, Kind: sim.Message, Node: from, Peer: to, Arg: fate, Count: n, Amount: amount, FromStart: true}
}

// TestMessageFaultHitsTheNthMessage: a message fault picks one message of
// a link by its number and decides its fate as a connection (TCP) allows
// it: a lost message breaks the connection, a copy never arrives, a delay
// holds the messages behind it; nothing else changes.
func TestMessageFaultHitsTheNthMessage(t *testing.T) {
	run := func(a ...sim.Action) ([]string, []string) {
		var log []string
		rec := &textRec{}
		w := world(t, a, &log, rec)
		require.NoError(t, w.Run())
		return log, rec.lines
	}
	clean, _ := run()
	require.Equal(t, []string{"0.012s 1: rep 1", "0.024s 2: rep 2", "0.036s 3: rep 3", "done"}, clean)

	log, lines := run(msgFault("client", "server", sim.FateDrop, 2, 0))
	assert.Equal(t, []string{"0.012s 1: rep 1", "0.012s 2: connection broken", "0.024s 3: rep 3", "done"}, log,
		"request 2 is lost and its connection breaks: the call fails at once, the next one redials")
	assert.Contains(t, strings.Join(lines, "\n"), "client fault message #3 to server: drop")

	log, _ = run(msgFault("server", "client", sim.FateDup, 1, 0))
	assert.Equal(t, clean, log, "a connection never delivers a message twice: the dup fate does nothing on one")

	log, lines = run(msgFault("client", "server", sim.FateDelay, 2, 3*time.Second))
	assert.Equal(t, []string{"0.012s 1: rep 1", "1.012s 2: timeout", "1.024s 3: rep 3", "done"}, log, "request 2 arrives after the call gave up")
	assert.Contains(t, strings.Join(lines, "\n"), "server deliver #3 client->server conn=1 req 2", "the late request still reaches the server (its sender closed the connection gracefully)")

	// The same schedule gives the same trace.
	_, again := run(msgFault("client", "server", sim.FateDelay, 2, 3*time.Second))
	assert.Equal(t, lines, again)
}

// TestCrashYieldFromStartAndRestart: an arm from the start counts the
// start-up's blocking calls; a downtime restarts the node after the crash.
func TestCrashYieldFromStartAndRestart(t *testing.T) {
	var log []string
	rec := &textRec{}
	w := world(t, sim.Schedule{{At: 0, Kind: sim.CrashYield, Node: "client", Count: 1, For: 500 * time.Millisecond, FromStart: true}}, &log, rec)
	require.NoError(t, w.Run())
	text := strings.Join(rec.lines, "\n")
	assert.Contains(t, text, "client fault crash at blocking call 1: dial", "the first blocking call of the start-up")
	assert.Contains(t, text, "client fault @0.500s restart client", "restarted 500 ms after the crash")
	assert.Equal(t, []string{"0.512s 1: rep 1", "0.524s 2: rep 2", "0.536s 3: rep 3", "done"}, log)
	assert.Equal(t, uint64(4), w.Yields("client"), "dial and three calls, counted since the restart")
}

// countdown is a state machine that sets a timer of 1 s at its start and
// on every timer.
type countdown struct{ fired *int }

func (c countdown) Step(env *sim.Env, in sim.Input) {
	if in.Kind == sim.Timer {
		*c.fired++
	}
	env.After(time.Second, nil)
}

// TestCrashYieldOnStateMachine: a plain state machine's inputs are its
// blocking calls: the node crashes before its N-th input.
func TestCrashYieldOnStateMachine(t *testing.T) {
	for _, tc := range []struct {
		sched sim.Schedule
		fired int
	}{
		{nil, 5},
		{sim.Schedule{{At: 0, Kind: sim.CrashYield, Node: "n", Count: 3}}, 2},
	} {
		fired := 0
		w := sim.New(sim.Config{Entropy: sim.NewPCG(1), Schedule: tc.sched, Limits: sim.Limits{MaxTime: clock.Time(5500 * time.Millisecond)}})
		w.Add("n", func(string, *sim.Disk) sim.Node { return countdown{&fired} })
		require.NoError(t, w.Run())
		assert.Equal(t, tc.fired, fired, "schedule %s", tc.sched)
		if tc.sched == nil {
			assert.Equal(t, uint64(5), w.Yields("n"))
		}
	}
}

func TestMessageFaultValidation(t *testing.T) {
	nodes := []string{"a", "b"}
	for _, bad := range []sim.Action{
		{Kind: sim.Message, Node: "a", Peer: "b", Arg: "drop"},                                   // no count
		{Kind: sim.Message, Node: "a", Peer: "b", Arg: "lose", Count: 1},                         // unknown fate
		{Kind: sim.Message, Node: "a", Peer: "b", Arg: "delay", Count: 1},                        // no amount
		{Kind: sim.Message, Node: "a", Arg: "drop", Count: 1},                                    // no peer
		{At: 5, Kind: sim.Message, Node: "a", Peer: "b", Arg: "drop", Count: 1, FromStart: true}, // from start, not at 0
		{Kind: sim.Crash, Node: "a", FromStart: true},
		{Kind: sim.CrashYield, Node: "a", Count: 1, For: -time.Second},
	} {
		assert.Error(t, sim.Schedule{bad}.Validate(nodes), "%s", bad)
	}
	assert.NoError(t, sim.Schedule{msgFault("a", "b", sim.FateDelay, 3, time.Second)}.Validate(nodes))
}

// TestDieRestartsAfterItsDelay: a process that dies of its own doing
// crashes its node at once (nothing after Die runs), and a supervisor
// starts it again after the delay; with no delay it stays down.
func TestDieRestartsAfterItsDelay(t *testing.T) {
	for _, restart := range []time.Duration{2 * time.Second, 0} {
		var log []string
		rec := &textRec{}
		f := func(string, *sim.Disk) sim.Node {
			return sim.Program(func(p *sim.Proc) {
				log = append(log, p.Now().String()+" start")
				p.Sleep(time.Second, "work")
				if len(log) < 3 {
					p.Die("poison", restart)
				}
				log = append(log, p.Now().String()+" survived")
			})
		}
		w := sim.New(sim.Config{Entropy: sim.NewPCG(1), Recorder: rec, Limits: sim.Limits{MaxTime: clock.Time(time.Minute), MaxEvents: 1000}})
		w.Add("n", f)
		require.NoError(t, w.Run())
		w.Close()
		if restart == 0 {
			assert.Equal(t, []string{"0.000s start"}, log, "no supervisor: the node stays down")
			assert.False(t, w.Up("n"))
			continue
		}
		assert.Equal(t, []string{"0.000s start", "3.000s start", "6.000s start", "7.000s survived"}, log, "dies at 1 s and 4 s, each time restarted 2 s later; the third life survives")
		text := strings.Join(rec.lines, "\n")
		assert.Contains(t, text, "n fault died: poison")
		assert.Contains(t, text, "restart n")
	}
}

// TestPauseYieldFreezesAtTheNthBlockingCall: a pause-yield freezes the node
// at its N-th blocking call for its duration; its calls time out meanwhile
// and it goes on after, without a restart.
func TestPauseYieldFreezesAtTheNthBlockingCall(t *testing.T) {
	var log []string
	rec := &textRec{}
	w := world(t, sim.Schedule{{At: 0, Kind: sim.PauseYield, Node: "server", Count: 2, For: 3 * time.Second, FromStart: true}}, &log, rec)
	require.NoError(t, w.Run())
	text := strings.Join(rec.lines, "\n")
	assert.Contains(t, text, "server fault freeze at blocking call 2 for 3s")
	assert.NotContains(t, text, "restart server")
	require.Len(t, log, 4)
	assert.Equal(t, "0.012s 1: rep 1", log[0])
	assert.Contains(t, log[1], "2: timeout", "the frozen server does not answer within the call's second")
	s := sim.Schedule{{At: 0, Kind: sim.PauseYield, Node: "server", Count: 1}}
	assert.ErrorContains(t, s.Validate([]string{"server"}), "positive \"for\"")
}

// TestPauseAtFreezesAtThePoint: a pause-at freezes the node the moment a
// process passes the named point: that process goes on only when the node
// thaws, and the node's other processes wait too (a timer due meanwhile
// fires at the thaw).
func TestPauseAtFreezesAtThePoint(t *testing.T) {
	var log []string
	rec := &textRec{}
	f := func(string, *sim.Disk) sim.Node {
		return sim.Program(func(p *sim.Proc) {
			p.Go("ticker", func(p *sim.Proc) {
				for i := 0; i < 3; i++ {
					p.Sleep(time.Second, "tick")
					log = append(log, p.Now().String()+" tick")
				}
			})
			p.Sleep(500*time.Millisecond, "work")
			p.Point("mid")
			log = append(log, p.Now().String()+" after mid")
		})
	}
	s := sim.Schedule{{At: 0, Kind: sim.PauseAt, Node: "n", Point: "mid", For: 2 * time.Second}}
	w := sim.New(sim.Config{Entropy: sim.NewPCG(1), Schedule: s, Recorder: rec, Limits: sim.Limits{MaxTime: clock.Time(time.Minute), MaxEvents: 1000}})
	w.Add("n", f)
	require.NoError(t, w.Run())
	w.Close()
	assert.ElementsMatch(t, []string{"2.500s after mid", "2.500s tick", "3.500s tick", "4.500s tick"}, log, "frozen from 0.5 s to 2.5 s at the point; the tick due at 1 s fires at the thaw")
	assert.Contains(t, strings.Join(rec.lines, "\n"), "n fault freeze at crash point mid for 2s")
	bad := sim.Schedule{{Kind: sim.PauseAt, Node: "n", Point: "mid"}}
	assert.ErrorContains(t, bad.Validate([]string{"n"}), "positive \"for\"")
}

// TestPauseAtWithPeerEndsTheIdlestConnection: a pause-at with a peer ends,
// as the node freezes, its one connection to the peer idle longest (a
// stalled leader's lock session), and no other: the connection in use
// goes on carrying the frozen process's requests after the thaw; a
// pause-at without a peer breaks nothing.
func TestPauseAtWithPeerEndsTheIdlestConnection(t *testing.T) {
	run := func(peer string) []string {
		var log []string
		f := func(string, *sim.Disk) sim.Node {
			return sim.Program(func(p *sim.Proc) {
				call := func(conn network.ConnID, n int) string {
					if p.Broken(conn) {
						return fmt.Sprintf("%d: broken", n)
					}
					p.SendConn(conn, echoReq{N: n})
					m, err := p.Recv(conn, 10*time.Second, "call")
					if err != nil {
						return fmt.Sprintf("%d: %v", n, err)
					}
					return fmt.Sprintf("%d: %v", n, m.Body)
				}
				lock, work := p.Dial("server"), p.Dial("server")
				log = append(log, call(lock, 1)) // then idle
				p.Sleep(time.Second, "idle")
				log = append(log, call(work, 2))
				p.Point("mid")
				log = append(log, call(work, 3), call(lock, 4))
			})
		}
		s := sim.Schedule{{At: 0, Kind: sim.PauseAt, Node: "n", Peer: peer, Point: "mid", For: 2 * time.Second}}
		w := sim.New(sim.Config{Entropy: sim.NewPCG(1), Network: network.Policy{DelayMin: time.Millisecond, DelayMax: time.Millisecond},
			Schedule: s, Limits: sim.Limits{MaxTime: clock.Time(time.Minute), MaxEvents: 1000}})
		w.Add("server", server(0))
		w.Add("n", f)
		require.NoError(t, w.Run())
		w.Close()
		return log
	}
	assert.Equal(t, []string{"1: rep 1", "2: rep 2", "3: rep 3", "4: broken"}, run("server"), "the idle connection ended, the one in use did not")
	assert.Equal(t, []string{"1: rep 1", "2: rep 2", "3: rep 3", "4: rep 4"}, run(""), "without a peer the freeze breaks nothing")
	bad := sim.Schedule{{Kind: sim.PauseAt, Node: "n", Peer: "nobody", Point: "mid", For: time.Second}}
	assert.ErrorContains(t, bad.Validate([]string{"n"}), `peer "nobody" is not a node`)
}
