package harness

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCheckerFilterIsCheckerKinds: the switch and the documented set agree.
func TestCheckerFilterIsCheckerKinds(t *testing.T) {
	for k := range CheckerKinds {
		assert.True(t, CheckerFilter(k), "CheckerFilter refuses %q", k)
	}
	for _, k := range []string{"send", "deliver", "db", "timer", "drop", "dial", "note"} {
		assert.False(t, CheckerFilter(k), "CheckerFilter takes %q, which the checkers never read", k)
	}
}
