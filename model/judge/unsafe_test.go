package judge

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAllowUnsafe: the timing rules refuse heartbeat >= lease unless the
// design allows unsafe configurations; the structural rules hold anyway;
// an unsafe design survives its trace header (JSON) for a replay.
func TestAllowUnsafe(t *testing.T) {
	d := Default()
	require.NoError(t, d.Set("heartbeat", "20s"))
	assert.EqualError(t, d.Set("lease", "20s"), "parameter heartbeat = 20s must be shorter than lease = 20s")

	d = Default()
	require.NoError(t, d.Set("allow_unsafe", "true"))
	require.NoError(t, d.Set("lease", "20s"))
	assert.EqualError(t, d.Unsafe(), "parameter heartbeat = 20s must be shorter than lease = 20s")
	back, err := ParseDesign(d.JSON())
	require.NoError(t, err, "an unsafe design replays")
	assert.True(t, back.AllowUnsafe)
	require.NoError(t, back.Set("prod_workers", "0"))
	assert.EqualError(t, back.Set("home_workers", "0"), "the fleet is empty: set home_workers or prod_workers above 0", "an empty fleet is refused even so")
}
