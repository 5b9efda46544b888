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
	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/internal/hunt"
	"github.com/fencesim/fencesim/model/twopc"
)

// knobBudget is the number of runs within which the generic search must
// catch each harmful knob, and which the default design must pass: rapid
// runs of Property, and seeds of RunSeed (what fencesim explore plays).
const knobBudget = 200

// caught reports whether a run failed one of a knob's properties.
func caught(o *Outcome, by []string) bool {
	for _, f := range o.Failed() {
		if slices.Contains(by, ID(f)) {
			return true
		}
	}
	return false
}

// TestGenericFindsEveryKnob: the generic search alone (the drawn world,
// faults placed on its reference and timed over the workload's span; no
// knowledge of the knob, no crash position written for it) catches every
// harmful knob of docs/systems.md "System C" by a property the registry
// names, within knobBudget rapid runs and within knobBudget explore seeds;
// the default design passes both budgets. Each failure is shrunk (within a
// bounded time) and reported with its world.
func TestGenericFindsEveryKnob(t *testing.T) {
	restore, err := hunt.LimitShrinking(500 * time.Millisecond)
	require.NoError(t, err)
	defer restore()
	h := DefaultHarness()
	t.Run("default", func(t *testing.T) {
		var last *Outcome
		start := time.Now()
		res := hunt.Run("default", knobBudget, 1, h.Property(twopc.Default(), Moderate, nil, &last))
		if res.Found {
			t.Fatalf("the default design failed after %d runs:\n%s", res.Runs, res.Output)
		}
		for seed := uint64(1); seed <= knobBudget; seed++ {
			if o := RunSeed(twopc.Default(), seed); !o.OK() {
				t.Fatalf("the default design failed seed %d (%s): %v %v\n%s\n%s", seed, worldOf(o), o.Failed(), o.Err, o.Schedule, o.Tail(20))
			}
		}
		t.Logf("default: %d rapid runs and %d seeds passed in %v", res.Runs, knobBudget, time.Since(start).Round(time.Millisecond))
	})
	for _, k := range twopc.Knobs {
		t.Run(string(k.Knob), func(t *testing.T) {
			require.True(t, k.Harmful, "system C has no harmless knob")
			d := twopc.Default().MustWith(k.Knob)
			var last *Outcome
			start := time.Now()
			res := hunt.Run(string(k.Knob), knobBudget, 1, h.Property(d, Moderate, k.CaughtBy, &last))
			took := time.Since(start)
			require.Truef(t, res.Found, "knob %s was not caught by %v within %d rapid runs", k.Knob, k.CaughtBy, knobBudget)
			require.NotNil(t, last)
			assert.Truef(t, caught(last, k.CaughtBy), "knob %s: expected %v to fail, got %v", k.Knob, k.CaughtBy, last.Failed())
			var why []string
			for _, v := range last.Verdicts() {
				if !v.OK {
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
			t.Logf("knob %s caught by %v after %d rapid runs (%v with shrinking), explore seed %d; shrunk: %s, %d faults\n  %s\n  schedule:\n    %s",
				k.Knob, k.CaughtBy, res.Runs, took.Round(time.Millisecond), seed, worldOf(last), last.Schedule.Faults(),
				strings.Join(why, "\n  "), strings.ReplaceAll(last.Schedule.String(), "\n", "\n    "))
		})
	}
}

// worldOf describes an outcome's world (its error when it has none).
func worldOf(o *Outcome) string {
	if o.World == nil {
		return fmt.Sprintf("no world: %v", o.Err)
	}
	return WorldOf(o.World.Design)
}

// TestProperties: the default mechanisms keep PC1..PC5 in drawn worlds (2
// to 4 participants, 1 or 2 coordinators and a standby, 1 to 4 possibly
// concurrent transactions, cooperative termination or not, drawn timings)
// under the generic search's faults, heavy ones included.
func TestProperties(t *testing.T) {
	h := DefaultHarness()
	rapid.Check(t, func(t *rapid.T) {
		in := Moderate
		if rapid.Bool().Draw(t, "heavy") {
			in = Heavy
		}
		h.Property(twopc.Default(), in, nil, nil)(t)
	})
}

// TestRunsToDetect measures the generic search (FENCESIM_MEASURE=1 only):
// per knob, the rapid runs to the first catch for hunt seeds 1-5 (cap
// 1000, no shrinking) and the explore seeds of 1..500 that catch it.
func TestRunsToDetect(t *testing.T) {
	if os.Getenv("FENCESIM_MEASURE") == "" {
		t.Skip("set FENCESIM_MEASURE=1 to measure runs to detect")
	}
	h := DefaultHarness()
	for _, k := range append([]twopc.KnobInfo{{Knob: ""}}, twopc.Knobs...) {
		d := twopc.Default()
		if k.Knob != "" {
			d = d.MustWith(k.Knob)
		}
		runs := hunt.Detect(string(k.Knob), 1000, 5, h.Property(d, Moderate, k.CaughtBy, nil))
		first, n := hunt.Seeds(500, func(s uint64) bool {
			o := RunSeed(d, s)
			return (k.Knob == "" && !o.OK()) || (k.Knob != "" && caught(o, k.CaughtBy))
		})
		name := string(k.Knob)
		if name == "" {
			name = "default"
		}
		t.Logf("%-28s rapid runs to detect %v; explore: %d/500 seeds fail, first %d", name, runs, n, first)
		if k.Knob != "" {
			// The counterexample shrunk with time to spare: its world.
			var last *Outcome
			hunt.RunShrink(name, 1000, 1, 10*time.Second, h.Property(d, Moderate, k.CaughtBy, &last))
			if last != nil {
				t.Logf("%-28s shrunk (10 s): %s, %d faults, failed %v:\n    %s", name, worldOf(last), last.Schedule.Faults(), last.Failed(),
					strings.ReplaceAll(last.Schedule.String(), "\n", "\n    "))
			}
		}
	}
}
