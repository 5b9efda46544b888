package db

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/traces/canon"
)

var _ canon.Appender = stmtNote{}

// TestStmtNoteJSON: a "db" note's hand-written JSON is json.Marshal's,
// byte for byte, for notes with every field zero or not, strings with
// every escape, and rows of every kind of value a table holds.
func TestStmtNoteJSON(t *testing.T) {
	str := rapid.OneOf(
		rapid.String(),
		rapid.StringOf(rapid.SampledFrom([]rune{'<', '>', '&', '"', '\\', '\n', '\t', 0, 0x1f, 0x7f, 'a', ' ', '\u2028', '\u2029', 'é', '😀'})),
		rapid.Just(""),
	)
	cell := rapid.OneOf(
		rapid.Just[any](nil),
		rapid.Map(str, func(s string) any { return s }),
		rapid.Map(rapid.Bool(), func(b bool) any { return b }),
		rapid.Map(rapid.Int64(), func(n int64) any { return n }),
		rapid.Map(rapid.Int64(), func(n int64) any { return clock.Time(n) }),
	)
	u := rapid.OneOf(rapid.Just[uint64](0), rapid.Uint64())
	rapid.Check(t, func(t *rapid.T) {
		d := stmtNote{Conn: u.Draw(t, "conn"), Tx: u.Draw(t, "tx"), SQL: str.Draw(t, "sql"), Wait: u.Draw(t, "wait"),
			Tag: str.Draw(t, "tag"), Err: str.Draw(t, "err"), Msg: str.Draw(t, "msg"), Notice: str.Draw(t, "notice"),
			Affected: rapid.OneOf(rapid.Just(0), rapid.Int()).Draw(t, "affected")}
		if n := rapid.IntRange(-1, 3).Draw(t, "rows"); n >= 0 {
			d.Rows = make([]Row, n)
			for i := range d.Rows {
				if rapid.Bool().Draw(t, "nil row") {
					continue
				}
				d.Rows[i] = rapid.MapOf(str, cell).Draw(t, "row")
			}
		}
		want, err := json.Marshal(d)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(d.AppendJSON([]byte{})), "%#v", d)
	})
}
