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
// the counts, which are checked when their Check flag is set. (MA3,
// promised zero on every run, is an invariant: NoFalseSystemErrors.)
type Bounds struct {
	ExtraLatency time.Duration // MA1: no submission later than this beyond its judging
	NoWaste      bool          // MA2: no judging thrown away while its worker stayed healthy
	OutageLoad   int           // MA5: at most this many requests per worker per minute of an outage
	// NoFalseSysErrors is kept so that callers compile: MA3 is checked
	// on every run by the invariant (NoFalseSystemErrors), and a bound
	// would report it twice.
	//
	// Deprecated: checks nothing.
	NoFalseSysErrors bool
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
	if b.NoWaste {
		v := checker.Pass(MA2)
		if m.Wasted > 0 {
			v = checker.Fail(MA2, nil, "%d judgings thrown away although their workers stayed healthy (submissions %v)", m.Wasted, m.WastedSubs)
		}
		out = append(out, v)
	}
	if b.OutageLoad > 0 {
		v := checker.Pass(MA5)
		if m.OutageLoad > b.OutageLoad {
			v = checker.Fail(MA5, nil, "a worker sent %d requests in one minute of an outage (bound %d)", m.OutageLoad, b.OutageLoad)
		}
		out = append(out, v)
	}
	return out
}
