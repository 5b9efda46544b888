package harness

import (
	"sort"
	"testing"
	"time"

	"github.com/fencesim/fencesim/model/judge"

	"github.com/fencesim/fencesim/sim"
)

// BenchmarkRun: runs of system A's random family (moderate generic faults,
// the default workload), checkers included. Metrics: runs/s (wall),
// cpu-ms/run and runs/cpu-s (the process's CPU time, user + system: what
// counts on a shared machine). Run with -test.cpu 1.
func BenchmarkRun(b *testing.B) {
	f, _ := FamilyByName("random")
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		ent := sim.NewPCG(uint64(i + 1))
		if _, err := f.Judged(ent.Stream("family"), judge.Default(), ent); err != nil {
			b.Fatal(err)
		}
	}
	cpu := float64(cpuTime() - cpu0)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
	b.ReportMetric(cpu/1e6/float64(b.N), "cpu-ms/run")
	b.ReportMetric(float64(b.N)/(cpu/1e9), "runs/cpu-s")
}

// BenchmarkDetect: for each harmful knob, seeded runs of its family until
// a property catches it, from 10 different starting seeds; reports the
// median runs and time to detect. Run with -benchtime=1x.
func BenchmarkDetect(b *testing.B) {
	for _, k := range judge.Knobs {
		if !k.Harmful {
			continue
		}
		b.Run(string(k.Knob), func(b *testing.B) {
			f, _ := FamilyByName(KnobFamilies[k.Knob][0])
			d := judge.Default().MustWith(k.Knob)
			var runs []int
			var times []time.Duration
			for i := 0; i < b.N; i++ {
				for start := uint64(0); start < 10; start++ {
					t0 := time.Now()
					n := 0
					for s := start*1000 + 1; n < 500; s++ {
						n++
						ent := sim.NewPCG(s)
						o, err := f.Judged(ent.Stream("family"), d, ent)
						if err != nil {
							b.Fatal(err)
						}
						if len(o.Failed()) > 0 {
							break
						}
					}
					runs = append(runs, n)
					times = append(times, time.Since(t0))
				}
			}
			sort.Ints(runs)
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			b.ReportMetric(float64(runs[len(runs)/2]), "runs-to-detect")
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-to-detect")
		})
	}
}
