package hist_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/traces/canon"
	"github.com/fencesim/fencesim/traces/hist"
)

// appenders lists one value of every type with a hand-written AppendJSON.
var appenders = []canon.Appender{
	hist.Call{}, hist.Return{}, hist.Lease{}, hist.Judge{}, hist.Result{}, hist.Alert{}, hist.State{},
	hist.BEvent{}, hist.BDelivery{}, hist.BSender{}, hist.BHandle{}, hist.BRelay{}, hist.BMessage{},
	hist.BPublish{}, hist.BPush{}, hist.BApply{}, hist.Txn{}, hist.CommitRecord{}, hist.Change{},
}

func same(t require.TestingT, v canon.Appender) {
	want, err := json.Marshal(v)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(v.AppendJSON(nil)), "%T %#v", v, v)
	// Appending keeps what is there.
	assert.Equal(t, "x"+string(want), string(v.AppendJSON([]byte("x"))), "%T", v)
}

// TestAppendJSONTable pins the zero values and a few edges: empty and nil
// slices and maps, HTML characters, text-only fields left out.
func TestAppendJSONTable(t *testing.T) {
	for _, v := range appenders {
		same(t, v)
	}
	cases := []canon.Appender{
		hist.Call{ID: "w1#1.3", Client: "w1", Op: "claim", Sub: 2, Token: "t<9>", Gen: -1, RequestID: "r&1", Episode: "e", Verdict: "AC", Key: "k", WorkerID: "w", No: 3, To: "h"},
		hist.Return{ID: "c", Code: 503, Leases: []hist.Lease{}, Op: "claim", No: 3, RequestID: "r", Why: "why"},
		hist.Return{ID: "c", Code: 200, Sub: 1, Token: "t", Gen: 2, User: 3, Problem: 4, Status: "judged", Value: "charged \u2028 5",
			Leases: []hist.Lease{{Sub: 1, Token: "t", Gen: 2}, {Sub: 5, Token: "u", Gen: 6, User: 7, Problem: 8}}},
		hist.Result{Worker: "w", Sub: 1, Token: "t", Verdict: "WA", Phase: "saved", Code: 410, Durable: true},
		hist.Txn{What: hist.TxnBegin, GID: "g1", Participants: []string{}, Agent: true},
		hist.Txn{What: hist.TxnBegin, GID: "g1", Participants: []string{"orders", "stock<"}, Synced: true, Rows: 3, Quiesced: true},
		hist.BPublish{Msg: hist.BMessage{ID: "msg-1", Event: "e1", OpID: "op", Kind: "charge", Amount: -5}, From: "relay", Seq: 1 << 63},
		hist.CommitRecord{Seq: 3, Tx: 17, At: 12e9, GID: "g1", Changes: []hist.Change{}},
		hist.CommitRecord{Seq: 3, Tx: 17, At: 12e9, Changes: []hist.Change{
			{Table: "stock", Op: "update", Key: []any{int64(1)}, Before: map[string]any{"id": int64(1), "n": int64(100)}, After: map[string]any{"id": int64(1), "n": int64(99), "at": clock.Time(5), "ok": true, "s": "a&b", "z": nil}},
			{Table: "t", Op: "insert", Key: []any{}, Before: map[string]any{}, After: map[string]any{"k": "v"}},
			{Table: "t", Op: "delete", Key: nil, Before: map[string]any{"k": json.Number("12")}},
		}},
	}
	for _, v := range cases {
		same(t, v)
	}
}

// TestAppendJSON compares every AppendJSON with json.Marshal on random
// values of its type: every field drawn (strings with every escape, zeros
// for omitempty, nil and empty slices and maps).
func TestAppendJSON(t *testing.T) {
	for _, v := range appenders {
		typ := reflect.TypeOf(v)
		t.Run(typ.Name(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				p := reflect.New(typ)
				fill(t, p.Elem(), "v")
				same(t, p.Elem().Interface().(canon.Appender))
			})
		})
	}
}

// str draws strings with every escape encoding/json makes.
var str = rapid.OneOf(
	rapid.String(),
	rapid.StringOf(rapid.SampledFrom([]rune{'<', '>', '&', '"', '\\', '\n', '\t', 0, 0x1f, 0x7f, 'a', ' ', '\u2028', '\u2029', 'é', '😀'})),
	rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
	rapid.Just(""),
)

// cell draws what a database row or key holds.
var cell = rapid.OneOf(
	rapid.Just[any](nil),
	rapid.Map(str, func(s string) any { return s }),
	rapid.Map(rapid.Bool(), func(b bool) any { return b }),
	rapid.Map(rapid.Int64(), func(n int64) any { return n }),
	rapid.Map(rapid.Int64(), func(n int64) any { return clock.Time(n) }),
)

// fill draws a value for v by its kind: zeros often, for omitempty.
func fill(t *rapid.T, v reflect.Value, label string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(str.Draw(t, label))
	case reflect.Bool:
		v.SetBool(rapid.Bool().Draw(t, label))
	case reflect.Int, reflect.Int64:
		v.SetInt(rapid.OneOf(rapid.Just[int64](0), rapid.Int64()).Draw(t, label))
	case reflect.Uint64:
		v.SetUint(rapid.OneOf(rapid.Just[uint64](0), rapid.Uint64()).Draw(t, label))
	case reflect.Struct:
		for i := range v.NumField() {
			fill(t, v.Field(i), label+"."+v.Type().Field(i).Name)
		}
	case reflect.Slice:
		switch n := rapid.IntRange(-1, 3).Draw(t, label+".len"); n {
		case -1: // nil
		default:
			v.Set(reflect.MakeSlice(v.Type(), n, n))
			for i := range n {
				if v.Type().Elem().Kind() == reflect.Interface {
					if x := cell.Draw(t, label+"[]"); x != nil {
						v.Index(i).Set(reflect.ValueOf(x))
					}
					continue
				}
				fill(t, v.Index(i), label+"[]")
			}
		}
	case reflect.Map: // map[string]any
		switch n := rapid.IntRange(-1, 4).Draw(t, label+".len"); n {
		case -1: // nil
		default:
			m := reflect.MakeMap(v.Type())
			for range n {
				k, x := str.Draw(t, label+".key"), cell.Draw(t, label+".value")
				if x == nil {
					m.SetMapIndex(reflect.ValueOf(k), reflect.Zero(v.Type().Elem()))
				} else {
					m.SetMapIndex(reflect.ValueOf(k), reflect.ValueOf(x))
				}
			}
			v.Set(m)
		}
	default:
		t.Fatalf("fill: no generator for %s (%s): add one", label, v.Type())
	}
}
