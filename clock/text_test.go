package clock

import (
	"fmt"
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestStringAsFmt: a time's text is what fmt made of it before Append
// (traces hash it).
func TestStringAsFmt(t *testing.T) {
	ref := func(t Time) string {
		sign := ""
		v := int64(t)
		if v < 0 {
			sign = "-"
			v = -v
		}
		return fmt.Sprintf("%s%d.%03ds", sign, v/int64(time.Second), (v%int64(time.Second))/int64(time.Millisecond))
	}
	for _, x := range []Time{math.MinInt64, 0, 1, 999_999, 1_000_000, 12_345_000_000, -1_500_000_000, math.MaxInt64, math.MinInt64 + 1} {
		if got, want := x.String(), ref(x); got != want {
			t.Fatalf("%d: %q, want %q", int64(x), got, want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		x := Time(rapid.Int64().Draw(t, "t"))
		if got, want := x.String(), ref(x); got != want {
			t.Fatalf("%d: %q, want %q", int64(x), got, want)
		}
	})
}
