package twopc

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDesignRoundTrip(t *testing.T) {
	d := Default().MustWith(TimeoutAbort, CommitBeforeLog)
	require.NoError(t, d.Set("participants", "3"))
	require.NoError(t, d.Set("lock_timeout", "2s"))
	require.NoError(t, d.Set("cooperative", "true"))
	back, err := ParseDesign(d.JSON())
	require.NoError(t, err)
	assert.Equal(t, d, back, "a design survives its JSON")
	assert.Equal(t, []Knob{CommitBeforeLog, TimeoutAbort}, back.Knobs, "knobs are kept sorted")
}

func TestDesignErrors(t *testing.T) {
	d := Default()
	for _, c := range []struct{ name, value, msg string }{
		{"participants", "1", "participants = 1 is below its minimum 2"},
		{"lock_timeout", "soon", `"soon" is not a duration`},
		{"txns", "two", `"two" is not an integer`},
		{"cooperative", "maybe", "not true or false"},
		{"retry_cap", "1ms", "retry_cap = 1ms is below retry_base"},
		{"nonsense", "1", `unknown parameter "nonsense" for two-phase commit (parameters: participants,`},
	} {
		x := d
		err := x.Set(c.name, c.value)
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.msg)
	}
	_, err := d.With("fsync-optional")
	assert.ErrorContains(t, err, `unknown knob "fsync-optional" for two-phase commit (knobs: commit-before-log, log-not-durable, presume-commit-on-no-record, timeout-abort)`)
	_, err = ParseDesign([]byte(`{"participants": 2, "colour": "red"}`))
	assert.ErrorContains(t, err, `unknown field "colour"`)
	_, err = ParseDesign([]byte(`{"schedule": [{"at": 1, "gid": "a"}, {"at": 2, "gid": "a"}]}`))
	assert.ErrorContains(t, err, `gid "a" is used twice`)
	_, err = ParseDesign([]byte(`{"schedule": [{"at": 1, "gid": "a", "coordinator": "boss"}]}`))
	assert.ErrorContains(t, err, `"boss" is not a coordinator`)
}

func TestKnobRegistry(t *testing.T) {
	assert.Len(t, Knobs, 4)
	for _, k := range Knobs {
		assert.True(t, k.Harmful, "%s", k.Knob)
		assert.NotEmpty(t, k.CaughtBy, "%s", k.Knob)
		d, err := Default().With(k.Knob)
		require.NoError(t, err)
		assert.True(t, d.Has(k.Knob))
	}
}
