package outbox

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDesignRoundTrip(t *testing.T) {
	d := Default().MustWith(ConflictIs500, CheckThenInsert)
	require.NoError(t, d.Set("max_attempts", "4"))
	require.NoError(t, d.Set("retry_cap", "2s"))
	got, err := ParseDesign(d.JSON())
	require.NoError(t, err)
	assert.Equal(t, d, got, "the design survives its JSON")
	assert.Equal(t, []Knob{CheckThenInsert, ConflictIs500}, got.Knobs, "knobs sorted")
	p, err := ParseDesign([]byte(`{"handlers": 5}`))
	require.NoError(t, err)
	assert.Equal(t, 5, p.Handlers)
	assert.Equal(t, Default().RetryBase, p.RetryBase, "fields not given keep the defaults")
}

func TestDesignErrors(t *testing.T) {
	d := Default()
	for _, tc := range []struct{ name, value, want string }{
		{"handlers", "0", "handlers = 0 is below its minimum 1"},
		{"senders", "0", "senders = 0 is below its minimum 1"},
		{"relays", "0", "relays = 0 is below its minimum 1"},
		{"retry_cap", "soon", `"soon" is not a duration`},
		{"max_attempts", "x", `"x" is not an integer`},
		{"retry_cap", "1ms", "retry_cap = 1ms is below retry_base"},
		{"speed", "1", `unknown parameter "speed"`},
		{"knob", "no-such-knob", `unknown knob "no-such-knob"`},
	} {
		dd := d
		err := dd.Set(tc.name, tc.value)
		require.Error(t, err, "%s=%s", tc.name, tc.value)
		assert.Contains(t, err.Error(), tc.want)
	}
	_, err := ParseDesign([]byte(`{"handler": 2}`))
	assert.ErrorContains(t, err, "unknown field")
	_, err = ParseDesign([]byte(`{"knobs": ["nope"]}`))
	assert.ErrorContains(t, err, `unknown knob "nope"`)
	_, err = d.With("nope")
	assert.Error(t, err)

	require.NoError(t, d.Set("knob", "edit-in-place-refund, conflict-is-500"))
	assert.True(t, d.Has(EditInPlaceRefund) && d.Has(ConflictIs500))
}

func TestKnobRegistry(t *testing.T) {
	assert.Len(t, Knobs, 9)
	for _, k := range Knobs {
		assert.NotEmpty(t, k.CaughtBy, k.Knob)
		_, ok := Info(k.Knob)
		assert.True(t, ok)
	}
	assert.Equal(t, len(Knobs), len(KnobNames()))
}

func TestKeyOf(t *testing.T) {
	dl := Delivery{Op: OpCharge, Event: "evt_1", DeliveredAt: 7}
	again := dl
	again.DeliveredAt = 9
	d := Default()
	assert.Equal(t, d.KeyOf(dl), d.KeyOf(again), "a redelivery has the same key")
	bad := d.MustWith(KeyIncludesDeliveryTime)
	assert.NotEqual(t, bad.KeyOf(dl), bad.KeyOf(again), "with the timestamp in the key a redelivery looks new")
	assert.Equal(t, "", d.KeyOf(Delivery{Op: OpCharge}), "no key sent: no key")
	assert.Equal(t, "", bad.KeyOf(Delivery{Op: OpCharge, DeliveredAt: 3}))
}

func TestRetryPolicy(t *testing.T) {
	d := Default()
	assert.Equal(t, 500*time.Millisecond, d.Backoff(0))
	assert.Equal(t, time.Second, d.Backoff(1))
	assert.Equal(t, 8*time.Second, d.Backoff(10))
	// The sender outlives the faults: its last attempt falls after heal-all,
	// so "the sender stopped on a success" (PB5) is decidable.
	assert.Greater(t, d.RetrySpan(), time.Duration(HealAt(FaultSpec(d))))
	// Even when every answer is an immediate 503 (the database is down),
	// the sender outlives the faults and the stuck sessions they leave.
	assert.Equal(t, 47500*time.Millisecond, d.GiveUpAfter())
	assert.GreaterOrEqual(t, d.GiveUpAfter(), Patience(d))
}
