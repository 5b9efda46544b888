package harness

import (
	"os"
	"testing"

	"github.com/fencesim/fencesim/internal/gcpolicy"
)

// TestMain runs the tests and benchmarks under fencesim's GC policy
// (GOGC=800 under a soft memory limit, unless set), as the command line runs explorations.
func TestMain(m *testing.M) {
	gcpolicy.Apply()
	os.Exit(m.Run())
}
