package report_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// A tiny replicated register, written with the public sim API only, so the
// tests render events the real kernel produced: a primary takes client puts
// on a timer, writes them to its database, and replicates them to backups
// over datagrams; backups write and acknowledge; the primary commits on a
// majority. It keeps a connection to the first backup for heartbeats.

type put struct {
	Key string
	N   uint64
}

func (p put) String() string { return fmt.Sprintf("put %s=%d", p.Key, p.N) }

type ack struct{ N uint64 }

func (a ack) String() string { return fmt.Sprintf("ack %d", a.N) }

type beat struct{ N uint64 }

func (b beat) String() string { return fmt.Sprintf("beat %d", b.N) }

type tick struct{}

func (tick) String() string { return "tick" }

type primary struct {
	backups []network.Addr
	n       uint64
	acks    map[uint64]int
	conn    network.ConnID
}

func (p *primary) Step(env *sim.Env, in sim.Input) {
	switch in.Kind {
	case sim.Start:
		p.acks = map[uint64]int{}
		p.conn = env.Dial(p.backups[0])
		env.After(150*time.Millisecond, tick{})
	case sim.Timer:
		p.n++
		key := fmt.Sprintf("k%d", p.n%3)
		env.Note("call", fmt.Sprintf("client-%d put(%s, %d)", p.n%2, key, p.n), map[string]any{"op": "put", "key": key, "value": p.n})
		env.Note("db", fmt.Sprintf("INSERT INTO kv (k, v) VALUES ('%s', %d) ON CONFLICT (k) DO UPDATE SET v = excluded.v", key, p.n), nil)
		for _, b := range p.backups {
			env.Send(b, put{Key: key, N: p.n})
		}
		if p.conn != 0 {
			env.SendConn(p.conn, beat{N: p.n})
		}
		env.After(150*time.Millisecond, tick{})
	case sim.Deliver:
		if a, ok := in.Msg.Body.(ack); ok {
			p.acks[a.N]++
			if p.acks[a.N] == 1 { // a majority of three with the primary
				env.Note("commit", fmt.Sprintf("n=%d", a.N), nil)
				env.Note("return", fmt.Sprintf("client-%d put -> ok (n=%d)", a.N%2, a.N), nil)
			}
		}
	case sim.ConnBroken:
		p.conn = 0
	}
}

type backup struct{ last uint64 }

func (b *backup) Step(env *sim.Env, in sim.Input) {
	if in.Kind != sim.Deliver {
		return
	}
	if p, ok := in.Msg.Body.(put); ok {
		env.Note("db", fmt.Sprintf("UPDATE kv SET v = %d WHERE k = '%s'", p.N, p.Key), nil)
		if p.N > b.last {
			b.last = p.N
			env.Disk().Put("last", p.N)
		}
		env.Send(in.Msg.From, ack{N: p.N})
	}
}

var nodes = []string{"primary", "backup-1", "backup-2"}

func at(d time.Duration) clock.Time { return clock.Time(d) }

// schedule is a fault mix with one of each thing the timeline shades.
func schedule() sim.Schedule {
	return sim.Schedule{
		{At: at(1500 * time.Millisecond), Kind: sim.Loss, Node: "primary", Peer: "backup-2", Rate: 400_000, For: time.Second},
		{At: at(2 * time.Second), Kind: sim.Pause, Node: "backup-1"},
		{At: at(2800 * time.Millisecond), Kind: sim.Resume, Node: "backup-1"},
		{At: at(3500 * time.Millisecond), Kind: sim.Partition, Groups: [][]string{{"primary"}, {"backup-1", "backup-2"}}},
		{At: at(4500 * time.Millisecond), Kind: sim.Heal},
		{At: at(5 * time.Second), Kind: sim.Crash, Node: "backup-2"},
		{At: at(6 * time.Second), Kind: sim.Restart, Node: "backup-2"},
		{At: at(6500 * time.Millisecond), Kind: sim.Dup, Rate: 500_000, For: 800 * time.Millisecond},
	}
}

// run records the register under sched until the given time.
func run(t testing.TB, sched sim.Schedule, until time.Duration) (traces.Header, []traces.Event) {
	t.Helper()
	mem := &traces.Memory{}
	w := sim.New(sim.Config{
		Entropy:  sim.NewPCG(7),
		Network:  network.Policy{DelayMin: 2 * time.Millisecond, DelayMax: 40 * time.Millisecond, Loss: 30_000},
		Schedule: sched,
		Limits:   sim.Limits{MaxTime: at(until), MaxEvents: 5_000_000},
		Recorder: mem,
	})
	backups := []network.Addr{"backup-1", "backup-2"}
	w.Add("primary", func(string, *sim.Disk) sim.Node { return &primary{backups: backups} })
	w.Add("backup-1", func(string, *sim.Disk) sim.Node { return &backup{} })
	w.Add("backup-2", func(string, *sim.Disk) sim.Node { return &backup{} })
	require.NoError(t, w.Run(), "the test world must run to its time limit")
	design, _ := json.Marshal(map[string]any{"majority": 2, "fencing": false, "replicas": 2})
	h := traces.Header{
		Format: traces.Format, System: "register", Design: design, Seed: 7, Entropy: "pcg",
		Schedule: sched.JSON(), Limits: json.RawMessage(fmt.Sprintf(`{"max_time":%d}`, int64(until))),
	}
	return h, mem.Events
}
