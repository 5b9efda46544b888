package harness

import (
	"strings"
	"testing"
	"time"

	"github.com/fencesim/fencesim/model/judge"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/internal/hunt"
	"github.com/fencesim/fencesim/sim"
)

// knobBudget is the fixed budget of runs within which a harmful knob must
// be caught (per family), and within which the default design and a
// harmless knob must pass.
const knobBudget = 60

// huntFamily hunts a design in a family with rapid. It returns rapid's
// result and the shrunk failing outcome (nil when none was found).
func huntFamily(t *testing.T, f Family, d judge.Design, budget int) (hunt.Result, *Outcome) {
	t.Helper()
	var last *Outcome
	prop := func(rt *rapid.T) {
		o, err := f.Judged(sim.NewRapid(rt), d, sim.NewRapid(rt))
		if err != nil {
			rt.Fatalf("run: %v", err)
		}
		if bad := o.Failed(); len(bad) > 0 {
			last = o
			rt.Fatalf("%s", bad[0])
		}
	}
	res := hunt.RunShrink(t.Name(), budget, 1, 2*time.Second, prop)
	if !res.Found {
		last = nil
	}
	return res, last
}

func propertyID(v checker.Verdict) string { return strings.Fields(v.Property)[0] }

// TestDesignKnobs: every knob of docs/systems.md "System A" in its families.
// A harmful knob must be caught within the budget by a property the table
// names, with a shrunk counterexample; the harmless no-leader-lock and the
// default design must pass the same budget.
func TestDesignKnobs(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		for _, f := range Families {
			res, _ := huntFamily(t, f, judge.Default(), knobBudget/2)
			assert.False(t, res.Found, "the default design must pass family %s:\n%s", f.Name, res.Output)
		}
	})
	for _, k := range judge.Knobs {
		k := k
		t.Run(string(k.Knob), func(t *testing.T) {
			d := judge.Default().MustWith(k.Knob)
			for _, name := range KnobFamilies[k.Knob] {
				f, err := FamilyByName(name)
				require.NoError(t, err)
				start := time.Now()
				res, o := huntFamily(t, f, d, knobBudget)
				if !k.Harmful {
					assert.False(t, res.Found, "%s is harmless: no safety property may fail in family %s:\n%s", k.Knob, name, res.Output)
					t.Logf("harmless as expected: %d runs of family %s passed", res.Runs, name)
					continue
				}
				require.True(t, res.Found, "%s must be caught within %d runs of family %s", k.Knob, knobBudget, name)
				require.NotNil(t, o)
				var by []string
				for _, v := range o.Failed() {
					by = append(by, propertyID(v))
				}
				caught := false
				for _, p := range by {
					for _, want := range k.CaughtBy {
						caught = caught || p == want
					}
				}
				assert.True(t, caught, "%s must be caught by %v, was caught by %v", k.Knob, k.CaughtBy, by)
				t.Logf("caught by %v after %d runs (%v) in family %s; shrunk counterexample: %d fault actions:\n%s\n%s",
					by, res.Runs, time.Since(start).Round(time.Millisecond), name, o.Options.Schedule.Faults(), o.Options.Schedule, o.Failed()[0])
			}
		})
	}
}
