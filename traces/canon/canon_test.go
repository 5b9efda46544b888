package canon_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/traces/canon"
)

// marshal is encoding/json's answer: Marshal (HTML escaped), or an
// Encoder with SetEscapeHTML(false).
func marshal(t require.TestingT, v any, escapeHTML bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	require.NoError(t, enc.Encode(v))
	return string(bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}))
}

// Str draws strings that exercise every escape: HTML characters, control
// bytes, quotes, U+2028/U+2029, other non-ASCII runes and invalid UTF-8.
func Str() *rapid.Generator[string] {
	special := []rune{'<', '>', '&', '"', '\\', '\n', '\r', '\t', '\b', '\f', 0, 1, 0x1f, 0x7f, 'a', 'z', ' ', '/', '\u2028', '\u2029', 'é', '€', '😀', '\ufffd'}
	return rapid.OneOf(
		rapid.String(),
		rapid.StringOf(rapid.SampledFrom(special)),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
		rapid.Just(""),
	)
}

func TestString(t *testing.T) {
	cases := []string{"", "plain", `q"uote\`, "<a href='x'>&amp;</a>", "tab\tnl\ncr\r\b\f\x00\x1f\x7f",
		"\u2028\u2029", "é€😀", "bad \xff\xfe utf8 \xe2\x82", "\xed\xa0\x80 surrogate"}
	for _, s := range cases {
		assert.Equal(t, marshal(t, s, true), string(canon.String(nil, s)), "String(%q)", s)
		assert.Equal(t, marshal(t, s, false), string(canon.Text(nil, s)), "Text(%q)", s)
	}
	// The eight-byte fast path: every special byte at every offset.
	for _, c := range []string{"<", ">", "&", `"`, `\`, "\n", "\x00", "\x1f", " ", "~", "\x7f", "\x80", "é", "\u2028", "\xff"} {
		for k := range 20 {
			s := strings.Repeat("a", k) + c + strings.Repeat("b", 9)
			assert.Equal(t, marshal(t, s, true), string(canon.String(nil, s)), "String(%q)", s)
			assert.Equal(t, marshal(t, s, false), string(canon.Text(nil, s)), "Text(%q)", s)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		s := Str().Draw(t, "s")
		assert.Equal(t, marshal(t, s, true), string(canon.String(nil, s)), "String(%q)", s)
		assert.Equal(t, marshal(t, s, false), string(canon.Text(nil, s)), "Text(%q)", s)
		assert.Equal(t, marshal(t, s, true), string(canon.String(nil, []byte(s))), "String([]byte(%q))", s)
		assert.Equal(t, marshal(t, s, false), string(canon.Text(nil, []byte(s))), "Text([]byte(%q))", s)
	})
}

func TestFloat(t *testing.T) {
	cases := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 1e-7, 9.99999e-7, 1e20, 1e21, 123456789e15, 1.5e300, -2.5e-300,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 3.14159}
	for _, f := range cases {
		assert.Equal(t, marshal(t, f, true), string(canon.Float(nil, f)), "Float(%v)", f)
	}
	rapid.Check(t, func(t *rapid.T) {
		f := rapid.Float64().Draw(t, "f")
		if math.IsInf(f, 0) || math.IsNaN(f) {
			assert.Panics(t, func() { canon.Float(nil, f) })
			return
		}
		assert.Equal(t, marshal(t, f, true), string(canon.Float(nil, f)), "Float(%v)", f)
	})
}

// anyValue draws what a row or a key holds, and some it does not (nested
// values, a json.Number, a named map) that Any hands to encoding/json.
func anyValue(depth int) *rapid.Generator[any] {
	gens := []*rapid.Generator[any]{
		rapid.Just[any](nil),
		rapid.Map(Str(), func(s string) any { return s }),
		rapid.Map(rapid.Bool(), func(b bool) any { return b }),
		rapid.Map(rapid.Int64(), func(n int64) any { return n }),
		rapid.Map(rapid.Int(), func(n int) any { return n }),
		rapid.Map(rapid.Int32(), func(n int32) any { return n }),
		rapid.Map(rapid.Uint64(), func(n uint64) any { return n }),
		rapid.Map(rapid.Int64(), func(n int64) any { return clock.Time(n) }),
		rapid.Map(rapid.Float64Range(-1e30, 1e30), func(f float64) any { return f }),
		rapid.Map(rapid.Int64(), func(n int64) any { return json.Number(strconv.FormatInt(n, 10)) }),
		rapid.Map(rapid.Float32Range(-1e10, 1e10), func(f float32) any { return f }),
	}
	if depth > 0 {
		gens = append(gens,
			rapid.Map(rapid.SliceOf(anyValue(depth-1)), func(xs []any) any { return xs }),
			rapid.Map(rapid.MapOf(Str(), anyValue(depth-1)), func(m map[string]any) any { return m }),
			rapid.Map(rapid.MapOf(rapid.String(), rapid.Int64()), func(m map[string]int64) any { return m }),
		)
	}
	return rapid.OneOf(gens...)
}

func TestAny(t *testing.T) {
	cases := []any{nil, "x<y", true, int64(-5), clock.Time(12e9), 0.5, []any(nil), []any{}, map[string]any(nil), map[string]any{},
		map[string]any{"b": 1, "a": "<", "é": nil, "A": []any{int64(1), "x"}}, json.Number("12")}
	for _, v := range cases {
		assert.Equal(t, marshal(t, v, true), string(canon.Any(nil, v)), "Any(%#v)", v)
	}
	rapid.Check(t, func(t *rapid.T) {
		v := anyValue(2).Draw(t, "v")
		assert.Equal(t, marshal(t, v, true), string(canon.Any(nil, v)), "Any(%#v)", v)
	})
}

func TestNilPointer(t *testing.T) {
	var p *point
	assert.Equal(t, "null", string(canon.Any(nil, p)), "a nil pointer is null, its AppendJSON is not called")
	assert.Equal(t, `{"x":1}`, string(canon.Any(nil, &point{1})))
	assert.True(t, canon.IsNilPointer(p))
	assert.False(t, canon.IsNilPointer(point{}))
}

type point struct{ X int64 }

func (p point) AppendJSON(b []byte) []byte { return append(canon.Int(append(b, `{"x":`...), p.X), '}') }

func TestAppendsInPlace(t *testing.T) {
	b := []byte("prefix:")
	assert.Equal(t, `prefix:{"a":"\u003c"}`, string(canon.Map(b, map[string]any{"a": "<"})))
	assert.Equal(t, `null`, string(canon.Strings(nil, nil)))
	assert.Equal(t, `[]`, string(canon.Strings(nil, []string{})))
	assert.Equal(t, `["a","\u0026"]`, string(canon.Strings(nil, []string{"a", "&"})))
}
