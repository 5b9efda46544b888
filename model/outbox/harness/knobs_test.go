package harness

import (
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	check "github.com/fencesim/fencesim/checker/outbox"
	"github.com/fencesim/fencesim/internal/hunt"
	"github.com/fencesim/fencesim/model/outbox"
	"github.com/fencesim/fencesim/sim"
)

// property is the rapid property of a design: draw a workload, a fault
// schedule and a seed for the network's and nodes' streams; run; fail when
// one of the watched properties fails (every property when watch is empty).
// The last failing outcome (after shrinking: the shrunk one) is left in *last.
func property(d outbox.Design, wl outbox.Workload, watch []string, last **Outcome) func(*rapid.T) {
	return func(t *rapid.T) {
		r := sim.NewRapid(t)
		events, s, p := outbox.Draw(r, d, wl)
		seed := rapid.Uint64Range(0, 1<<20).Draw(t, "seed")
		o := Simulate(d, wl, events, s, sim.NewPCG(seed))
		o.Seed, o.Profile = seed, p
		var bad []string
		for _, f := range o.Failed() {
			if len(watch) == 0 || f == "run" || contains(watch, f) {
				bad = append(bad, f)
			}
		}
		if len(bad) > 0 {
			if last != nil {
				*last = o
			}
			t.Fatalf("properties %v failed:\n%s", bad, o.Summary())
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// knobBudget is the fixed number of rapid runs within which each harmful
// knob must be caught.
const knobBudget = 300

// TestDesignKnobs: every harmful knob of PROPERTIES.md "System B" is caught
// by the property named there within knobBudget runs; the default design
// passes the same budget.
func TestDesignKnobs(t *testing.T) {
	defer limitShrinking(t, 600*time.Millisecond)()
	t.Run("default", func(t *testing.T) {
		var last *Outcome
		start := time.Now()
		res := hunt.Run("default", knobBudget, 1, property(outbox.Default(), outbox.DefaultWorkload(), nil, &last))
		if res.Found {
			t.Fatalf("the default design failed after %d runs:\n%s", res.Runs, last.Summary())
		}
		t.Logf("default: %d runs passed in %v", res.Runs, time.Since(start).Round(time.Millisecond))
	})
	for _, k := range outbox.Knobs {
		k := k
		t.Run(string(k.Knob), func(t *testing.T) {
			require.True(t, k.Harmful, "system B has no harmless knob")
			d := outbox.Default().MustWith(k.Knob)
			var last *Outcome
			start := time.Now()
			res := hunt.Run(string(k.Knob), knobBudget, 1, property(d, outbox.DefaultWorkload(), k.CaughtBy, &last))
			took := time.Since(start)
			require.Truef(t, res.Found, "knob %s was not caught by %v within %d runs", k.Knob, k.CaughtBy, knobBudget)
			require.NotNil(t, last)
			failed := last.Failed()
			assert.Truef(t, contains(failed, k.CaughtBy[0]) || (len(k.CaughtBy) > 1 && contains(failed, k.CaughtBy[1])),
				"knob %s: expected %v to fail, got %v", k.Knob, k.CaughtBy, failed)
			var why []string
			for _, p := range k.CaughtBy {
				if v, ok := check.Find(last.Verdicts, p); ok && !v.OK {
					why = append(why, v.String())
				}
			}
			// The exploration's view (fencesim explore / mutants): seeds of
			// RunSeed until the first catch.
			seeds, exploreStart := 0, time.Now()
			for seed := uint64(1); seed <= knobBudget; seed++ {
				o := RunSeed(d, outbox.DefaultWorkload(), seed)
				if contains(o.Failed(), k.CaughtBy[0]) || (len(k.CaughtBy) > 1 && contains(o.Failed(), k.CaughtBy[1])) {
					seeds = int(seed)
					break
				}
			}
			assert.NotZerof(t, seeds, "knob %s: no seed in 1..%d caught it", k.Knob, knobBudget)
			t.Logf("knob %s caught by %v after %d rapid runs (%v with shrinking); failed %v; shrunk schedule %d actions (%s), %d events; explore: seed %d (%v)\n  %s\n  schedule:\n%s",
				k.Knob, k.CaughtBy, res.Runs, took.Round(time.Millisecond), failed, len(last.Schedule), last.Profile, len(last.Events),
				seeds, time.Since(exploreStart).Round(time.Microsecond), strings.Join(why, "\n  "), indent(last.Schedule.String()))
		})
	}
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// limitShrinking bounds rapid's shrinking of each hunt (hunt leaves that
// flag alone), so the knob table stays within the package's time budget.
func limitShrinking(t *testing.T, d time.Duration) func() {
	f := flag.Lookup("rapid.shrinktime")
	require.NotNil(t, f, "rapid's shrinktime flag")
	old := f.Value.String()
	require.NoError(t, flag.Set("rapid.shrinktime", d.String()))
	return func() { _ = flag.Set("rapid.shrinktime", old) }
}
