package outbox

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/fencesim/fencesim/model/design"
)

// Knob switches one mechanism of system B off, or to its known-bad
// alternative (docs/systems.md, "Design knobs of system B").
type Knob string

// The knobs of system B.
const (
	CheckThenInsert         Knob = "check-then-insert"          // an application check before the insert, no unique constraint on the key
	SendBeforeCommit        Knob = "send-before-commit"         // the handler publishes the message itself, before COMMIT
	MarkSentBeforePublish   Knob = "mark-sent-before-publish"   // the relay marks a message sent, then publishes it
	KeyIncludesDeliveryTime Knob = "key-includes-delivery-time" // the key is the event id plus the delivery timestamp
	ConflictIs500           Knob = "conflict-is-500"            // a duplicate (unique violation) is answered 500
	EditInPlaceRefund       Knob = "edit-in-place-refund"       // a refund overwrites the original ledger row
	ConsumerWithoutDedup    Knob = "consumer-without-dedup"     // the consumer applies every delivery it receives
	RefusalNotStored        Knob = "refusal-not-stored"         // a refusal (4xx) rolls its key back: a later delivery of the key runs again
	DoubleRefundIsError     Knob = "double-refund-is-error"     // a second refund of one charge is a unique violation answered 503
)

// KnobInfo describes a knob for the registry, the CLI and the knob tests.
type KnobInfo = design.KnobInfo[Knob]

// Knobs is the registry, in the order of docs/systems.md's table.
var Knobs = design.Registry[Knob]{
	{Knob: CheckThenInsert, Removes: "the unique constraint on the idempotency key (an application check before the insert instead)", Harmful: true, CaughtBy: []string{"PB1"}, Faults: "two handlers racing on one key", Scenarios: []string{"B.2"}},
	{Knob: SendBeforeCommit, Removes: "the transactional outbox (the handler publishes before COMMIT)", Harmful: true, CaughtBy: []string{"PB2"}, Faults: "a handler crash or a lost publish between publish and commit", Scenarios: []string{"B.3"}},
	{Knob: MarkSentBeforePublish, Removes: "publish-then-mark order in the relay", Harmful: true, CaughtBy: []string{"PB2", "PB3"}, Faults: "a relay crash between mark and publish", Scenarios: []string{"B.3"}},
	{Knob: KeyIncludesDeliveryTime, Removes: "a stable key (the delivery timestamp is part of it)", Harmful: true, CaughtBy: []string{"PB1"}, Faults: "a redelivery with a new timestamp", Scenarios: []string{"B.1"}},
	{Knob: ConflictIs500, Removes: "a duplicate answered as success", Harmful: true, CaughtBy: []string{"PB5"}, Faults: "a lost success answer, then a redelivery", Scenarios: []string{"B.6"}},
	{Knob: EditInPlaceRefund, Removes: "compensating ledger entries (the refund edits the original row)", Harmful: true, CaughtBy: []string{"PB4"}, Faults: "any refund", Scenarios: []string{"B.4"}},
	{Knob: ConsumerWithoutDedup, Removes: "the consumer's dedup by message id", Harmful: true, CaughtBy: []string{"PB3"}, Faults: "a broker redelivery or a relay publishing twice", Scenarios: []string{"B.7"}},
	{Knob: RefusalNotStored, Removes: "a refusal recorded with its key (the key rolls back with a 4xx)", Harmful: true, CaughtBy: []string{"PB1"}, Faults: "a refund delivered before its charge, its key delivered again after it"},
	{Knob: DoubleRefundIsError, Removes: "a second refund of one charge answered as a recorded refusal (409)", Harmful: true, CaughtBy: []string{"PB5"}, Faults: "a second refund of one charge under another key"},
}

// KnobNames lists the knob names, sorted.
func KnobNames() []string { return Knobs.Names() }

func knobs() []Knob { return Knobs.Keys() }

// Info returns a knob's registry entry.
func Info(k Knob) (KnobInfo, bool) { return Knobs.Info(k) }

// Params are the design's numbers. The source gives none; every value is
// chosen (the source is silent on timings: docs/systems.md, B) and documented here.
type Params struct {
	Handlers int `json:"handlers"` // handler instances behind the senders (a sender picks one per delivery)
	Senders  int `json:"senders"`  // sender nodes (providers, browsers), each with its own retry loops
	Relays   int `json:"relays"`   // relay instances polling the one outbox (two publish a message twice, at least once)

	// The sender's policy (a payment provider's retry schedule).
	RequestTimeout time.Duration `json:"request_timeout"` // how long the sender waits for an answer before it redelivers
	RetryBase      time.Duration `json:"retry_base"`      // first redelivery delay after a 5xx or a timeout
	RetryCap       time.Duration `json:"retry_cap"`       // redelivery delays double up to this
	MaxAttempts    int           `json:"max_attempts"`    // the sender gives up after this many attempts (copies count as one)

	// The relay.
	PollEvery      time.Duration `json:"poll_every"`      // how often the relay looks for unsent outbox rows
	Batch          int           `json:"batch"`           // outbox rows read per poll
	PublishTimeout time.Duration `json:"publish_timeout"` // the relay re-publishes when the broker has not acknowledged by then

	// The broker.
	RedeliverAfter time.Duration `json:"redeliver_after"` // the broker redelivers a message the consumer has not acknowledged by then

	// The databases.
	LockTimeout time.Duration `json:"lock_timeout"` // lock_timeout of handler sessions (a duplicate waits for the first arrival's transaction)
	DBTimeout   time.Duration `json:"db_timeout"`   // a client gives up on a database request after this, closes the connection, and treats the outcome as unknown
}

// Design is a complete description of system B: parameters and knobs.
// Pinned names the parameters a world drawn per run (DrawWorld) keeps as
// the design has them: the ones a user set (fencesim --set pins them); the
// others are drawn.
type Design struct {
	Params
	Knobs  []Knob   `json:"knobs,omitempty"`
	Pinned []string `json:"pinned,omitempty"`
}

// Default returns the correct design with the chosen parameters.
func Default() Design {
	return Design{Params: Params{
		Handlers:       3,
		Senders:        1,
		Relays:         1,
		RequestTimeout: time.Second,
		RetryBase:      500 * time.Millisecond,
		RetryCap:       8 * time.Second,
		MaxAttempts:    10,
		PollEvery:      250 * time.Millisecond,
		Batch:          8,
		PublishTimeout: 500 * time.Millisecond,
		RedeliverAfter: time.Second,
		LockTimeout:    5 * time.Second,
		DBTimeout:      10 * time.Second,
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
		design.Int("handlers", &p.Handlers, 1).Means("handler instances behind the senders (a sender picks one per delivery)"),
		design.Int("senders", &p.Senders, 1).Means("sender nodes (providers, browsers), each with its own retry loops"),
		design.Int("relays", &p.Relays, 1).Means("relay instances polling the one outbox (two publish a message twice, at least once)"),
		design.Dur("request_timeout", &p.RequestTimeout, time.Millisecond).Means("how long the sender waits for an answer before it redelivers"),
		design.Dur("retry_base", &p.RetryBase, time.Millisecond).Means("first redelivery delay after a 5xx or a timeout"),
		design.Dur("retry_cap", &p.RetryCap, time.Millisecond).Means("redelivery delays double up to this"),
		design.Int("max_attempts", &p.MaxAttempts, 1).Means("the sender gives up after this many attempts (copies count as one)"),
		design.Dur("poll_every", &p.PollEvery, time.Millisecond).Means("how often the relay looks for unsent outbox rows"),
		design.Int("batch", &p.Batch, 1).Means("outbox rows read per poll"),
		design.Dur("publish_timeout", &p.PublishTimeout, time.Millisecond).Means("the relay re-publishes when the broker has not acknowledged by then"),
		design.Dur("redeliver_after", &p.RedeliverAfter, time.Millisecond).Means("the broker redelivers a message the consumer has not acknowledged by then"),
		design.Dur("lock_timeout", &p.LockTimeout, 0).Means("lock_timeout of handler sessions (a duplicate waits for the first arrival's transaction)"),
		design.Dur("db_timeout", &p.DBTimeout, time.Millisecond).Means("a client gives up on a database request after this, closes the connection, and treats the outcome as unknown"),
	}
}

// spec gives the system the operations every design shares.
var spec = design.Spec[Design, Knob]{System: "the outbox", What: "outbox design", Default: Default,
	Params: (*Design).params, Knobs: knobs, KnobsOf: func(d *Design) *[]Knob { return &d.Knobs }, Rules: rules,
	Orders: []design.Order{{Param: "retry_cap", Op: ">=", Other: []string{"retry_base"}}}}

// ParamInfos lists the parameters with their meaning, default, range and
// rules (fencesim params).
func ParamInfos() []design.Info { return spec.Infos() }

// ParamNames lists the settable parameters.
func ParamNames() []string { return spec.ParamNames() }

// Set sets one parameter from text ("max_attempts", "5"; "retry_cap",
// "30s"). Durations take Go's syntax; counts are integers. The name "knob"
// turns a knob on ("knob", "check-then-insert").
func (d *Design) Set(name, value string) error {
	if err := d.Assign(name, value); err != nil {
		return err
	}
	return d.Validate()
}

// Assign is Set without validating the design: for several settings at
// once, each may break a rule until the last is made (Validate then).
func (d *Design) Assign(name, value string) error {
	if name == "knob" || name == "knobs" {
		var ks []Knob
		for _, s := range strings.Split(value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				ks = append(ks, Knob(s))
			}
		}
		out, err := d.With(ks...)
		if err != nil {
			return err
		}
		*d = out
		return nil
	}
	return spec.Assign(d, name, value)
}

// Validate reports the first invalid parameter or unknown knob.
func (d Design) Validate() error { return spec.Validate(d) }

// rules are the design's rules across parameters.
func rules(d Design) error {
	return design.CheckPinned(d.Pinned, design.Names(d.params())) // retry_cap >= retry_base is spec.Orders
}

// JSON encodes the design for a trace header.
func (d Design) JSON() json.RawMessage { return design.Encode(d) }

// ParseDesign decodes and validates a design (a trace header, a design
// file). Fields not given keep the defaults.
func ParseDesign(data []byte) (Design, error) { return spec.Parse(data) }

// Backoff returns the sender's n-th redelivery delay (n from 0): base,
// 2*base, ... capped.
func (d Design) Backoff(n int) time.Duration {
	return design.Backoff(d.RetryBase, d.RetryCap, n)
}

// RetrySpan is the longest time the sender keeps an event alive: every
// attempt's timeout and every backoff.
func (d Design) RetrySpan() time.Duration {
	var s time.Duration
	for i := 0; i < d.MaxAttempts; i++ {
		s += d.RequestTimeout + d.Backoff(i)
	}
	return s
}

// GiveUpAfter is the shortest time the sender keeps an event alive: every
// backoff, when every answer is an immediate 5xx (a database that is down).
func (d Design) GiveUpAfter() time.Duration {
	var s time.Duration
	for i := 0; i < d.MaxAttempts-1; i++ {
		s += d.Backoff(i)
	}
	return s
}

// Patience is how long a sender must keep an event alive for PB5's
// liveness half to hold under the generated faults: they end at the
// heal-all, but a handler's session whose COMMIT was lost on its
// connection still holds the key's row lock until the handler's db_timeout
// closes it, and every redelivery meanwhile waits up to lock_timeout and
// is answered 503 (the outcome is unknown). A sender that gives up sooner
// gives up on an event whose work commits later (found by the drawn world:
// db_timeout 30 s against a sender giving up after about 33 s). The
// default design's sender (about 47 s of backoff) outlives its 15 s +
// 10 s + 5 s + 10 s.
func Patience(d Design) time.Duration {
	return time.Duration(HealAt(FaultSpec(d))) + d.DBTimeout + d.LockTimeout + 10*time.Second
}
