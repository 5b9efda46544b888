package twopc

import (
	"encoding/json"
	"fmt"
	"github.com/fencesim/fencesim/model/design"
	"slices"
	"strings"
	"time"
)

// Knob switches one mechanism of the design off, or to its known-bad
// alternative (docs/systems.md, "Design knobs of system C").
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
type KnobInfo = design.KnobInfo[Knob]

// Knobs is the registry, in the order of docs/systems.md's table.
var Knobs = design.Registry[Knob]{
	{Knob: CommitBeforeLog, Removes: "the decision is logged before the first COMMIT PREPARED", Harmful: true, CaughtBy: []string{"PC1"}, Scenarios: []string{"C.6"}},
	{Knob: TimeoutAbort, Removes: "a prepared participant waits for the coordinator's (or the log's) word", Harmful: true, CaughtBy: []string{"PC1", "PC3"}, Scenarios: []string{"C.3"}},
	{Knob: LogNotDurable, Removes: "the decision log is fsync'd before it is trusted", Harmful: true, CaughtBy: []string{"PC1", "PC2"}, Scenarios: []string{"C.5"}},
	{Knob: PresumeCommit, Removes: "recovery rolls back a prepared transaction the log has no record of", Harmful: true, CaughtBy: []string{"PC1"}, Scenarios: []string{"C.4"}},
}

// KnobNames lists the knob names, sorted.
func KnobNames() []string { return Knobs.Names() }

func knobs() []Knob { return Knobs.Keys() }

// Info returns a knob's registry entry.
func Info(k Knob) (KnobInfo, bool) { return Knobs.Info(k) }

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
// Pinned names the parameters a world drawn per run (DrawWorld) keeps as
// the design has them: the ones a user set (fencesim --set pins them); the
// others are drawn.
type Design struct {
	Params
	Knobs  []Knob   `json:"knobs,omitempty"`
	Pinned []string `json:"pinned,omitempty"`
}

// Default returns the source's design.
func Default() Design {
	return Design{Params: Params{
		Participants: 2, // the source: orders and inventory
		Coordinators: 1,
		Txns:         1,
		FirstTxn:     100 * time.Millisecond, // chosen
		TxnEvery:     time.Second,            // chosen
		LockTimeout:  3 * time.Second,        // the source's business session's; chosen for the coordinator's and the agents' sessions too
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
func (d Design) Has(k Knob) bool { return slices.Contains(d.Knobs, k) }

// With returns the design with more knobs on.
func (d Design) With(add ...Knob) (Design, error) { return spec.With(d, add...) }

// MustWith is With for tests and tables whose knobs are constants.
func (d Design) MustWith(knobs ...Knob) Design { return spec.MustWith(d, knobs...) }

func (d *Design) params() []design.Param {
	p := &d.Params
	return []design.Param{
		design.Int("participants", &p.Participants, 2).AtMost(9).Means("orders plus participants-1 inventories"),
		design.Int("coordinators", &p.Coordinators, 1).Means("coordinator instances started at 0, sharing one decision log"),
		design.Int("standby", &p.Standby, 0).Means("coordinator instances added down (a restart action starts them): takeover from the same log"),
		design.Int("txns", &p.Txns, 0).Means("global transactions the workload asks for"),
		design.Dur("first_txn", &p.FirstTxn, 0).Means("when the first is asked for"),
		design.Dur("txn_every", &p.TxnEvery, time.Millisecond).Means("the gap between two"),
		design.Dur("lock_timeout", &p.LockTimeout, 0).Means("every session's lock_timeout at the participants"),
		design.Int("max_prepared", &p.MaxPrepared, 0).Means("max_prepared_transactions of every participant"),
		design.Dur("vote_timeout", &p.VoteTimeout, time.Millisecond).Means("how long the coordinator waits for one vote"),
		design.Dur("request_timeout", &p.ReqTimeout, time.Millisecond).Means("how long the coordinator waits for a COMMIT/ROLLBACK PREPARED or recovery answer before it drops the connection and retries"),
		design.Dur("retry_base", &p.RetryBase, time.Millisecond).Means("first retry delay of a failed COMMIT/ROLLBACK PREPARED or recovery query"),
		design.Dur("retry_cap", &p.RetryCap, time.Millisecond).Means("retry delays double up to this"),
		design.Flag("cooperative", &p.Cooperative).Means("participants' agents ask each other about an undecided transaction (C.8)"),
		design.Dur("ask_after", &p.AskAfter, 0).Means("age of a prepared transaction before its agent asks its peers"),
		design.Dur("abort_after", &p.AbortAfter, 0).Means("timeout-abort: age at which an agent rolls back on its own"),
		design.Dur("agent_poll", &p.AgentPoll, time.Millisecond).Means("how often an agent reads pg_prepared_xacts"),
		design.Int("stock", &p.Stock, 1).Means("initial stock of sku-1 and sku-2"),
		design.Int("churn_rows", &p.ChurnRows, 0).Means("rows of the inventory's churn table (C.2's VACUUM test); 0: no table"),
	}
}

// spec gives the system the operations every design shares.
var spec = design.Spec[Design, Knob]{System: "two-phase commit", What: "two-phase commit design", Default: Default,
	Params: (*Design).params, Knobs: knobs, KnobsOf: func(d *Design) *[]Knob { return &d.Knobs }, Rules: rules,
	Orders: []design.Order{{Param: "retry_cap", Op: ">=", Other: []string{"retry_base"}}}}

// ParamInfos lists the parameters with their meaning, default, range and
// rules (fencesim params).
func ParamInfos() []design.Info { return spec.Infos() }

// ParamNames lists the settable parameters.
func ParamNames() []string { return spec.ParamNames() }

// Set sets one parameter from text ("participants", "3"; "lock_timeout",
// "3s"). Durations take Go's syntax; counts are integers.
func (d *Design) Set(name, value string) error {
	return spec.Set(d, name, value)
}

// Assign is Set without validating the design: for several settings at
// once, each may break a rule until the last is made (Validate then).
func (d *Design) Assign(name, value string) error { return spec.Assign(d, name, value) }

// Validate reports the first invalid parameter or unknown knob.
func (d Design) Validate() error { return spec.Validate(d) }

// rules are the design's rules across parameters.
func rules(d Design) error {
	if err := design.CheckPinned(d.Pinned, design.Names(d.params())); err != nil {
		return err
	}
	// retry_cap >= retry_base is spec.Orders; participants' maximum is in
	// the parameter table.
	switch {
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
func (d Design) JSON() json.RawMessage { return design.Encode(d) }

// ParseDesign decodes and validates a design (a trace header, a design
// file). Fields not given keep the defaults.
func ParseDesign(data []byte) (Design, error) { return spec.Parse(data) }

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
