package hunt

import (
	"flag"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"pgregory.net/rapid"
)

// Result is the outcome of a hunt.
type Result struct {
	Found  bool   // rapid falsified the property
	Runs   int    // runs before the first failure (or all runs when not found)
	Output string // what rapid reported
}

// mu serialises the checks that set rapid's flags: a hunt or a Check with
// flags of its own holds it to write, a check that reads the flags as they
// are holds it to read (such checks may overlap).
var mu sync.RWMutex

// Run checks prop with rapid for at most checks runs from seed. The last call
// of prop after a failure is rapid's replay of the shrunk case, so a property
// that stores its counterexample in a variable leaves the shrunk one there.
func Run(name string, checks int, seed uint64, prop func(*rapid.T)) Result {
	return RunShrink(name, checks, seed, 0, prop)
}

// RunShrink is Run with a limit on the time rapid spends shrinking (0:
// rapid's default).
func RunShrink(name string, checks int, seed uint64, shrink time.Duration, prop func(*rapid.T)) Result {
	mu.Lock()
	defer mu.Unlock()
	flags := map[string]string{
		"rapid.checks":     strconv.Itoa(checks),
		"rapid.seed":       strconv.FormatUint(seed, 10),
		"rapid.nofailfile": "true",
		"rapid.failfile":   "",
	}
	if shrink > 0 {
		flags["rapid.shrinktime"] = shrink.String()
	}
	restore := setFlags(flags)
	defer restore()
	tb := &Recorder{TestName: name}
	tb.Check(prop)
	res := Result{Found: tb.Failed(), Output: strings.Join(tb.Lines, "\n")}
	if m := afterRe.FindStringSubmatch(res.Output); m != nil {
		n, _ := strconv.Atoi(m[1])
		res.Runs = n + 1
	} else if m := passedRe.FindStringSubmatch(res.Output); m != nil {
		res.Runs, _ = strconv.Atoi(m[1])
	}
	return res
}

// Detect runs prop from each of seeds 1..n, at most checks runs each and
// hardly shrinking, and returns the runs to the first failure per seed
// (">N" where none of N runs failed): the runs-to-detect figures of a
// knob.
func Detect(name string, checks, n int, prop func(*rapid.T)) []string {
	var out []string
	for s := uint64(1); s <= uint64(n); s++ {
		res := RunShrink(name, checks, s, time.Millisecond, prop)
		if res.Found {
			out = append(out, strconv.Itoa(res.Runs))
		} else {
			out = append(out, ">"+strconv.Itoa(res.Runs))
		}
	}
	return out
}

// Seeds plays seeds 1..n and returns the first for which fails holds (0:
// none) and how many do: a knob's explore figures.
func Seeds(n int, fails func(seed uint64) bool) (first, count int) {
	for s := uint64(1); s <= uint64(n); s++ {
		if fails(s) {
			count++
			if first == 0 {
				first = int(s)
			}
		}
	}
	return first, count
}

var (
	afterRe  = regexp.MustCompile(`(?:failed|panic) after (\d+) tests`)
	passedRe = regexp.MustCompile(`passed (\d+) tests`)
)

// WithFlags runs f, a rapid check, with rapid's flags (rapid.seed,
// rapid.checks, ...) set to vals and restored after. rapid reads its
// package-level flags all through a check, so f runs alone among the
// hunts and the checks of WithFlags (with no vals, it overlaps only
// others with none).
func WithFlags(vals map[string]string, f func()) {
	if len(vals) == 0 {
		mu.RLock()
		defer mu.RUnlock()
		f()
		return
	}
	mu.Lock()
	defer mu.Unlock()
	defer setFlags(vals)()
	f()
}

func setFlags(vals map[string]string) func() {
	old := map[string]string{}
	for k, v := range vals {
		f := flag.Lookup(k)
		if f == nil {
			panic("hunt: rapid flag " + k + " is not registered")
		}
		old[k] = f.Value.String()
		if err := flag.Set(k, v); err != nil {
			panic(fmt.Sprintf("hunt: set %s=%s: %v", k, v, err))
		}
	}
	return func() {
		for k, v := range old {
			_ = flag.Set(k, v)
		}
	}
}

// Recorder is a rapid.TB that records instead of failing a test: rapid's
// lines go through Filter (nil: kept as they are) into Lines, and the
// check's goroutine stops where rapid would stop a test (Check runs it on
// its own goroutine for that).
type Recorder struct {
	TestName string
	// Filter returns a line to keep, or false to drop it.
	Filter func(string) (string, bool)
	// DeadlineOf, when set, is the test's deadline, for Deadline. rapid
	// v1.3 reads a deadline only from a *testing.T, so it does not bound
	// the search of a check on a Recorder (simtest.Check bounds its own).
	DeadlineOf func() (time.Time, bool)
	Lines      []string
	failed     bool
	skipped    bool
}

// Check runs rapid.Check with prop on the recorder, on a goroutine of its
// own (rapid stops a failing check with runtime.Goexit), and waits for it.
func (r *Recorder) Check(prop func(*rapid.T)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		rapid.Check(r, prop)
	}()
	<-done
}

func (r *Recorder) add(s string) {
	if r.Filter != nil {
		var ok bool
		if s, ok = r.Filter(s); !ok {
			return
		}
	}
	r.Lines = append(r.Lines, s)
}

// Skipped reports whether the check skipped.
func (r *Recorder) Skipped() bool { return r.skipped }

func (r *Recorder) Helper()                   {}
func (r *Recorder) Name() string              { return r.TestName }
func (r *Recorder) Logf(f string, a ...any)   { r.add(fmt.Sprintf(f, a...)) }
func (r *Recorder) Log(a ...any)              { r.add(fmt.Sprint(a...)) }
func (r *Recorder) Skipf(f string, a ...any)  { r.Logf(f, a...); r.SkipNow() }
func (r *Recorder) Skip(a ...any)             { r.Log(a...); r.SkipNow() }
func (r *Recorder) SkipNow()                  { r.skipped = true; runtime.Goexit() }
func (r *Recorder) Errorf(f string, a ...any) { r.failed = true; r.Logf(f, a...) }
func (r *Recorder) Error(a ...any)            { r.failed = true; r.Log(a...) }
func (r *Recorder) Fatalf(f string, a ...any) { r.Errorf(f, a...); runtime.Goexit() }
func (r *Recorder) Fatal(a ...any)            { r.Error(a...); runtime.Goexit() }
func (r *Recorder) FailNow()                  { r.failed = true; runtime.Goexit() }
func (r *Recorder) Fail()                     { r.failed = true }
func (r *Recorder) Failed() bool              { return r.failed }

// Deadline is the test's deadline, when the recorder has one.
func (r *Recorder) Deadline() (time.Time, bool) {
	if r.DeadlineOf == nil {
		return time.Time{}, false
	}
	return r.DeadlineOf()
}

// LimitShrinking bounds rapid's shrinking of each later hunt to d (hunt
// leaves rapid's -rapid.shrinktime flag alone otherwise), so that a table
// of hunts stays within its package's time budget; the returned func puts
// the flag back.
func LimitShrinking(d time.Duration) (restore func(), err error) {
	f := flag.Lookup("rapid.shrinktime")
	if f == nil {
		return nil, fmt.Errorf("rapid's shrinktime flag is not registered")
	}
	old := f.Value.String()
	if err := flag.Set("rapid.shrinktime", d.String()); err != nil {
		return nil, err
	}
	return func() { _ = flag.Set("rapid.shrinktime", old) }, nil
}
