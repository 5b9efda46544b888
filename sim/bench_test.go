package sim_test

import (
	"testing"
	"time"

	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/sim/internal/ping"
	"github.com/fencesim/fencesim/traces"
)

// BenchmarkKernel measures the event loop with the ping system: events per
// second of wall time, with recording off and with recording to memory.
func BenchmarkKernel(b *testing.B) {
	for _, mode := range []string{"off", "memory"} {
		b.Run("record="+mode, func(b *testing.B) {
			var events uint64
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				var rec sim.Recorder
				if mode == "memory" {
					rec = &traces.Memory{}
				}
				w := ping.World(8, 10*time.Millisecond, sim.Config{
					Entropy:  sim.NewPCG(uint64(i)),
					Network:  network.Policy{DelayMin: time.Millisecond, DelayMax: 5 * time.Millisecond},
					Limits:   sim.Limits{MaxTime: 10 * 1e9},
					Recorder: rec,
				})
				if err := w.Run(); err != nil {
					b.Fatal(err)
				}
				events += w.Events()
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(events)/float64(b.N), "events/run")
		})
	}
}
