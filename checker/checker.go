package checker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// Verdict is the outcome of one property or invariant on one run.
type Verdict struct {
	Property string   `json:"property"`         // e.g. "PA1 at-most-one-owner"
	OK       bool     `json:"ok"`               // the property held
	Message  string   `json:"message"`          // what broke, in one line; empty when OK
	Events   []uint64 `json:"events,omitempty"` // trace seqs of the events that break it
	Detail   string   `json:"detail,omitempty"` // longer explanation (e.g. a failed linearization)
}

// Invariant is a named check over a decoded run of some system (R is the
// system's run or history type).
type Invariant[R any] struct {
	Name  string
	Check func(r R) Verdict
}

// Pass returns a passing verdict.
func Pass(property string) Verdict { return Verdict{Property: property, OK: true} }

// UndecidedPrefix starts the message of an undecided verdict.
const UndecidedPrefix = "undecided: "

// Undecided returns the verdict of a check that could not decide (its
// bounded search gave up): it holds, since nothing was shown to break, and
// says so in its message ("undecided: ..."), so that a run is never failed
// by a violation nobody found. explore counts such runs apart.
func Undecided(property, format string, args ...any) Verdict {
	return Verdict{Property: property, OK: true, Message: UndecidedPrefix + fmt.Sprintf(format, args...)}
}

// IsUndecided reports whether a verdict is a check's "undecided: ..."
// answer.
func IsUndecided(v Verdict) bool { return v.OK && strings.HasPrefix(v.Message, UndecidedPrefix) }

// Fail returns a failing verdict.
func Fail(property string, events []uint64, format string, args ...any) Verdict {
	return Verdict{Property: property, Message: fmt.Sprintf(format, args...), Events: events}
}

// String renders a verdict in one line.
func (v Verdict) String() string {
	if v.OK {
		if v.Message != "" {
			return v.Property + ": ok (" + v.Message + ")"
		}
		return v.Property + ": ok"
	}
	s := v.Property + ": FAILED: " + v.Message
	if len(v.Events) > 0 {
		parts := make([]string, len(v.Events))
		for i, e := range v.Events {
			parts[i] = "#" + strconv.FormatUint(e, 10)
		}
		s += " (events " + strings.Join(parts, ", ") + ")"
	}
	return s
}

// Failed returns the failing verdicts.
func Failed(vs []Verdict) []Verdict {
	var out []Verdict
	for _, v := range vs {
		if !v.OK {
			out = append(out, v)
		}
	}
	return out
}

// Decode decodes an event's data into a value of type T. Numbers in untyped
// places (maps, any) decode as json.Number.
func Decode[T any](e traces.Event) (T, error) {
	if v, ok := e.Value.(T); ok {
		return v, nil // the model's own value: what decoding Data gives
	}
	var v T
	dec := json.NewDecoder(bytes.NewReader(e.DataJSON()))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return v, fmt.Errorf("event #%d (%s %s): cannot decode its data: %w", e.Seq, e.Node, e.Kind, err)
	}
	return v, nil
}

// Commit is one committed transaction of a database node (model/db's commit
// record, as noted in the trace).
type Commit struct {
	Event   uint64   // the trace event's seq
	Node    string   // the database node
	T       int64    // world time of the event
	Seq     uint64   `json:"seq"`
	Tx      uint64   `json:"tx"`
	At      int64    `json:"at"` // the database's clock at commit
	GID     string   `json:"gid"`
	Changes []Change `json:"changes"`
}

// Change is one row's net change.
type Change = hist.Change

// Commits decodes the commit log of every database node, in trace order.
func Commits(evs []traces.Event) ([]Commit, error) {
	n := 0
	for i := range evs {
		if evs[i].Kind == hist.KindCommit {
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	out := make([]Commit, 0, n)
	for i := range evs {
		e := &evs[i]
		if e.Kind != hist.KindCommit {
			continue
		}
		var c Commit
		if rec, ok := e.Value.(hist.CommitRecord); ok {
			// The database's own record: its rows hold int64 and
			// clock.Time where decoded JSON holds json.Number (Int reads
			// both).
			c = Commit{Seq: rec.Seq, Tx: rec.Tx, At: int64(rec.At), GID: rec.GID, Changes: rec.Changes}
		} else {
			var err error
			if c, err = Decode[Commit](*e); err != nil {
				return nil, err
			}
		}
		c.Event, c.Node, c.T = e.Seq, e.Node, e.T
		out = append(out, c)
	}
	return out, nil
}

// Op is one client operation: its call and, if the client heard it, its
// return. An Op without a return has an unknown outcome.
type Op struct {
	Call      hist.Call
	Return    *hist.Return
	Invoke    int64 // world time of the call
	Response  int64 // world time of the return (0 when unknown)
	CallSeq   uint64
	ReturnSeq uint64
}

// Ops pairs the call and return notes of a trace, in call order.
func Ops(evs []traces.Event) ([]Op, error) {
	calls := 0
	for i := range evs {
		if evs[i].Kind == hist.KindCall {
			calls++
		}
	}
	ops := make([]Op, 0, calls)
	index := make(map[string]int, calls)
	for _, e := range evs {
		switch e.Kind {
		case hist.KindCall:
			c, err := Decode[hist.Call](e)
			if err != nil {
				return nil, err
			}
			if _, dup := index[c.ID]; dup {
				return nil, fmt.Errorf("event #%d: operation id %q is called twice", e.Seq, c.ID)
			}
			index[c.ID] = len(ops)
			ops = append(ops, Op{Call: c, Invoke: e.T, CallSeq: e.Seq})
		case hist.KindReturn:
			r, err := Decode[hist.Return](e)
			if err != nil {
				return nil, err
			}
			i, ok := index[r.ID]
			if !ok {
				return nil, fmt.Errorf("event #%d: return of operation %q that was never called", e.Seq, r.ID)
			}
			if ops[i].Return == nil {
				ops[i].Return = &r
				ops[i].Response = e.T
				ops[i].ReturnSeq = e.Seq
			}
		}
	}
	return ops, nil
}

// Of decodes every event of one kind into T, with the event beside it.
func Of[T any](evs []traces.Event, kind string) ([]T, []traces.Event, error) {
	var out []T
	var at []traces.Event
	for _, e := range evs {
		if e.Kind != kind {
			continue
		}
		v, err := Decode[T](e)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, v)
		at = append(at, e)
	}
	return out, at, nil
}

// Int reads an integer value of a decoded row (json.Number, float64 or
// int64); ok is false for NULL or a non-number.
func Int(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	case int64:
		return x, true
	case clock.Time:
		return int64(x), true
	case float64:
		return int64(x), true
	case int:
		return int64(x), true
	}
	return 0, false
}

// Str reads a text value of a decoded row; "" for NULL.
func Str(v any) string {
	s, _ := v.(string)
	return s
}

// SortedKeys returns a map's keys in order.
func SortedKeys[K ~string | ~int64 | ~uint64, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
