package harness

import (
	"fmt"
	"strings"
	"time"

	jc "github.com/fencesim/fencesim/checker/judge"
	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// ---- bounded exhaustive mode ----
//
// In a small world, every single fault of a fixed vocabulary is tried, one
// run each, and then every pair of them in a smaller world: a crash of each
// node at each of its blocking calls (a state machine's inputs, for the
// database), restarted early or late; and each message of the claim,
// heartbeat and submit exchanges (worker <-> arbiter) dropped, duplicated
// or delayed past every request timeout. The blocking calls and messages
// are those of the fault-free run of the same world: up to the fault, a
// faulty run is that run, so the N-th blocking call or the k-th message
// of a link is the same one in both. Each fault is armed from the start
// (sim.Action.FromStart), so the start-up's calls count too. A third world,
// the small one with two arbiters, holds the stalled old leader of A-S6:
// arbiter-1 frozen at each of its claims' COMMIT, with and without its
// idle lock session ended as it freezes, until the worker's retry has gone
// to arbiter-2, or past the lease and the grace.

// Small is the world of the exhaustive mode: the design's knobs and
// parameters with one arbiter (two if the design has several), one home
// and one production worker, judging a fixed 25 s (one heartbeat beyond
// the confirming one), and n submissions arriving at 2 s, 3 s, ...
func Small(d judge.Design, n int) (judge.Design, judge.Workload) {
	d.Arbiters = min(max(d.Arbiters, 1), 2)
	d.StandbyArbiters, d.LegacyWorkers, d.LegacyRules = 0, 0, false
	d.HomeWorkers, d.ProdWorkers = 1, 1
	d.JudgeMin, d.JudgeMax = 25*time.Second, 25*time.Second
	return d, judge.Workload{Arrivals: subs(n, time.Second)}
}

// Space is the fault space of one small world: its fault-free run's
// blocking calls per node and messages per link, and the faults made of
// them.
type Space struct {
	Design   judge.Design
	Workload judge.Workload
	Heal     clock.Time      // heal-all: after every fault, and every late restart
	Until    time.Duration   // the runs' end time (PA8's bound after Heal)
	Early    time.Duration   // downtime of an early restart
	Late     time.Duration   // downtime of a late restart: past the lease and the grace
	Late2    time.Duration   // the delay of a delayed message: past every request timeout
	Calls    []Count         // blocking calls per node in the fault-free run
	Messages []Count         // messages per worker <-> arbiter link in the fault-free run
	Freezes  []Count         // the old-leader space: claim COMMITs of arbiter-1 in the fault-free run
	Thaws    []time.Duration // the old-leader space: how long each freeze lasts
	Faults   []sim.Action    // every single fault, in a fixed order
	Ref      *Outcome        // the fault-free run
}

// Count is how many blocking calls a node, or messages a link, had.
type Count struct {
	Name string // a node, or "from->to"
	N    int
}

// linkCounter counts the messages sent on each link of interest.
// linkCounter counts the messages sent on each link of interest, and
// notes the sender of each grant statement sent to the database.
type linkCounter struct {
	traces.Memory
	want   map[string]bool
	count  map[string]int
	grants []string
}

func (c *linkCounter) Record(e *traces.Event) {
	if e.Kind == "send" {
		// "#12 a->b conn=3 ..."
		d := e.Desc()
		f := strings.Fields(d)
		if len(f) > 1 && c.want[f[1]] {
			c.count[f[1]]++
		}
		if strings.Contains(d, grantStatement) {
			c.grants = append(c.grants, e.Node)
		}
		return
	}
	c.Memory.Record(e)
}

// options are a run's options in the space: the faults, then the heal-all.
func (s *Space) options(faults ...sim.Action) judge.Options {
	sched := append(sim.Schedule(nil), faults...)
	sched = append(sched, sim.Action{At: s.Heal, Kind: sim.HealAll})
	return judge.Options{Design: s.Design, Workload: s.Workload, Schedule: sched, Seed: 1, Until: s.Until,
		Settle: judge.SettleOf(s.Design), Filter: CheckerFilter}
}

// Options are the options of a run with the given faults (none: the
// fault-free run), ending with the heal-all.
func (s *Space) Options(faults ...sim.Action) judge.Options { return s.options(faults...) }

// Run plays one run with the given faults and checks it.
func (s *Space) Run(faults ...sim.Action) (*Outcome, error) { return Play(s.options(faults...)) }

// NewSpace runs a small world's fault-free run, counts its blocking calls
// and messages, and lists the single faults.
func NewSpace(d judge.Design, wl judge.Workload) (*Space, error) { return newSpace(d, wl, false) }

// newSpace is NewSpace; with leader, the faults are the old leader's
// freezes alone (LeaderSpace).
func newSpace(d judge.Design, wl judge.Workload, leader bool) (*Space, error) {
	s := &Space{Design: d, Workload: wl, Early: time.Second, Late: d.Lease + d.Grace + time.Second,
		Late2: d.ClaimHold + d.RequestTimeout + time.Second}
	names := judge.NamesOf(d)
	ctr := &linkCounter{want: map[string]bool{}, count: map[string]int{}}
	var links []string
	for _, w := range names.Workers() {
		for _, a := range names.Arbiters {
			for _, l := range []string{w + "->" + a, a + "->" + w} {
				ctr.want[l] = true
				links = append(links, l)
			}
		}
	}
	// The fault-free run, as long as any run of the space may be: its end
	// is where the faults stop.
	ref := judge.Options{Design: d, Workload: wl, Seed: 1, Until: time.Hour, Settle: judge.SettleOf(d), Recorder: ctr,
		Filter: func(k string) bool { return k == "send" || CheckerFilter(k) }}
	w, err := judge.Simulate(ref)
	if err != nil {
		return nil, fmt.Errorf("the fault-free run: %w", err)
	}
	end := w.Now()
	p, err := jc.ParseParams(d.JSON())
	if err != nil {
		return nil, err
	}
	s.Heal = end.Add(s.Late + time.Second)
	s.Until = time.Duration(s.Heal) + jc.BoundOf(p, len(wl.Arrivals)) + time.Minute
	if leader {
		// Every claim COMMIT of arbiter-1 (one per grant of a claim_batch
		// of 1): frozen there, its lock session ended or not, thawing
		// once the worker's claim has timed out and its retry reached
		// arbiter-2 (which took the lock within leader_retry), or past
		// the lease and the grace.
		old, k := names.Arbiters[0], 0
		for _, l := range ctr.grants {
			if l == old {
				k++
			}
		}
		s.Freezes = append(s.Freezes, Count{old, k})
		s.Thaws = []time.Duration{s.Late2 + d.LeaderRetry, s.Late}
		for i := 1; i <= k; i++ {
			for _, thaw := range s.Thaws {
				for _, peer := range []string{names.DB, ""} {
					s.Faults = append(s.Faults, sim.Action{Kind: sim.PauseAt, Node: old, Peer: peer, Point: judge.PointBeforeCommit, Count: i, For: thaw, FromStart: true})
				}
			}
		}
		s.Ref, err = s.Run()
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	crashable := append([]string{names.DB}, names.Arbiters...)
	crashable = append(crashable, names.Workers()...)
	for _, n := range crashable {
		k := int(w.Yields(n))
		s.Calls = append(s.Calls, Count{n, k})
		for i := 1; i <= k; i++ {
			for _, down := range []time.Duration{s.Early, s.Late} {
				s.Faults = append(s.Faults, sim.Action{Kind: sim.CrashYield, Node: n, Count: i, For: down, FromStart: true})
			}
		}
	}
	for _, l := range links {
		from, to, _ := strings.Cut(l, "->")
		k := ctr.count[l]
		s.Messages = append(s.Messages, Count{l, k})
		for i := 1; i <= k; i++ {
			s.Faults = append(s.Faults,
				sim.Action{Kind: sim.Message, Node: from, Peer: to, Arg: sim.FateDrop, Count: i, FromStart: true},
				sim.Action{Kind: sim.Message, Node: from, Peer: to, Arg: sim.FateDup, Count: i, FromStart: true},
				sim.Action{Kind: sim.Message, Node: from, Peer: to, Arg: sim.FateDelay, Amount: s.Late2, Count: i, FromStart: true})
		}
	}
	// The fault-free run itself, checked as every other.
	s.Ref, err = s.Run()
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Pairs lists every unordered pair of distinct single faults of the space
// (i < j), or, with max > 0, a deterministic spread of at most max of
// them (every step-th pair in order), and how many pairs there are in all.
func (s *Space) Pairs(max int) ([][2]sim.Action, int) {
	n := len(s.Faults)
	total := n * (n - 1) / 2
	step := 1
	if max > 0 && total > max {
		step = (total + max - 1) / max
	}
	var out [][2]sim.Action
	k := 0
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if k%step == 0 {
				out = append(out, [2]sim.Action{s.Faults[i], s.Faults[j]})
			}
			k++
		}
	}
	return out, total
}

// Describe says what the space holds, in one line per part.
func (s *Space) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "world: %d arbiter(s), %d home + %d prod worker(s), %d submission(s), judging %v; fault-free run ends at %v, heal-all at %v\n",
		s.Design.Arbiters, s.Design.HomeWorkers, s.Design.ProdWorkers, len(s.Workload.Arrivals), s.Design.JudgeMin, s.Heal.Add(-s.Late-time.Second), s.Heal)
	var calls, msgs []string
	for _, c := range s.Calls {
		calls = append(calls, fmt.Sprintf("%s %d", c.Name, c.N))
	}
	for _, c := range s.Messages {
		msgs = append(msgs, fmt.Sprintf("%s %d", c.Name, c.N))
	}
	if len(s.Freezes) > 0 {
		var fs []string
		for _, c := range s.Freezes {
			fs = append(fs, fmt.Sprintf("%s %d", c.Name, c.N))
		}
		fmt.Fprintf(&b, "claim COMMITs: %s (the old leader, A-S6: each frozen, its idle lock session ended or not, thawing after %v or %v)\n",
			strings.Join(fs, ", "), s.Thaws[0], s.Thaws[1])
		fmt.Fprintf(&b, "single faults: %d", len(s.Faults))
		return b.String()
	}
	fmt.Fprintf(&b, "blocking calls: %s (each crashed, restarted after %v or %v)\n", strings.Join(calls, ", "), s.Early, s.Late)
	fmt.Fprintf(&b, "messages: %s (each dropped, duplicated, delayed %v)\n", strings.Join(msgs, ", "), s.Late2)
	fmt.Fprintf(&b, "single faults: %d", len(s.Faults))
	return b.String()
}

// The worlds of the exhaustive mode: two submissions for the single
// faults, one for the pairs.
const (
	SingleSubmissions = 2
	PairSubmissions   = 1
)

// SingleSpace is the space of single faults for a design.
func SingleSpace(d judge.Design) (*Space, error) { return NewSpace(Small(d, SingleSubmissions)) }

// PairSpace is the space whose pairs of faults are tried for a design.
func PairSpace(d judge.Design) (*Space, error) { return NewSpace(Small(d, PairSubmissions)) }

// LeaderSpace is the space of the stalled old leader (A-S6) for a design:
// the small world of the single faults with two arbiters, and arbiter-1
// frozen at each of its claims' COMMIT.
func LeaderSpace(d judge.Design) (*Space, error) {
	d.Arbiters = 2
	d, wl := Small(d, SingleSubmissions)
	return newSpace(d, wl, true)
}

// grantStatement is what a claim's grant statement says (sql.go's Grant).
const grantStatement = "SET status = 'judging'"
