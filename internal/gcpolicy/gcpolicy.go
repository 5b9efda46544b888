// Package gcpolicy sets the garbage collector's target for processes that
// run simulations: many short runs, each allocating a great deal that it
// drops at once, over a small live heap. With Go's default (GOGC=100) the
// collector marks the live heap again after every live-heap's worth of
// allocation, so a big run (1,000 submissions: tens of MB live) pays for
// marking in proportion to what it allocates, while a small one (a live
// heap under the runtime's 4 MB minimum) hardly does: the CPU per event
// grew 1.7x from 12 to 1,000 submissions at GOGC=100, 1.55x at 400 and
// 1.4x at 800 (BenchmarkScale, one sitting). So the collector runs at
// GOGC=800, under a soft memory limit of 768 MiB that makes it collect
// sooner when the heap nears it (a porcupine search on a pathological
// history, many workers): memory stays flat in the number of runs and
// bounded in the size of one (see the README for peak RSS figures).
//
// fencesim's main and the harness test packages call Apply; GOGC or
// GOMEMLIMIT in the environment override it.
package gcpolicy

import (
	"os"
	"runtime/debug"
)

// Percent is the GOGC value Apply sets, and Limit the soft memory limit.
const (
	Percent = 800
	Limit   = 768 << 20
)

// Apply sets GOGC to Percent and the memory limit to Limit, each unless the
// environment sets it (GOGC, GOMEMLIMIT); it reports whether it set GOGC.
func Apply() (applied bool) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(Limit)
	}
	if os.Getenv("GOGC") != "" {
		return false
	}
	debug.SetGCPercent(Percent)
	return true
}

// Tests is a test package's TestMain under the policy: Apply, then run the
// tests and benchmarks and exit with their status.
func Tests(m interface{ Run() int }) {
	Apply()
	os.Exit(m.Run())
}
