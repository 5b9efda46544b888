package twopc

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Knob switches one mechanism of the design off, or to its known-bad
// alternative (PROPERTIES.md, "System C").
type Knob string

// The knobs of system C.
const (
	// CommitBeforeLog: the coordinator sends the first COMMIT PREPARED and
	// only then writes COMMIT to its log (C.6's wrong order).
	CommitBeforeLog Knob = "commit-before-log"
	// TimeoutAbort: a participant's agent rolls back a prepared transaction
	// that waited longer than abort_after for a decision (C.3 approach A).
	TimeoutAbort Knob = "timeout-abort"
	// LogNotDurable: the decision log is written but never fsync'd, so a
	// crash of the coordinator loses it (C.5).
	LogNotDurable Knob = "log-not-durable"
	// PresumeCommit: recovery treats "no record in the log" as COMMIT.
	PresumeCommit Knob = "presume-commit-on-no-record"
)

// KnobInfo describes a knob for the registry, the CLI and the knob tests.
type KnobInfo struct {
	Knob      Knob
	Removes   string   // the mechanism removed
	Harmful   bool     // the source says losing it is harmful
	CaughtBy  []string // the properties expected to catch it
	Scenarios []string // where the damage shows in the source
}

// Knobs is the registry, in PROPERTIES.md's order.
var Knobs = []KnobInfo{
	{CommitBeforeLog, "the decision is logged before the first COMMIT PREPARED", true, []string{"PC1"}, []string{"C.6"}},
	{TimeoutAbort, "a prepared participant waits for the coordinator's (or the log's) word", true, []string{"PC1", "PC3"}, []string{"C.3"}},
	{LogNotDurable, "the decision log is fsync'd before it is trusted", true, []string{"PC1", "PC2"}, []string{"C.5"}},
	{PresumeCommit, "recovery rolls back a prepared transaction the log has no record of", true, []string{"PC1"}, []string{"C.4"}},
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

// Params are the design's numbers. Defaults follow the source; where it is
// silent the choice is marked in Default.
type Params struct {
	Participants int           `json:"participants"`       // orders plus participants-1 inventories
	Coordinators int           `json:"coordinators"`       // coordinator instances started at 0, sharing one decision log
	Standby      int           `json:"standby"`            // coordinator instances added down (a restart action starts them): takeover from the same log
	Txns         int           `json:"txns"`               // global transactions the workload asks for
	FirstTxn     time.Duration `json:"first_txn"`          // when the first is asked for
	TxnEvery     time.Duration `json:"txn_every"`          // the gap between two
	LockTimeout  time.Duration `json:"lock_timeout"`       // every session's lock_timeout at the participants
	MaxPrepared  int           `json:"max_prepared"`       // max_prepared_transactions of every participant
	VoteTimeout  time.Duration `json:"vote_timeout"`       // how long the coordinator waits for one vote
	ReqTimeout   time.Duration `json:"request_timeout"`    // how long the coordinator waits for a COMMIT/ROLLBACK PREPARED or recovery answer before it drops the connection and retries
	RetryBase    time.Duration `json:"retry_base"`         // first retry delay of a failed COMMIT/ROLLBACK PREPARED or recovery query
	RetryCap     time.Duration `json:"retry_cap"`          // retry delays double up to this
	Cooperative  bool          `json:"cooperative"`        // participants' agents ask each other about an undecided transaction (C.8)
	AskAfter     time.Duration `json:"ask_after"`          // age of a prepared transaction before its agent asks its peers
	AbortAfter   time.Duration `json:"abort_after"`        // timeout-abort: age at which an agent rolls back on its own
	AgentPoll    time.Duration `json:"agent_poll"`         // how often an agent reads pg_prepared_xacts
	Stock        int           `json:"stock"`              // initial stock of sku-1 and sku-2
	ChurnRows    int           `json:"churn_rows"`         // rows of the inventory's churn table (C.2's VACUUM test); 0: no table
	GIDs         []string      `json:"gids,omitempty"`     // names of the transactions (default x1, x2, ...)
	Schedule     []TxnAt       `json:"schedule,omitempty"` // explicit requests; replaces Txns/FirstTxn/TxnEvery
}

// TxnAt asks one coordinator for one transaction at a time.
type TxnAt struct {
	At          time.Duration `json:"at"`
	GID         string        `json:"gid"`
	Coordinator string        `json:"coordinator,omitempty"` // default: the first coordinator
}

// Design is a complete description of system C: parameters and knobs.
type Design struct {
	Params
	Knobs []Knob `json:"knobs,omitempty"`
}

// Default returns the source's design.
func Default() Design {
	return Design{Params: Params{
		Participants: 2, // the source: orders and inventory
		Coordinators: 1,
		Txns:         1,
		FirstTxn:     100 * time.Millisecond, // chosen
		TxnEvery:     time.Second,            // chosen
		LockTimeout:  3 * time.Second,        // the source's lock_timeout
		MaxPrepared:  10,                     // chosen: PostgreSQL's default 0 disables 2PC; the source enabled it
		VoteTimeout:  10 * time.Second,       // chosen
		ReqTimeout:   2 * time.Second,        // chosen
		RetryBase:    500 * time.Millisecond, // chosen
		RetryCap:     5 * time.Second,        // chosen
		AskAfter:     2 * time.Second,        // chosen
		AbortAfter:   5 * time.Second,        // chosen: "abort if the coordinator does not come back"
		AgentPoll:    time.Second,            // chosen
		Stock:        100,                    // the source
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
			return d, fmt.Errorf("unknown knob %q for two-phase commit (knobs: %s)", k, strings.Join(KnobNames(), ", "))
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
	ms := int64(time.Millisecond)
	return []param{
		{name: "participants", num: &p.Participants, min: 2},
		{name: "coordinators", num: &p.Coordinators, min: 1},
		{name: "standby", num: &p.Standby, min: 0},
		{name: "txns", num: &p.Txns, min: 0},
		{name: "first_txn", dur: &p.FirstTxn, min: 0},
		{name: "txn_every", dur: &p.TxnEvery, min: ms},
		{name: "lock_timeout", dur: &p.LockTimeout, min: 0},
		{name: "max_prepared", num: &p.MaxPrepared, min: 0},
		{name: "vote_timeout", dur: &p.VoteTimeout, min: ms},
		{name: "request_timeout", dur: &p.ReqTimeout, min: ms},
		{name: "retry_base", dur: &p.RetryBase, min: ms},
		{name: "retry_cap", dur: &p.RetryCap, min: ms},
		{name: "cooperative", flag: &p.Cooperative},
		{name: "ask_after", dur: &p.AskAfter, min: 0},
		{name: "abort_after", dur: &p.AbortAfter, min: 0},
		{name: "agent_poll", dur: &p.AgentPoll, min: ms},
		{name: "stock", num: &p.Stock, min: 1},
		{name: "churn_rows", num: &p.ChurnRows, min: 0},
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

// Set sets one parameter from text ("participants", "3"; "lock_timeout",
// "3s"). Durations take Go's syntax; counts are integers.
func (d *Design) Set(name, value string) error {
	for _, p := range d.params() {
		if p.name != name {
			continue
		}
		switch {
		case p.dur != nil:
			v, err := time.ParseDuration(value)
			if err != nil {
				return fmt.Errorf("parameter %s: %q is not a duration (write e.g. 3s, 500ms)", name, value)
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
	return fmt.Errorf("unknown parameter %q for two-phase commit (parameters: %s)", name, strings.Join(ParamNames(), ", "))
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
	case d.RetryCap < d.RetryBase:
		return fmt.Errorf("parameter retry_cap = %v is below retry_base = %v", d.RetryCap, d.RetryBase)
	case d.Participants > 9:
		return fmt.Errorf("parameter participants = %d: at most 9 are supported", d.Participants)
	case len(d.GIDs) > 0 && len(d.GIDs) < d.Txns:
		return fmt.Errorf("%d gids given for %d transactions", len(d.GIDs), d.Txns)
	}
	seen := map[string]bool{}
	names := NamesOf(d)
	for i, t := range d.Schedule {
		if t.GID == "" || len(t.GID) > 200 {
			return fmt.Errorf("schedule entry %d: needs a gid of 1 to 200 characters", i+1)
		}
		if seen[t.GID] {
			return fmt.Errorf("schedule entry %d: gid %q is used twice (a gid names one global transaction)", i+1, t.GID)
		}
		seen[t.GID] = true
		if t.Coordinator != "" && !contains(names.Coordinators(), t.Coordinator) {
			return fmt.Errorf("schedule entry %d: %q is not a coordinator (coordinators: %s)", i+1, t.Coordinator, strings.Join(names.Coordinators(), ", "))
		}
	}
	for _, k := range d.Knobs {
		if _, ok := Info(k); !ok {
			return fmt.Errorf("unknown knob %q for two-phase commit (knobs: %s)", k, strings.Join(KnobNames(), ", "))
		}
	}
	return nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// JSON encodes the design for a trace header.
func (d Design) JSON() json.RawMessage {
	b, err := json.Marshal(d)
	if err != nil {
		panic(err)
	}
	return b
}

// ParseDesign decodes and validates a design (a trace header, a design
// file). Fields not given keep the defaults.
func ParseDesign(data []byte) (Design, error) {
	d := Default()
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return d, fmt.Errorf("two-phase commit design: %w", err)
	}
	return d, d.Validate()
}

// Plan returns the transaction requests of the workload.
func (d Design) Plan() []TxnAt {
	if len(d.Schedule) > 0 {
		return d.Schedule
	}
	out := make([]TxnAt, d.Txns)
	for i := range out {
		gid := fmt.Sprintf("x%d", i+1)
		if len(d.GIDs) > 0 {
			gid = d.GIDs[i]
		}
		out[i] = TxnAt{At: d.FirstTxn + time.Duration(i)*d.TxnEvery, GID: gid}
	}
	return out
}

// Backoff returns the n-th retry delay (n from 0): base, 2*base, ... capped.
func (d Design) Backoff(n int) time.Duration {
	b := d.RetryBase
	for i := 0; i < n && b < d.RetryCap; i++ {
		b *= 2
	}
	if b > d.RetryCap {
		b = d.RetryCap
	}
	return b
}
