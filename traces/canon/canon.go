package canon

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/fencesim/fencesim/clock"
)

// Appender is a value that appends its own JSON, byte for byte what
// encoding/json's Marshal writes for it.
type Appender interface {
	AppendJSON(b []byte) []byte
}

const hex = "0123456789abcdef"

// safe[c] reports whether the ASCII byte c needs no escape in a JSON
// string when HTML characters are not escaped; html[c] when they are
// (encoding/json's safeSet and htmlSafeSet).
var safe, html [utf8.RuneSelf]bool

func init() {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		if c == '"' || c == '\\' {
			continue
		}
		safe[c] = true
		html[c] = c != '<' && c != '>' && c != '&'
	}
}

// String appends s as a JSON string the way json.Marshal does: <, > and &
// escaped as \u003c, \u003e, \u0026.
func String[S []byte | string](b []byte, s S) []byte { return appendString(b, s, &html) }

// Text appends s as a JSON string the way an Encoder with
// SetEscapeHTML(false) does (the trace's own fields).
func Text[S []byte | string](b []byte, s S) []byte { return appendString(b, s, &safe) }

// appendString is encoding/json's appendString: invalid UTF-8 becomes
// \ufffd, U+2028 and U+2029 are always escaped.
func appendString[S []byte | string](b []byte, s S, set *[utf8.RuneSelf]bool) []byte {
	b = append(b, '"')
	start := 0
	i := plain(s, set == &html)
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if set[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		// A rune is at most 4 bytes: the conversion stays on the stack.
		r, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plain returns the length of s's prefix that needs no escape, eight
// bytes at a time: no control byte, quote, backslash or non-ASCII byte
// (nor <, >, & when html).
func plain[S []byte | string](s S, html bool) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// zero has the high bit of each zero byte of x set (and only those,
	// for bytes below 0x80: the words tested have no high bit).
	zero := func(x uint64) uint64 { return (x - ones) & ^x & highs }
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if x&highs != 0 {
			break
		}
		// Bytes below 0x20: x-0x20 borrows into the high bit.
		bad := (x - 0x20*ones) & ^x & highs
		bad |= zero(x^('"'*ones)) | zero(x^('\\'*ones))
		if html {
			bad |= zero(x^('<'*ones)) | zero(x^('>'*ones)) | zero(x^('&'*ones))
		}
		if bad != 0 {
			break
		}
	}
	return i
}

// Int appends an integer.
func Int(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

// Uint appends an unsigned integer.
func Uint(b []byte, n uint64) []byte { return strconv.AppendUint(b, n, 10) }

// Bool appends true or false.
func Bool(b []byte, v bool) []byte { return strconv.AppendBool(b, v) }

// Float appends a float64 as encoding/json does (ES6 number form). It
// panics on NaN and infinities, which encoding/json refuses too: trace
// data must encode.
func Float(b []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		panic(fmt.Sprintf("canon: unsupported float value %v", f))
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 reads e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// Key appends a field's name and its colon: `"name":`. The name must need
// no escape (a Go struct tag's name).
func Key(b []byte, name string) []byte {
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

// Strings appends a []string (null when nil).
func Strings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = String(b, s)
	}
	return append(b, ']')
}

// Any appends a value held in an interface, as json.Marshal does: the
// common scalars (and the database's clock.Time) by hand, an Appender by
// itself, a []any and a map[string]any element by element, anything else
// through encoding/json. It panics when encoding/json refuses the value
// (trace data must encode).
func Any(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return String(b, x)
	case bool:
		return Bool(b, x)
	case int64:
		return Int(b, x)
	case int:
		return Int(b, int64(x))
	case int32:
		return Int(b, int64(x))
	case uint64:
		return Uint(b, x)
	case clock.Time:
		return Int(b, int64(x))
	case float64:
		return Float(b, x)
	case []any:
		return Slice(b, x)
	case map[string]any:
		return Map(b, x)
	case Appender:
		if !IsNilPointer(v) {
			return x.AppendJSON(b)
		}
	}
	j, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("canon: a %T does not encode: %v", v, err))
	}
	return append(b, j...)
}

// IsNilPointer reports whether v is a nil pointer: json.Marshal writes
// null for it, where its AppendJSON (a value method) would panic.
func IsNilPointer(v any) bool {
	r := reflect.ValueOf(v)
	return r.Kind() == reflect.Pointer && r.IsNil()
}

// Slice appends a []any (null when nil).
func Slice(b []byte, xs []any) []byte {
	if xs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = Any(b, x)
	}
	return append(b, ']')
}

// SortKeys sorts a map's few keys (slices.Sort's order): an insertion sort
// that compares first bytes before whole strings, which is most of what
// telling column names apart takes.
func SortKeys(keys []string) {
	for i := 1; i < len(keys); i++ {
		k := keys[i]
		j := i
		for ; j > 0 && keyLess(k, keys[j-1]); j-- {
			keys[j] = keys[j-1]
		}
		keys[j] = k
	}
}

func keyLess(a, b string) bool {
	if len(a) > 0 && len(b) > 0 && a[0] != b[0] {
		return a[0] < b[0]
	}
	return a < b
}

// Map appends a map[string]any with its keys sorted (null when nil).
func Map(b []byte, m map[string]any) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	var arr [16]string
	keys := arr[:0]
	for k := range m {
		keys = append(keys, k)
	}
	SortKeys(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = String(b, k)
		b = append(b, ':')
		b = Any(b, m[k])
	}
	return append(b, '}')
}
