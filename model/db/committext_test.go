package db

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/clock"
)

// TestCommitTextAsFmt: a commit record's text is what fmt made of it
// before AppendString (traces hash it).
func TestCommitTextAsFmt(t *testing.T) {
	ref := func(r CommitRecord) string {
		var b strings.Builder
		fmt.Fprintf(&b, "commit #%d tx %d", r.Seq, r.Tx)
		if r.GID != "" {
			fmt.Fprintf(&b, " gid %s", fmtQuote(r.GID))
		}
		fmt.Fprintf(&b, " at %s:", r.At)
		for i, c := range r.Changes {
			if i > 0 {
				b.WriteString(",")
			}
			parts := make([]string, len(c.Key))
			for i, v := range c.Key {
				parts[i] = fmtLiteral(v)
			}
			fmt.Fprintf(&b, " %s %s%s", c.Op, c.Table, "("+strings.Join(parts, ",")+")")
		}
		if len(r.Changes) == 0 {
			b.WriteString(" (no changes)")
		}
		return b.String()
	}
	str := rapid.OneOf(rapid.String(), rapid.Just(""), rapid.Just("it's"))
	val := rapid.OneOf(
		rapid.Just[any](nil),
		rapid.Map(str, func(s string) any { return s }),
		rapid.Map(rapid.Int64(), func(n int64) any { return n }),
		rapid.Map(rapid.Bool(), func(b bool) any { return b }),
		rapid.Map(rapid.Int64(), func(n int64) any { return clock.Time(n) }),
	)
	rapid.Check(t, func(t *rapid.T) {
		r := CommitRecord{Seq: rapid.Uint64().Draw(t, "seq"), Tx: rapid.Uint64().Draw(t, "tx"), GID: str.Draw(t, "gid"),
			At: clock.Time(rapid.Int64().Draw(t, "at"))}
		for range rapid.IntRange(0, 3).Draw(t, "changes") {
			c := Change{Table: str.Draw(t, "table"), Op: rapid.SampledFrom([]string{OpInsert, OpUpdate, OpDelete}).Draw(t, "op")}
			for range rapid.IntRange(0, 2).Draw(t, "key") {
				c.Key = append(c.Key, val.Draw(t, "k"))
			}
			r.Changes = append(r.Changes, c)
		}
		assert.Equal(t, ref(r), r.String())
	})
}
