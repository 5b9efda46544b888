package simtest

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/internal/hunt"
	"github.com/fencesim/fencesim/internal/systems"
	trc "github.com/fencesim/fencesim/traces"
)

// child is set in the process TestFailingCheck starts: the failing checks
// run there, so that this test can read what a failing go test prints.
var child = os.Getenv("SIMTEST_CHILD")

// TestFailingCheckChild is the failing property, run only as a child.
func TestFailingCheckChild(t *testing.T) {
	if child == "" {
		t.Skip("run by TestFailingCheck")
	}
	parts := strings.SplitN(child, ":", 2)
	sys, d, err := NewDesign(parts[0], []string{parts[1]})
	require.NoError(t, err)
	Check(t, sys, d, Options{})
}

// TestFailingCheck: a failing Check prints at most 40 lines, and the
// artifacts it names exist (trace, schedule, report), the trace replays to
// the same failure, and rapid's draw log is not among the lines.
func TestFailingCheck(t *testing.T) {
	if child != "" {
		t.Skip("the child runs only the failing check")
	}
	if testing.Short() {
		t.Skip("runs rapid until it finds and shrinks a failure")
	}
	for _, k := range []string{"arbiter:fence-by-worker-id", "outbox:check-then-insert", "twopc:commit-before-log"} {
		t.Run(strings.ReplaceAll(k, ":", "/"), func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestFailingCheckChild$", "-test.count=1",
				"-rapid.checks=200", "-rapid.seed=1", "-rapid.shrinktime=5s", "-rapid.nofailfile", "-fencesim.out="+out)
			cmd.Env = append(os.Environ(), "SIMTEST_CHILD="+k)
			b, err := cmd.CombinedOutput()
			text := string(b)
			require.Error(t, err, "the check must fail:\n%s", text)
			lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
			assert.LessOrEqual(t, len(lines), 40, "a failing property prints at most 40 lines:\n%s", text)
			assert.NotContains(t, text, "[rapid] draw ", "the draw log is off")
			assert.Regexp(t, `timeline of (submission|key|gid) `, text, "the failure's timeline is printed")
			assert.Contains(t, text, " VIOLATES ", "the timeline marks the violating step")
			for _, name := range []string{"trace", "schedule", "report"} {
				m := regexp.MustCompile(`(?m)^\s*(?:\S+:\d+: )?\s*` + name + `:\s+(\S+)$`).FindStringSubmatch(text)
				if assert.NotNil(t, m, "the output names the %s:\n%s", name, text) {
					assert.FileExists(t, m[1])
					assert.Equal(t, out, filepath.Dir(m[1]), "under -fencesim.out")
				}
			}
			// The replay command works as printed from where go test ran
			// (the package's directory): "identical", then the failure.
			if m := regexp.MustCompile(`replay:\s+(go run \S+ replay \S+)`).FindStringSubmatch(text); assert.NotNil(t, m, "the replay command:\n%s", text) {
				rb, err := exec.Command("sh", "-c", m[1]).CombinedOutput()
				assert.Error(t, err, "the replay exits 1 (a property fails)")
				assert.True(t, strings.HasPrefix(string(rb), "identical\n"), "%s: %s", m[1], rb)
			}
			traces, _ := filepath.Glob(filepath.Join(out, "*.jsonl"))
			require.Len(t, traces, 1)
			r := Replay(t, traces[0])
			assert.NotEmpty(t, r.Failed(), "the kept trace replays to a failure")
			t.Logf("%d lines; replayed: %v", len(lines), r.FailedIDs())
			// The schedule file's MustRun, when it offers one, plays the kept run.
			scheds, _ := filepath.Glob(filepath.Join(out, "*-schedule.txt"))
			require.Len(t, scheds, 1)
			sf, err := os.ReadFile(scheds[0])
			require.NoError(t, err)
			if m := regexp.MustCompile("simtest.MustRun\\(t, \"(\\w+)\", `([^`]*)`, \"\", (\\d+), \"(\\w+)\", schedule\\)").FindStringSubmatch(string(sf)); m != nil {
				seed, err := strconv.ParseUint(m[3], 10, 64)
				require.NoError(t, err)
				again := MustRun(t, m[1], m[2], "", seed, m[4], r.Schedule)
				if assert.True(t, trc.Compare(again.Events, r.Events).Identical, "the pasted MustRun plays the kept run:\n%s", sf) {
					t.Logf("the schedule file's MustRun plays the kept run")
				}
			} else {
				assert.Contains(t, string(sf), "the trace file, not a seed,", "no MustRun: the file says why")
			}
		})
	}
}

// TestToyCheck: the contract's toy system goes through the Go route like
// the three: its default design passes Check, and a failing Check of its
// harmful knob writes a trace that replays to the failure.
func TestToyCheck(t *testing.T) {
	if child != "" {
		t.Skip("the child runs only the failing check")
	}
	sys, d, err := NewDesign("toy", nil)
	require.NoError(t, err)
	Check(t, sys, d, Options{Seed: 1, Checks: 100})

	out := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFailingCheckChild$", "-test.count=1",
		"-rapid.checks=500", "-rapid.seed=1", "-rapid.shrinktime=2s", "-rapid.nofailfile", "-fencesim.out="+out)
	cmd.Env = append(os.Environ(), "SIMTEST_CHILD=toy:lease-from-receipt")
	b, err := cmd.CombinedOutput()
	require.Error(t, err, "the check must fail:\n%s", b)
	assert.Contains(t, string(b), "TL1 lease-safety")
	traces, _ := filepath.Glob(filepath.Join(out, "*.jsonl"))
	require.Len(t, traces, 1, "%s", b)
	r := Replay(t, traces[0])
	assert.True(t, r.Fails("TL1"), "the kept trace replays to TL1's failure: %v", r.FailedIDs())
}

// TestCheckPasses: the default designs pass the property.
func TestCheckPasses(t *testing.T) {
	if child != "" {
		t.Skip("the child runs only the failing check")
	}
	for _, name := range []string{"arbiter", "outbox", "twopc"} {
		t.Run(name, func(t *testing.T) {
			sys, d, err := NewDesign(name, nil)
			require.NoError(t, err)
			Check(t, sys, d, Options{Seed: 1, Checks: 200}) // a fixed search: the test is the same on every run
		})
	}
	// The options README.md and reference.md show.
	t.Run("arbiter/heavy/wide", func(t *testing.T) {
		sys, d, err := NewDesign("arbiter", nil)
		require.NoError(t, err)
		Check(t, sys, d, Options{Faults: Heavy, World: "wide", Seed: 1, Checks: 50})
	})
}

// TestMustRun: explore's pasted snippet plays a seed with its schedule.
func TestMustRun(t *testing.T) {
	sys, d, err := NewDesign("arbiter", []string{"fence-by-worker-id"})
	require.NoError(t, err)
	r := systems.Run(sys, d, 2, Moderate, systems.Options{})
	require.True(t, r.Fails("PA1"), "seed 2 of explore fails fence-by-worker-id by PA1")
	again := MustRun(t, "arbiter", string(d.JSON), "drawn", 2, "moderate", r.Schedule)
	assert.True(t, again.Fails("PA1"), "the seed and its schedule, pasted, fail again")
}

// badOptions are options Check and Property must refuse with a message
// that names them (never a panic, never a silent default).
var badOptions = []struct {
	system string
	o      Options
	want   string
}{
	{"arbiter", Options{Faults: "heavvy"}, `Options.Faults: unknown fault intensity "heavvy"`},
	{"arbiter", Options{World: "widee"}, `Options.World: unknown world "widee" (drawn, fixed, wide)`},
	{"outbox", Options{World: "wide"}, `Options.World: unknown world "wide": this system has one world, its drawn one`},
	{"twopc", Options{Checks: -3}, `Options.Checks -3: want a number of checks above 0 (0: -rapid.checks decides)`},
}

// TestBadOptionsChild is Check with a bad option, run only as a child.
func TestBadOptionsChild(t *testing.T) {
	i, err := strconv.Atoi(os.Getenv("SIMTEST_BADOPTS"))
	if err != nil {
		t.Skip("run by TestBadOptions")
	}
	b := badOptions[i]
	sys, d, err := NewDesign(b.system, nil)
	require.NoError(t, err)
	b.o.Seed = 1
	if b.o.Checks == 0 {
		b.o.Checks = 5
	}
	Check(t, sys, d, b.o)
}

// TestBadOptions: a bad option fails Check (and Property's every check)
// with a message naming it, not a panic.
func TestBadOptions(t *testing.T) {
	if child != "" || os.Getenv("SIMTEST_BADOPTS") != "" {
		t.Skip("a child runs one check")
	}
	for i, b := range badOptions {
		t.Run(b.want, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBadOptionsChild$", "-test.count=1", "-rapid.nofailfile")
			cmd.Env = append(os.Environ(), "SIMTEST_BADOPTS="+strconv.Itoa(i))
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "the check must fail:\n%s", out)
			assert.Contains(t, string(out), "simtest.Check: "+b.want)
			assert.NotContains(t, string(out), "panic")

			sys, d, err := NewDesign(b.system, nil)
			require.NoError(t, err)
			res := hunt.Run(t.Name(), 5, 1, Property(sys, d, b.o)) // 5: one check under -short too
			assert.True(t, res.Found, "Property fails")
			assert.Contains(t, res.Output, "simtest.Property: "+b.want)
			assert.NotContains(t, res.Output, "panic")
		})
	}
}

// TestShortChecksChild is a check of a few fixed checks, run only as a
// child under -short.
func TestShortChecksChild(t *testing.T) {
	if os.Getenv("SIMTEST_SHORT") == "" {
		t.Skip("run by TestShortChecks")
	}
	sys, d, err := NewDesign("twopc", nil)
	require.NoError(t, err)
	Check(t, sys, d, Options{Seed: 1, Checks: 3})
}

// TestShortChecks: under -short rapid runs a fifth of the checks; a Check
// of fewer than five fixed checks still runs one (not none, passing).
func TestShortChecks(t *testing.T) {
	if child != "" || os.Getenv("SIMTEST_SHORT") != "" {
		t.Skip("a child runs one check")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestShortChecksChild$", "-test.count=1", "-test.short", "-test.v")
	cmd.Env = append(os.Environ(), "SIMTEST_SHORT=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "[rapid] OK, passed 1 tests", "one check under -short:\n%s", out)
}

// counting is a system whose property counts its checks.
type counting struct {
	System
	n *atomic.Int64
}

func (c counting) Property(d Design, f Faults, failed func(trc.Header)) func(*rapid.T) {
	p := c.System.Property(d, f, failed)
	return func(t *rapid.T) { c.n.Add(1); p(t) }
}

// TestParallelChecks: Checks of parallel tests, each with a number of
// checks of its own, run that number each, and leave rapid's flags as they
// were (rapid's flags are global: one Check must not run under another's,
// nor restore another's).
func TestParallelChecks(t *testing.T) {
	if child != "" {
		t.Skip("the child runs only the failing check")
	}
	sys, d, err := NewDesign("toy", nil)
	require.NoError(t, err)
	before := flag.Lookup("rapid.checks").Value.String()
	t.Run("group", func(t *testing.T) {
		for i := 1; i <= 40; i++ {
			t.Run(strconv.Itoa(i), func(t *testing.T) {
				t.Parallel()
				c := counting{sys, new(atomic.Int64)}
				want := 5 * (i%4 + 1)
				Check(t, c, d, Options{Seed: uint64(i), Checks: want * 5}) // *5: the same under -short
				if !testing.Short() {
					want *= 5
				}
				assert.EqualValues(t, want, c.n.Load(), "the checks of this test's Options")
			})
		}
	})
	assert.Equal(t, before, flag.Lookup("rapid.checks").Value.String(), "rapid's -rapid.checks after the parallel Checks")
}

// TestNewDesignTwice: a parameter or a knob given twice is refused (as
// --set and --knob refuse it), not the last one taken.
func TestNewDesignTwice(t *testing.T) {
	_, _, err := NewDesign("arbiter", nil, "lease=90s", "lease=80s")
	assert.ErrorContains(t, err, "lease is set twice (lease=90s, lease=80s)")
	_, _, err = NewDesign("arbiter", []string{"no-grace", "no-grace"})
	assert.ErrorContains(t, err, "knob no-grace is given twice")
	_, _, err = NewDesign("arbiter", nil, "lease=90s", "heartbeat=3s")
	assert.NoError(t, err)
}

// TestPropertySeed: Property (for rapid.Check, whose flags decide the
// seed and the checks) refuses Options.Seed and Options.Checks by name
// rather than ignoring them.
func TestPropertySeed(t *testing.T) {
	sys, d, err := NewDesign("toy", nil)
	require.NoError(t, err)
	for _, o := range []Options{{Seed: 5}, {Checks: 10}} {
		res := hunt.Run(t.Name(), 5, 1, Property(sys, d, o))
		assert.True(t, res.Found, "%+v: Property fails", o)
		assert.Contains(t, res.Output, "simtest.Property: Options.Seed and Options.Checks are Check's")
	}
}

// TestDeadlineChild is a search longer than its -timeout, run only as a
// child.
func TestDeadlineChild(t *testing.T) {
	if os.Getenv("SIMTEST_DEADLINE") == "" {
		t.Skip("run by TestDeadline")
	}
	sys, d, err := NewDesign("arbiter", nil)
	require.NoError(t, err)
	Check(t, sys, d, Options{Seed: 1, Checks: 1_000_000})
}

// TestDeadline: as rapid.Check does, a Check ends its search early near
// the test's deadline and passes, instead of panicking "test timed out".
func TestDeadline(t *testing.T) {
	if child != "" || os.Getenv("SIMTEST_DEADLINE") != "" {
		t.Skip("a child runs one check")
	}
	if testing.Short() {
		t.Skip("runs a check until its 4s deadline")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDeadlineChild$", "-test.count=1", "-test.timeout=4s", "-test.v")
	cmd.Env = append(os.Environ(), "SIMTEST_DEADLINE=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "the search ended early, near the test's deadline")
}
