package judge

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fencesim/fencesim/checker"
)

// MA2 (wasted judgings) is a property where the source promises none: a
// judging thrown away although its worker stayed healthy (Measure's
// count) fails the run when its lease lived through what the grace
// covers, from its grant until the judging's fate was sealed (its result
// answered, the judging abandoned, or the end of the run), and nothing
// else touched its worker, the arbiters or the database from one lease
// before the grant until then. The grace covers: an arbiter's restart
// (A-S2: the start-up grace gives every lease in flight a full lease
// again) or freeze (the late sweep owes the grace), an arbiter's clock
// fault (A-S7: expiry is the database's business), and the database out of
// the arbiter's reach (scenario 7, "数据库连不上": a crash, a pause, a fault
// of a link between an arbiter and the database; "no lease is reclaimed
// during it ... after it, the grace first"). Any other fault there (a
// fault of the worker or of its links, a stall of the dispatch loop, the
// database's clock) is one whose cost the source does not promise away;
// a judging wasted with no such trouble at all is not the promise's
// business: neither is judged (the metric counts them).
//
// The promise needs a design with the one arbiter process of A-S2 and A-S7
// (with a second one, started or standby, it is A-S6, where the source
// promises only worse scheduling: a worker's retry that tries the other,
// down, arbiter first can find its orphaned lease reclaimed), whose
// numbers let a healthy worker keep its lease (keepsLeases: the lease
// outlasts a slow heartbeat, the grace a worker's longest silence), and
// whose grace gives an unconfirmed lease the full grace (the source's
// statement; confirm-aware grace trades this promise for A-S1's shorter
// orphans). The no-grace knob keeps the parameter and drops the grace: it
// is held to the promise, and caught.

// wastePromised reports whether the design promises no waste across
// arbiter restarts, or why not.
func (r *Run) wastePromised() (bool, string) {
	p := r.P
	if n := max(p.Arbiters, 1) + p.StandbyArbiters; n > 1 {
		return false, fmt.Sprintf("%d arbiter processes: a second arbiter is A-S6, where the source promises only worse scheduling", n)
	}
	if p.ConfirmAwareGrace {
		return false, "confirm-aware grace gives an unconfirmed lease only the unconfirmed lease again"
	}
	return r.keepsLeases()
}

// keepsLeases reports whether the design's numbers let a healthy worker
// keep its lease, or why not: the lease must outlast a heartbeat interval
// plus a request's timeout (one slow heartbeat), and the grace the longest
// a healthy worker goes without calling (its heartbeat interval or its
// backoff cap, plus a request's timeout), else an outage costs healthy
// workers their leases by the design's own numbers.
func (r *Run) keepsLeases() (bool, string) {
	p := r.P
	if need := p.Heartbeat + p.RequestTimeout; p.Lease <= need {
		return false, fmt.Sprintf("lease %v is not longer than a heartbeat interval and a request timeout, %v", p.Lease, need)
	}
	if need := max(p.Heartbeat, p.BackoffCap) + p.RequestTimeout; p.Grace < need {
		return false, fmt.Sprintf("grace %v is shorter than a worker's longest silence, %v", p.Grace, need)
	}
	return true, ""
}

// isArbiter reports whether a node is an arbiter.
func isArbiter(node string) bool { return strings.HasPrefix(node, "arbiter") }

// isDB reports whether a node is a database (it wrote commits).
func (r *Run) isDB(node string) bool { return slices.Contains(r.dbs, node) }

// onlyCoveredTrouble reports whether, for worker process w's lease,
// nothing happened (or was in effect) during [a, b] but what the grace
// covers (coveredFault: the arbiter or the database away), a jump of w's
// own wall clock (its timers do not read it), harmless actions (heals,
// armings, rejudges), and faults that leave w, the arbiters and the
// database alone (another worker's crash, a link between two other
// workers, a link between an arbiter and another worker).
func (r *Run) onlyCoveredTrouble(w string, a, b int64) bool {
	// The nodes a lease lives on: its worker, the arbiters, the database.
	involved := func(node string) bool { return node == "" || node == w || isArbiter(node) || r.isDB(node) }
	for _, f := range r.Faults {
		until := f.T + f.For + f.Amount
		switch f.Kind {
		case "crash", "restart", "jump", "drift":
			if r.coveredFault(f) || !involved(f.Node) || (f.Kind == "jump" && f.Node == w) || (f.Kind == "drift" && f.Rate == 0) {
				continue // a drift of rate 0 ends a drift
			}
			until = f.T // a crash's downtime is in Down
			if f.Kind == "drift" {
				until = r.nextDrift(f)
			}
		case "heal", "heal-all", "crash-at", "pause-at", "crash-yield", "pause-yield", "message":
			continue // a heal, or an arming: what it arms shows when it fires
		case "command":
			if f.Point == "rejudge" {
				continue // only a decided submission is rejudged
			}
			if d, err := time.ParseDuration(f.Arg); err == nil {
				until = f.T + int64(d)
			}
		case "partition":
			if r.together(f, w) {
				continue
			}
			if f.For == 0 {
				until = r.healAfter(f.T)
			}
		case "pause", "resume":
			continue // in Paused
		default: // a link's fault: cut, break, a burst, a message's fate
			if r.coveredFault(f) || (!involved(f.Node) && !involved(f.Peer)) {
				continue
			}
			if f.Kind == "cut" && f.For == 0 {
				until = r.healAfter(f.T)
			}
		}
		if f.T <= b && until >= a {
			return false
		}
	}
	// Downtimes the schedule did not name (crash points, yields), and
	// pauses, of the worker (those of the arbiters and the database are
	// covered).
	return !overlaps(r.Down[w], a, b, r.End) && !overlaps(r.Paused[w], a, b, r.End)
}

// arbiterDB reports whether a link joins an arbiter and the database.
func (r *Run) arbiterDB(a, b string) bool {
	return (isArbiter(a) && r.isDB(b)) || (r.isDB(a) && isArbiter(b))
}

// coveredFault reports whether a fault is an absence the grace covers, one
// whose cost the source promises is only delay: an arbiter's crash,
// restart or clock fault (A-S2, A-S7; a freeze is in Paused); the
// database's crash or restart (scenario 7, "数据库连不上": no lease is
// reclaimed during it, the grace runs after it); a fault of a link between
// an arbiter and the database (the database out of the arbiter's reach).
func (r *Run) coveredFault(f FaultAt) bool {
	switch f.Kind {
	case "crash", "restart", "jump", "drift":
		return isArbiter(f.Node) || (r.isDB(f.Node) && (f.Kind == "crash" || f.Kind == "restart"))
	case "partition":
		return r.dbApart(f)
	case "heal", "heal-all", "pause", "resume", "command", "crash-at", "pause-at", "crash-yield", "pause-yield":
		return false
	}
	return r.arbiterDB(f.Node, f.Peer)
}

// coveredTrouble reports whether something the grace covers happened
// during [a, b]: an arbiter or the database crashed, restarted, was down
// or frozen, an arbiter's clock jumped or drifted, or the database was out
// of the arbiters' reach.
func (r *Run) coveredTrouble(a, b int64) bool {
	for _, f := range r.Faults {
		if !r.coveredFault(f) || (f.Kind == "drift" && f.Rate == 0) {
			continue
		}
		until := f.T + f.For + f.Amount
		switch {
		case f.Kind == "crash" || f.Kind == "restart" || f.Kind == "jump":
			until = f.T
		case f.Kind == "drift":
			until = r.nextDrift(f)
		case (f.Kind == "partition" || f.Kind == "cut") && f.For == 0:
			until = r.healAfter(f.T)
		}
		if f.T <= b && until >= a {
			return true
		}
	}
	for _, m := range []map[string][]Interval{r.Down, r.Paused} {
		for _, node := range checker.SortedKeys(m) {
			if (isArbiter(node) || r.isDB(node)) && overlaps(m[node], a, b, r.End) {
				return true
			}
		}
	}
	return false
}

// dbApart reports whether a partition keeps every arbiter together and the
// database apart from them: the database out of reach, the arbiters and
// their workers' links whole as far as the arbiters go.
func (r *Run) dbApart(f FaultAt) bool {
	var arbiters []string
	for _, g := range f.Groups {
		if slices.ContainsFunc(g, isArbiter) {
			if arbiters != nil {
				return false
			}
			arbiters = g
		}
	}
	return arbiters != nil && !slices.ContainsFunc(arbiters, r.isDB)
}

// together reports whether a partition keeps worker w with every arbiter
// (the database may be apart: that is its outage, which the grace covers).
func (r *Run) together(f FaultAt, w string) bool {
	var home []string
	for _, g := range f.Groups {
		if slices.Contains(g, w) {
			home = g
		}
	}
	if home == nil {
		return false
	}
	for _, g := range f.Groups {
		for _, n := range g {
			if isArbiter(n) && !slices.Contains(home, n) {
				return false
			}
		}
	}
	return true
}

// nextDrift returns when a drift fault ends: at the next drift of its node
// or the heal-all (the end of the run if neither).
func (r *Run) nextDrift(f FaultAt) int64 {
	for _, g := range r.Faults {
		if g.T > f.T && ((g.Kind == "drift" && g.Node == f.Node) || g.Kind == "heal-all") {
			return g.T
		}
	}
	return r.End
}

// overlaps reports whether an interval (open ones last to end) meets [a, b].
func overlaps(ivs []Interval, a, b, end int64) bool {
	for _, iv := range ivs {
		e := iv.End
		if e == 0 {
			e = end
		}
		if iv.Start <= b && e >= a {
			return true
		}
	}
	return false
}

// sealed returns when a judging's fate was sealed: its result answered,
// the judging abandoned, or (a result never answered) the end of the run.
func (r *Run) sealed(j *Judging) int64 {
	if j.Abandoned != 0 {
		return j.Abandoned
	}
	for _, rl := range r.Results {
		if rl.Worker == j.Worker && rl.Sub == j.Sub && rl.Token == j.Token && rl.Answered != 0 {
			return rl.Answered
		}
	}
	return r.End
}

// grantOf returns the version that granted a submission's lease token.
func (r *Run) grantOf(sub int64, token string) (Version, bool) {
	vs := r.Subs[sub]
	for i := range vs {
		var prev Version
		if i > 0 {
			prev = vs[i-1]
		}
		if vs[i].Token == token && newLease(&prev, &vs[i]) {
			return vs[i], true
		}
	}
	return Version{}, false
}

// NoPromisedWaste (MA2 where the source promises zero): no judging is
// thrown away, while its worker stayed healthy, when nothing but arbiter
// restarts and arbiter clock faults happened around its lease; and no
// direct-mode worker's judging (no lease) is thrown away while its worker
// stayed healthy, whatever happened.
func NoPromisedWaste(r *Run) checker.Verdict {
	_, wasted := r.wasted()
	for _, j := range wasted {
		// A direct-mode worker's judging (A-S9's old scheme, or a worker
		// switched back to it) has no lease to lose: nothing may take its
		// row while its worker stays healthy, whatever the arbiters do
		// (the source: any step rolls back by configuration, 000 line 95).
		if j.Token == "" {
			if ev, taken := r.takenFromDirect(j); taken {
				return checker.Fail(MA2, []uint64{j.StartEv, ev}, "submission %d: %s claimed it directly (no lease) and its judging was thrown away although the worker stayed healthy: the row was taken back from it, and the old scheme reclaims nothing (a worker switched back to it must keep what it claimed, A-S9)",
					j.Sub, j.Worker)
			}
		}
	}
	if ok, why := r.wastePromised(); !ok {
		v := checker.Pass(MA2)
		v.Message = "not promised by this design: " + why
		return v
	}
	for _, j := range wasted {
		if j.Token == "" {
			continue // judged above
		}
		from := j.Start
		var evs []uint64
		if g, ok := r.grantOf(j.Sub, j.Token); ok {
			from, evs = g.T, append(evs, g.Event)
		}
		to := r.sealed(j)
		if !r.coveredTrouble(from, to) || !r.onlyCoveredTrouble(j.Worker, from-int64(r.P.Lease), to) {
			continue
		}
		return checker.Fail(MA2, append(evs, j.StartEv), "submission %d: %s's judging under lease %s was thrown away although its worker stayed healthy and only what the grace covers happened around it (an arbiter's restart, freeze or clock fault, the database out of reach: A-S2, A-S7 and scenario 7 promise none)",
			j.Sub, j.Worker, j.Token)
	}
	return checker.Pass(MA2)
}

// takenFromDirect reports whether a direct-mode worker's judging lost its
// row: after the judging started, and before the worker judged the
// submission again, the row it held directly (judging, its worker_id, no
// token) went back to pending; and the commit that did it.
func (r *Run) takenFromDirect(j *Judging) (uint64, bool) {
	until, again := r.nextJudging(j)
	vs := r.Subs[j.Sub]
	for i := 1; i < len(vs); i++ {
		prev, v := vs[i-1], vs[i]
		if v.T < j.Start || (again && v.T > until) {
			continue
		}
		if prev.Status == "judging" && prev.Worker == j.Worker && prev.Token == "" && v.Status == "pending" {
			return v.Event, true
		}
	}
	return 0, false
}
