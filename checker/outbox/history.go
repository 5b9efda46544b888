package outbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// Table names and operations: the contract with model/outbox's schema.
const (
	TKeys      = "idempotency_keys"
	TCharges   = "charges"
	TLedger    = "ledger"
	TOutbox    = "outbox"
	TProcessed = "processed_messages"
	TEffects   = "effects"

	OpCharge = "charge"
	OpRefund = "refund"
)

// Note kinds: system B's notes, whose shapes traces/hist defines.
const (
	KindEvent    = hist.KindBEvent
	KindDelivery = hist.KindBDelivery
	KindSender   = hist.KindBSender
	KindHandle   = hist.KindBHandle
	KindRelay    = hist.KindBRelay
	KindPublish  = hist.KindBPublish
	KindPush     = hist.KindBPush
	KindApply    = hist.KindBApply
)

// Never is the return time of a call whose reply never came.
const Never = math.MaxInt64

// Call is one delivery as the sender saw it.
type Call struct {
	ID          string `json:"id"`
	Client      string `json:"client"`
	Op          string `json:"op"`
	Key         string `json:"key"`     // the event id / Idempotency-Key sent ("" if none)
	Payload     string `json:"payload"` // stable across retries
	Invoke      int64  `json:"invoke"`
	Return      int64  `json:"return"` // Never when unknown
	Code        int    `json:"code,omitempty"`
	Value       string `json:"value,omitempty"`
	Handler     string `json:"handler,omitempty"`
	Attempt     int    `json:"attempt"`
	DeliveredAt int64  `json:"delivered_at"`
}

// Answered reports whether the reply reached the sender.
func (c Call) Answered() bool { return c.Return != Never }

// EventInfo is one event as the sender handled it.
type EventInfo struct {
	Event    string `json:"event"`
	Payload  string `json:"payload"`
	Op       string `json:"op"`
	Copies   int    `json:"copies"`
	Bound    int    `json:"bound"`
	What     string `json:"what"` // "done", "give-up", or "" (still going at the end)
	Code     int    `json:"code,omitempty"`
	Attempts int    `json:"attempts"`
}

// Change is one row's net change in a commit (traces/hist's). Its rows'
// numbers are int64, its timestamps int64 (decoded from a trace file) or
// clock.Time (a run in memory): read them with num.
type Change = hist.Change

// Commit is one committed transaction of a database node.
type Commit struct {
	Node    string   `json:"-"`
	Event   uint64   `json:"-"` // the trace event that recorded it
	Seq     uint64   `json:"seq"`
	Tx      uint64   `json:"tx"`
	At      int64    `json:"at"`
	Changes []Change `json:"changes"`
}

// Message is an outgoing message.
type Message struct {
	ID     string `json:"id"`
	Event  string `json:"event"`
	OpID   string `json:"op"`
	Kind   string `json:"kind"`
	Amount int64  `json:"amount"`
}

// Publish is the broker taking a message.
type Publish struct {
	Msg  Message `json:"msg"`
	From string  `json:"from"`
	Seq  uint64  `json:"seq"`
	T    int64   `json:"-"`
}

// Handle is a handler's work on one delivery.
type Handle struct {
	Handler string `json:"handler"`
	Event   string `json:"event"`
	Key     string `json:"key"`
	Phase   string `json:"phase"`
	Code    int    `json:"code,omitempty"`
	Path    string `json:"path,omitempty"`
	T       int64  `json:"-"`
}

// Step is a relay step, a push or an apply, with its time and node.
type Step struct {
	Node    string `json:"-"`
	T       int64  `json:"-"`
	Msg     string `json:"msg"`
	What    string `json:"what"`
	Seq     uint64 `json:"seq"`
	Attempt int    `json:"attempt"`
}

// Crash is a node's crash.
type Crash struct {
	Node string
	T    int64
}

// History is everything the checkers read from one run.
type History struct {
	Calls     []Call
	Events    []EventInfo
	Commits   []Commit
	Publishes []Publish
	Handles   []Handle
	Relay     []Step
	Pushes    []Step
	Applies   []Step
	Crashes   []Crash
	End       int64 // time of the last event
}

// Reads reports whether Decode reads events of a kind: a run recorded with
// only these (its other events numbered, as sim's Filter does) decodes as
// its full record does, but for End, the time of its last event, which
// the recorder of a filtered run must give (History.End; sim's Recorded).
// Decode's switch and this one must agree: the harness's TestFastIsFull
// (contracttest.FastIsFull) fails when this one misses a kind Decode reads.
func Reads(kind string) bool {
	switch kind {
	case hist.KindCall, hist.KindReturn, KindDelivery, KindEvent, KindSender, hist.KindCommit,
		KindPublish, KindHandle, KindRelay, KindPush, KindApply, "crash":
		return true
	}
	return false
}

// Decode reads a run's trace into a History. It fails on a note whose data
// does not decode: the model and the checker disagree on the contract.
func Decode(events []traces.Event) (*History, error) {
	h := &History{}
	calls := map[string]int{}
	evIdx := map[string]int{} // payload -> index
	for i := range events {
		e := &events[i]
		if e.T > h.End {
			h.End = e.T
		}
		var err error
		switch e.Kind {
		case hist.KindCall:
			var c hist.Call
			if c, err = note[hist.Call](e); err == nil {
				calls[c.ID] = len(h.Calls)
				h.Calls = append(h.Calls, Call{ID: c.ID, Client: c.Client, Op: c.Op, Key: c.Key, Payload: c.RequestID, Invoke: e.T, Return: Never})
			}
		case hist.KindReturn:
			var r hist.Return
			if r, err = note[hist.Return](e); err == nil {
				j, ok := calls[r.ID]
				if !ok {
					return nil, fmt.Errorf("trace #%d: return of unknown call %q", e.Seq, r.ID)
				}
				h.Calls[j].Return, h.Calls[j].Code, h.Calls[j].Value = e.T, r.Code, r.Value
			}
		case KindDelivery:
			var d hist.BDelivery
			if d, err = note[hist.BDelivery](e); err == nil {
				j, ok := calls[d.Call]
				if !ok {
					return nil, fmt.Errorf("trace #%d: delivery of unknown call %q", e.Seq, d.Call)
				}
				h.Calls[j].Handler, h.Calls[j].Attempt, h.Calls[j].DeliveredAt = d.Handler, d.Attempt, d.DeliveredAt
			}
		case KindEvent:
			var ev hist.BEvent
			if ev, err = note[hist.BEvent](e); err == nil {
				evIdx[ev.Payload] = len(h.Events)
				h.Events = append(h.Events, EventInfo{Event: ev.Event, Payload: ev.Payload, Op: ev.Op, Copies: ev.Copies, Bound: ev.Bound})
			}
		case KindSender:
			var s hist.BSender
			if s, err = note[hist.BSender](e); err == nil {
				j, ok := evIdx[s.Payload]
				if !ok {
					return nil, fmt.Errorf("trace #%d: sender outcome of unknown event %q", e.Seq, s.Payload)
				}
				h.Events[j].What, h.Events[j].Code, h.Events[j].Attempts = s.What, s.Code, s.Attempts
			}
		case hist.KindCommit:
			var c Commit
			if c, err = commit(e); err == nil {
				c.Node, c.Event = e.Node, e.Seq
				h.Commits = append(h.Commits, c)
			}
		case KindPublish:
			var p hist.BPublish
			if p, err = note[hist.BPublish](e); err == nil {
				h.Publishes = append(h.Publishes, Publish{Msg: Message(p.Msg), From: p.From, Seq: p.Seq, T: e.T})
			}
		case KindHandle:
			var x hist.BHandle
			if x, err = note[hist.BHandle](e); err == nil {
				h.Handles = append(h.Handles, Handle{Handler: x.Handler, Event: x.Event, Key: x.Key, Phase: x.Phase, Code: x.Code, Path: x.Path, T: e.T})
			}
		case KindRelay:
			var r hist.BRelay
			if r, err = note[hist.BRelay](e); err == nil {
				h.Relay = append(h.Relay, Step{Node: e.Node, T: e.T, Msg: r.Msg, What: r.What})
			}
		case KindPush:
			var r hist.BPush
			if r, err = note[hist.BPush](e); err == nil {
				h.Pushes = append(h.Pushes, Step{Node: e.Node, T: e.T, Msg: r.Msg, Seq: r.Seq, Attempt: r.Attempt})
			}
		case KindApply:
			var r hist.BApply
			if r, err = note[hist.BApply](e); err == nil {
				h.Applies = append(h.Applies, Step{Node: e.Node, T: e.T, Msg: r.Msg, Seq: r.Seq, What: r.What})
			}
		case "crash":
			h.Crashes = append(h.Crashes, Crash{Node: e.Node, T: e.T})
		}
		if err != nil {
			return nil, fmt.Errorf("trace #%d (%s): data does not decode: %w", e.Seq, e.Kind, err)
		}
	}
	return h, nil
}

// note returns an event's note as T: the model's own value when the event
// carries it (a run in memory: no JSON), else its data decoded (an event
// read back from a trace file). The two differ only in the fields a note
// type marks text only (json:"-"), which the checkers do not read.
func note[T any](e *traces.Event) (T, error) {
	if v, ok := e.Value.(T); ok {
		return v, nil
	}
	var v T
	err := json.Unmarshal(e.DataJSON(), &v)
	return v, err
}

// commit returns a commit event's record: the database's own (shared:
// never modify it) or its data decoded, numbers made int64.
func commit(e *traces.Event) (Commit, error) {
	if rec, ok := e.Value.(hist.CommitRecord); ok {
		return Commit{Seq: rec.Seq, Tx: rec.Tx, At: int64(rec.At), Changes: rec.Changes}, nil
	}
	var c Commit
	dec := json.NewDecoder(bytes.NewReader(e.DataJSON()))
	dec.UseNumber()
	if err := dec.Decode(&c); err != nil {
		return c, err
	}
	for k := range c.Changes {
		normalize(c.Changes[k].Before)
		normalize(c.Changes[k].After)
	}
	return c, nil
}

// normalize turns JSON numbers into int64 (every number the schemas hold
// is an integer or a timestamp in nanoseconds).
func normalize(r map[string]any) {
	for k, v := range r {
		if n, ok := v.(json.Number); ok {
			if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
				r[k] = i
			}
		}
	}
}

func str(r map[string]any, col string) string {
	s, _ := r[col].(string)
	return s
}

// keyCode is the status code a stored key's row holds: 200 for the work
// done, a 4xx for a recorded refusal (200 when the row has none: a trace
// of a schema without the column).
func keyCode(r map[string]any) int64 {
	if c := num(r, "code"); c != 0 {
		return c
	}
	return 200
}

// refusal reports whether a stored key's row records a refusal: its
// transaction did no work.
func refusal(r map[string]any) bool {
	c := keyCode(r)
	return c < 200 || c >= 300
}

// keyOp is the operation a stored key names: its prefix, before the first
// ":" (the model's KeyOf: "charge:evt-1", "refund:evt-1/refund").
func keyOp(r map[string]any) string {
	op, _, _ := strings.Cut(str(r, "key"), ":")
	return op
}

// num reads an integer or timestamp column: int64, or the database's
// clock.Time (a timestamp of a run in memory; a trace file has its
// nanoseconds).
func num(r map[string]any, col string) int64 {
	switch n := r[col].(type) {
	case int64:
		return n
	case clock.Time:
		return int64(n)
	}
	return 0
}

// rowKey renders a primary key.
func rowKey(k []any) string {
	parts := make([]string, len(k))
	for i, v := range k {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ",")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
