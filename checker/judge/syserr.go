package judge

import (
	"fmt"

	"github.com/fencesim/fencesim/checker"
)

// MA3 (false system_errors, promised zero): a submission becomes
// system_error only after max_attempts of its leases since its last
// rejudge were lost to genuine worker failures.
//
// A lease is lost to its worker when a process that held it (the claim
// answered with it, a heartbeat, a submit, a judging or a saved result
// with its token) crashed, was paused, had a link faulted, or had its
// clock run slow (its heartbeats late: slowClock) between the
// grant and the reclaim, or from its claim on if that claim was still in
// flight at the grant; a poison submission, whose judging crashes its
// worker, shows as such a crash. A lease nobody heard of (its claim's
// reply never arrived) is the worker's loss when a claim in flight for
// the lease's worker_id at the grant failed that way from its call on. A
// legacy worker's claim (no token) is its judging's process's. A
// judging that never ended, although the run went on past judge_max after
// it started, lost its worker too. Anything else (an arbiter that
// crashed before answering, stalled, or committed a lease already
// expired) is not the worker's doing, and three such losses make a false
// system_error. It is judged whatever the design's numbers: a design
// whose lease a healthy worker cannot keep (a heartbeat as long as the
// lease, a grace shorter than a worker's silence, what --unsafe runs)
// breaks the promise, and that is what measuring it must show (unlike
// MA2's, which is judged only where the source promises it). The one
// exception is the database's own clock running
// ahead (a jump forward, a fast drift) while the leases lived: lease
// expiry is the database's business (A.2), so no design keeps its leases
// then, and such a system_error is not judged (it is counted apart).

// newLease reports whether version v, after p, starts a lease: judging
// under a token or generation p was not (a grant, or a legacy claim).
func newLease(p, v *Version) bool {
	return v.Status == "judging" && (p.Status != "judging" || p.Token != v.Token || p.Gen != v.Gen)
}

// life is one lease of a submission: from the commit that granted it to
// the one that took it out of judging.
type life struct {
	sub           int64
	token, worker string // worker: the worker_id it was granted to
	grant, end    int64
	grantEv       uint64
}

// sysErr is a system_error verdict and the leases that led to it.
type sysErr struct {
	sub     int64
	event   uint64   // the commit that made it system_error
	grants  []uint64 // the commits that granted its leases since the last rejudge
	genuine int      // how many of them were lost to their workers
}

// systemErrorVerdicts returns how many times a submission became
// system_error, those times that fewer than max_attempts of its leases
// since the last rejudge were lost to their workers (by submission and
// time), and how many such times are excused: the database's clock ran
// ahead while the leases lived.
func (r *Run) systemErrorVerdicts() (all int, bad []sysErr, excused int) {
	for _, id := range r.SubIDs() {
		vs := r.Subs[id]
		from := 0 // the episode's first version: the insert, or the last rejudge
		for k := 1; k < len(vs); k++ {
			p, v := &vs[k-1], &vs[k]
			if Terminal(p.Status) && v.Status == "pending" {
				from = k
				continue
			}
			if v.Status != "system_error" || p.Status == "system_error" {
				continue
			}
			all++
			e := sysErr{sub: id, event: v.Event}
			var first int64 // the first lease's grant
			for i := from; i < k; i++ {
				var prev Version
				if i > 0 {
					prev = vs[i-1]
				}
				if !newLease(&prev, &vs[i]) {
					continue
				}
				j := i + 1
				for j < k && !newLease(&vs[j-1], &vs[j]) && vs[j].Status == "judging" {
					j++
				}
				l := life{sub: id, token: vs[i].Token, worker: vs[i].Worker, grant: vs[i].T, end: vs[j].T, grantEv: vs[i].Event}
				if len(e.grants) == 0 {
					first = l.grant
				}
				e.grants = append(e.grants, l.grantEv)
				if r.lostToWorker(l) {
					e.genuine++
				}
			}
			switch {
			case e.genuine >= r.P.MaxAttempts:
			case len(e.grants) > 0 && r.dbClockAhead(first, v.T):
				excused++
			default:
				bad = append(bad, e)
			}
		}
	}
	return all, bad, excused
}

// systemErrors returns MA3's counts: system_error verdicts, and the false
// ones (the excused not among them).
func (r *Run) systemErrors() (all, falseOnes int) {
	all, bad, _ := r.systemErrorVerdicts()
	return all, len(bad)
}

// dbClockAhead reports whether a database node's clock jumped forward, or
// drifted fast, during [a, b]. A drift lasts until the next drift of the
// node or the heal-all.
func (r *Run) dbClockAhead(a, b int64) bool {
	for i, f := range r.Faults {
		switch {
		case f.Kind == "jump" && f.Amount > 0 && f.T >= a && f.T <= b:
		case f.Kind == "drift" && f.Rate > 0 && f.T <= b:
			until := r.End
			for _, g := range r.Faults[i+1:] {
				if (g.Kind == "drift" && g.Node == f.Node) || g.Kind == "heal-all" {
					until = g.T
					break
				}
			}
			if until < a {
				continue
			}
		default:
			continue
		}
		if r.isDB(f.Node) {
			return true
		}
	}
	return false
}

// slowClock reports whether node's clock ran slow (a drift of negative
// rate, in effect until the node's next drift or the heal-all) during
// [a, b]. A worker's timers run on its monotonic clock, so a slow one sends
// its heartbeats late by the world's (and the database's) time: 20% slow,
// a heartbeat of 30 s every 37.5 s, and a lease of 37 s (more than a
// heartbeat and a request's timeout, as keepsLeases asks) runs out between
// two of them. Its node's fault, as MA2 counts it (onlyCoveredTrouble), not
// the arbiter's: no design keeps a lease whose holder's clock lags.
func (r *Run) slowClock(node string, a, b int64) bool {
	for _, f := range r.Faults {
		if f.Kind == "drift" && f.Node == node && f.Rate < 0 && f.T <= b && r.nextDrift(f) >= a {
			return true
		}
	}
	return false
}

// lostToWorker reports whether a lease was lost to a genuine failure of
// the worker that held it (or asked for it).
func (r *Run) lostToWorker(l life) bool {
	failed := func(node string, from int64) bool {
		return r.FailedDuring(node, from, l.end) || r.netFaulted(node, from, l.end) || r.slowClock(node, from, l.end)
	}
	// A judging of it that should have ended by the end of the run, and
	// did not: its worker died.
	died := func(j *Judging) bool {
		return j.End == 0 && j.Abandoned == 0 && j.Start+int64(r.P.JudgeMax) <= r.End
	}
	if l.token == "" {
		// A legacy worker's claim: the processes that judged it.
		for _, j := range r.Judgings {
			if j.Sub == l.sub && j.Token == "" && j.Start >= l.grant && j.Start <= l.end && (failed(j.Worker, l.grant) || died(j)) {
				return true
			}
		}
		return failed(l.worker, l.grant)
	}
	hd, held := r.holdings()[subToken{l.sub, l.token}]
	holds := func(process string) bool {
		for _, u := range hd.processes() {
			if u.process == process {
				return true
			}
		}
		return false
	}
	// The claims in flight for its worker_id when it was granted: the
	// claim it was for is among them. A holder is watched from its claim
	// on (a link fault that held the claim up lost the lease too); when
	// nobody heard of the lease, every claimer of its worker_id is.
	calls := false
	for i := range r.Ops {
		op := &r.Ops[i]
		c := &op.Call
		if c.Op != "claim" || actsAs(c.Client, c.WorkerID) != l.worker {
			continue
		}
		calls = true
		inFlight := op.Invoke <= l.grant && (op.Return == nil || op.Response >= l.grant)
		if inFlight && (!held || holds(c.Client)) && failed(c.Client, op.Invoke) {
			return true
		}
	}
	if held {
		for _, u := range hd.processes() {
			if failed(u.process, l.grant) {
				return true
			}
		}
		for _, j := range r.Judgings {
			if j.Sub == l.sub && j.Token == l.token && died(j) {
				return true
			}
		}
		return false
	}
	if calls {
		return false
	}
	return failed(l.worker, l.grant) // a history without its calls: the worker_id's node
}

// NoFalseSystemErrors (MA3, a metric the source promises as zero, so a
// property: a run that breaks it fails): every system_error verdict comes
// after max_attempts leases since the last rejudge lost to genuine worker
// failures.
func NoFalseSystemErrors(r *Run) checker.Verdict {
	_, bad, excused := r.systemErrorVerdicts()
	if len(bad) == 0 {
		v := checker.Pass(MA3)
		if excused > 0 {
			v.Message = fmt.Sprintf("%d system_error verdicts not judged: the database's clock ran ahead while their leases lived", excused)
		}
		return v
	}
	e := bad[0]
	return checker.Fail(MA3, append(e.grants, e.event), "%d system_error verdicts without %d genuine worker failures (first: submission %d, %d of its %d leases since the last rejudge lost to a worker failure)",
		len(bad), r.P.MaxAttempts, e.sub, e.genuine, len(e.grants))
}
