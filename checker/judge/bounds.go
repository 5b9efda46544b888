package judge

import (
	"time"

	"github.com/fencesim/fencesim/checker"
)

// Metric names, as properties when a bound is checked.
const (
	MA1 = "MA1 extra-latency"
	MA2 = "MA2 wasted-judgings"
	MA3 = "MA3 false-system-errors"
	MA5 = "MA5 outage-load"
)

// Bounds are the promised worst costs of a family of runs (a scenario's
// schedule with drawn parameters): the metrics a correct design must stay
// within on every run of the family. A zero field is not checked, except
// the counts, which are checked when their Check flag is set. (MA2 and
// MA3, promised zero, are invariants checked on every run where the
// promise holds: NoPromisedWaste, NoFalseSystemErrors.)
type Bounds struct {
	ExtraLatency time.Duration // MA1: no submission later than this beyond its judging
	OutageLoad   int           // MA5: at most this many requests per worker per minute of an outage
	// MA5: at most this many heartbeats per worker process and lease per
	// minute of an outage.
	HeartbeatLoad int
}

// Check returns a verdict per bound.
func (b Bounds) Check(m Metrics) []checker.Verdict {
	var out []checker.Verdict
	if b.ExtraLatency > 0 {
		v := checker.Pass(MA1)
		if id, d := m.MaxExtra(); d > b.ExtraLatency {
			v = checker.Fail(MA1, nil, "submission %d got its verdict %v late, beyond the promised %v", id, d.Round(100*time.Millisecond), b.ExtraLatency)
		}
		out = append(out, v)
	}
	if b.OutageLoad > 0 {
		v := checker.Pass(MA5)
		if m.OutageLoad > b.OutageLoad {
			v = checker.Fail(MA5, nil, "a worker sent %d requests in one minute of an outage (bound %d)", m.OutageLoad, b.OutageLoad)
		}
		if b.HeartbeatLoad > 0 && m.HeartbeatLoad > b.HeartbeatLoad && v.OK {
			v = checker.Fail(MA5, nil, "a worker sent %d heartbeats for one lease in one minute of an outage (bound %d)", m.HeartbeatLoad, b.HeartbeatLoad)
		}
		out = append(out, v)
	}
	return out
}
