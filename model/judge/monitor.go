package judge

import (
	"fmt"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// Monitor polls every arbiter's probe and raises an alert when the dispatch
// loop is stuck (A.4, A-S8): a claim is waiting and no dispatch round has
// completed (or nothing was paired while work was claimable) for longer than
// the threshold, or the probe went unanswered that long. One alert per
// episode and arbiter.
type Monitor struct {
	d        Design
	arbiters []network.Addr
	no       uint64
	answered map[network.Addr]clock.Time
	alerted  map[network.Addr]bool
}

// NewMonitor returns the monitor's factory.
func NewMonitor(d Design, arbiters []network.Addr) sim.Factory {
	return func(string, *sim.Disk) sim.Node {
		m := &Monitor{d: d, arbiters: arbiters, answered: map[network.Addr]clock.Time{}, alerted: map[network.Addr]bool{}}
		return sim.ProgramOf(m, m.main)
	}
}

// main polls every ProbeEvery; the probes' answers (datagrams) are judged as
// they arrive.
func (m *Monitor) main(p *sim.Proc) {
	p.Handle(m.answer)
	for {
		p.Sleep(m.d.ProbeEvery, "probe interval")
		now := p.Now()
		for _, a := range m.arbiters {
			last, seen := m.answered[a]
			if seen && now.Sub(last) > m.d.ProbeThreshold {
				m.alert(p, a, fmt.Sprintf("probe unanswered for %v", now.Sub(last)))
			}
			if !seen {
				m.answered[a] = now // start counting from the first poll
			}
			m.no++
			p.Send(a, Request{No: m.no, Op: OpProbe})
		}
	}
}

// answer judges one probe answer.
func (m *Monitor) answer(p *sim.Proc, msg network.Message) {
	r, ok := msg.Body.(Reply)
	if !ok || r.Op != OpProbe {
		return
	}
	a, now, pr := msg.From, p.Now(), r.Probe
	m.answered[a] = now
	stuck := pr.Leader && pr.Waiting > 0 && (now.Sub(pr.LastRound) > m.d.ProbeThreshold ||
		(pr.Claimable && now.Sub(pr.LastPair) > m.d.ProbeThreshold))
	if stuck {
		m.alert(p, a, fmt.Sprintf("%d waiting, last dispatch round %v ago, last pairing %v ago", pr.Waiting, now.Sub(pr.LastRound), now.Sub(pr.LastPair)))
	} else if pr.Waiting == 0 || now.Sub(pr.LastRound) <= m.d.ProbeThreshold {
		m.alerted[a] = false // the episode is over
	}
}

func (m *Monitor) alert(p *sim.Proc, a network.Addr, why string) {
	if m.alerted[a] {
		return
	}
	m.alerted[a] = true
	p.Note(hist.Alert{Monitor: string(p.Self()), Target: string(a), Reason: why})
}
