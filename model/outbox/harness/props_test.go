package harness

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	check "github.com/fencesim/fencesim/checker/outbox"
	"github.com/fencesim/fencesim/model/outbox"
)

// TestProperties: the default design keeps PB1-PB6 under generated
// workloads and faults (concurrent and duplicate deliveries, handler, relay,
// consumer and database crashes at every crash point, lost replies,
// partitions, broker redelivery). A failure prints the shrunk schedule;
// rapid's fail file replays it (-rapid.failfile).
func TestProperties(t *testing.T) {
	rapid.Check(t, Property(outbox.Default(), Moderate, nil, nil))
}

// sweep runs the default design over seeds [1, n] and counts failures and
// probe hits.
type sweep struct {
	runs     int
	failures []string
	probes   map[string]int
	took     time.Duration
}

func runSweep(d outbox.Design, n int) sweep {
	s := sweep{runs: n, probes: map[string]int{}}
	start := time.Now()
	for seed := uint64(1); seed <= uint64(n); seed++ {
		o := RunSeed(d, seed)
		if !o.OK() {
			s.failures = append(s.failures, fmt.Sprintf("seed %d: %v\n%s", seed, o.Failed(), o.Summary()))
		}
		for p, hit := range o.Probes {
			if hit {
				s.probes[p]++
			}
		}
	}
	s.took = time.Since(start)
	return s
}

func (s sweep) report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d runs in %v (%.0f runs/s), %d failures\n", s.runs, s.took.Round(time.Millisecond), float64(s.runs)/s.took.Seconds(), len(s.failures))
	for _, p := range check.ProbeNames {
		fmt.Fprintf(&b, "  %-26s %5d  %5.1f%%\n", p, s.probes[p], 100*float64(s.probes[p])/float64(s.runs))
	}
	return b.String()
}

// minRates are the sometimes-assertions: over a sweep of the default
// design, each situation must be reached at least this often (per cent of
// runs), or the passing runs prove little.
var minRates = map[string]float64{
	check.ProbeRace:         20, // two handlers racing on one key
	check.ProbeRelayBetween: 2,  // relay crashed between publish and mark
	check.ProbeRedelivery:   10, // a redelivery with a new timestamp
	check.ProbeDuplicate:    30,
	check.ProbeDoublePub:    2,
	check.ProbeBrokerRedo:   5,
	check.ProbeDedup:        3,
	check.ProbeRefund:       30,
	check.ProbeKeyless:      30,
	check.ProbeHandlerCrash: 3,
	check.ProbeRefusal:      10, // a refund of nothing or a second refund, refused and recorded
}

// TestProbeRates: a sweep of the default design passes and reaches every
// probe often enough.
func TestProbeRates(t *testing.T) {
	s := runSweep(outbox.Default(), 300)
	t.Log("\n" + s.report())
	for _, f := range s.failures {
		t.Error(f)
	}
	names := make([]string, 0, len(minRates))
	for p := range minRates {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		rate := 100 * float64(s.probes[p]) / float64(s.runs)
		assert.GreaterOrEqualf(t, rate, minRates[p], "probe %s reached in %.1f%% of runs, below its minimum %.1f%%", p, rate, minRates[p])
	}
}

// TestSoakDefault runs the default design for FENCESIM_SOAK_RUNS seeds
// (200 under plain go test; make soak sets 10000) and reports probe rates.
func TestSoakDefault(t *testing.T) {
	n := 200
	if v := os.Getenv("FENCESIM_SOAK_RUNS"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(t, err, "FENCESIM_SOAK_RUNS=%q is not a number", v)
	}
	s := runSweep(outbox.Default(), n)
	t.Log("\n" + s.report())
	for i, f := range s.failures {
		if i == 3 {
			t.Errorf("... %d failures in all", len(s.failures))
			break
		}
		t.Error(f)
	}
}
