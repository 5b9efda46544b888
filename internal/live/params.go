package live

import (
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/judge"
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
// so that the run finishes its work.
func DefaultSchedule(system string, d time.Duration) sim.Schedule {
	at := func(f float64) clock.Time {
		return clock.Time(time.Duration(f * float64(d)).Truncate(time.Millisecond))
	}
	switch system {
	case judge.System:
		return sim.Schedule{
			{At: at(0.15), Kind: sim.Crash, Node: "home-1"},
			{At: at(0.22), Kind: sim.Restart, Node: "home-1"},
			{At: at(0.30), Kind: sim.Pause, Node: "prod-1"},
			{At: at(0.36), Kind: sim.Resume, Node: "prod-1"},
			{At: at(0.42), Kind: sim.Stall, Node: "home-2", Peer: "arbiter-1", For: 3 * time.Second},
			{At: at(0.55), Kind: sim.Break, Node: "arbiter-1", Peer: "db"},
			{At: at(0.70), Kind: sim.HealAll},
		}
	}
	return nil
}
