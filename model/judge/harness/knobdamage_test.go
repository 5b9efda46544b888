package harness

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/model/judge/scenario"
	"github.com/fencesim/fencesim/sim"
)

// TestKnobDamage: the scenarios' own schedules with the matching knob on
// show the damage the source warns of: each breaks its promise.
func TestKnobDamage(t *testing.T) {
	for _, k := range judge.Knobs {
		for _, id := range k.Scenarios {
			s, ok := scenario.ByID(id)
			require.True(t, ok, "knob %s names scenario %s", k.Knob, id)
			t.Run(string(k.Knob)+"/"+id, func(t *testing.T) {
				_, c, err := s.Measured(k.Knob)
				require.NoError(t, err)
				if !k.Harmful {
					assert.True(t, c.OK(), "%s is harmless: %s must keep its promise: %v %v", k.Knob, id, c.Broken, checker.Failed(c.Verdict))
					return
				}
				if c.OK() {
					// The fixed schedule does not reach the damage: the
					// knob's fault families (the scenario with drawn
					// parameters) must.
					fam, seed, prop := huntFamilies(t, k.Knob)
					require.NotEmpty(t, fam, "%s keeps %s's promise and no seed of its families catches it", k.Knob, id)
					t.Logf("%s's fixed schedule does not reach %s's damage; family %s does at seed %d: %s", id, k.Knob, fam, seed, prop)
					return
				}
				why := append(append([]string(nil), c.Broken...), func() (out []string) {
					for _, v := range checker.Failed(c.Verdict) {
						out = append(out, v.String())
					}
					return
				}()...)
				if len(why) > 3 {
					why = why[:3]
				}
				t.Logf("%s with %s: promised %q; measured %s; broken: %v", id, k.Knob, s.Promise, c.Text, why)
			})
		}
	}
}

// huntFamilies runs a knob's fault families for up to 60 seeds each and
// returns the first catch.
func huntFamilies(t *testing.T, k judge.Knob) (string, uint64, string) {
	d := judge.Default().MustWith(k)
	for _, name := range KnobFamilies[k] {
		f, err := FamilyByName(name)
		require.NoError(t, err)
		for seed := uint64(1); seed <= 60; seed++ {
			ent := sim.NewPCG(seed)
			o, err := f.Judged(ent.Stream("family"), d, ent)
			require.NoError(t, err)
			if bad := o.Failed(); len(bad) > 0 {
				return name, seed, bad[0].String()
			}
		}
	}
	return "", 0, ""
}
