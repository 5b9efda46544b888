package ping

import (
	"fmt"
	"time"

	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
)

// Ping asks a peer for a Pong.
type Ping struct {
	From network.Addr
	Seq  uint64
}

func (p Ping) String() string { return fmt.Sprintf("ping %s/%d", p.From, p.Seq) }

// Pong answers a Ping.
type Pong struct{ Seq uint64 }

func (p Pong) String() string { return fmt.Sprintf("pong %d", p.Seq) }

// Beat travels on the keep-alive connection.
type Beat struct{ N uint64 }

func (b Beat) String() string { return fmt.Sprintf("beat %d", b.N) }

// Recv is the trace data of a received ping.
type Recv struct {
	From string `json:"from"`
	Seq  uint64 `json:"seq"`
}

type tick struct{}

func (tick) String() string { return "tick" }

type redial struct{}

func (redial) String() string { return "redial" }

// Node is one pinger.
type Node struct {
	peers  []network.Addr
	next   network.Addr
	period time.Duration
	seq    uint64
	beats  uint64
	conn   network.ConnID
	Pongs  uint64 // replies counted since the last start, plus what the disk held
	Beats  uint64 // beats received on connections
	Broken int    // connection breaks seen
}

// Factory returns a factory for a pinger that pings peers every period.
func Factory(peers []network.Addr, period time.Duration) sim.Factory {
	return func(name string, disk *sim.Disk) sim.Node {
		n := &Node{period: period}
		for i, p := range peers {
			if p == network.Addr(name) {
				n.next = peers[(i+1)%len(peers)]
				continue
			}
			n.peers = append(n.peers, p)
		}
		if v, ok := disk.Get("pongs"); ok {
			n.Pongs = v.(uint64)
		}
		if v, ok := disk.Get("seq"); ok {
			n.seq = v.(uint64)
		}
		return n
	}
}

// Step implements sim.Node.
func (n *Node) Step(env *sim.Env, in sim.Input) {
	switch in.Kind {
	case sim.Start:
		n.dial(env)
		env.After(n.jitter(env), tick{})
	case sim.Timer:
		switch in.Tag.(type) {
		case tick:
			if len(n.peers) > 0 {
				to := n.peers[env.Rand().Uint64n("peer", uint64(len(n.peers)))]
				n.seq++
				env.Disk().Put("seq", n.seq) // durable, so a restart never reuses a sequence number
				env.Send(to, Ping{From: env.Self(), Seq: n.seq})
			}
			if n.conn != 0 {
				n.beats++
				env.SendConn(n.conn, Beat{N: n.beats})
			}
			env.After(n.jitter(env), tick{})
		case redial:
			n.dial(env)
		}
	case sim.Deliver:
		switch m := in.Msg.Body.(type) {
		case Ping:
			if env.Recording() {
				env.Note("recv", m.String(), Recv{From: string(m.From), Seq: m.Seq})
			}
			env.Send(m.From, Pong{Seq: m.Seq})
		case Pong:
			n.Pongs++
			env.Disk().Put("pongs", n.Pongs)
		case Beat:
			n.Beats++
		}
	case sim.ConnBroken:
		n.Broken++
		if in.Conn == n.conn {
			n.conn = 0
			env.After(time.Second, redial{})
		}
	}
}

func (n *Node) dial(env *sim.Env) {
	if n.next != "" && n.next != env.Self() {
		n.conn = env.Dial(n.next)
	}
}

func (n *Node) jitter(env *sim.Env) time.Duration {
	return n.period + time.Duration(env.Rand().Uint64n("jitter", uint64(n.period/2)+1))
}

var _ sim.Node = (*Node)(nil)

// World builds a world of n pingers named p0..p(n-1).
func World(n int, period time.Duration, cfg sim.Config) *sim.World {
	w := sim.New(cfg)
	names := Names(n)
	addrs := make([]network.Addr, n)
	for i, s := range names {
		addrs[i] = network.Addr(s)
	}
	for _, s := range names {
		w.Add(s, Factory(addrs, period))
	}
	return w
}

// Names returns p0..p(n-1).
func Names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("p%d", i)
	}
	return out
}
