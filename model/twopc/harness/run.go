package harness

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/checker"
	ct "github.com/fencesim/fencesim/checker/twopc"
	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/twopc"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// Harness fixes how a checked run is driven: faults happen before HealAt,
// where a heal-all ends them (crashed nodes restart); the run then settles
// until HealAt + Settle, on while a prepared transaction remains up to
// HealAt + SettleOf(design) (settle), and is noted quiesced, so that PC4
// applies.
type Harness struct {
	Network network.Policy
	HealAt  time.Duration
	Settle  time.Duration
	Horizon time.Duration // generated faults start before this
	MaxDown time.Duration // longest generated downtime
	// Restart, when positive, restarts every crashed node this long after
	// its crash (a supervisor), besides the heal-all.
	Restart time.Duration
}

// DefaultHarness is the harness of the property tests and of RunSeed: a 1 ms
// network, faults in the first 3 s, downtimes up to 10 s (longer than
// abort_after), heal at 20 s, settle 30 s.
func DefaultHarness() Harness {
	return Harness{
		Network: network.Policy{DelayMin: time.Millisecond, DelayMax: time.Millisecond},
		HealAt:  20 * time.Second, Settle: 30 * time.Second,
		Horizon: 3 * time.Second, MaxDown: 10 * time.Second,
	}
}

// Outcome is one checked run.
type Outcome struct {
	// Design and Seed are the drawn world and the seed of its streams
	// (set by Property: Run is given an entropy, not a seed).
	Design   twopc.Design
	Seed     uint64
	World    *twopc.World // closed when Run returns: its databases can be read, nothing runs
	Schedule sim.Schedule // the faults (without the workload's commands and the heal-all)
	Events   []traces.Event
	Report   ct.Report
	Err      error // the run itself failed (event budget)
	// Digest is, for SimulateDigest, the digest every event was hashed by.
	Digest *traces.Digest
}

// OK reports whether every property held.
func (o *Outcome) OK() bool { return o.Err == nil && o.Report.OK() }

// Failed lists the failed properties.
func (o *Outcome) Failed() []string { return o.Report.Failed() }

// Tail returns the last n 2PC and database-ending events, for failure
// messages.
func (o *Outcome) Tail(n int) string {
	var lines []string
	for _, e := range o.Events {
		switch e.Kind {
		case hist.KindTxn, "prepared", "crash", "restart", "fault":
			lines = append(lines, e.String())
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

type recorder struct {
	traces.Memory
	w       *sim.World
	restart time.Duration
	added   sim.Schedule
	crashes map[string]int
}

func (r *recorder) Record(e *traces.Event) {
	r.Memory.Record(e)
	if e.Kind == "crash" && r.restart > 0 && r.w != nil {
		a := sim.Action{At: clock.Time(e.T).Add(r.restart), Kind: sim.Restart, Node: e.Node}
		if err := r.w.Inject(a); err == nil {
			r.added = append(r.added, a)
		}
	}
}

// Run runs a design under a fault schedule with the given entropy and
// checks it.
func (h Harness) Run(d twopc.Design, faults sim.Schedule, ent sim.Entropy) *Outcome {
	o := h.Simulate(d, faults, ent)
	if o.World == nil {
		return o
	}
	rep, err := ct.Check(o.Events)
	if err != nil && o.Err == nil {
		o.Err = err
	}
	o.Report = rep
	return o
}

// Limits are the limits a run of a design plays under: it ends at the
// latest SettleOf(d), at least h.Settle, after the heal or after the
// workload's last request, whichever is later.
func (h Harness) Limits(d twopc.Design) sim.Limits {
	from := h.HealAt
	for _, t := range d.Plan() {
		from = max(from, t.At)
	}
	return sim.Limits{MaxTime: clock.Time(from + max(h.Settle, SettleOf(d))), MaxEvents: 2_000_000, MaxPending: sim.DefaultMaxPending}
}

// settle runs a world to HealAt + Settle, then on, a second at a time, while
// a participant still holds a prepared transaction, up to the limits' end
// (Limits): a run its 30 s settled ends as it always did, and one whose
// design is still retrying, or whose last transaction was asked for just
// before the end (first_txn = 49.999s), is given the time it needs, but no
// more (cooperative agents poll all along).
func (h Harness) settle(w *twopc.World, d twopc.Design) error {
	end := h.Limits(d).MaxTime
	t := min(clock.Time(h.HealAt+h.Settle), end)
	if err := w.RunUntil(t); err != nil {
		return err
	}
	for t < end && prepared(w) {
		t = min(t.Add(time.Second), end)
		if err := w.RunUntil(t); err != nil {
			return err
		}
	}
	return nil
}

// prepared reports whether a participant that is up holds a prepared
// transaction.
func prepared(w *twopc.World) bool {
	for _, p := range w.Names.Participants {
		if n := w.DB(p); n != nil && len(n.Prepared()) > 0 {
			return true
		}
	}
	return false
}

// SettleOf is the time a design needs after the heal to finish what the
// faults left: a request out at the heal may go unanswered until
// request_timeout, then its backoff waits up to retry_cap before the retry
// that succeeds; a transaction queued behind it on a row lock may do the
// same once more. Twice request_timeout + retry_cap: 14 s for the default
// design, at most 30 s for a drawn world (DrawWorld's request_timeout and
// retry_cap are at most 5 s and 10 s), so the default harness's 30 s
// decides for those (their runs and hashes are as before); a design set
// beyond (retry_cap = 1h) is given its time, so that the end note's
// "quiesced" holds (TestSettleCoversTheRetry).
func SettleOf(d twopc.Design) time.Duration {
	return 2 * (d.ReqTimeout + d.RetryCap)
}

// Simulate runs a design under a fault schedule with the given entropy,
// unchecked (Run checks), recording every event.
func (h Harness) Simulate(d twopc.Design, faults sim.Schedule, ent sim.Entropy) *Outcome {
	return h.simulate(d, faults, ent, nil, 0)
}

// SimulateChecked is Simulate recording only what the checker reads
// (CheckerFilter): the same run, judged the same, its other events
// numbered but never made (what explore plays; a failure's report replays
// it in full).
func (h Harness) SimulateChecked(d twopc.Design, faults sim.Schedule, ent sim.Entropy) *Outcome {
	return h.simulate(d, faults, ent, CheckerFilter, 0)
}

// CheckerFilter records the kinds checker/twopc reads and the crashes the
// harness restarts.
func CheckerFilter(kind string) bool { return kind == "crash" || ct.Reads(kind) }

// SimulateDigest is SimulateChecked with every event hashed as it is
// recorded (Outcome.Digest, a traces.Digest of the hash version): the full
// record's hash, the checked record kept.
func (h Harness) SimulateDigest(version int, d twopc.Design, faults sim.Schedule, ent sim.Entropy) *Outcome {
	return h.simulate(d, faults, ent, CheckerFilter, version)
}

func (h Harness) simulate(d twopc.Design, faults sim.Schedule, ent sim.Entropy, filter func(string) bool, digest int) *Outcome {
	rec := &recorder{restart: h.Restart}
	var dg *traces.Digest
	var top sim.Recorder = rec
	if digest != 0 {
		dg = traces.NewDigest(digest, filter, rec)
		top, filter = dg, nil
	}
	sched := append(append(sim.Schedule(nil), faults...), sim.Action{At: clock.Time(h.HealAt), Kind: sim.HealAll})
	w, err := twopc.Build(d, sim.Config{
		Entropy: ent, Network: h.Network, Schedule: sched, Recorder: top, Filter: filter,
		Limits: h.Limits(d),
	})
	if err != nil {
		return &Outcome{Schedule: faults, Err: err}
	}
	rec.w = w.World
	o := &Outcome{World: w, Schedule: faults}
	o.Err = h.settle(w, d)
	quiet := o.Err == nil
	for _, n := range append(append([]string(nil), w.Names.Started...), w.Names.Participants...) {
		quiet = quiet && w.Up(n)
	}
	w.Note(hist.KindTxn, fmt.Sprintf("end quiesced=%v", quiet), hist.Txn{What: hist.TxnEnd, Quiesced: quiet})
	w.Close()
	o.Schedule = append(o.Schedule, rec.added...)
	o.Events, o.Digest = rec.Events, dg
	return o
}

// RunSeed runs one simulated run of a design for a seed, as fencesim
// explore plays it: the world and the faults drawn from the seed
// (DrawSeed: the world first, then its fault-free reference, then faults
// placed on it and timed over the workload's span), the default harness,
// every property checked. The drawn design is the outcome's World.Design.
func RunSeed(d twopc.Design, seed uint64) *Outcome { return RunSeedWith(d, seed, Moderate) }

// RunSeedWith is RunSeed under a fault intensity.
func RunSeedWith(d twopc.Design, seed uint64, in sim.Intensity) *Outcome {
	h := DefaultHarness()
	x, err := h.DrawSeed(d, seed, in)
	if err != nil {
		return &Outcome{Err: err}
	}
	return h.Run(x.Design, x.Schedule, sim.NewPCG(seed))
}

// Property is the rapid property of a design, the generic search under
// rapid: draw the world (DrawWorld, so that a failure shrinks toward
// the smallest world), a seed for the network's and the nodes' streams,
// run the world's reference, draw the faults on it (SearchFaults, each
// list a rapid slice so that shrinking deletes whole faults), run under
// the harness, and fail when one of the watched properties fails (any
// when watch is empty; a run that fails to run always fails). The last
// failing outcome (after shrinking: the shrunk one) is left in *last when
// last is not nil.
func (h Harness) Property(d twopc.Design, in sim.Intensity, watch []string, last **Outcome) func(*rapid.T) {
	return func(t *rapid.T) {
		r := sim.NewRapid(t)
		dw := DrawWorld(r, d)
		seed := r.Uint64n("seed", 1<<20)
		ent := sim.NewPCG(seed)
		ref, err := h.NewReference(dw, ent)
		if err != nil {
			t.Fatalf("the reference run: %v", err)
		}
		s, _ := h.SearchFaults(r, sim.RapidEach(t), dw, ref, in)
		o := h.Run(dw, s, ent)
		o.Design, o.Seed = dw, seed
		if o.Err != nil {
			if last != nil {
				*last = o
			}
			t.Fatalf("the run failed: %v\nschedule:\n%s", o.Err, s)
		}
		var bad []string
		for _, f := range o.Failed() {
			if len(watch) == 0 || slices.Contains(watch, ID(f)) {
				bad = append(bad, f)
			}
		}
		if len(bad) > 0 {
			if last != nil {
				*last = o
			}
			t.Fatalf("properties %v failed in %s under\n%s\n%s\n%s", bad, WorldOf(dw), s, o.Report.String(), o.Tail(20))
		}
	}
}

// ID is the id of a property name: "PC1" of "PC1 atomicity-after-recovery".
func ID(name string) string {
	id, _, _ := strings.Cut(name, " ")
	return id
}

// WorldOf describes a drawn world in a few words.
func WorldOf(d twopc.Design) string {
	s := fmt.Sprintf("%d participants, %d coordinator(s) + %d standby, %d transaction(s)", d.Participants, d.Coordinators, d.Standby, len(d.Plan()))
	if d.Cooperative {
		s += ", cooperative"
	}
	return s
}

// Verdicts returns a run's property verdicts.
func (o *Outcome) Verdicts() []checker.Verdict { return o.Report.Verdicts }

// ---- exhaustive crash enumeration ----

// Site is one place to crash: node's Count-th pass of crash point Point.
type Site struct {
	Node  string `json:"node"`
	Point string `json:"point"`
	Count int    `json:"count"`
}

func (s Site) String() string { return fmt.Sprintf("%s@%s#%d", s.Node, s.Point, s.Count) }

func (s Site) action() sim.Action {
	return sim.Action{At: 0, Kind: sim.CrashAt, Node: s.Node, Point: s.Point, Count: s.Count}
}

// Coverage is the result of an exhaustive enumeration.
type Coverage struct {
	Sites    []Site     // every crash site reached by a single crash
	Singles  int        // single-crash runs whose crash happened
	Pairs    int        // two-crash runs whose both crashes happened
	Runs     int        // runs made
	Failures []*Outcome // runs where a property failed (the first few)
}

func reached(evs []traces.Event, s Site) int {
	n := 0
	for _, e := range evs {
		if e.Kind == "fault" && e.Node == s.Node && e.Text == "crash point "+s.Point+" reached" {
			n++
		}
	}
	return n
}

// Enumerate crashes the coordinator and every participant at every step
// (PointStep), at every named crash point of the coordinator and at the
// databases' durable-but-unanswered points, one crash per run, each pass of
// each point in turn until a pass is no longer reached; with pairs, also
// every ordered pair of those sites in one run. Crashed nodes restart after
// the harness's Restart delay (1 s if unset).
func (h Harness) Enumerate(d twopc.Design, pairs bool, maxFailures int) Coverage {
	if h.Restart <= 0 {
		h.Restart = time.Second
	}
	var cov Coverage
	n := twopc.NamesOf(d)
	type nodePoints struct {
		node   string
		points []string
	}
	var all []nodePoints
	for _, c := range n.Started {
		all = append(all, nodePoints{c, twopc.CoordinatorPoints(d)})
	}
	for _, p := range n.Participants {
		all = append(all, nodePoints{p, twopc.ParticipantPoints()})
	}
	keep := func(o *Outcome) {
		if !o.OK() && len(cov.Failures) < maxFailures {
			cov.Failures = append(cov.Failures, o)
		}
	}
	for _, np := range all {
		for _, p := range np.points {
			for k := 1; ; k++ {
				s := Site{np.node, p, k}
				o := h.Run(d, sim.Schedule{s.action()}, sim.NewPCG(1))
				cov.Runs++
				if reached(o.Events, s) == 0 {
					break
				}
				cov.Sites = append(cov.Sites, s)
				cov.Singles++
				keep(o)
			}
		}
	}
	if !pairs {
		return cov
	}
	// Two crashes: after each single site, every pass of every point again,
	// counted from the start of the run (for the same point of the same
	// node: counted after the first crash), until a pass is not reached.
	for _, a := range cov.Sites {
		for _, np := range all {
			for _, p := range np.points {
				need := 1
				if np.node == a.Node && p == a.Point {
					need = 2
				}
				for k := 1; ; k++ {
					b := Site{np.node, p, k}
					o := h.Run(d, sim.Schedule{a.action(), b.action()}, sim.NewPCG(1))
					cov.Runs++
					rb := reached(o.Events, b)
					if rb < need {
						break
					}
					if reached(o.Events, a) > 0 {
						cov.Pairs++
						keep(o)
					}
				}
			}
		}
	}
	return cov
}
