package sim

import (
	"errors"
	"fmt"

	"github.com/fencesim/fencesim/clock"
)

// This file holds a run's limits and the error of a run that exceeds one.

// Limits bound a run. MaxTime ends it normally (events after it are not
// run). The others are budgets: a run that exceeds one ends with a
// *LimitError (errors.Is(err, ErrBudget) holds) instead of a hang or an
// exhausted machine. Zero means no bound.
type Limits struct {
	MaxTime clock.Time `json:"max_time"`
	// MaxEvents bounds the events run (a livelock: a timer re-armed at the
	// same instant forever).
	MaxEvents uint64 `json:"max_events"`
	// MaxPending bounds what the kernel holds for later: queued events,
	// messages in flight and inputs held for paused nodes (a flood that
	// would exhaust memory). It counts kernel data, never the machine's
	// memory, so it fires at the same event on every machine.
	MaxPending int `json:"max_pending,omitempty"`
}

// DefaultMaxPending is the pending bound the systems' runs use. Healthy
// runs peak far below it: over 300 seeds of each system's default design
// under no, moderate and heavy faults the peak was 205 (arbiter), 145
// (outbox) and 20 (2PC); the arbiter's scenario families peak at 114. A
// flood ends at it within some tens of megabytes.
const DefaultMaxPending = 100_000

// ErrBudget is what every budget error is (errors.Is): a run exceeded a
// limit of its Limits.
var ErrBudget = errors.New("run budget exhausted")

// LimitError is the error of a run that exceeded a budget of its Limits.
// Its message starts with "limit hit: " and names the limit and how to
// raise it.
type LimitError struct {
	Limit   string     // "events" (Limits.MaxEvents) or "pending" (Limits.MaxPending)
	Max     uint64     // the bound
	At      clock.Time // the world's time when it fired
	Events  uint64     // events run by then
	Pending int        // pending items then
}

func (e *LimitError) Error() string {
	b := make([]byte, 0, 160)
	b = append(b, "limit hit: "...)
	b = append(b, e.Limit...)
	switch e.Limit {
	case "events":
		b = fmt.Appendf(b, ": %d events run by %v, %d pending (a livelock? raise Limits.MaxEvents)", e.Events, e.At, e.Pending)
	case "pending":
		b = fmt.Appendf(b, ": %d queued events, messages in flight and held inputs at %v after %d events, bound %d (a flood? raise Limits.MaxPending)", e.Pending, e.At, e.Events, e.Max)
	default:
		b = fmt.Appendf(b, ": bound %d at %v after %d events", e.Max, e.At, e.Events)
	}
	return string(b)
}

// Is makes every LimitError an ErrBudget.
func (e *LimitError) Is(target error) bool { return target == ErrBudget }

// IsLimit returns the LimitError in err's chain, if any.
func IsLimit(err error) (*LimitError, bool) {
	var le *LimitError
	ok := errors.As(err, &le)
	return le, ok
}
