package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/internal/changecov"
	"github.com/fencesim/fencesim/internal/systems"
)

// task is one run for the pool.
type task struct {
	sys    systems.System
	d      systems.Design
	tag    int // which design (compare: 0 baseline, 1 changed)
	seed   uint64
	opts   systems.Options
	second bool // the determinism audit's second run of the seed
	// cover: count the changed code this run executes (explore in a
	// coverage build, one run at a time in the process: changecov).
	cover bool
}

// finished is a task's run.
type finished struct {
	task
	r   *systems.Result
	dur time.Duration
	// cover is, per changecov target, how often the run executed its
	// lines, and coverParts which of its parts ran (task.cover only).
	cover, coverParts []uint64
}

// runPool runs the tasks from in on n goroutines, one run per goroutine at
// a time (parallelism only across runs), and closes its output when in is
// closed and every run is done. A run that panics (a broken invariant of
// the model) counts as a failed run with the panic and its seed.
func runPool(n int, f systems.Faults, in <-chan task) <-chan finished {
	out := make(chan finished, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range in {
				start := time.Now()
				if t.cover {
					changecov.Reset()
				}
				r := play(t, f)
				x := finished{task: t, r: r, dur: time.Since(start)}
				if t.cover {
					x.cover, x.coverParts = changecov.TakeParts()
				}
				out <- x
			}
		}()
	}
	go func() { wg.Wait(); close(out) }()
	return out
}

func play(t task, f systems.Faults) (r *systems.Result) {
	defer func() {
		if p := recover(); p != nil {
			r = &systems.Result{System: t.sys.Name(), Seed: t.seed, Verdicts: []checker.Verdict{{
				Property: systems.RunProperty,
				Message:  fmt.Sprintf("panic in seed %d: %v (fencesim replay cannot help: rerun this seed with --seeds %d)", t.seed, p, t.seed),
				Detail:   string(debug.Stack()),
			}}}
		}
	}()
	return systems.Run(t.sys, t.d, t.seed, f, t.opts)
}

// shown reports whether a progress display on w would show: w is a
// terminal and show is true.
func shown(w io.Writer, show bool) bool {
	f, ok := w.(*os.File)
	return show && ok && term.IsTerminal(int(f.Fd()))
}

// progress is the live display on a terminal; silent otherwise.
type progress struct {
	bar *progressbar.ProgressBar
}

// newProgress shows a bar on w when w is a terminal and show is true.
// total < 0 draws a spinner (a time budget).
func newProgress(w io.Writer, show bool, total int64, what string) *progress {
	if !shown(w, show) {
		return &progress{}
	}
	return &progress{bar: progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("runs"),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
	)}
}

func (p *progress) add(n int) {
	if p.bar != nil {
		_ = p.bar.Add(n)
	}
}

func (p *progress) describe(s string) {
	if p.bar != nil {
		p.bar.Describe(s)
	}
}

// clear takes the bar off the terminal until its next update (before a
// line is printed on stdout).
func (p *progress) clear() {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
}

func (p *progress) done() {
	if p.bar != nil {
		_ = p.bar.Finish()
		_ = p.bar.Clear()
	}
}

// audited reports whether the determinism audit runs a seed twice: about
// share of the seeds, chosen by the seed alone (so shards agree).
func audited(seed uint64, share float64) bool {
	x := seed + 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11)/float64(uint64(1)<<53) < share
}
