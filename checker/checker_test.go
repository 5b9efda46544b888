package checker

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// ev is a trace event with its data as JSON (as read back from a file).
func ev(seq uint64, t int64, node, kind string, data any) traces.Event {
	raw, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	return traces.Event{Seq: seq, T: t, Node: node, Kind: kind, Data: raw}
}

// TestVerdictString: a verdict reads in one line, naming the events that
// break it in trace order.
func TestVerdictString(t *testing.T) {
	assert.Equal(t, "PX1 thing: ok", Pass("PX1 thing").String())
	assert.Equal(t, "PX1 thing: FAILED: 2 owners", Fail("PX1 thing", nil, "%d owners", 2).String())
	assert.Equal(t, "PX1 thing: FAILED: stale (events #3, #17)", Fail("PX1 thing", []uint64{3, 17}, "stale").String())
	assert.Equal(t, "PX1 thing: FAILED: stale (events #9)", Fail("PX1 thing", []uint64{9}, "stale").String())
}

// TestFailed keeps exactly the failing verdicts, in order.
func TestFailed(t *testing.T) {
	vs := []Verdict{Pass("a"), Fail("b", nil, "x"), Pass("c"), Fail("d", nil, "y")}
	got := Failed(vs)
	require.Len(t, got, 2)
	assert.Equal(t, "b", got[0].Property)
	assert.Equal(t, "d", got[1].Property)
	assert.Empty(t, Failed([]Verdict{Pass("a")}))
}

// TestDecode: an in-memory event's typed value is taken as it is; a file's
// JSON is decoded with untyped numbers as json.Number; bad data is an error
// naming the event.
func TestDecode(t *testing.T) {
	c := hist.Call{ID: "c1", Op: "claim"}
	got, err := Decode[hist.Call](traces.Event{Seq: 1, Kind: hist.KindCall, Value: c})
	require.NoError(t, err)
	assert.Equal(t, c, got)

	m, err := Decode[map[string]any](ev(2, 0, "db", "x", map[string]any{"n": 12}))
	require.NoError(t, err)
	assert.Equal(t, json.Number("12"), m["n"])

	_, err = Decode[hist.Call](traces.Event{Seq: 7, Node: "w", Kind: hist.KindCall, Data: json.RawMessage(`[1`)})
	assert.ErrorContains(t, err, "event #7 (w call)")
}

// TestCommits: every database node's commits, in trace order, from the
// database's own record or its JSON, each with its event's seq, node and
// time; other events are skipped.
func TestCommits(t *testing.T) {
	none, err := Commits([]traces.Event{ev(1, 5, "w", hist.KindCall, hist.Call{ID: "c"})})
	require.NoError(t, err)
	assert.Empty(t, none)

	rec := hist.CommitRecord{Seq: 1, Tx: 4, At: clock.Time(90), GID: "g", Changes: []hist.Change{{Table: "t", Op: "insert", After: map[string]any{"id": int64(1)}}}}
	evs := []traces.Event{
		{Seq: 1, T: 100, Node: "db1", Kind: hist.KindCommit, Value: rec},
		ev(2, 150, "w", hist.KindCall, hist.Call{ID: "c"}),
		ev(3, 200, "db2", hist.KindCommit, map[string]any{"seq": 2, "tx": 5, "at": 190, "changes": []any{}}),
	}
	cs, err := Commits(evs)
	require.NoError(t, err)
	require.Len(t, cs, 2)
	assert.Equal(t, Commit{Event: 1, Node: "db1", T: 100, Seq: 1, Tx: 4, At: 90, GID: "g", Changes: rec.Changes}, cs[0])
	assert.Equal(t, uint64(3), cs[1].Event)
	assert.Equal(t, "db2", cs[1].Node)
	assert.Equal(t, int64(200), cs[1].T)
	assert.Equal(t, uint64(5), cs[1].Tx)
	assert.Equal(t, int64(190), cs[1].At)

	_, err = Commits([]traces.Event{{Seq: 4, Kind: hist.KindCommit, Data: json.RawMessage(`{"seq":"x"}`)}})
	assert.Error(t, err, "an undecodable commit is an error, not a skipped one")
}

// TestOps: calls and returns paired by id in call order; a call without a
// return has an unknown outcome; a return heard twice keeps the first; an
// id called twice or a return of no call is an error.
func TestOps(t *testing.T) {
	evs := []traces.Event{
		ev(1, 10, "w1", hist.KindCall, hist.Call{ID: "a", Op: "claim"}),
		ev(2, 20, "w2", hist.KindCall, hist.Call{ID: "b", Op: "submit"}),
		ev(3, 30, "w1", hist.KindReturn, hist.Return{ID: "a", Code: 200}),
		ev(4, 35, "db", hist.KindCommit, map[string]any{"seq": 1}),
		ev(5, 40, "w1", hist.KindReturn, hist.Return{ID: "a", Code: 410}),
	}
	ops, err := Ops(evs)
	require.NoError(t, err)
	require.Len(t, ops, 2)
	assert.Equal(t, "a", ops[0].Call.ID)
	require.NotNil(t, ops[0].Return)
	assert.Equal(t, 200, ops[0].Return.Code, "the first return heard is the answer")
	assert.Equal(t, int64(10), ops[0].Invoke)
	assert.Equal(t, int64(30), ops[0].Response)
	assert.Equal(t, uint64(1), ops[0].CallSeq)
	assert.Equal(t, uint64(3), ops[0].ReturnSeq)
	assert.Equal(t, "b", ops[1].Call.ID)
	assert.Nil(t, ops[1].Return, "no return: unknown outcome")
	assert.Zero(t, ops[1].Response)

	_, err = Ops(append(evs, ev(6, 50, "w1", hist.KindCall, hist.Call{ID: "a"})))
	assert.ErrorContains(t, err, "called twice")
	_, err = Ops([]traces.Event{ev(1, 10, "w1", hist.KindReturn, hist.Return{ID: "z"})})
	assert.ErrorContains(t, err, "never called")
	_, err = Ops([]traces.Event{{Seq: 1, Kind: hist.KindCall, Data: json.RawMessage(`{"id":1}`)}})
	assert.Error(t, err)
	_, err = Ops([]traces.Event{ev(1, 10, "w1", hist.KindCall, hist.Call{ID: "a"}), {Seq: 2, Kind: hist.KindReturn, Data: json.RawMessage(`{"id":1}`)}})
	assert.Error(t, err)
}

// TestOf decodes the events of one kind only, each beside its event.
func TestOf(t *testing.T) {
	evs := []traces.Event{
		ev(1, 10, "w1", hist.KindAlert, hist.Alert{Target: "arbiter-1"}),
		ev(2, 20, "w1", hist.KindCall, hist.Call{ID: "a"}),
		ev(3, 30, "w1", hist.KindAlert, hist.Alert{Target: "arbiter-2"}),
	}
	as, at, err := Of[hist.Alert](evs, hist.KindAlert)
	require.NoError(t, err)
	require.Len(t, as, 2)
	assert.Equal(t, "arbiter-1", as[0].Target)
	assert.Equal(t, "arbiter-2", as[1].Target)
	assert.Equal(t, []uint64{1, 3}, []uint64{at[0].Seq, at[1].Seq})
	_, _, err = Of[hist.Alert]([]traces.Event{{Seq: 1, Kind: hist.KindAlert, Data: json.RawMessage(`[`)}}, hist.KindAlert)
	assert.Error(t, err)
}

// TestIntAndStr read a decoded row's values whatever their Go type; NULL
// and non-numbers are not integers.
func TestIntAndStr(t *testing.T) {
	for _, v := range []any{json.Number("42"), int64(42), clock.Time(42), float64(42), 42} {
		n, ok := Int(v)
		assert.True(t, ok, "%T", v)
		assert.Equal(t, int64(42), n, "%T", v)
	}
	for _, v := range []any{nil, "42", json.Number("4.5")} {
		_, ok := Int(v)
		assert.False(t, ok, "%v is not an integer", v)
	}
	assert.Equal(t, "x", Str("x"))
	assert.Equal(t, "", Str(nil))
}

func TestSortedKeys(t *testing.T) {
	assert.Equal(t, []string{"a", "b", "c"}, SortedKeys(map[string]int{"c": 1, "a": 2, "b": 3}))
	assert.Equal(t, []int64{-1, 3, 10}, SortedKeys(map[int64]bool{10: true, -1: true, 3: true}))
}
