package judge

import (
	"fmt"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// Monitor polls every arbiter's probe and raises an alert when the dispatch
// loop is stuck (A.4, A-S8; 000, scenario 8): on the leader, a claim is
// waiting and no dispatch round has completed for longer than the
// threshold ("派活循环这一圈走完了" is the probe's heartbeat), or a worker
// has waited that long with work claimable and nothing paired ("有可领的
// 提交、有 worker 挂着请求在等,却超过 30 秒没配上对"); or no arbiter has
// answered as leader that long while the last one seen leading does not
// answer at all. One alert per episode and arbiter. Ages are the
// arbiter's own (its monotonic clock) and the monitor's (its monotonic
// clock): a clock fault on either does not make an alert.
type Monitor struct {
	d        Design
	arbiters []network.Addr
	no       uint64
	answered map[network.Addr]clock.Time
	alerted  map[network.Addr]bool
	// leader: the arbiter last seen leading; led: when an arbiter last
	// answered as leader (monitor's monotonic clock); started: the first
	// poll.
	leader  network.Addr
	led     clock.Time
	started bool
}

// NewMonitor returns the monitor's factory.
func NewMonitor(d Design, arbiters []network.Addr) sim.Factory {
	return func(string, *sim.Disk) sim.Node {
		m := &Monitor{d: d, arbiters: arbiters, answered: map[network.Addr]clock.Time{}, alerted: map[network.Addr]bool{}}
		return sim.ProgramOf(m, m.main)
	}
}

// main polls every ProbeEvery; the probes' answers (datagrams) are judged as
// they arrive. A silent arbiter is a stuck one only if it is the one last
// seen leading and no other has answered as leader since: a standby that
// is down, or was never started, dispatches nothing either way (found by
// an audit: a never-started standby raised "probe unanswered" alerts in
// 50 of 300 moderate drawn runs).
func (m *Monitor) main(p *sim.Proc) {
	p.Handle(m.answer)
	for {
		p.Sleep(m.d.ProbeEvery, "probe interval")
		now := p.Mono()
		if !m.started {
			m.started, m.led = true, now // start counting from the first poll
		}
		for _, a := range m.arbiters {
			if a == m.leader && now.Sub(m.led) > m.d.ProbeThreshold && now.Sub(m.answered[a]) > m.d.ProbeThreshold {
				m.alert(p, a, fmt.Sprintf("probe unanswered for %v, and no arbiter answered as leader since", now.Sub(m.answered[a])))
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
	a, now, pr := msg.From, p.Mono(), r.Probe
	m.answered[a] = now
	if pr.Leader {
		m.leader, m.led = a, now
	}
	if why := stuck(pr, m.d.ProbeThreshold); why != "" {
		m.alert(p, a, why)
	} else {
		m.alerted[a] = false // the episode is over (or there was none)
	}
}

// stuck judges one probe answer: why the arbiter's dispatch is stuck, or
// "" if it is not.
func stuck(pr ProbeInfo, threshold time.Duration) string {
	switch {
	case !pr.Leader:
		return ""
	case pr.Waiting > 0 && pr.RoundAge > threshold:
		return fmt.Sprintf("%d waiting, last dispatch round %v ago", pr.Waiting, pr.RoundAge)
	case pr.Unpaired > threshold:
		return fmt.Sprintf("%d waiting, work claimable, nothing paired for %v", pr.Waiting, pr.Unpaired)
	}
	return ""
}

func (m *Monitor) alert(p *sim.Proc, a network.Addr, why string) {
	if m.alerted[a] {
		return
	}
	m.alerted[a] = true
	p.Note(hist.Alert{Monitor: string(p.Self()), Target: string(a), Reason: why})
}
