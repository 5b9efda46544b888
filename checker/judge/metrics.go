package judge

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/traces/hist"
)

// Metrics are measured on every run (docs/properties.md MA1-MA6).
type Metrics struct {
	// MA1: per submission, the time from arrival to verdict beyond the
	// judging that produced it (queueing plus what faults cost).
	ExtraLatency map[int64]time.Duration
	// MA2: judgings thrown away although their worker stayed healthy.
	Wasted     int
	WastedSubs []int64
	Judgings   int
	// MA3: system_error verdicts (each time a submission became
	// system_error), and those not caused by MaxAttempts genuine worker
	// failures since its last rejudge.
	FalseSystemErrors int
	SystemErrors      int
	// MA4: time from a stuck arbiter (stall or pause) to the monitor's
	// alert; alerts with no stuck arbiter are false alerts.
	DetectTimes []time.Duration
	Undetected  int
	FalseAlerts int
	// MA5: the most requests one worker sent in one minute while an arbiter
	// or the database was down, after its first 2 x backoff cap.
	OutageLoad int
	// MA5's heartbeats: the most heartbeats one worker process sent for
	// one lease in one minute of an outage (same minutes), every try
	// counted (a heartbeat tries the next arbiter at once when one fails).
	HeartbeatLoad int
	// MA6: leases granted to a production worker while a home worker's
	// claim was waiting.
	HomeFirstMisses int
	Grants          int
}

// MaxExtra returns the largest extra latency and its submission.
func (m Metrics) MaxExtra() (int64, time.Duration) {
	var id int64
	var max time.Duration
	for _, k := range checker.SortedKeys(m.ExtraLatency) {
		if m.ExtraLatency[k] > max {
			id, max = k, m.ExtraLatency[k]
		}
	}
	return id, max
}

// rejudgedAt returns when a submission last left a verdict for a new
// judging (a rejudge), 0 when it never did.
func (r *Run) rejudgedAt(id int64) int64 {
	vs, t := r.Subs[id], int64(0)
	for i := 1; i < len(vs); i++ {
		if Terminal(vs[i-1].Status) && !Terminal(vs[i].Status) {
			t = vs[i].T
		}
	}
	return t
}

// Measure computes the metrics of a run.
func Measure(r *Run) Metrics {
	m := Metrics{ExtraLatency: map[int64]time.Duration{}}
	byToken := map[string]*Judging{}
	for _, j := range r.Judgings {
		byToken[fmt.Sprintf("%d/%s", j.Sub, j.Token)] = j
	}
	// MA1
	for _, id := range r.SubIDs() {
		at := r.DecidedAt(id)
		arr, ok := r.Arrived[id]
		if at == 0 || !ok {
			continue
		}
		// A rejudged submission waits from its rejudge: the time before
		// it had a verdict (a review found MA1 counting it).
		arr = max(arr, r.rejudgedAt(id))
		f := r.Final(id)
		service := int64(0)
		for _, a := range r.Accepted {
			if a.Sub == id && a.Token == f.Token {
				if j := byToken[fmt.Sprintf("%d/%s", id, a.Token)]; j != nil && j.End > 0 {
					service = j.End - j.Start
				}
			}
		}
		if f.Status == "system_error" {
			service = 0
		}
		m.ExtraLatency[id] = time.Duration(at - arr - service)
	}
	// MA2
	var wasted []*Judging
	m.Judgings, wasted = r.wasted()
	m.Wasted = len(wasted)
	for _, j := range wasted {
		m.WastedSubs = append(m.WastedSubs, j.Sub)
	}
	// MA3
	m.SystemErrors, m.FalseSystemErrors = r.systemErrors()
	// MA4
	stuck := r.stuckEpisodes()
	// An alert on an arbiter is its stuck episode's from the episode's
	// start to a threshold and a probe period after its end (the monitor
	// may still find the claims unpaired that long); a later alert is
	// another matter, not this episode's detection (counted so, a short
	// stall that no alert was due for took the next episode's alert, and
	// one alert was two detections).
	slack := int64(r.P.ProbeThreshold + r.P.ProbeEvery)
	for _, s := range stuck {
		detected := false
		for _, a := range r.Alerts {
			if a.Target == s.node && a.T >= s.start && a.T <= s.end+slack {
				m.DetectTimes = append(m.DetectTimes, time.Duration(a.T-s.start))
				detected = true
				break
			}
		}
		if !detected && s.end-s.start > slack {
			m.Undetected++
		}
	}
	m.FalseAlerts = len(r.falseAlerts(stuck))
	// MA5
	m.OutageLoad, m.HeartbeatLoad = r.outageLoad()
	// MA6
	m.Grants, m.HomeFirstMisses = r.homeFirst()
	return m
}

// directAccepted reports whether a direct-mode worker's judging (no
// lease, no token: A-S9's old scheme) was the one whose result was
// accepted: one of its worker's results for the submission was accepted
// after the judging ended, and the worker did not judge the submission
// again in between. Matched by token alone, every judging of a row a
// direct worker held would be counted as its accepted one (found by the
// audit of A-S9's rollback: a row taken back from home-1 and judged by it
// again 100 s later hid the first judging's loss).
func (r *Run) directAccepted(j *Judging) bool {
	next, again := r.nextJudging(j)
	for _, a := range r.Accepted {
		if a.Sub == j.Sub && a.Token == "" && a.Worker == j.Worker && a.T >= j.End && (!again || next > a.T) {
			return true
		}
	}
	return false
}

// nextJudging returns when j's worker next started judging j's
// submission, if it did.
func (r *Run) nextJudging(j *Judging) (int64, bool) {
	next, found := int64(0), false
	for _, k := range r.Judgings {
		if k != j && k.Sub == j.Sub && k.Worker == j.Worker && k.Start > j.Start && (!found || k.Start < next) {
			next, found = k.Start, true
		}
	}
	return next, found
}

// wasted returns how many judgings ended (or were abandoned), and those
// of them thrown away although their worker stayed healthy (MA2): their
// result was not accepted, and their worker neither crashed nor paused
// nor had a link faulted while it judged.
func (r *Run) wasted() (judgings int, out []*Judging) {
	accepted := make(map[subToken]bool, len(r.Accepted))
	for _, a := range r.Accepted {
		accepted[subToken{a.Sub, a.Token}] = true
	}
	for _, j := range r.Judgings {
		if j.End == 0 && j.Abandoned == 0 {
			continue
		}
		judgings++
		end := j.End
		if j.Abandoned != 0 {
			end = j.Abandoned
		}
		ok := accepted[subToken{j.Sub, j.Token}]
		if j.Token == "" {
			ok = r.directAccepted(j)
		}
		if ok || r.FailedDuring(j.Worker, j.Start, end) || r.netFaulted(j.Worker, j.Start, end) {
			continue
		}
		out = append(out, j)
	}
	return judgings, out
}

// netFaulted reports whether a network fault (a partition that cut it off
// from every arbiter that reaches the database, a cut, stall, loss, delay or
// break of one of its links, a message of its own whose fate was forced)
// touched node during [a, b]. A partition or a cut without a length lasts
// until the next heal; a stall, loss or delay burst until its last message
// could arrive (For, then Amount); a break and a message's fate happen at an
// instant (a delayed message, until it arrives). A delay burst counts as a
// stall does: heartbeats that arrive up to Amount late, for For, can miss a
// lease's expiry as surely as held ones (found by the baseline, wide world,
// heavy faults, seed 5002703: a delay of up to 27 s on a worker's links cost
// it the lease it was judging, and MA3 called the system_error false).
func (r *Run) netFaulted(node string, a, b int64) bool {
	for _, f := range r.Faults {
		until, ok := r.linkFaultUntil(f)
		if !ok {
			continue
		}
		hits := f.Node == node || f.Peer == node || (f.Kind != "partition" && f.Node == "")
		if f.Kind == "partition" {
			hits = r.cutOff(f, node)
		}
		if hits && f.T <= b && until >= a {
			return true
		}
	}
	return false
}

// linkFaultUntil returns when a network fault's effect ends (a cut or a
// partition without a duration: at the next heal), or false for a fault
// of another kind.
func (r *Run) linkFaultUntil(f FaultAt) (int64, bool) {
	until := f.T + f.For + f.Amount
	switch f.Kind {
	case "partition", "cut":
		if f.For == 0 {
			until = r.healAfter(f.T)
		}
	case "stall", "loss", "delay":
	case "break", "message-fate":
		until = f.T + f.Amount
	default:
		return 0, false
	}
	return until, true
}

// healAfter returns the time of the first heal or heal-all after t (or the
// end of the run).
func (r *Run) healAfter(t int64) int64 {
	for _, f := range r.Faults {
		if f.T >= t && (f.Kind == "heal" || f.Kind == "heal-all") {
			return f.T
		}
	}
	return r.End
}

type episode struct {
	node       string
	start, end int64
}

// stuckEpisodes are the times an arbiter's dispatch loop was stuck: a stall
// command or a pause.
func (r *Run) stuckEpisodes() []episode {
	var out []episode
	for _, f := range r.Faults {
		if f.Kind == "command" && f.Point == "stall" {
			d, err := time.ParseDuration(f.Arg)
			if err == nil {
				// A command to a frozen arbiter waits for its thaw (found
				// by the audit's sweep: moderate seed 42100131, a 45 s
				// stall sent at 72 s to an arbiter paused from 67 s to
				// 180 s stalled it from 180 s).
				start := f.T
				for _, iv := range r.Paused[f.Node] {
					if iv.Start <= f.T && (iv.End == 0 || iv.End > f.T) {
						start = iv.End
						if start == 0 {
							start = r.End
						}
					}
				}
				out = append(out, episode{f.Node, start, start + int64(d)})
			}
		}
	}
	for _, node := range checker.SortedKeys(r.Paused) {
		ivs := r.Paused[node]
		if len(node) < 7 || node[:7] != "arbiter" {
			continue
		}
		for _, iv := range ivs {
			end := iv.End
			if end == 0 {
				end = r.End
			}
			out = append(out, episode{node, iv.Start, end})
		}
	}
	// By start, then node, then end: the same order on every run (the
	// episodes' detection times are a metric's samples, in this order).
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.start != b.start {
			return a.start < b.start
		}
		if a.node != b.node {
			return a.node < b.node
		}
		return a.end < b.end
	})
	return out
}

// outages are the windows in which the arbiter or the database was down:
// the database crashed or paused (its queries hang: the arbiter's answers
// time out, as when it is down; a review found MA5 blind to the retries of
// a pause), every arbiter down, a partition, a cut to the database.
func (r *Run) outages() []Interval {
	out := append([]Interval(nil), r.Down["db"]...)
	out = append(out, r.Paused["db"]...)
	out = append(out, r.arbitersDown()...)
	for _, f := range r.Faults {
		if f.Kind == "partition" || (f.Kind == "cut" && (f.Node == "db" || f.Peer == "db")) {
			out = append(out, Interval{f.T, r.healAfter(f.T)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// arbitersDown are the times no arbiter was up: an arbiter's crash is an
// outage only until another one (a standby taking over, or its own
// restart) is up (found by explore: seed 10702 counted the requests after a
// standby's takeover as outage retries, MA5).
func (r *Run) arbitersDown() []Interval {
	var ups []Interval
	arbiters := false
	for _, node := range checker.SortedKeys(r.Up) {
		if strings.HasPrefix(node, "arbiter") {
			arbiters = true
			ups = append(ups, r.Up[node]...)
		}
	}
	if !arbiters {
		return nil
	}
	sort.Slice(ups, func(i, j int) bool { return ups[i].Start < ups[j].Start })
	var out []Interval
	covered := int64(0) // the union of the up intervals so far ends here
	for _, u := range ups {
		if u.Start > covered {
			out = append(out, Interval{Start: covered, End: u.Start})
		}
		if u.End == 0 {
			return out // up to the end of the run
		}
		covered = max(covered, u.End)
	}
	return append(out, Interval{Start: covered}) // every arbiter down from here to the end
}

func (r *Run) outageAt(t int64) bool {
	for _, iv := range r.outages() {
		end := iv.End
		if end == 0 {
			end = r.End
		}
		if t >= iv.Start && t <= end+int64(r.P.ProbeThreshold+r.P.ProbeEvery) {
			return true
		}
	}
	return false
}

func (r *Run) outageLoad() (load, beats int) {
	runs := r.retryRuns()
	warm := int64(2 * r.P.BackoffCap)
	for _, iv := range r.outages() {
		end := iv.End
		if end == 0 {
			end = r.End
		}
		// The claims and submits from the outage's first two backoff caps
		// on (a stream that began before the outage has reached its cap);
		// the heartbeats from its start: their bound holds a whole ramp.
		from := iv.Start + warm
		streams := end-from >= int64(time.Minute)
		// Per worker process incarnation (a call's id is
		// "process#incarnation.n"): a restarted worker starts its backoff
		// afresh, as a new process does (explore --world wide --faults
		// heavy, seed 1700: a worker restarted in an outage sent 14 in a
		// minute, the old process's retries and the new one's ramp).
		per := map[string][]retry{}
		hb := map[string][]int64{} // a process's heartbeats, per lease
		client := map[string]string{}
		for _, op := range r.Ops {
			if op.Invoke < iv.Start || op.Invoke >= end {
				continue
			}
			key := processOf(op.Call)
			switch op.Call.Op {
			case "claim", "submit": // the workers' retried requests
				if !streams || op.Invoke < from {
					continue
				}
				per[key] = append(per[key], retry{t: op.Invoke, stream: streamOf(op.Call.Op), run: runs.of(key, op)})
				client[key] = op.Call.Client
			case "heartbeat":
				lease := fmt.Sprintf("%s %d %s", key, op.Call.Sub, op.Call.Token)
				hb[lease] = append(hb[lease], op.Invoke)
				client[lease] = op.Call.Client
			}
		}
		for _, lease := range checker.SortedKeys(hb) {
			ts, mono := hb[lease], r.monoOf(client[lease])
			for i := range ts {
				ts[i] = mono(ts[i])
			}
			for i := range ts {
				n := 0
				for j := i; j < len(ts) && ts[j] < ts[i]+int64(time.Minute); j++ {
					n++
				}
				beats = max(beats, n)
			}
		}
		for _, key := range checker.SortedKeys(per) {
			rs := per[key]
			// A minute of the worker's own clock: its backoff runs on its
			// monotonic clock, so a clock that drifts fast backs off in
			// less real time (a drift of +18% made 14 requests of a real
			// minute out of 12 of its own: explore --faults heavy, seed
			// 1606). The clock is the fault there, not the retries.
			mono := r.monoOf(client[key])
			for i := range rs {
				rs[i].t = mono(rs[i].t)
			}
			for i := range rs {
				if n := retriesFrom(rs[i:], rs[i].t+int64(time.Minute)); n > load {
					load = n
				}
			}
		}
	}
	return load, beats
}

// retry is one claim or submit a worker process sent in an outage: when
// (on its monotonic clock), on which of its two retry streams, and in which
// of that stream's runs of failures.
type retry struct {
	t           int64
	stream, run int
}

// retriesFrom counts the requests from rs[0] up to (not including) end:
// for each stream, the most of one run. An answer for good ends a stream's
// run and its backoff starts again at the base (worker.go: a claim's 200
// or 204, a submit's 200 or 410): the requests before it reached an
// arbiter and were not retries into the outage (wide heavy seed 15000480:
// a claim and a submit answered 200 at 120 s, in a partition counted as
// an outage, then the two streams' fresh ramps after arbiter-1 crashed at
// 129 s, 6 each: 15 in a minute counted together, against a bound of 14).
// Runs are in time order within a stream, so each stream's count is kept
// as one sweep.
func retriesFrom(rs []retry, end int64) int {
	run := [2]int{-1, -1}
	var n, most [2]int
	for _, q := range rs {
		if q.t >= end {
			break
		}
		if q.run != run[q.stream] {
			run[q.stream], n[q.stream] = q.run, 0
		}
		n[q.stream]++
		most[q.stream] = max(most[q.stream], n[q.stream])
	}
	return most[0] + most[1]
}

// processOf names the worker process that sent a call: a call's id is
// "process#incarnation.n", and a restarted worker starts its backoff
// afresh, as a new process does; a call without such an id counts by its
// client's name.
func processOf(c hist.Call) string {
	if i := strings.LastIndexByte(c.ID, '.'); i > 0 && strings.Contains(c.ID[:i], "#") {
		return c.ID[:i]
	}
	return c.Client
}

// streamOf is a worker request's retry stream: its claim loop (0) or its
// uploader (1).
func streamOf(op string) int {
	if op == "submit" {
		return 1
	}
	return 0
}

// retryRuns numbers the runs of failures of each worker process's two
// retry streams over the whole run: a request's run is the number of
// answers for good its stream had had when it was sent.
type retryRuns map[string]*[2][]int64

func (r *Run) retryRuns() retryRuns {
	out := retryRuns{}
	for _, op := range r.Ops {
		if (op.Call.Op != "claim" && op.Call.Op != "submit") || op.Return == nil || !answeredForGood(op) {
			continue
		}
		key := processOf(op.Call)
		if out[key] == nil {
			out[key] = &[2][]int64{}
		}
		s := streamOf(op.Call.Op)
		out[key][s] = append(out[key][s], op.Response)
	}
	for _, key := range checker.SortedKeys(out) {
		for s := range out[key] {
			slices.Sort(out[key][s])
		}
	}
	return out
}

// answeredForGood: the answer that ends a stream's retries (worker.go): a
// claim paired (200) or with no work in its hold (204), a submit recorded
// (200) or stale (410).
func answeredForGood(op checker.Op) bool {
	switch op.Return.Code {
	case 200:
		return true
	case 204:
		return op.Call.Op == "claim"
	case 410:
		return op.Call.Op == "submit"
	}
	return false
}

func (rr retryRuns) of(key string, op checker.Op) int {
	ans := rr[key]
	if ans == nil {
		return 0
	}
	goods := ans[streamOf(op.Call.Op)]
	n, _ := slices.BinarySearch(goods, op.Invoke+1) // answers at or before the request
	return n
}

// monoOf returns a node's monotonic clock reading at each world time, as
// the schedule's drift faults make it (clock.Clock.Mono: the drift
// accumulated since each drift began; jumps move only the wall clock; a
// heal-all ends every drift).
func (r *Run) monoOf(node string) func(t int64) int64 {
	type seg struct{ from, base, rate int64 }
	var segs []seg
	var base, since, rate int64
	for _, f := range r.Faults {
		if (f.Kind != "drift" || f.Node != node) && f.Kind != "heal-all" {
			continue
		}
		base += (f.T - since) * rate / 1_000_000
		since, rate = f.T, 0
		if f.Kind == "drift" {
			rate = f.Rate
		}
		segs = append(segs, seg{since, base, rate})
	}
	return func(t int64) int64 {
		var d int64
		for _, s := range segs {
			if s.from <= t {
				d = s.base + (t-s.from)*s.rate/1_000_000
			}
		}
		return t + d
	}
}

func (r *Run) homeFirst() (grants, misses int) {
	// A home claim waits at t when it was invoked before t and answered
	// after it, or, never answered, its worker had not yet given up on it
	// (gaveUp). Grants come in time order and operations in invocation
	// order, so one sweep keeps the latest end of the home claims invoked
	// so far: some claim waits at t iff it is past t.
	latest := int64(math.MinInt64)
	next := 0
	gaveUp := r.gaveUp()
	for _, g := range r.grants() {
		grants++
		for ; next < len(r.Ops) && r.Ops[next].Invoke < g.t; next++ {
			op := &r.Ops[next]
			if op.Call.Op == "claim" && strings.HasPrefix(op.Call.Client, "home") {
				end := op.Response
				if op.Return == nil {
					end = gaveUp(next)
				}
				latest = max(latest, end)
			}
		}
		if strings.HasPrefix(g.worker, "prod") && latest > g.t {
			misses++
		}
	}
	return
}

// gaveUp returns, for a claim that got no answer (by its index in Ops),
// when its worker stopped waiting on it: at its timeout (the claim hold and
// a request's timeout, worker.go, on the process's monotonic clock), or
// sooner when the process crashed or sent its next claim (the call failed
// at once: its connection broke, or nobody listened at the address). A
// claim without an answer is a call given up on, not one that waits to the
// end of the run (counted so, one timed-out home claim made every later
// production grant a miss).
func (r *Run) gaveUp() func(i int) int64 {
	wait := int64(r.P.ClaimHold + r.P.RequestTimeout)
	monos := map[string]func(int64) int64{}
	claims := map[string][]int64{} // each process's claim invocations, in order
	for _, op := range r.Ops {
		if op.Call.Op == "claim" {
			k := processOf(op.Call)
			claims[k] = append(claims[k], op.Invoke)
		}
	}
	return func(i int) int64 {
		op := &r.Ops[i]
		c := op.Call.Client
		mono := monos[c]
		if mono == nil {
			mono = r.monoOf(c)
			monos[c] = mono
		}
		// The world time at which the process's clock has counted wait
		// since the call (a drift is at most ±50%: within 2 x wait).
		due := mono(op.Invoke) + wait
		lo, hi := op.Invoke, op.Invoke+2*wait
		for lo < hi {
			if m := lo + (hi-lo)/2; mono(m) >= due {
				hi = m
			} else {
				lo = m + 1
			}
		}
		end := lo
		ts := claims[processOf(op.Call)]
		if j, _ := slices.BinarySearch(ts, op.Invoke+1); j < len(ts) {
			end = min(end, ts[j])
		}
		for _, iv := range r.Down[c] {
			if iv.Start >= op.Invoke {
				end = min(end, iv.Start)
			}
		}
		return end
	}
}

// Result is everything the checkers say about one run.
type Result struct {
	Verdicts []checker.Verdict
	Metrics  Metrics
	// Info is porcupine's record of the first failed linearizability check
	// (for the visualisation), nil when both views passed.
	Info *porcupine.LinearizationInfo
}

// OK reports whether every property held.
func (res Result) OK() bool { return len(checker.Failed(res.Verdicts)) == 0 }

// Check runs every invariant, both porcupine views, and the metrics.
func Check(r *Run) Result {
	var res Result
	for _, inv := range Invariants {
		res.Verdicts = append(res.Verdicts, inv.Check(r))
	}
	for _, view := range []View{OracleView, ClientView} {
		v, info := Linearizable(r, view)
		res.Verdicts = append(res.Verdicts, v)
		if info != nil && res.Info == nil {
			res.Info = info
		}
	}
	res.Metrics = Measure(r)
	return res
}
