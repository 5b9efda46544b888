package judge

import (
	"time"

	"github.com/fencesim/fencesim/checker"
)

// MA4 as a property: the monitor's alerts are accurate.
const MA4 = "MA4 false-alerts"

// falseAlerts are the monitor's alerts that nothing explains (MA4): not an
// episode of a stuck arbiter (a stall command, a pause; detect), not an
// outage, and no trouble on the alerted arbiter's dispatch path within the
// threshold and a probe period before the alert: an arbiter (the alerted
// one; another, frozen in a transaction, holds rows and locks its
// statements wait for), the database or the monitor down, paused or with a
// link faulted (a slow statement on a delayed or stalled link is the source's "某个 goroutine 卡在一个慢查询上",
// a stuck loop the alert is for; a probe answer lost on the monitor's link
// is a silence the monitor cannot tell from a hang).
func (r *Run) falseAlerts(stuck []episode) []AlertAt {
	var out []AlertAt
	if len(r.Alerts) == 0 {
		return out
	}
	slack := int64(r.P.ProbeThreshold + r.P.ProbeEvery)
	away := append([]string{"db"}, r.arbiters()...)
	explained := func(a AlertAt) bool {
		if r.outageAt(a.T) || r.pathFaulted(a.Target, a.Monitor, a.T-slack, a.T) {
			return true
		}
		for _, s := range stuck {
			if a.Target == s.node && a.T >= s.start && a.T <= s.end+slack {
				return true
			}
		}
		for _, n := range away {
			if r.FailedDuring(n, a.T-slack, a.T) {
				return true
			}
		}
		return r.FailedDuring(a.Monitor, a.T-slack, a.T)
	}
	for _, a := range r.Alerts {
		if !explained(a) {
			out = append(out, a)
		}
	}
	return out
}

// NoFalseAlerts (MA4, the source's promise of an accurate alert: "在仲裁器
// 方案下这条判断特别准,因为「有人在等」是一个真实的、正挂着的请求,不是猜的",
// 000, scenario 8): no alert comes without a stuck arbiter, an outage, or
// trouble on the alerted arbiter's dispatch path to explain it.
func NoFalseAlerts(r *Run) checker.Verdict {
	for _, a := range r.falseAlerts(r.stuckEpisodes()) {
		return checker.Fail(MA4, []uint64{a.Event}, "the monitor alerted on %s at %v (%s) although nothing held up its dispatch loop: no stall, pause or crash of it, no fault on its, the database's or the monitor's links, and no outage within %v before",
			a.Target, time.Duration(a.T).Round(time.Millisecond), a.Reason, r.P.ProbeThreshold+r.P.ProbeEvery)
	}
	return checker.Pass(MA4)
}

// arbiters are the arbiter processes the run names (its faults, downs and
// pauses, its alerts), in order.
func (r *Run) arbiters() []string {
	seen := map[string]bool{}
	for n := range r.Down {
		if isArbiter(n) {
			seen[n] = true
		}
	}
	for n := range r.Paused {
		if isArbiter(n) {
			seen[n] = true
		}
	}
	for _, f := range r.Faults {
		for _, n := range []string{f.Node, f.Peer} {
			if isArbiter(n) {
				seen[n] = true
			}
		}
	}
	for _, a := range r.Alerts {
		seen[a.Target] = true
	}
	return checker.SortedKeys(seen)
}

// pathFaulted reports whether a link on the dispatch path of an arbiter
// had a fault between a and b: any arbiter's link to the database (every
// arbiter's, as its transactions hold rows), the monitor's to the
// arbiter, or every link. A worker's links are not on it. (A partition is
// an outage: outageAt.)
func (r *Run) pathFaulted(target, monitor string, a, b int64) bool {
	db := func(n string) bool { return r.isDB(n) || n == "db" }
	for _, f := range r.Faults {
		until, ok := r.linkFaultUntil(f)
		if !ok || f.Kind == "partition" || f.T > b || until < a {
			continue
		}
		x, y := f.Node, f.Peer
		switch {
		case x == "":
			return true
		case isArbiter(x) && (y == "" || db(y) || y == monitor),
			isArbiter(y) && (db(x) || x == monitor),
			db(x) && y == "",
			x == monitor && (y == "" || y == target):
			return true
		}
	}
	return false
}
