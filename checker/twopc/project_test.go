package twopc

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/traces"
)

// The shapes of model/db's notes (PreparedNote, stmtNote), which this
// package may not import.
type preparedNote struct {
	GID   string     `json:"gid"`
	Tx    uint64     `json:"tx"`
	Event string     `json:"event"`
	At    clock.Time `json:"at"`
	Since clock.Time `json:"since"`
}

type stmtNote struct {
	Conn     uint64           `json:"conn"`
	Tx       uint64           `json:"tx,omitempty"`
	SQL      string           `json:"sql"`
	Wait     uint64           `json:"wait,omitempty"`
	Tag      string           `json:"tag,omitempty"`
	Err      string           `json:"err,omitempty"`
	Msg      string           `json:"msg,omitempty"`
	Notice   string           `json:"notice,omitempty"`
	Affected int              `json:"affected,omitempty"`
	Rows     []map[string]any `json:"rows,omitempty"`
}

// roundTrip is what a trace file gives: the value encoded, then decoded.
func roundTrip[T any](t require.TestingT, v any) T {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out T
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// TestDecodeProjectsAsJSON: decode reads the model's own value as a JSON
// round trip would, for the notes the checker reads.
func TestDecodeProjectsAsJSON(t *testing.T) {
	str := rapid.OneOf(rapid.String(), rapid.Just("55P03"), rapid.Just(""),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }))
	rapid.Check(t, func(t *rapid.T) {
		p := preparedNote{GID: str.Draw(t, "gid"), Tx: rapid.Uint64().Draw(t, "tx"), Event: str.Draw(t, "event"),
			At: clock.Time(rapid.Int64().Draw(t, "at")), Since: clock.Time(rapid.Int64().Draw(t, "since"))}
		got, err := decode[Prepared](traces.Event{Kind: "prepared", Value: p})
		require.NoError(t, err)
		assert.Equal(t, roundTrip[Prepared](t, p), got)

		s := stmtNote{Conn: rapid.Uint64().Draw(t, "conn"), SQL: str.Draw(t, "sql"), Err: str.Draw(t, "err"),
			Wait: rapid.Uint64().Draw(t, "wait"), Msg: str.Draw(t, "msg"), Rows: []map[string]any{{"a": 1}}}
		gs, err := decode[Statement](traces.Event{Kind: "db", Value: s})
		require.NoError(t, err)
		assert.Equal(t, roundTrip[Statement](t, s), gs)
	})
}

// TestProjectPlans: what is projected, and what is left to encoding/json.
func TestProjectPlans(t *testing.T) {
	var p Prepared
	assert.True(t, project(preparedNote{GID: "g", At: 5}, &p))
	assert.Equal(t, Prepared{GID: "g", At: 5}, p)

	type signed struct {
		Tx int64 `json:"tx"`
	}
	type caseOnly struct {
		GID string `json:"GID"`
	}
	type quoted struct {
		Tx uint64 `json:"tx,string"`
	}
	type embedded struct{ preparedNote }
	for _, v := range []any{signed{1}, caseOnly{"g"}, quoted{1}, embedded{}, &preparedNote{}, "text"} {
		assert.False(t, project(v, &p), "%T is left to encoding/json", v)
	}
	assert.False(t, project(preparedNote{GID: "bad \xff"}, &p), "invalid UTF-8 is left to encoding/json")
	got, err := decode[Prepared](traces.Event{Kind: "prepared", Value: caseOnly{"g"}})
	require.NoError(t, err)
	assert.Equal(t, "g", got.GID, "encoding/json matches names without case")
}
