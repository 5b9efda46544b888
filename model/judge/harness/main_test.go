package harness

import (
	"testing"

	"github.com/fencesim/fencesim/internal/gcpolicy"
)

// TestMain runs the tests and benchmarks under fencesim's GC policy, as
// the command line runs explorations.
func TestMain(m *testing.M) { gcpolicy.Tests(m) }
