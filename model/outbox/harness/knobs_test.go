package harness

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	check "github.com/fencesim/fencesim/checker/outbox"
	"github.com/fencesim/fencesim/internal/hunt"
	"github.com/fencesim/fencesim/model/outbox"
)

// knobBudget is the number of runs within which the generic search must
// catch each harmful knob, and which the default design must pass: rapid
// runs of Property, and seeds of RunSeed (what fencesim explore plays).
const knobBudget = 200

// caught reports whether a run failed one of a knob's properties.
func caught(o *Outcome, by []string) bool {
	for _, f := range o.Failed() {
		if slices.Contains(by, f) {
			return true
		}
	}
	return false
}

// TestGenericFindsEveryKnob: the generic search alone (the drawn world,
// faults placed on its reference and timed over the workload's span; no
// knowledge of the knob) catches every harmful knob of docs/systems.md
// "System B" by a property the registry names, within knobBudget rapid
// runs and within knobBudget explore seeds; the default design passes both
// budgets. Each failure is shrunk (within a bounded time) and reported
// with its world.
func TestGenericFindsEveryKnob(t *testing.T) {
	restore, err := hunt.LimitShrinking(500 * time.Millisecond)
	require.NoError(t, err)
	defer restore()
	t.Run("default", func(t *testing.T) {
		var last *Outcome
		start := time.Now()
		res := hunt.Run("default", knobBudget, 1, Property(outbox.Default(), Moderate, nil, &last))
		if res.Found {
			t.Fatalf("the default design failed after %d runs:\n%s", res.Runs, last.Summary())
		}
		for seed := uint64(1); seed <= knobBudget; seed++ {
			if o := RunSeed(outbox.Default(), seed); !o.OK() {
				t.Fatalf("the default design failed seed %d: %v\n%s", seed, o.Failed(), o.Summary())
			}
		}
		t.Logf("default: %d rapid runs and %d seeds passed in %v", res.Runs, knobBudget, time.Since(start).Round(time.Millisecond))
	})
	for _, k := range outbox.Knobs {
		t.Run(string(k.Knob), func(t *testing.T) {
			require.True(t, k.Harmful, "system B has no harmless knob")
			d := outbox.Default().MustWith(k.Knob)
			var last *Outcome
			start := time.Now()
			res := hunt.Run(string(k.Knob), knobBudget, 1, Property(d, Moderate, k.CaughtBy, &last))
			took := time.Since(start)
			require.Truef(t, res.Found, "knob %s was not caught by %v within %d rapid runs", k.Knob, k.CaughtBy, knobBudget)
			require.NotNil(t, last)
			assert.Truef(t, caught(last, k.CaughtBy), "knob %s: expected %v to fail, got %v", k.Knob, k.CaughtBy, last.Failed())
			var why []string
			for _, p := range k.CaughtBy {
				if v, ok := check.Find(last.Verdicts, p); ok && !v.OK {
					why = append(why, v.String())
				}
			}
			seed := uint64(0)
			for s := uint64(1); s <= knobBudget && seed == 0; s++ {
				if caught(RunSeed(d, s), k.CaughtBy) {
					seed = s
				}
			}
			assert.NotZerof(t, seed, "knob %s: no seed in 1..%d caught it", k.Knob, knobBudget)
			stop := "decided at the settled end"
			if s, at, ok := Stop(last); ok {
				stop = fmt.Sprintf("violated at %v: the stopped run has %d of its %d events", at, len(s.Trace), len(last.Trace))
			}
			t.Logf("knob %s caught by %v after %d rapid runs (%v with shrinking), explore seed %d; shrunk: %s; %d faults (%s); %s\n  %s\n  schedule:\n%s",
				k.Knob, k.CaughtBy, res.Runs, took.Round(time.Millisecond), seed, worldOf(last), last.Schedule.Faults(), last.Profile, stop,
				strings.Join(why, "\n  "), indent(last.Schedule.String()))
		})
	}
}

// worldOf describes a run's world in a few words.
func worldOf(o *Outcome) string {
	d := o.Design
	return fmt.Sprintf("%d events, %d handler(s), %d sender(s), %d relay(s)", len(o.Events), d.Handlers, d.Senders, d.Relays)
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// TestRunsToDetect measures the generic search (FENCESIM_MEASURE=1 only):
// per knob, the rapid runs to the first catch for hunt seeds 1-5 (cap
// 1000, no shrinking) and the explore seeds of 1..500 that catch it.
func TestRunsToDetect(t *testing.T) {
	if os.Getenv("FENCESIM_MEASURE") == "" {
		t.Skip("set FENCESIM_MEASURE=1 to measure runs to detect")
	}
	for _, k := range append([]outbox.KnobInfo{{Knob: "", CaughtBy: nil}}, outbox.Knobs...) {
		d := outbox.Default()
		if k.Knob != "" {
			d = d.MustWith(k.Knob)
		}
		runs := hunt.Detect(string(k.Knob), 1000, 5, Property(d, Moderate, k.CaughtBy, nil))
		first, n := hunt.Seeds(500, func(s uint64) bool {
			o := RunSeed(d, s)
			return (k.Knob == "" && !o.OK()) || (k.Knob != "" && caught(o, k.CaughtBy))
		})
		t.Logf("%-28s rapid runs to detect %v; explore: %d/500 seeds fail, first %d", orDefault(k.Knob), runs, n, first)
		if k.Knob != "" {
			// The counterexample shrunk with time to spare: its world.
			var last *Outcome
			hunt.RunShrink(string(k.Knob), 1000, 1, 10*time.Second, Property(d, Moderate, k.CaughtBy, &last))
			if last != nil {
				stop := "decided at the settled end"
				if _, at, ok := Stop(last); ok {
					stop = fmt.Sprintf("stops at its violation, %v", at)
				}
				t.Logf("%-28s shrunk (10 s): %s, %d faults, failed %v, %s", k.Knob, worldOf(last), last.Schedule.Faults(), last.Failed(), stop)
			}
		}
	}
}

func orDefault(k outbox.Knob) string {
	if k == "" {
		return "default"
	}
	return string(k)
}
