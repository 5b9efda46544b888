package twopc

import (
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/traces"
)

// The databases' "prepared" and "db" notes carry model/db's own values,
// of types this package may not import (checker never imports model/). So
// that a run in memory is not encoded to JSON only to be decoded again,
// decode copies the fields this package's types name (Prepared,
// Statement) from the model's value by their JSON names: the same values
// a JSON round trip gives, for string and integer fields.

// decode returns an event's data as T: projected from the model's value
// when it can be, else decoded from the data (checker.Decode).
func decode[T any](e traces.Event) (T, error) {
	var v T
	if e.Value != nil && len(e.Data) == 0 && project(e.Value, &v) {
		return v, nil
	}
	return checker.Decode[T](e)
}

// plan maps each field of a destination struct to the field of a source
// struct with the same JSON name (-1: none, the field stays zero).
type plan struct {
	ok   bool
	from []int
}

var plans sync.Map // [2]reflect.Type (source, destination) -> *plan

// project copies src's fields into *dst by JSON name, and reports whether
// it could: both structs, every matched pair a string or an integer of the
// same signedness, and every string valid UTF-8 (JSON would replace what is
// not).
func project(src any, dst any) bool {
	s := reflect.ValueOf(src)
	d := reflect.ValueOf(dst).Elem()
	key := [2]reflect.Type{s.Type(), d.Type()}
	p, ok := plans.Load(key)
	if !ok {
		p, _ = plans.LoadOrStore(key, makePlan(s.Type(), d.Type()))
	}
	pl := p.(*plan)
	if !pl.ok {
		return false
	}
	for i, j := range pl.from {
		if j < 0 {
			continue
		}
		f, g := d.Field(i), s.Field(j)
		switch f.Kind() {
		case reflect.String:
			if !utf8.ValidString(g.String()) {
				return false
			}
			f.SetString(g.String())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if f.OverflowInt(g.Int()) {
				return false
			}
			f.SetInt(g.Int())
		default:
			if f.OverflowUint(g.Uint()) {
				return false
			}
			f.SetUint(g.Uint())
		}
	}
	return true
}

func makePlan(src, dst reflect.Type) *plan {
	no := &plan{}
	if src.Kind() != reflect.Struct || dst.Kind() != reflect.Struct {
		return no
	}
	// encoding/json matches names case-insensitively: a name that only
	// matches so, or twice, is left to it.
	names := map[string]int{}
	for j := range src.NumField() {
		f := src.Field(j)
		name, use, plain := jsonName(f)
		switch {
		case f.Anonymous || !plain:
			return no
		case !use:
			continue
		}
		if _, dup := names[strings.ToLower(name)]; dup {
			return no
		}
		names[strings.ToLower(name)] = j
	}
	p := &plan{ok: true, from: make([]int, dst.NumField())}
	for i := range dst.NumField() {
		f := dst.Field(i)
		p.from[i] = -1
		name, use, plain := jsonName(f)
		switch {
		case f.Anonymous || !plain:
			return no
		case !use:
			continue
		}
		j, ok := names[strings.ToLower(name)]
		if !ok {
			continue
		}
		if n, _, _ := jsonName(src.Field(j)); n != name || !sameKind(f.Type.Kind(), src.Field(j).Type.Kind()) {
			return no
		}
		p.from[i] = j
	}
	return p
}

// jsonName is a field's name in JSON; use is false for a field
// encoding/json skips, plain false for one with a ",string" option.
func jsonName(f reflect.StructField) (name string, use, plain bool) {
	tag := f.Tag.Get("json")
	if !f.IsExported() || tag == "-" {
		return "", false, true
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, true, !strings.Contains(","+opts+",", ",string,")
}

// sameKind reports whether a and b are both strings, both signed or both
// unsigned integers.
func sameKind(a, b reflect.Kind) bool {
	class := func(k reflect.Kind) int {
		switch k {
		case reflect.String:
			return 1
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return 2
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			return 3
		}
		return 0
	}
	return class(a) != 0 && class(a) == class(b)
}
