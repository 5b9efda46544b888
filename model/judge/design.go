package judge

import (
	"encoding/json"
	"fmt"
	"github.com/fencesim/fencesim/model/design"
	"slices"
	"time"
)

// Knob switches one mechanism of the design off, or to its known-bad
// alternative (docs/systems.md, "Design knobs of system A").
type Knob string

// The knobs of system A.
const (
	FenceByWorkerID         Knob = "fence-by-worker-id"
	UnconditionalWrites     Knob = "unconditional-writes"
	NoRequestID             Knob = "no-request-id"
	LongFirstLease          Knob = "long-first-lease"
	NoGrace                 Knob = "no-grace"
	ArbiterClock            Knob = "arbiter-clock"
	DuplicateIsError        Knob = "duplicate-is-error"
	NoUniqueHistory         Knob = "no-unique-history"
	CreditWithoutOnConflict Knob = "credit-without-on-conflict"
	ReclaimKeepsToken       Knob = "reclaim-keeps-token"
	MemoryFacts             Knob = "memory-facts"
	WorkerNoDisk            Knob = "worker-no-disk"
	NoBackoffCap            Knob = "no-backoff-cap"
	NoLeaderLock            Knob = "no-leader-lock"
	HeartbeatByWorkerID     Knob = "heartbeat-by-worker-id"
	ClaimByRequestIDOnly    Knob = "claim-by-request-id-only"
	AttemptsAtGrant         Knob = "attempts-at-grant"
	ClaimLookupOnly         Knob = "claim-lookup-only"
	BlindSweep              Knob = "blind-sweep"
	ResendAsFound           Knob = "resend-as-found"
	GraceAllJudging         Knob = "grace-all-judging"
	LeaderOnlyServes        Knob = "leader-only-serves"
	RejudgeClearsHistory    Knob = "rejudge-clears-history"
)

// KnobInfo describes a knob for the registry, the CLI and the knob tests.
type KnobInfo = design.KnobInfo[Knob]

// Knobs is the registry, in the order of docs/systems.md's table.
var Knobs = design.Registry[Knob]{
	{Knob: FenceByWorkerID, Removes: "submit checks worker_id instead of lease_token", Harmful: true, CaughtBy: []string{"PA1", "PA2"}, Scenarios: []string{"A-S5"}},
	{Knob: UnconditionalWrites, Removes: "result and heartbeat writes without status/token condition", Harmful: true, CaughtBy: []string{"PA1", "PA2"}, Scenarios: []string{"A-S5"}},
	{Knob: NoRequestID, Removes: "claim retries are not idempotent", Harmful: true, CaughtBy: []string{"PA4", "MA1"}, Scenarios: []string{"A-S1"}},
	{Knob: LongFirstLease, Removes: "new leases start at the full lease, no unconfirmed phase", Harmful: true, CaughtBy: []string{"MA1"}, Scenarios: []string{"A-S1"}},
	{Knob: NoGrace, Removes: "no start-up grace", Harmful: true, CaughtBy: []string{"MA2", "MA3"}, Scenarios: []string{"A-S2"}},
	{Knob: ArbiterClock, Removes: "lease expiry judged by the arbiter's clock", Harmful: true, CaughtBy: []string{"MA1", "MA2", "MA3"}, Scenarios: []string{"A-S7"}},
	{Knob: DuplicateIsError, Removes: "a duplicate submit gets a failure answer", Harmful: true, CaughtBy: []string{"PA5", "PA7"}, Scenarios: []string{"A-S4"}},
	{Knob: NoUniqueHistory, Removes: "no UNIQUE (submission_id, lease_token)", Harmful: true, CaughtBy: []string{"PA5"}, Scenarios: []string{"A-S4"}},
	{Knob: CreditWithoutOnConflict, Removes: "first-AC/XP inserted without ON CONFLICT DO NOTHING", Harmful: true, CaughtBy: []string{"PA6"}, Scenarios: []string{"A-S4"}},
	{Knob: ReclaimKeepsToken, Removes: "sweep re-queues without voiding the token", Harmful: true, CaughtBy: []string{"PA1"}, Scenarios: []string{"A-S5"}},
	{Knob: MemoryFacts, Removes: "the arbiter validates tokens against its in-memory cache", Harmful: true, CaughtBy: []string{"PA1", "PA3"}, Scenarios: []string{"A-S6"}},
	{Knob: WorkerNoDisk, Removes: "worker keeps results only in memory", Harmful: true, CaughtBy: []string{"PA7", "MA2"}, Scenarios: []string{"A-S2"}},
	{Knob: NoBackoffCap, Removes: "retries without backoff (every base interval)", Harmful: true, CaughtBy: []string{"MA5"}, Scenarios: []string{"A-S7"}},
	{Knob: NoLeaderLock, Removes: "no advisory lock, every arbiter dispatches", Harmful: false, CaughtBy: nil, Scenarios: []string{"A-S6"}},
	{Knob: HeartbeatByWorkerID, Removes: "heartbeat renews on status and worker_id, without lease_token", Harmful: true, CaughtBy: []string{"PA1"}, Scenarios: []string{"A-S5"}},
	{Knob: ClaimLookupOnly, Removes: "the idempotent claim is a look-up only, without UNIQUE (worker_id, request_id, slot)", Harmful: true, CaughtBy: []string{"PA4"}, Scenarios: []string{"A-S6"}},
	{Knob: AttemptsAtGrant, Removes: "judge_attempts counts every grant, not the leases their workers confirmed: a lease nobody heard of spends an attempt", Harmful: true, CaughtBy: []string{"MA3"}, Scenarios: []string{"A-S1"}},
	{Knob: BlindSweep, Removes: "the sweep reclaims without asking how late it runs: an arbiter or a database frozen past a lease reclaims every lease whose heartbeats could not land meanwhile, without the grace", Harmful: true, CaughtBy: []string{"MA2", "MA3"}, Scenarios: []string{"A-S2", "A-S7"}},
	{Knob: ClaimByRequestIDOnly, Removes: "claim idempotency keyed by request_id alone; request ids can collide between workers", Harmful: true, CaughtBy: []string{"PA1"}, Scenarios: []string{"A-S1"}},
	{Knob: ResendAsFound, Removes: "a retried claim re-sends the leases its request_id found as they are (the source's words), without asking whether each is still the submission's or giving it its unconfirmed lease again (nor a grant whose COMMIT answered late): a retry answered after the sweep took the lease back hands the worker a dead lease", Harmful: true, CaughtBy: []string{"MA2"}, Scenarios: []string{"A-S1"}},
	{Knob: GraceAllJudging, Removes: "the start-up grace is the source's statement as written, over every judging row: a row a direct-mode worker claimed has no lease, greatest() ignores its NULL expiry and hands it one, and the sweep takes it back from the worker still judging it (a rollback to direct mode after migration step 3 or 4 is not free)", Harmful: true, CaughtBy: []string{"MA2"}, Scenarios: []string{"A-S9"}},
	{Knob: LeaderOnlyServes, Removes: "only the leader serves (the source's \"抢到的才干活\"): a non-leader answers heartbeats and submits 503 too, not only claims", Harmful: false, CaughtBy: nil, Scenarios: []string{"A-S6"}},
	{Knob: RejudgeClearsHistory, Removes: "the append-only judging history (\"评测历史只追加、不修改\", 000 scenario 5): a rejudge deletes the submission's judging history, a fresh start, and the record of which lease decided each earlier generation is gone", Harmful: true, CaughtBy: []string{"PA2"}, Scenarios: []string{"A-S4"}},
}

// KnobNames lists the knob names, sorted.
func KnobNames() []string { return Knobs.Names() }

func knobs() []Knob { return Knobs.Keys() }

// Info returns a knob's registry entry.
func Info(k Knob) (KnobInfo, bool) { return Knobs.Info(k) }

// Params are the design's numbers. Defaults are the source document's values;
// where the source is silent the choice is marked in Default's comments.
type Params struct {
	UnconfirmedLease time.Duration `json:"unconfirmed_lease"` // lease of a claim until its first heartbeat
	Lease            time.Duration `json:"lease"`             // lease after a heartbeat
	Heartbeat        time.Duration `json:"heartbeat"`         // worker heartbeat interval
	BackoffBase      time.Duration `json:"backoff_base"`      // first retry delay
	BackoffCap       time.Duration `json:"backoff_cap"`       // retry delays double up to this
	Grace            time.Duration `json:"grace"`             // start-up grace added to in-flight leases
	MaxAttempts      int           `json:"max_attempts"`      // judge_attempts at which a reclaimed lease becomes system_error
	SweepEvery       time.Duration `json:"sweep_every"`       // period of the expired-lease sweep
	LeaderRetry      time.Duration `json:"leader_retry"`      // how often a non-leader retries the advisory lock
	ProbeThreshold   time.Duration `json:"probe_threshold"`   // "waiting and unpaired" alert threshold
	ProbeEvery       time.Duration `json:"probe_every"`       // how often the monitor polls the arbiter's probe
	DispatchEvery    time.Duration `json:"dispatch_every"`    // period of the dispatch round
	ClaimHold        time.Duration `json:"claim_hold"`        // how long a claim hangs before "no work" (204)
	RequestTimeout   time.Duration `json:"request_timeout"`   // worker's wait for a reply beyond ClaimHold
	JudgeMin         time.Duration `json:"judge_min"`         // judging time range
	JudgeMax         time.Duration `json:"judge_max"`
	Pool             int           `json:"pool"`             // database connections per arbiter (besides the lock connection)
	ClaimBatch       int           `json:"claim_batch"`      // a claim leases up to this many submissions in one transaction
	HomeWorkers      int           `json:"home_workers"`     // home machines (preferred)
	ProdWorkers      int           `json:"prod_workers"`     // production machines
	LegacyWorkers    int           `json:"legacy_workers"`   // of the home workers, how many claim directly from the database (A-S9)
	Arbiters         int           `json:"arbiters"`         // arbiter processes started at 0
	StandbyArbiters  int           `json:"standby_arbiters"` // arbiter processes added down, started by a fault (rolling deploy)
	LegacyRules      bool          `json:"legacy_rules"`     // the arbiter also takes the old global lock and advances judge_dispatch_state (A-S9 step 2)
	// The deployment beyond the fleet's size ([search]: the world a run
	// draws). Sandboxes is how many worker processes run under one
	// worker_id on one machine, each judging its own job with its own
	// request ids (0 or 1: one); the second and later of machine home-1
	// are the nodes home-1.2, home-1.3, ... Zombies is how many worker_ids
	// (the first machines of the fleet, home first) have a replacement
	// process ready, the node <id>.z, down at the start: a schedule that
	// freezes the old process and starts the replacement makes a zombie,
	// an old process that comes back and goes on sending after its
	// replacement started. LocalRequestIDs makes request ids counters local
	// to a machine (sandbox, incarnation, claim number), unique within a
	// worker_id but the same across worker_ids, as a worker written without
	// UUIDs would send them.
	Sandboxes       int  `json:"sandboxes,omitempty"`
	Zombies         int  `json:"zombies,omitempty"`
	LocalRequestIDs bool `json:"local_request_ids,omitempty"`
	// ConfirmAwareGrace is a fix the simulation suggests (not in the source):
	// the start-up grace gives an unconfirmed lease only the unconfirmed
	// lease again, not the full one, so that an arbiter restart does not turn
	// A-S1's 10 s orphan into 60 s.
	ConfirmAwareGrace bool `json:"confirm_aware_grace"`
}

// Design is a complete description of system A: parameters and knobs.
type Design struct {
	Params
	Knobs []Knob `json:"knobs,omitempty"`
	// AllowUnsafe runs a design whose timing rules Validate would refuse
	// (heartbeat >= lease, unconfirmed_lease > lease, backoff_cap <
	// backoff_base): what a user measuring such a configuration asks for
	// with --unsafe. The rules the world cannot be built without (an empty
	// fleet, judge_max below judge_min, parameters below their minimum)
	// still hold. Unsafe reports the rule waived.
	AllowUnsafe bool `json:"allow_unsafe,omitempty"`
	// Pinned names the parameters a drawn world (harness.DrawWorld, the
	// drawn and wide modes) keeps as the design has them: the ones a user
	// set (fencesim --set and simtest.NewDesign pin them; a design file
	// pins what its "pinned" lists). The draws are made either way, so a
	// world that pins nothing is the world it always was, and the rest of
	// a pinned world is the unpinned one's.
	Pinned []string `json:"pinned,omitempty"`
}

// Default returns the source's design.
func Default() Design {
	return Design{Params: Params{
		UnconfirmedLease: 10 * time.Second,
		Lease:            60 * time.Second,
		Heartbeat:        20 * time.Second, // chosen: the source gives none
		BackoffBase:      time.Second,
		BackoffCap:       30 * time.Second,
		Grace:            60 * time.Second,
		MaxAttempts:      3,
		SweepEvery:       5 * time.Second, // chosen: "periodic"
		LeaderRetry:      5 * time.Second, // chosen: "every few seconds"
		ProbeThreshold:   30 * time.Second,
		ProbeEvery:       5 * time.Second,  // chosen
		DispatchEvery:    time.Second,      // chosen
		ClaimHold:        25 * time.Second, // chosen: a long poll
		RequestTimeout:   5 * time.Second,  // chosen
		JudgeMin:         3 * time.Second,  // chosen: "a few seconds to a few minutes"
		JudgeMax:         150 * time.Second,
		Pool:             4,
		ClaimBatch:       1, // the source: one submission per claim
		HomeWorkers:      2, // the source: two home workers and one production worker
		ProdWorkers:      1,
		Arbiters:         1,
	}}
}

// Has reports whether a knob is on.
func (d Design) Has(k Knob) bool { return slices.Contains(d.Knobs, k) }

// With returns the design with more knobs on.
func (d Design) With(add ...Knob) (Design, error) { return spec.With(d, add...) }

// Promised returns the design with every knob off: the design whose
// promises (the bounds of the source's worst costs) a run is held to.
func (d Design) Promised() Design {
	d.Knobs = nil
	return d
}

// MustWith is With for tests and tables whose knobs are constants.
func (d Design) MustWith(knobs ...Knob) Design { return spec.MustWith(d, knobs...) }

func (d *Design) params() []design.Param {
	p := &d.Params
	return []design.Param{
		design.Dur("unconfirmed_lease", &p.UnconfirmedLease, time.Millisecond).Means("lease of a claim until its first heartbeat"),
		design.Dur("lease", &p.Lease, time.Millisecond).Means("lease after a heartbeat"),
		design.Dur("heartbeat", &p.Heartbeat, time.Millisecond).Means("worker heartbeat interval"),
		design.Dur("backoff_base", &p.BackoffBase, time.Millisecond).Means("first retry delay"),
		design.Dur("backoff_cap", &p.BackoffCap, time.Millisecond).Means("retry delays double up to this"),
		design.Dur("grace", &p.Grace, 0).Means("start-up grace added to in-flight leases"),
		design.Int("max_attempts", &p.MaxAttempts, 1).Means("judge_attempts at which a reclaimed lease becomes system_error"),
		design.Dur("sweep_every", &p.SweepEvery, time.Millisecond).Means("period of the expired-lease sweep"),
		design.Dur("leader_retry", &p.LeaderRetry, time.Millisecond).Means("how often a non-leader retries the advisory lock"),
		design.Dur("probe_threshold", &p.ProbeThreshold, time.Millisecond).Means("\"waiting and unpaired\" alert threshold"),
		design.Dur("probe_every", &p.ProbeEvery, time.Millisecond).Means("how often the monitor polls the arbiter's probe"),
		design.Dur("dispatch_every", &p.DispatchEvery, time.Millisecond).Means("period of the dispatch round"),
		design.Dur("claim_hold", &p.ClaimHold, time.Millisecond).Means("how long a claim hangs before \"no work\" (204)"),
		design.Dur("request_timeout", &p.RequestTimeout, time.Millisecond).Means("worker's wait for a reply beyond claim_hold"),
		design.Dur("judge_min", &p.JudgeMin, time.Millisecond).Means("shortest judging time"),
		design.Dur("judge_max", &p.JudgeMax, time.Millisecond).Means("longest judging time"),
		design.Int("pool", &p.Pool, 1).Means("database connections per arbiter (besides the lock connection)"),
		design.Int("claim_batch", &p.ClaimBatch, 1).Means("a claim leases up to this many submissions in one transaction"),
		design.Int("home_workers", &p.HomeWorkers, 0).Means("home machines (preferred)"),
		design.Int("prod_workers", &p.ProdWorkers, 0).Means("production machines"),
		design.Int("legacy_workers", &p.LegacyWorkers, 0).Means("of the home workers, how many claim directly from the database (A-S9)"),
		design.Int("arbiters", &p.Arbiters, 1).Means("arbiter processes started at 0"),
		design.Int("standby_arbiters", &p.StandbyArbiters, 0).Means("arbiter processes added down, started by a fault (rolling deploy)"),
		design.Flag("legacy_rules", &p.LegacyRules).Means("the arbiter also takes the old global lock and advances judge_dispatch_state (A-S9 step 2)"),
		design.Int("sandboxes", &p.Sandboxes, 0).Means("worker processes under one worker_id on one machine, each with its own request ids (0 or 1: one)"),
		design.Int("zombies", &p.Zombies, 0).Means("worker_ids (the first machines, home first) with a replacement process <id>.z, down at the start: a zombie when the old one comes back"),
		design.Flag("local_request_ids", &p.LocalRequestIDs).Means("request ids are counters local to a machine, the same across worker_ids (a worker without UUIDs)"),
		design.Flag("confirm_aware_grace", &p.ConfirmAwareGrace).Means("a fix the simulation suggests: the start-up grace gives an unconfirmed lease only unconfirmed_lease again"),
		design.Flag("allow_unsafe", &d.AllowUnsafe).Means("run a design whose timing rules refuse it (fencesim --unsafe)"),
	}
}

// spec gives system A the operations every design shares.
var spec = design.Spec[Design, Knob]{System: "the arbiter", What: "arbiter design", Default: Default,
	Params: (*Design).params, Knobs: knobs, KnobsOf: func(d *Design) *[]Knob { return &d.Knobs }, Rules: rules,
	Orders: orders}

// orders are the rules between parameters: the structural ones, then the
// timing rules, which allow_unsafe waives (Unsafe).
var orders = []design.Order{
	{Param: "judge_max", Op: ">=", Other: []string{"judge_min"}},
	{Param: "legacy_workers", Op: "<=", Other: []string{"home_workers", "prod_workers"}},
	{Param: "zombies", Op: "<=", Other: []string{"home_workers", "prod_workers"}}, // at most one replacement per worker_id
	{Param: "backoff_cap", Op: ">=", Other: []string{"backoff_base"}, Waivable: true},
	{Param: "unconfirmed_lease", Op: "<=", Other: []string{"lease"}, Waivable: true},
	{Param: "heartbeat", Op: "<", Other: []string{"lease"}, Waivable: true},
}

// ParamInfos lists the parameters with their meaning, default, range and
// rules (fencesim params).
func ParamInfos() []design.Info { return spec.Infos() }

// ParamNames lists the settable parameters.
func ParamNames() []string { return spec.ParamNames() }

// Set sets one parameter from text ("lease", "90s"). Durations take Go's
// syntax; counts are integers; switches true or false.
func (d *Design) Set(name, value string) error { return spec.Set(d, name, value) }

// Assign is Set without validating the design: for several settings at
// once, each may break a rule until the last is made (Validate then).
func (d *Design) Assign(name, value string) error { return spec.Assign(d, name, value) }

// Validate reports the first invalid parameter or unknown knob.
func (d Design) Validate() error { return spec.Validate(d) }

// rules are the design's rules across parameters: the structural ones,
// then (unless AllowUnsafe) the timing ones.
func rules(d Design) error {
	// judge_max >= judge_min and the fleet's bounds on legacy_workers and
	// zombies (at most one replacement per worker_id) are orders.
	switch {
	case d.HomeWorkers+d.ProdWorkers == 0:
		return fmt.Errorf("the fleet is empty: set home_workers or prod_workers above 0")
	case (d.Sandboxes > 1 || d.Zombies > 0) && d.LegacyWorkers > 0:
		return fmt.Errorf("parameters sandboxes and zombies need legacy_workers = 0: the old scheme fences by worker_id, one process per id")
	}
	if err := design.CheckPinned(d.Pinned, design.Names(d.params())); err != nil {
		return err
	}
	if d.AllowUnsafe {
		return nil
	}
	return d.Unsafe()
}

// Unsafe returns the first timing rule the design breaks (nil: none): a
// design with AllowUnsafe runs anyway.
// The rules are the orders marked Waivable.
func (d Design) Unsafe() error { return design.CheckOrders(d.params(), orders, true) }

// JSON encodes the design for a trace header.
func (d Design) JSON() json.RawMessage { return design.Encode(d) }

// ParseDesign decodes and validates a design (a trace header, a design file).
// Fields not given keep the defaults.
func ParseDesign(data []byte) (Design, error) { return spec.Parse(data) }

// Backoff returns the n-th retry delay (n from 0): base, 2*base, ... capped.
// The no-backoff-cap knob removes the backoff (every retry after base), the
// mechanism whose loss floods an arbiter that is down.
func (d Design) Backoff(n int) time.Duration {
	if d.Has(NoBackoffCap) {
		return d.BackoffBase
	}
	return design.Backoff(d.BackoffBase, d.BackoffCap, n)
}

// Away is the longest the arbiter may have been away (its process frozen,
// its database paused or out of reach) before the heartbeats that could
// not land meanwhile may have cost a healthy worker its lease: half the
// shortest time a lease lives without a heartbeat landing (the unconfirmed
// lease after a grant, the lease less a heartbeat interval after a
// renewal). An absence longer than this owes the grace before the sweep
// reclaims anything, as a restart does (A-S2, A-S7). Never less than a
// second: a database that answers within a second was not away, and a
// design whose lease is no longer than its heartbeat (--unsafe) would
// otherwise find every sweep late and owe the grace forever.
func (d Design) Away() time.Duration {
	return max(min(d.UnconfirmedLease, d.Lease-d.Heartbeat)/2, time.Second)
}

// Terminal reports whether a status is terminal (a verdict or system_error).
func Terminal(status string) bool {
	switch status {
	case StatusPending, StatusJudging:
		return false
	}
	return status != ""
}

// Statuses.
const (
	StatusPending     = "pending"
	StatusJudging     = "judging"
	StatusSystemError = "system_error"
)

// Verdicts a judging can produce.
var Verdicts = []string{"AC", "WA", "TLE", "RE", "CE"}
