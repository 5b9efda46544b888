package harness

import (
	"strconv"
	"syscall"
	"testing"

	"github.com/fencesim/fencesim/model/judge"
)

// BenchmarkScale: one seeded run of system A's default design per
// iteration, with 12, 100 and 1000 submissions (the default workload's
// users, problems and one-minute arrival window), moderate faults and every
// checker. The cost that matters is the CPU per kernel event: it should not
// grow with the number of submissions. Metrics: ns/event (process CPU time,
// user + system, per kernel event), events/run and cpu-ms/run. Run with
// -test.cpu 1 (the CPU time is the whole process's).
func BenchmarkScale(b *testing.B) {
	for _, n := range []int{12, 100, 1000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			wl := judge.DefaultWorkload()
			wl.Submissions = n
			d := judge.Default()
			var events uint64
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				o, err := RunSeed(d, wl, Moderate(), uint64(i+1))
				if err != nil {
					b.Fatal(err)
				}
				events += o.World.Events()
			}
			cpu := cpuTime() - cpu0
			b.ReportMetric(float64(cpu)/float64(events), "ns/event")
			b.ReportMetric(float64(events)/float64(b.N), "events/run")
			b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/run")
		})
	}
}

// cpuTime is the process's CPU time (user + system) in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
