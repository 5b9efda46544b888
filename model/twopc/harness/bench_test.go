package harness

import (
	"testing"
	"time"

	"github.com/fencesim/fencesim/model/twopc"
)

// BenchmarkRunSeed measures checked runs per second: one global transaction
// over two participants, drawn faults, every property checked.
func BenchmarkRunSeed(b *testing.B) {
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if o := RunSeed(twopc.Default(), uint64(i)); o.Err != nil {
			b.Fatal(o.Err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "runs/s")
}

// BenchmarkRunSeedLarge: 4 participants, 3 transactions, cooperative agents.
func BenchmarkRunSeedLarge(b *testing.B) {
	d := twopc.Default()
	d.Participants, d.Txns, d.Cooperative = 4, 3, true
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if o := RunSeed(d, uint64(i)); o.Err != nil {
			b.Fatal(o.Err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "runs/s")
}
