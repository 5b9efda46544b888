package harness

import (
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/internal/hunt"
	"github.com/fencesim/fencesim/model/twopc"
	"github.com/fencesim/fencesim/sim"
)

// property is the rapid property of a design: draw a fault schedule (crashes,
// crash-at points of the coordinator and the databases, broken
// connections), run it under the harness, fail when one of the watched
// properties fails (any when watch is empty). The last failing outcome
// (after shrinking: the shrunk one) is left in *last.
func property(d twopc.Design, h Harness, watch []string, last **Outcome) func(*rapid.T) {
	return func(t *rapid.T) {
		sched := h.Draw(d, sim.NewRapid(t))
		o := h.Run(d, sched, sim.NewPCG(1))
		if o.Err != nil {
			if last != nil {
				*last = o
			}
			t.Fatalf("the run failed: %v\nschedule:\n%s", o.Err, sched)
		}
		var bad []string
		for _, f := range o.Failed() {
			if len(watch) == 0 || containsID(watch, f) {
				bad = append(bad, f)
			}
		}
		if len(bad) > 0 {
			if last != nil {
				*last = o
			}
			t.Fatalf("properties %v failed under\n%s\n%s\n%s", bad, sched, o.Report.String(), o.Tail(20))
		}
	}
}

// containsID reports whether a property name ("PC1 atomicity-...") has one
// of the ids.
func containsID(ids []string, name string) bool {
	for _, id := range ids {
		if strings.HasPrefix(name, id+" ") {
			return true
		}
	}
	return false
}

// knobBudget is the fixed number of rapid runs within which each harmful
// knob must be caught, and which the default design must pass.
const knobBudget = 300

// TestDesignKnobs: every harmful knob of PROPERTIES.md "System C" is caught
// by a property named there within knobBudget runs, with a shrunk
// counterexample; the default design passes the same budget.
func TestDesignKnobs(t *testing.T) {
	defer limitShrinking(t, time.Second)()
	h := DefaultHarness()
	h.Horizon = 150 * time.Millisecond // the transaction runs at 100 ms: faults around it
	t.Run("default", func(t *testing.T) {
		var last *Outcome
		start := time.Now()
		res := hunt.Run("default", knobBudget, 1, property(twopc.Default(), h, nil, &last))
		if res.Found {
			t.Fatalf("the default design failed after %d runs:\n%s", res.Runs, res.Output)
		}
		t.Logf("default: %d runs passed in %v", res.Runs, time.Since(start).Round(time.Millisecond))
	})
	for _, k := range twopc.Knobs {
		k := k
		t.Run(string(k.Knob), func(t *testing.T) {
			require.True(t, k.Harmful, "system C has no harmless knob")
			d := twopc.Default().MustWith(k.Knob)
			var last *Outcome
			start := time.Now()
			res := hunt.Run(string(k.Knob), knobBudget, 1, property(d, h, k.CaughtBy, &last))
			took := time.Since(start)
			require.Truef(t, res.Found, "knob %s was not caught by %v within %d runs", k.Knob, k.CaughtBy, knobBudget)
			require.NotNil(t, last)
			failed := last.Failed()
			caught := false
			for _, f := range failed {
				caught = caught || containsID(k.CaughtBy, f)
			}
			assert.Truef(t, caught, "knob %s: expected %v to fail, got %v", k.Knob, k.CaughtBy, failed)
			var why []string
			for _, v := range last.Verdicts() {
				if !v.OK {
					why = append(why, v.String())
				}
			}
			t.Logf("knob %s caught after %d runs (%v); failed %v; shrunk counterexample: %d actions\n  %s\n  schedule:\n    %s",
				k.Knob, res.Runs, took.Round(time.Millisecond), failed, len(last.Schedule),
				strings.Join(why, "\n  "), strings.ReplaceAll(last.Schedule.String(), "\n", "\n    "))
		})
	}
}

// limitShrinking bounds rapid's shrinking of each hunt, so the knob table
// stays within the package's time budget.
func limitShrinking(t *testing.T, d time.Duration) func() {
	f := flag.Lookup("rapid.shrinktime")
	require.NotNil(t, f, "rapid's shrinktime flag")
	old := f.Value.String()
	require.NoError(t, flag.Set("rapid.shrinktime", d.String()))
	return func() { _ = flag.Set("rapid.shrinktime", old) }
}

// TestPropertyLarger: larger configurations drawn by rapid (2 to 4
// participants, 1 to 3 transactions, cooperative termination on or off)
// under drawn faults; the default mechanisms must keep PC1..PC5.
func TestPropertyLarger(t *testing.T) {
	h := DefaultHarness()
	rapid.Check(t, func(t *rapid.T) {
		d := twopc.Default()
		d.Participants = rapid.IntRange(2, 4).Draw(t, "participants")
		d.Txns = rapid.IntRange(1, 3).Draw(t, "txns")
		d.TxnEvery = time.Duration(rapid.IntRange(1, 2000).Draw(t, "txn-every-ms")) * time.Millisecond
		d.Cooperative = rapid.Bool().Draw(t, "cooperative")
		property(d, h, nil, nil)(t)
	})
}
