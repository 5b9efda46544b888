package traces

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/traces/hist"
)

// reference is the line encoding/json writes for an event: its lazy parts
// rendered with fmt and json.Marshal, then the Event encoded by an Encoder
// with SetEscapeHTML(false) (the encoder before it was written by hand).
func reference(t require.TestingT, e Event) string {
	if e.Msg != nil && e.Text == "" {
		e.Text = e.Msg.Text()
	}
	e.Msg = nil
	if e.Value != nil && len(e.Data) == 0 {
		b, err := json.Marshal(e.Value)
		require.NoError(t, err)
		e.Data = b
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(&e))
	return string(bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}))
}

type other struct {
	A string         `json:"a,omitempty"`
	B []int          `json:"b"`
	M map[string]any `json:"m,omitempty"`
}

var text = rapid.OneOf(
	rapid.String(),
	rapid.StringOf(rapid.SampledFrom([]rune{'<', '>', '&', '"', '\\', '\n', '\t', 0, 0x1f, 'a', ' ', '\u2028', 'é', '😀'})),
	rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
	rapid.Just(""),
)

func drawEvent(t *rapid.T) Event {
	e := Event{
		Seq:  rapid.Uint64().Draw(t, "seq"),
		T:    rapid.Int64().Draw(t, "t"),
		Node: text.Draw(t, "node"),
		Kind: text.Draw(t, "kind"),
		Text: rapid.OneOf(rapid.Just(""), text).Draw(t, "text"),
	}
	if rapid.Bool().Draw(t, "msg") {
		e.Msg = &Msg{ID: rapid.Uint64().Draw(t, "id"), From: text.Draw(t, "from"), To: text.Draw(t, "to"),
			Conn: rapid.Uint64().Draw(t, "conn"), Body: text.Draw(t, "body")}
	}
	s := text.Draw(t, "s")
	values := []any{nil, nil,
		hist.Call{ID: s, Client: "w<1>", Op: "claim", Sub: 3, No: 9},
		hist.Txn{What: "begin", GID: s, Participants: []string{s, "b"}, Agent: true},
		hist.CommitRecord{Seq: 1, Tx: 2, At: clock.Time(3), Changes: []hist.Change{{Table: "t", Op: "insert", Key: []any{int64(1)}, After: map[string]any{"k": s, "at": clock.Time(4)}}}},
		&hist.BRelay{Msg: s, What: "marked"},
		(*hist.BRelay)(nil),
		other{A: s, M: map[string]any{"x": s}},
		map[string]any{s: 1.5},
	}
	e.Value = values[rapid.IntRange(0, len(values)-1).Draw(t, "value")]
	switch rapid.IntRange(0, 4).Draw(t, "data") {
	case 1: // as json.Marshal writes it
		b, _ := json.Marshal(map[string]any{"s": s, "n": 1})
		e.Data = b
	case 2: // indented: the line holds it compacted
		b, _ := json.MarshalIndent(map[string]any{"s": s, "l": []int{1, 2}}, "", "  ")
		e.Data = b
	case 4: // spaces in and out of strings, escaped quotes
		e.Data = json.RawMessage(`{"a b":"x \\\" y" , "c":[1, "\\"]}`)
	}
	return e
}

// TestLineIsEncodingJSON: the hand-written line is byte for byte
// encoding/json's, for random events: escapes in every string, lazy text
// and data, notes with and without AppendJSON, a nil pointer, raw data.
func TestLineIsEncodingJSON(t *testing.T) {
	var x encoder
	rapid.Check(t, func(t *rapid.T) {
		e := drawEvent(t)
		line, err := x.line(&e)
		require.NoError(t, err)
		assert.Equal(t, reference(t, e), string(line))
		if e.Value != nil && len(e.Data) == 0 {
			want, err := json.Marshal(e.Value)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(e.DataJSON()), "DataJSON")
		}
	})
}

func TestLineRejectsBadData(t *testing.T) {
	var x encoder
	_, err := x.line(&Event{Seq: 1, Kind: "k", Data: json.RawMessage(`{"a": `)})
	assert.Error(t, err, "data with spaces is compacted, and checked")
	assert.Panics(t, func() { _, _ = x.line(&Event{Seq: 1, Kind: "k", Value: map[string]any{"f": func() {}}}) })
}
