package design

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Param is one settable parameter: exactly one of Dur, Int, Flag is set.
// The table of a design's parameters is the one place their meaning and
// range live: Validate checks the range, the command line lists it.
type Param struct {
	Name string
	Doc  string // what it means, in simulated units (Means)
	Dur  *time.Duration
	Int  *int
	Flag *bool
	Min  int64 // the smallest allowed value (nanoseconds for durations)
	Max  int64 // the largest allowed value when HasMax (AtMost)
	// HasMax says Max is a bound (a zero Max is none).
	HasMax bool
}

// Means returns the parameter with its meaning.
func (p Param) Means(doc string) Param { p.Doc = doc; return p }

// AtMost returns the parameter with a largest allowed value (nanoseconds
// for durations).
func (p Param) AtMost(max int64) Param { p.Max, p.HasMax = max, true; return p }

// Dur is a duration parameter.
func Dur(name string, p *time.Duration, min time.Duration) Param {
	return Param{Name: name, Dur: p, Min: int64(min)}
}

// Int is a count parameter.
func Int(name string, p *int, min int) Param { return Param{Name: name, Int: p, Min: int64(min)} }

// Flag is a true/false parameter.
func Flag(name string, p *bool) Param { return Param{Name: name, Flag: p} }

// Names lists the parameters' names, in table order.
func Names(ps []Param) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

// CheckPinned reports a pinned name (a design's Pinned: the parameters a
// world drawn per run keeps) that is not one of params.
func CheckPinned(pinned, params []string) error {
	for _, p := range pinned {
		if !slices.Contains(params, p) {
			return fmt.Errorf("pinned %q is not a parameter (parameters: %s)", p, strings.Join(params, ", "))
		}
	}
	return nil
}

// Set sets the parameter called name from text. system names the design in
// the error for an unknown parameter.
func Set(system string, ps []Param, name, value string) error {
	for _, p := range ps {
		if p.Name != name {
			continue
		}
		switch {
		case p.Dur != nil:
			v, err := time.ParseDuration(value)
			if err != nil {
				return fmt.Errorf("parameter %s: %q is not a duration (write e.g. 500ms, 10s, 1m30s)", name, value)
			}
			*p.Dur = v
		case p.Int != nil:
			v, err := strconv.Atoi(value)
			if err != nil {
				return fmt.Errorf("parameter %s: %q is not an integer", name, value)
			}
			*p.Int = v
		case p.Flag != nil:
			v, err := strconv.ParseBool(value)
			if err != nil {
				return fmt.Errorf("parameter %s: %q is not true or false", name, value)
			}
			*p.Flag = v
		}
		return nil
	}
	return fmt.Errorf("unknown parameter %q for %s (parameters: %s)", name, system, strings.Join(Names(ps), ", "))
}

// CheckMins reports the first parameter outside its range: below its
// minimum or above its maximum.
func CheckMins(ps []Param) error {
	for _, p := range ps {
		switch {
		case p.Dur != nil && int64(*p.Dur) < p.Min:
			return fmt.Errorf("parameter %s = %v is below its minimum %v", p.Name, *p.Dur, time.Duration(p.Min))
		case p.Int != nil && int64(*p.Int) < p.Min:
			return fmt.Errorf("parameter %s = %d is below its minimum %d", p.Name, *p.Int, p.Min)
		case p.HasMax && p.Dur != nil && int64(*p.Dur) > p.Max:
			return fmt.Errorf("parameter %s = %v is above its maximum %v", p.Name, *p.Dur, time.Duration(p.Max))
		case p.HasMax && p.Int != nil && int64(*p.Int) > p.Max:
			return fmt.Errorf("parameter %s = %d is above its maximum %d", p.Name, *p.Int, p.Max)
		}
	}
	return nil
}

// Order is a rule between parameters of one type, as data: Param Op the
// sum of Other (one name, or counts added up: the fleet is home_workers
// plus prod_workers). Op is "<", "<=" or ">=". Validate checks it, the
// command line lists it beside both parameters.
type Order struct {
	Param string
	Op    string
	Other []string
	// Waivable marks a timing rule a design may run without when it asks
	// to (the arbiter's allow_unsafe, fencesim --unsafe).
	Waivable bool
}

// Text renders the rule: "heartbeat < lease".
func (o Order) Text() string { return o.Param + " " + o.Op + " " + strings.Join(o.Other, " + ") }

// Inverse renders the rule from the other side, for a rule with one other
// parameter: "lease > heartbeat" ("" for a sum).
func (o Order) Inverse() string {
	if len(o.Other) != 1 {
		return ""
	}
	inv := map[string]string{"<": ">", "<=": ">=", ">=": "<="}[o.Op]
	return o.Other[0] + " " + inv + " " + o.Param
}

// CheckOrders reports the first rule of orders the parameters break,
// among the waivable ones when waivable is true and the others otherwise.
// A rule that names no parameter of ps is a bug and panics.
func CheckOrders(ps []Param, orders []Order, waivable bool) error {
	value := func(name string) (int64, bool) {
		for _, p := range ps {
			if p.Name == name {
				switch {
				case p.Dur != nil:
					return int64(*p.Dur), true
				case p.Int != nil:
					return int64(*p.Int), false
				}
			}
		}
		panic(fmt.Sprintf("design: rule names %q, which is not a duration or count parameter", name))
	}
	render := func(v int64, dur bool) string {
		if dur {
			return time.Duration(v).String()
		}
		return strconv.FormatInt(v, 10)
	}
	for _, o := range orders {
		if o.Waivable != waivable {
			continue
		}
		a, dur := value(o.Param)
		var b int64
		for _, n := range o.Other {
			v, _ := value(n)
			b += v
		}
		other := strings.Join(o.Other, " + ")
		switch {
		case o.Op == ">=" && a < b:
			return fmt.Errorf("parameter %s = %s is below %s = %s", o.Param, render(a, dur), other, render(b, dur))
		case o.Op == "<=" && a > b:
			return fmt.Errorf("parameter %s = %s is above %s = %s", o.Param, render(a, dur), other, render(b, dur))
		case o.Op == "<" && a >= b:
			return fmt.Errorf("parameter %s = %s must be shorter than %s = %s", o.Param, render(a, dur), other, render(b, dur))
		case o.Op != ">=" && o.Op != "<=" && o.Op != "<":
			panic(fmt.Sprintf("design: rule %q has an unknown operator", o.Text()))
		}
	}
	return nil
}

// Info is one parameter as the command line lists it (fencesim params):
// every field rendered from the parameter table and the rules.
type Info struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"` // duration, count or flag
	Doc     string   `json:"doc"`
	Default string   `json:"default"`
	Range   string   `json:"range"`           // from the table's minimum and maximum
	Rules   []string `json:"rules,omitempty"` // the rules across parameters that name it
}

// Infos lists the parameters of a table bound to a design (its values are
// the defaults shown) with the rules that bound them: a rule between two
// parameters is listed with both, a rule on a sum with the parameter it
// bounds only.
func Infos(ps []Param, orders []Order) []Info {
	out := make([]Info, 0, len(ps))
	for _, p := range ps {
		in := Info{Name: p.Name, Doc: p.Doc}
		switch {
		case p.Dur != nil:
			in.Type, in.Default = "duration", p.Dur.String()
			in.Range = ">= " + time.Duration(p.Min).String()
			if p.HasMax {
				in.Range = time.Duration(p.Min).String() + " to " + time.Duration(p.Max).String()
			}
		case p.Int != nil:
			in.Type, in.Default = "count", strconv.Itoa(*p.Int)
			in.Range = ">= " + strconv.FormatInt(p.Min, 10)
			if p.HasMax {
				in.Range = strconv.FormatInt(p.Min, 10) + " to " + strconv.FormatInt(p.Max, 10)
			}
		case p.Flag != nil:
			in.Type, in.Default, in.Range = "flag", strconv.FormatBool(*p.Flag), "true or false"
		}
		for _, o := range orders {
			text := ""
			switch {
			case o.Param == p.Name:
				text = o.Text()
			case len(o.Other) == 1 && o.Other[0] == p.Name:
				text = o.Inverse()
			}
			if text == "" {
				continue
			}
			if o.Waivable {
				text += " (unless allow_unsafe)"
			}
			in.Rules = append(in.Rules, text)
		}
		out = append(out, in)
	}
	return out
}

// KnobNames returns knob names, sorted.
func KnobNames[K ~string](all []K) []string {
	out := make([]string, len(all))
	for i, k := range all {
		out[i] = string(k)
	}
	sort.Strings(out)
	return out
}

// With returns have plus add, sorted and without repeats; a knob not in all
// is refused with an error that lists the known ones.
func With[K ~string](system string, all, have []K, add ...K) ([]K, error) {
	known := map[K]bool{}
	for _, k := range all {
		known[k] = true
	}
	out := append([]K(nil), have...)
	for _, k := range add {
		if !known[k] {
			return have, fmt.Errorf("unknown knob %q for %s (knobs: %s)", k, system, strings.Join(KnobNames(all), ", "))
		}
		dup := false
		for _, x := range out {
			dup = dup || x == k
		}
		if !dup {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// Encode encodes a design as JSON (for a trace header); a design that does
// not encode is a bug.
func Encode(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("design: %T does not encode: %v", v, err))
	}
	return b
}

// Decode decodes a JSON design into v, which holds the defaults: fields not
// given keep them; an unknown field is an error naming what (e.g. "arbiter
// design") could not be read.
func Decode(data []byte, v any, what string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// Backoff returns the n-th retry delay (n from 0) of an exponential backoff:
// base, 2*base, 4*base, ... capped at max.
func Backoff(base, max time.Duration, n int) time.Duration {
	b := base
	for i := 0; i < n && b < max; i++ {
		b *= 2
	}
	if b > max {
		b = max
	}
	return b
}

// Keys returns each registry entry's key, in registry order.
func Keys[I any, K any](reg []I, key func(I) K) []K {
	out := make([]K, len(reg))
	for i, e := range reg {
		out[i] = key(e)
	}
	return out
}

// Lookup returns the registry entry with a key.
func Lookup[I any, K comparable](reg []I, key func(I) K, k K) (I, bool) {
	for _, e := range reg {
		if key(e) == k {
			return e, true
		}
	}
	var zero I
	return zero, false
}

// Spec describes one system's design to the operations every design shares
// (parameter names, Set, Validate, knobs on, decoding), so that each system
// states only what is its own: its defaults, its parameter table, its knob
// registry and the rules that tie its parameters together.
type Spec[D any, K ~string] struct {
	System  string             // the system as messages name it: "the arbiter"
	What    string             // what a decoded design is: "arbiter design"
	Default func() D           // the source's design
	Params  func(d *D) []Param // the parameter table, bound to d
	Knobs   func() []K         // every knob of the registry
	KnobsOf func(d *D) *[]K    // the design's own knob list
	Rules   func(d D) error    // rules across parameters beyond Orders; nil: none
	// Orders are the rules between parameters that are data (checked by
	// Validate before Rules; the waivable ones only by the system's
	// Rules, which may waive them).
	Orders []Order
}

// Infos lists the parameters with their defaults, ranges and rules.
func (s Spec[D, K]) Infos() []Info {
	d := s.Default()
	return Infos(s.Params(&d), s.Orders)
}

// ParamNames lists the settable parameters.
func (s Spec[D, K]) ParamNames() []string {
	var d D
	return Names(s.Params(&d))
}

// Set sets one parameter from text and validates the result.
func (s Spec[D, K]) Set(d *D, name, value string) error {
	if err := s.Assign(d, name, value); err != nil {
		return err
	}
	return s.Validate(*d)
}

// Assign sets one parameter from text without validating the design: of
// several settings, one a rule ties to another may come before the other
// (lease=10s, then heartbeat=3s, where the default heartbeat is 20s).
// Validate the design once every setting is made.
func (s Spec[D, K]) Assign(d *D, name, value string) error {
	return Set(s.System, s.Params(d), name, value)
}

// Validate reports the first parameter below its minimum, broken rule or
// unknown knob.
func (s Spec[D, K]) Validate(d D) error {
	if err := CheckMins(s.Params(&d)); err != nil {
		return err
	}
	if err := CheckOrders(s.Params(&d), s.Orders, false); err != nil {
		return err
	}
	if s.Rules != nil {
		if err := s.Rules(d); err != nil {
			return err
		}
	}
	_, err := With(s.System, s.Knobs(), nil, *s.KnobsOf(&d)...)
	return err
}

// With returns the design with more knobs on.
func (s Spec[D, K]) With(d D, add ...K) (D, error) {
	ks, err := With(s.System, s.Knobs(), *s.KnobsOf(&d), add...)
	if err != nil {
		return d, err
	}
	*s.KnobsOf(&d) = ks
	return d, nil
}

// MustWith is With for tests and tables whose knobs are constants.
func (s Spec[D, K]) MustWith(d D, add ...K) D {
	out, err := s.With(d, add...)
	if err != nil {
		panic(err)
	}
	return out
}

// Parse decodes and validates a design (a trace header, a design file);
// fields not given keep the defaults.
func (s Spec[D, K]) Parse(data []byte) (D, error) {
	d := s.Default()
	if err := Decode(data, &d, s.What); err != nil {
		return d, err
	}
	return d, s.Validate(d)
}

// KnobInfo describes a design knob for the registry, the CLI and the knob
// tests: the mechanism it removes, whether the source says losing it is
// harmful, and where the damage is expected to show.
type KnobInfo[K ~string] struct {
	Knob      K        `json:"knob"`
	Removes   string   `json:"removes"`             // the mechanism removed
	Harmful   bool     `json:"harmful"`             // the source says losing it is harmful
	CaughtBy  []string `json:"caught_by"`           // the properties or metrics expected to catch it (the first is the one knob tests hunt with)
	Scenarios []string `json:"scenarios,omitempty"` // the source's scenarios where the damage shows
	Faults    string   `json:"faults,omitempty"`    // the faults it needs to show
}

// Registry is a system's list of knobs.
type Registry[K ~string] []KnobInfo[K]

func knobOf[K ~string](i KnobInfo[K]) K { return i.Knob }

// Keys returns the knobs in registry order.
func (r Registry[K]) Keys() []K { return Keys(r, knobOf[K]) }

// Names returns the knob names, sorted.
func (r Registry[K]) Names() []string { return KnobNames(r.Keys()) }

// Info returns a knob's entry.
func (r Registry[K]) Info(k K) (KnobInfo[K], bool) { return Lookup(r, knobOf[K], k) }
