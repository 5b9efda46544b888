package systems

import (
	"syscall"
	"testing"
	"time"

	"github.com/fencesim/fencesim/traces"
)

// cpuTime is the process's user+sys CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkExplore is what explore does per seed on each system's drawn
// world (default design, moderate faults, the fast path: the checkers'
// kinds recorded, nothing hashed), one run an op, seeds 1, 2, ...: ns/op
// and allocs/op are per run; runs/cpu-s counts the CPU of the whole
// process (user+sys, the garbage collector's background work included),
// so run it with -cpu 1 on a quiet machine to compare two builds. With
// -benchtime=Nx every build plays the same seeds.
//
//	go test ./internal/systems -run '^$' -bench Explore -benchmem -cpu 1 -benchtime 300x
func BenchmarkExplore(b *testing.B) {
	for _, sys := range All() {
		b.Run(sys.Name(), func(b *testing.B) {
			d := sys.Default()
			b.ReportAllocs()
			c0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r := Run(sys, d, uint64(i+1), Moderate, Options{})
				if len(r.Failed()) > 0 {
					b.Fatalf("seed %d of the default design failed: %v", i+1, r.FailedIDs())
				}
			}
			b.StopTimer()
			if cpu := cpuTime() - c0; cpu > 0 {
				b.ReportMetric(float64(b.N)/cpu.Seconds(), "runs/cpu-s")
			}
		})
	}
}

// BenchmarkPerSeed is what a --per-seed run costs (diff's and compare's
// runs: every event hashed) on each system's drawn world, three ways: the
// full record hashed afterwards at version 1 (fencesim before the digest),
// and the run digested as it is recorded at version 1 and at version 2
// (traces.Digest; the default). runs/cpu-s as in BenchmarkExplore.
//
//	go test ./internal/systems -run '^$' -bench PerSeed -benchmem -cpu 1 -benchtime 100x
func BenchmarkPerSeed(b *testing.B) {
	ways := []struct {
		name string
		opts Options
	}{
		{"full-v1", Options{Full: true}},
		{"digest-v1", Options{Digest: traces.HashV1}},
		{"digest-v2", Options{Digest: traces.HashV2}},
	}
	for _, sys := range All() {
		for _, w := range ways {
			b.Run(sys.Name()+"/"+w.name, func(b *testing.B) {
				d := sys.Default()
				b.ReportAllocs()
				c0 := cpuTime()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					r := Run(sys, d, uint64(i+1), Moderate, w.opts)
					h := r.Digest
					if w.opts.Full {
						h = traces.EventsHash(traces.HashV1, r.Events)
					}
					if h == "" || len(r.Failed()) > 0 {
						b.Fatalf("seed %d: hash %q, failed %v", i+1, h, r.FailedIDs())
					}
				}
				b.StopTimer()
				if cpu := cpuTime() - c0; cpu > 0 {
					b.ReportMetric(float64(b.N)/cpu.Seconds(), "runs/cpu-s")
				}
			})
		}
	}
}
