package outbox

import (
	"encoding/json"
	"fmt"
	"github.com/fencesim/fencesim/model/design"
	"slices"
	"strings"
	"time"
)

// Knob switches one mechanism of system B off, or to its known-bad
// alternative (PROPERTIES.md, "System B").
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
)

// KnobInfo describes a knob for the registry, the CLI and the knob tests.
type KnobInfo struct {
	Knob     Knob     `json:"knob"`
	Removes  string   `json:"removes"`   // the mechanism removed
	Harmful  bool     `json:"harmful"`   // the source says losing it is harmful
	CaughtBy []string `json:"caught_by"` // the properties expected to catch it (the first is the one the knob test hunts with)
	Faults   string   `json:"faults"`    // the faults it needs to show
}

// Knobs is the registry, in PROPERTIES.md's order.
var Knobs = []KnobInfo{
	{CheckThenInsert, "the unique constraint on the idempotency key (an application check before the insert instead)", true, []string{"PB1"}, "two handlers racing on one key"},
	{SendBeforeCommit, "the transactional outbox (the handler publishes before COMMIT)", true, []string{"PB2"}, "a handler crash or a lost publish between publish and commit"},
	{MarkSentBeforePublish, "publish-then-mark order in the relay", true, []string{"PB2", "PB3"}, "a relay crash between mark and publish"},
	{KeyIncludesDeliveryTime, "a stable key (the delivery timestamp is part of it)", true, []string{"PB1"}, "a redelivery with a new timestamp"},
	{ConflictIs500, "a duplicate answered as success", true, []string{"PB5"}, "a lost success answer, then a redelivery"},
	{EditInPlaceRefund, "compensating ledger entries (the refund edits the original row)", true, []string{"PB4"}, "any refund"},
	{ConsumerWithoutDedup, "the consumer's dedup by message id", true, []string{"PB3"}, "a broker redelivery or a relay publishing twice"},
}

// KnobNames lists the knob names, sorted.
func KnobNames() []string { return design.KnobNames(knobs()) }

func knobs() []Knob { return design.Keys(Knobs, knobOf) }

func knobOf(i KnobInfo) Knob { return i.Knob }

// Info returns a knob's registry entry.
func Info(k Knob) (KnobInfo, bool) { return design.Lookup(Knobs, knobOf, k) }

// Params are the design's numbers. The source gives none; every value is
// chosen (SYSTEMS.md B is silent on timings) and documented here.
type Params struct {
	Handlers int `json:"handlers"` // handler instances behind the sender (it picks one per delivery)

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
type Design struct {
	Params
	Knobs []Knob `json:"knobs,omitempty"`
}

// Default returns the correct design with the chosen parameters.
func Default() Design {
	return Design{Params: Params{
		Handlers:       3,
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
func (d Design) With(add ...Knob) (Design, error) {
	ks, err := design.With("the outbox", knobs(), d.Knobs, add...)
	if err != nil {
		return d, err
	}
	d.Knobs = ks
	return d, nil
}

// MustWith is With for tests and tables whose knobs are constants.
func (d Design) MustWith(knobs ...Knob) Design {
	out, err := d.With(knobs...)
	if err != nil {
		panic(err)
	}
	return out
}

func (d *Design) params() []design.Param {
	p := &d.Params
	return []design.Param{
		design.Int("handlers", &p.Handlers, 1),
		design.Dur("request_timeout", &p.RequestTimeout, time.Millisecond),
		design.Dur("retry_base", &p.RetryBase, time.Millisecond),
		design.Dur("retry_cap", &p.RetryCap, time.Millisecond),
		design.Int("max_attempts", &p.MaxAttempts, 1),
		design.Dur("poll_every", &p.PollEvery, time.Millisecond),
		design.Int("batch", &p.Batch, 1),
		design.Dur("publish_timeout", &p.PublishTimeout, time.Millisecond),
		design.Dur("redeliver_after", &p.RedeliverAfter, time.Millisecond),
		design.Dur("lock_timeout", &p.LockTimeout, 0),
		design.Dur("db_timeout", &p.DBTimeout, time.Millisecond),
	}
}

// ParamNames lists the settable parameters.
func ParamNames() []string {
	var d Design
	return design.Names(d.params())
}

// Set sets one parameter from text ("max_attempts", "5"; "retry_cap",
// "30s"). Durations take Go's syntax; counts are integers. The name "knob"
// turns a knob on ("knob", "check-then-insert").
func (d *Design) Set(name, value string) error {
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
	if err := design.Set("the outbox", d.params(), name, value); err != nil {
		return err
	}
	return d.Validate()
}

// Validate reports the first invalid parameter or unknown knob.
func (d Design) Validate() error {
	if err := design.CheckMins(d.params()); err != nil {
		return err
	}
	if d.RetryCap < d.RetryBase {
		return fmt.Errorf("parameter retry_cap = %v is below retry_base = %v", d.RetryCap, d.RetryBase)
	}
	if _, err := design.With("the outbox", knobs(), nil, d.Knobs...); err != nil {
		return err
	}
	return nil
}

// JSON encodes the design for a trace header.
func (d Design) JSON() json.RawMessage { return design.Encode(d) }

// ParseDesign decodes and validates a design (a trace header, a design
// file). Fields not given keep the defaults.
func ParseDesign(data []byte) (Design, error) {
	d := Default()
	if err := design.Decode(data, &d, "outbox design"); err != nil {
		return d, err
	}
	return d, d.Validate()
}

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
