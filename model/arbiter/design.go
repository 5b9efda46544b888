package arbiter

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Knob switches one mechanism of the design off, or to its known-bad
// alternative (PROPERTIES.md, "System A: design knobs").
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
)

// KnobInfo describes a knob for the registry, the CLI and the knob tests.
type KnobInfo struct {
	Knob      Knob
	Removes   string   // the mechanism removed
	Harmful   bool     // the source says losing it is harmful
	CaughtBy  []string // the properties or metrics expected to catch it
	Scenarios []string // the scenarios where the damage shows
}

// Knobs is the registry, in PROPERTIES.md's order.
var Knobs = []KnobInfo{
	{FenceByWorkerID, "submit checks worker_id instead of lease_token", true, []string{"PA1", "PA2"}, []string{"A-S5"}},
	{UnconditionalWrites, "result and heartbeat writes without status/token condition", true, []string{"PA1", "PA2"}, []string{"A-S5"}},
	{NoRequestID, "claim retries are not idempotent", true, []string{"PA4", "MA1"}, []string{"A-S1"}},
	{LongFirstLease, "new leases start at the full lease, no unconfirmed phase", true, []string{"MA1"}, []string{"A-S1"}},
	{NoGrace, "no start-up grace", true, []string{"MA2", "MA3"}, []string{"A-S2"}},
	{ArbiterClock, "lease expiry judged by the arbiter's clock", true, []string{"MA2", "MA3"}, []string{"A-S6"}},
	{DuplicateIsError, "a duplicate submit gets a failure answer", true, []string{"PA5", "PA7"}, []string{"A-S4"}},
	{NoUniqueHistory, "no UNIQUE (submission_id, lease_token)", true, []string{"PA5"}, []string{"A-S4"}},
	{CreditWithoutOnConflict, "first-AC/XP inserted without ON CONFLICT DO NOTHING", true, []string{"PA6"}, []string{"A-S4"}},
	{ReclaimKeepsToken, "sweep re-queues without voiding the token", true, []string{"PA1"}, []string{"A-S5"}},
	{MemoryFacts, "the arbiter validates tokens against its in-memory cache", true, []string{"PA1", "PA3"}, []string{"A-S6"}},
	{WorkerNoDisk, "worker keeps results only in memory", true, []string{"PA7", "MA2"}, []string{"A-S2"}},
	{NoBackoffCap, "retries without backoff (every base interval)", true, []string{"MA5"}, []string{"A-S7"}},
	{NoLeaderLock, "no advisory lock, every arbiter dispatches", false, nil, []string{"A-S6"}},
}

// KnobNames lists the knob names, sorted.
func KnobNames() []string {
	out := make([]string, len(Knobs))
	for i, k := range Knobs {
		out[i] = string(k.Knob)
	}
	sort.Strings(out)
	return out
}

// Info returns a knob's registry entry.
func Info(k Knob) (KnobInfo, bool) {
	for _, i := range Knobs {
		if i.Knob == k {
			return i, true
		}
	}
	return KnobInfo{}, false
}

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
	HomeWorkers      int           `json:"home_workers"`     // home machines (preferred)
	ProdWorkers      int           `json:"prod_workers"`     // production machines
	LegacyWorkers    int           `json:"legacy_workers"`   // of the home workers, how many claim directly from the database (A-S9)
	Arbiters         int           `json:"arbiters"`         // arbiter processes started at 0
	StandbyArbiters  int           `json:"standby_arbiters"` // arbiter processes added down, started by a fault (rolling deploy)
	LegacyRules      bool          `json:"legacy_rules"`     // the arbiter also takes the old global lock and advances judge_dispatch_state (A-S9 step 2)
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
		HomeWorkers:      2, // the source: two home workers and one production worker
		ProdWorkers:      1,
		Arbiters:         1,
	}}
}

// Has reports whether a knob is on.
func (d Design) Has(k Knob) bool {
	for _, x := range d.Knobs {
		if x == k {
			return true
		}
	}
	return false
}

// With returns the design with more knobs on.
func (d Design) With(knobs ...Knob) (Design, error) {
	out := d
	out.Knobs = append([]Knob(nil), d.Knobs...)
	for _, k := range knobs {
		if _, ok := Info(k); !ok {
			return d, fmt.Errorf("unknown knob %q for the arbiter (knobs: %s)", k, strings.Join(KnobNames(), ", "))
		}
		if !out.Has(k) {
			out.Knobs = append(out.Knobs, k)
		}
	}
	sort.Slice(out.Knobs, func(i, j int) bool { return out.Knobs[i] < out.Knobs[j] })
	return out, nil
}

// MustWith is With for tests and tables whose knobs are constants.
func (d Design) MustWith(knobs ...Knob) Design {
	out, err := d.With(knobs...)
	if err != nil {
		panic(err)
	}
	return out
}

type param struct {
	name string
	dur  *time.Duration
	num  *int
	flag *bool
	min  int64
}

func (d *Design) params() []param {
	p := &d.Params
	return []param{
		{name: "unconfirmed_lease", dur: &p.UnconfirmedLease, min: int64(time.Millisecond)},
		{name: "lease", dur: &p.Lease, min: int64(time.Millisecond)},
		{name: "heartbeat", dur: &p.Heartbeat, min: int64(time.Millisecond)},
		{name: "backoff_base", dur: &p.BackoffBase, min: int64(time.Millisecond)},
		{name: "backoff_cap", dur: &p.BackoffCap, min: int64(time.Millisecond)},
		{name: "grace", dur: &p.Grace, min: 0},
		{name: "max_attempts", num: &p.MaxAttempts, min: 1},
		{name: "sweep_every", dur: &p.SweepEvery, min: int64(time.Millisecond)},
		{name: "leader_retry", dur: &p.LeaderRetry, min: int64(time.Millisecond)},
		{name: "probe_threshold", dur: &p.ProbeThreshold, min: int64(time.Millisecond)},
		{name: "probe_every", dur: &p.ProbeEvery, min: int64(time.Millisecond)},
		{name: "dispatch_every", dur: &p.DispatchEvery, min: int64(time.Millisecond)},
		{name: "claim_hold", dur: &p.ClaimHold, min: int64(time.Millisecond)},
		{name: "request_timeout", dur: &p.RequestTimeout, min: int64(time.Millisecond)},
		{name: "judge_min", dur: &p.JudgeMin, min: int64(time.Millisecond)},
		{name: "judge_max", dur: &p.JudgeMax, min: int64(time.Millisecond)},
		{name: "pool", num: &p.Pool, min: 1},
		{name: "home_workers", num: &p.HomeWorkers, min: 0},
		{name: "prod_workers", num: &p.ProdWorkers, min: 0},
		{name: "legacy_workers", num: &p.LegacyWorkers, min: 0},
		{name: "arbiters", num: &p.Arbiters, min: 1},
		{name: "standby_arbiters", num: &p.StandbyArbiters, min: 0},
		{name: "legacy_rules", flag: &p.LegacyRules},
		{name: "confirm_aware_grace", flag: &p.ConfirmAwareGrace},
	}
}

// ParamNames lists the settable parameters.
func ParamNames() []string {
	var d Design
	var out []string
	for _, p := range d.params() {
		out = append(out, p.name)
	}
	return out
}

// Set sets one parameter from text ("lease", "90s"). Durations take Go's
// syntax; counts are integers.
func (d *Design) Set(name, value string) error {
	for _, p := range d.params() {
		if p.name != name {
			continue
		}
		switch {
		case p.dur != nil:
			v, err := time.ParseDuration(value)
			if err != nil {
				return fmt.Errorf("parameter %s: %q is not a duration (write e.g. 10s, 1m30s)", name, value)
			}
			*p.dur = v
		case p.num != nil:
			v, err := strconv.Atoi(value)
			if err != nil {
				return fmt.Errorf("parameter %s: %q is not an integer", name, value)
			}
			*p.num = v
		case p.flag != nil:
			v, err := strconv.ParseBool(value)
			if err != nil {
				return fmt.Errorf("parameter %s: %q is not true or false", name, value)
			}
			*p.flag = v
		}
		return d.Validate()
	}
	return fmt.Errorf("unknown parameter %q for the arbiter (parameters: %s)", name, strings.Join(ParamNames(), ", "))
}

// Validate reports the first invalid parameter or unknown knob.
func (d Design) Validate() error {
	for _, p := range d.params() {
		switch {
		case p.dur != nil && int64(*p.dur) < p.min:
			return fmt.Errorf("parameter %s = %v is below its minimum %v", p.name, *p.dur, time.Duration(p.min))
		case p.num != nil && int64(*p.num) < p.min:
			return fmt.Errorf("parameter %s = %d is below its minimum %d", p.name, *p.num, p.min)
		}
	}
	switch {
	case d.JudgeMax < d.JudgeMin:
		return fmt.Errorf("parameter judge_max = %v is below judge_min = %v", d.JudgeMax, d.JudgeMin)
	case d.BackoffCap < d.BackoffBase:
		return fmt.Errorf("parameter backoff_cap = %v is below backoff_base = %v", d.BackoffCap, d.BackoffBase)
	case d.UnconfirmedLease > d.Lease:
		return fmt.Errorf("parameter unconfirmed_lease = %v is above lease = %v", d.UnconfirmedLease, d.Lease)
	case d.HomeWorkers+d.ProdWorkers == 0:
		return fmt.Errorf("the fleet is empty: set home_workers or prod_workers above 0")
	case d.LegacyWorkers > d.HomeWorkers+d.ProdWorkers:
		return fmt.Errorf("parameter legacy_workers = %d exceeds the fleet (%d workers)", d.LegacyWorkers, d.HomeWorkers+d.ProdWorkers)
	case d.Heartbeat >= d.Lease:
		return fmt.Errorf("parameter heartbeat = %v must be shorter than lease = %v", d.Heartbeat, d.Lease)
	}
	for _, k := range d.Knobs {
		if _, ok := Info(k); !ok {
			return fmt.Errorf("unknown knob %q for the arbiter (knobs: %s)", k, strings.Join(KnobNames(), ", "))
		}
	}
	return nil
}

// JSON encodes the design for a trace header.
func (d Design) JSON() json.RawMessage {
	b, err := json.Marshal(d)
	if err != nil {
		panic(err)
	}
	return b
}

// ParseDesign decodes and validates a design (a trace header, a design file).
// Fields not given keep the defaults.
func ParseDesign(data []byte) (Design, error) {
	d := Default()
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return d, fmt.Errorf("arbiter design: %w", err)
	}
	return d, d.Validate()
}

// Backoff returns the n-th retry delay (n from 0): base, 2*base, ... capped.
// The no-backoff-cap knob removes the backoff (every retry after base), the
// mechanism whose loss floods an arbiter that is down.
func (d Design) Backoff(n int) time.Duration {
	if d.Has(NoBackoffCap) {
		return d.BackoffBase
	}
	b := d.BackoffBase
	for i := 0; i < n && b < d.BackoffCap; i++ {
		b *= 2
	}
	if b > d.BackoffCap {
		b = d.BackoffCap
	}
	return b
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
