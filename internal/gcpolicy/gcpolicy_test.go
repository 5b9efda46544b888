package gcpolicy

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestApply(t *testing.T) {
	oldGC, oldLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	defer func() { debug.SetGCPercent(oldGC); debug.SetMemoryLimit(oldLimit) }()

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	assert.True(t, Apply())
	assert.Equal(t, Percent, debug.SetGCPercent(100), "Apply set GOGC")
	assert.Equal(t, int64(Limit), debug.SetMemoryLimit(math.MaxInt64), "Apply set the memory limit")

	t.Setenv("GOGC", "150")
	t.Setenv("GOMEMLIMIT", "1GiB")
	assert.False(t, Apply(), "GOGC in the environment wins")
	assert.Equal(t, 100, debug.SetGCPercent(100), "Apply left GOGC alone")
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(math.MaxInt64), "Apply left the limit alone")
}
