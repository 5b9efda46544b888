package gcpolicy

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestApply(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)

	t.Setenv("GOGC", "")
	v, applied := Apply()
	assert.True(t, applied)
	assert.Equal(t, "400", v)
	assert.Equal(t, Percent, debug.SetGCPercent(100), "Apply set GOGC=400")

	t.Setenv("GOGC", "150")
	v, applied = Apply()
	assert.False(t, applied, "GOGC in the environment wins")
	assert.Equal(t, "150", v)
	assert.Equal(t, 100, debug.SetGCPercent(100), "Apply changed nothing")
}
