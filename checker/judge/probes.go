package judge

import (
	"fmt"
	"strings"
)

// Probe names: the interesting situations a sweep of runs must keep
// reaching ("sometimes" assertions, as Antithesis and TigerBeetle call
// them). A test fails when a probe's rate over a sweep falls under its
// minimum, so the generators cannot silently stop reaching the hard cases.
const (
	ProbeLeaseExpiredWhileJudging = "lease expired while its worker still judged"
	ProbeStaleTokenRejected       = "stale token rejected (410)"
	ProbeDuplicateSubmit200       = "duplicate submit answered 200"
	ProbeCrashCommitReply         = "arbiter crashed between COMMIT and reply"
	ProbeTwoArbitersDispatch      = "two arbiters dispatching at once"
	ProbeDBDownWhileRetrying      = "database unreachable while workers retried"
)

// ProbeNames lists the probes in a fixed order.
var ProbeNames = []string{ProbeLeaseExpiredWhileJudging, ProbeStaleTokenRejected, ProbeDuplicateSubmit200,
	ProbeCrashCommitReply, ProbeTwoArbitersDispatch, ProbeDBDownWhileRetrying}

// Probes reports which probes a run reached.
func Probes(r *Run) map[string]bool {
	hit := map[string]bool{}
	// A judging went on after its lease left judging (reclaimed), while its
	// worker stayed up.
	for _, j := range r.Judgings {
		end := j.End
		if end == 0 {
			end = j.Abandoned
		}
		if end == 0 || r.FailedDuring(j.Worker, j.Start, end) {
			continue
		}
		for _, v := range r.Subs[j.Sub] {
			if v.T > j.Start && v.T < end && (v.Token != j.Token || v.Status != "judging") && !Terminal(v.Status) {
				hit[ProbeLeaseExpiredWhileJudging] = true
			}
		}
	}
	decided := map[string]int64{}
	for _, a := range r.Accepted {
		decided[fmt.Sprintf("%d/%s", a.Sub, a.Token)] = a.T
	}
	for _, op := range r.Ops {
		if op.Return == nil || op.Call.Op != "submit" {
			continue
		}
		switch op.Return.Code {
		case 410:
			hit[ProbeStaleTokenRejected] = true
		case 200:
			// A submit sent after its lease's result was already recorded:
			// a duplicate, answered as the first was.
			if t, ok := decided[fmt.Sprintf("%d/%s", op.Call.Sub, op.Call.Token)]; ok && op.Invoke > t {
				hit[ProbeDuplicateSubmit200] = true
			}
		}
	}
	down := false
	for _, e := range r.Events {
		switch {
		case e.Kind == "fault" && strings.Contains(e.Desc(), "crash point claim-after-commit"):
			hit[ProbeCrashCommitReply] = true
		case e.Kind == "state" && strings.HasPrefix(e.Desc(), "db-down"):
			down = true
		case e.Kind == "state" && strings.HasPrefix(e.Desc(), "db-up"):
			down = false
		case e.Kind == "return" && down && strings.Contains(e.Desc(), "503"):
			hit[ProbeDBDownWhileRetrying] = true
		}
	}
	// Two arbiters granted leases within one dispatch-and-leader-check
	// window of each other.
	var last = map[string]int64{}
	for _, g := range r.grants() {
		a := g.token
		if i := strings.IndexByte(a, '.'); i > 0 {
			a = a[:i]
		}
		for other, t := range last {
			if other != a && g.t-t < int64(10e9) {
				hit[ProbeTwoArbitersDispatch] = true
			}
		}
		last[a] = g.t
	}
	return hit
}
