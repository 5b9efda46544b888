package harness_test

import (
	"testing"
	"time"

	"github.com/fencesim/fencesim/model/outbox"
	"github.com/fencesim/fencesim/model/outbox/harness"
)

// BenchmarkRun measures simulated runs per second of the default design
// (a drawn world and faults, every checker).
func BenchmarkRun(b *testing.B) {
	d := outbox.Default()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		o := harness.RunSeed(d, uint64(i+1))
		if o.Err != nil {
			b.Fatal(o.Err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "runs/s")
}
