package design

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSetAndCheck(t *testing.T) {
	var d time.Duration
	var n int
	var f bool
	ps := []Param{Dur("lease", &d, time.Millisecond), Int("pool", &n, 1), Flag("grace", &f)}
	require.NoError(t, Set("the arbiter", ps, "lease", "90s"))
	require.NoError(t, Set("the arbiter", ps, "pool", "3"))
	require.NoError(t, Set("the arbiter", ps, "grace", "true"))
	assert.Equal(t, 90*time.Second, d)
	assert.Equal(t, 3, n)
	assert.True(t, f)
	assert.EqualError(t, Set("the arbiter", ps, "lease", "soon"), `parameter lease: "soon" is not a duration (write e.g. 500ms, 10s, 1m30s)`)
	assert.EqualError(t, Set("the arbiter", ps, "pool", "x"), `parameter pool: "x" is not an integer`)
	assert.EqualError(t, Set("the arbiter", ps, "grace", "maybe"), `parameter grace: "maybe" is not true or false`)
	assert.EqualError(t, Set("the arbiter", ps, "color", "red"), `unknown parameter "color" for the arbiter (parameters: lease, pool, grace)`)
	n = 0
	assert.EqualError(t, CheckMins(ps), "parameter pool = 0 is below its minimum 1")
}

type knob string

func TestWith(t *testing.T) {
	all := []knob{"b", "a"}
	got, err := With("x", all, []knob{"b"}, "a", "b")
	require.NoError(t, err)
	assert.Equal(t, []knob{"a", "b"}, got)
	_, err = With("x", all, nil, "zz")
	assert.EqualError(t, err, `unknown knob "zz" for x (knobs: a, b)`)
}

func TestBackoffEncodeDecode(t *testing.T) {
	var got []time.Duration
	for n := 0; n < 7; n++ {
		got = append(got, Backoff(time.Second, 30*time.Second, n))
	}
	assert.Equal(t, []time.Duration{1e9, 2e9, 4e9, 8e9, 16e9, 30e9, 30e9}, got)
	type d struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	v := d{A: 1, B: 2}
	require.NoError(t, Decode([]byte(`{"b":5}`), &v, "x design"))
	assert.Equal(t, d{A: 1, B: 5}, v, "fields not given keep their defaults")
	assert.EqualError(t, Decode([]byte(`{"c":1}`), &v, "x design"), `x design: json: unknown field "c"`)
	assert.JSONEq(t, `{"a":1,"b":5}`, string(Encode(v)))
}

func TestKeysAndLookup(t *testing.T) {
	type entry struct {
		K knob
		V int
	}
	reg := []entry{{"a", 1}, {"b", 2}}
	key := func(e entry) knob { return e.K }
	assert.Equal(t, []knob{"a", "b"}, Keys(reg, key))
	e, ok := Lookup(reg, key, "b")
	assert.True(t, ok)
	assert.Equal(t, 2, e.V)
	_, ok = Lookup(reg, key, "zz")
	assert.False(t, ok)
}

type toyKnob string

type toy struct {
	N, Max int
	Knobs  []toyKnob `json:"knobs,omitempty"`
}

func toySpec() Spec[toy, toyKnob] {
	return Spec[toy, toyKnob]{System: "the toy", What: "toy design", Default: func() toy { return toy{N: 1, Max: 5} },
		Params: func(d *toy) []Param { return []Param{Int("n", &d.N, 1), Int("max", &d.Max, 1)} },
		Knobs:  func() []toyKnob { return []toyKnob{"a", "b"} }, KnobsOf: func(d *toy) *[]toyKnob { return &d.Knobs },
		Rules: func(d toy) error {
			if d.N > d.Max {
				return fmt.Errorf("n %d above max %d", d.N, d.Max)
			}
			return nil
		}}
}

// TestSpecSharesTheOperations: Set checks minimums and rules, With knows the
// registry, Parse keeps the defaults of fields not given.
func TestSpecSharesTheOperations(t *testing.T) {
	s := toySpec()
	d := s.Default()
	require.NoError(t, s.Set(&d, "n", "3"))
	assert.Equal(t, 3, d.N)
	assert.EqualError(t, s.Set(&d, "n", "9"), "n 9 above max 5")
	assert.Error(t, s.Set(&d, "n", "0"), "below the minimum")
	assert.Error(t, s.Set(&d, "nope", "1"), "unknown parameter")
	assert.Equal(t, []string{"n", "max"}, s.ParamNames(), "in table order")
	d, err := s.With(d, "b")
	require.NoError(t, err)
	assert.Equal(t, []toyKnob{"b"}, d.Knobs)
	_, err = s.With(d, "zzz")
	assert.Error(t, err, "a knob not in the registry")
	p, err := s.Parse([]byte(`{"N":4}`))
	require.NoError(t, err)
	assert.Equal(t, toy{N: 4, Max: 5}, p)
	_, err = s.Parse([]byte(`{"knobs":["zzz"]}`))
	assert.Error(t, err)
}

// TestRangesAreData: the table's maximum and the orders between parameters
// are what Validate checks and what Infos lists, from the same values.
func TestRangesAreData(t *testing.T) {
	base, cap_, hb, lease := time.Second, 30*time.Second, 20*time.Second, 60*time.Second
	n, home, prod := 3, 2, 1
	ps := []Param{
		Dur("base", &base, time.Millisecond).Means("first delay"), Dur("cap", &cap_, time.Millisecond),
		Dur("heartbeat", &hb, time.Millisecond), Dur("lease", &lease, time.Millisecond),
		Int("n", &n, 2).AtMost(9), Int("home", &home, 0), Int("prod", &prod, 0),
	}
	orders := []Order{
		{Param: "cap", Op: ">=", Other: []string{"base"}},
		{Param: "n", Op: "<=", Other: []string{"home", "prod"}},
		{Param: "heartbeat", Op: "<", Other: []string{"lease"}, Waivable: true},
	}
	require.NoError(t, CheckMins(ps))
	require.NoError(t, CheckOrders(ps, orders, false))
	require.NoError(t, CheckOrders(ps, orders, true))

	n = 10
	assert.EqualError(t, CheckMins(ps), "parameter n = 10 is above its maximum 9")
	n = 4
	assert.EqualError(t, CheckOrders(ps, orders, false), "parameter n = 4 is above home + prod = 3")
	n, cap_ = 3, time.Millisecond
	assert.EqualError(t, CheckOrders(ps, orders, false), "parameter cap = 1ms is below base = 1s")
	cap_, hb = 30*time.Second, lease
	assert.NoError(t, CheckOrders(ps, orders, false), "a waivable rule is not checked with the others")
	assert.EqualError(t, CheckOrders(ps, orders, true), "parameter heartbeat = 1m0s must be shorter than lease = 1m0s")

	hb = 20 * time.Second
	in := Infos(ps, orders)
	require.Len(t, in, len(ps))
	assert.Equal(t, Info{Name: "base", Type: "duration", Doc: "first delay", Default: "1s", Range: ">= 1ms", Rules: []string{"base <= cap"}}, in[0])
	assert.Equal(t, Info{Name: "n", Type: "count", Default: "3", Range: "2 to 9", Rules: []string{"n <= home + prod"}}, in[4])
	assert.Equal(t, []string{"lease > heartbeat (unless allow_unsafe)"}, in[3].Rules)
	assert.Empty(t, in[5].Rules, "a rule on a sum is listed with the parameter it bounds only")
}
