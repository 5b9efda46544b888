package live

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/model/outbox"
	outboxharness "github.com/fencesim/fencesim/model/outbox/harness"
	"github.com/fencesim/fencesim/model/twopc"
	"github.com/fencesim/fencesim/sim"
)

// ShortSets are the live world's short parameters of a system (docs/live.md,
// docs/live-arbiter.json): a live run shows a lease expire, a sweep and a
// retry within a minute of real time. The simulator's defaults are the
// source's production values (a 60 s lease, judgings up to 150 s).
func ShortSets(system string) []string {
	switch system {
	case judge.System:
		return []string{
			"heartbeat=2s", "unconfirmed_lease=2s", "lease=6s",
			"backoff_base=500ms", "backoff_cap=4s", "grace=6s",
			"sweep_every=1s", "leader_retry=1s",
			"probe_threshold=8s", "probe_every=1s",
			"dispatch_every=500ms", "claim_hold=5s", "request_timeout=2s",
			"judge_min=1s", "judge_max=4s",
		}
	}
	return nil
}

// DefaultSchedule is the faults of a live run without --schedule: within
// the run, a worker killed with SIGKILL and restarted, another frozen with
// SIGSTOP and thawed, a worker's link to the arbiter stalled, the
// arbiter's database connections broken; everything healed before the end
// so that the run finishes its work. With the default fleet the workers are
// home-1 (killed), prod-1 (frozen) and home-2 (stalled); another fleet
// (--set home_workers=N, prod_workers=N) has its own workers take those
// parts, so that the default schedule never names a node the world does
// not have.
func DefaultSchedule(system string, design json.RawMessage, d time.Duration) (sim.Schedule, error) {
	at := func(f float64) clock.Time {
		return clock.Time(time.Duration(f * float64(d)).Truncate(time.Millisecond))
	}
	switch system {
	case judge.System:
		des, err := judge.ParseDesign(design)
		if err != nil {
			return nil, err
		}
		n := judge.NamesOf(des)
		workers := append(append([]string(nil), n.Home...), n.Prod...)
		if len(workers) == 0 || len(n.Arbiters) == 0 {
			return nil, fmt.Errorf("the default schedule needs a worker and an arbiter: give --schedule FILE")
		}
		// killed: the first worker; frozen: the first production
		// worker, else the last; stalled: the second home worker, else a
		// worker neither killed nor frozen, else the first.
		killed := workers[0]
		frozen := workers[len(workers)-1]
		if len(n.Prod) > 0 {
			frozen = n.Prod[0]
		}
		stalled := ""
		if len(n.Home) >= 2 {
			stalled = n.Home[1]
		}
		for _, w := range workers {
			if stalled == "" && w != killed && w != frozen {
				stalled = w
			}
		}
		if stalled == "" {
			stalled = workers[0]
		}
		arbiter := n.Arbiters[0]
		return sim.Schedule{
			{At: at(0.15), Kind: sim.Crash, Node: killed},
			{At: at(0.22), Kind: sim.Restart, Node: killed},
			{At: at(0.30), Kind: sim.Pause, Node: frozen},
			{At: at(0.36), Kind: sim.Resume, Node: frozen},
			{At: at(0.42), Kind: sim.Stall, Node: stalled, Peer: arbiter, For: 3 * time.Second},
			{At: at(0.55), Kind: sim.Break, Node: arbiter, Peer: n.DB},
			{At: at(0.70), Kind: sim.HealAll},
		}, nil
	case twopc.System:
		// System C: the coordinator kills itself (kill -9) at the first
		// transaction's first COMMIT PREPARED acknowledged, before the
		// next (C.1's position 4: the decision is logged, one
		// participant committed, the others prepared), and is restarted
		// to recover from its log; then its connections to orders break.
		// (A crash of a participant's server is left out: --pg refuses
		// it.)
		des, err := twopc.ParseDesign(design)
		if err != nil {
			return nil, err
		}
		n := twopc.NamesOf(des)
		if len(n.Started) == 0 || len(n.Participants) == 0 {
			return nil, fmt.Errorf("the default schedule needs a coordinator and a participant: give --schedule FILE")
		}
		coord, first := n.Started[0], n.Participants[0]
		return sim.Schedule{
			{At: 0, Kind: sim.CrashAt, Node: coord, Point: twopc.PointCommitted + first, Count: 1},
			{At: at(0.30), Kind: sim.Restart, Node: coord},
			{At: at(0.45), Kind: sim.Break, Node: coord, Peer: first},
			{At: at(0.70), Kind: sim.HealAll},
		}, nil
	case outboxharness.Name:
		// System B: the relay kills itself (kill -9) right after its
		// first mark (relay/after-mark: under the default order the
		// message is published and marked; under mark-sent-before-publish
		// it is marked and not published) and is restarted; the first
		// handler kills itself between its writes and COMMIT
		// (handler/before-commit: under send-before-commit the message is
		// published already) and is restarted; the broker's pushes to the
		// consumer stall for 3 s (the broker redelivers meanwhile: the
		// consumer gets each held message several times); the second
		// handler's database connections break; heal-all at 70%.
		des, err := outbox.ParseDesign(design)
		if err != nil {
			return nil, err
		}
		n := outbox.NamesOf(des)
		if len(n.Relays) == 0 || len(n.Handlers) == 0 {
			return nil, fmt.Errorf("the default schedule needs a relay and a handler: give --schedule FILE")
		}
		relay, killed, broken := n.Relays[0], n.Handlers[0], n.Handlers[len(n.Handlers)-1]
		if len(n.Handlers) >= 2 {
			broken = n.Handlers[1]
		}
		return sim.Schedule{
			{At: 0, Kind: sim.CrashAt, Node: relay, Point: outbox.PointAfterMark, Count: 1},
			{At: 0, Kind: sim.CrashAt, Node: killed, Point: outbox.PointBeforeCommit, Count: 1},
			{At: at(0.22), Kind: sim.Restart, Node: relay},
			{At: at(0.36), Kind: sim.Restart, Node: killed},
			{At: at(0.42), Kind: sim.Stall, Node: n.Broker, Peer: n.Consumer, For: 3 * time.Second},
			{At: at(0.55), Kind: sim.Break, Node: broken, Peer: n.DB},
			{At: at(0.70), Kind: sim.HealAll},
		}, nil
	}
	return nil, nil
}
