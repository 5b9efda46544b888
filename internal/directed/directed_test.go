package directed

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/model/contract"
	"github.com/fencesim/fencesim/sim"
)

type ownWorld struct{}

func (ownWorld) Features() []string { return []string{"arbiters=2"} }

func TestFeatures(t *testing.T) {
	w := &contract.World{Profile: "crash,partition", V: ownWorld{}, Schedule: sim.Schedule{
		{Kind: sim.Crash, Node: "arbiter-1"}, {Kind: sim.Restart, Node: "arbiter-1"},
		{Kind: sim.CrashAt, Node: "home-2.1", Point: "POST /claim"}, {Kind: sim.CrashAt, Node: "home-1", Point: "db/commit"},
		{Kind: sim.HealAll},
	}}
	assert.Equal(t, []string{"arbiters=2", "crash-at@home", "crash-at@home*2", "crash-at@home:POST /claim", "crash-at@home:db/commit",
		"crash@arbiter", "faults>=1", "faults>=2", "on:crash", "on:partition", "restart@arbiter"}, Features(w))
	assert.Empty(t, Features(&contract.World{Profile: "given"}))
}

// TestSearchLearns: when runs whose world has a feature are rewarded, the
// search picks such worlds far more often than they occur; without any
// reward it keeps to the seeds' own mix; the warm-up is the first seeds in
// order; the same seed and rewards give the same picks.
func TestSearchLearns(t *testing.T) {
	// Seed s has feature "rare" when s%10 == 0 (10% of the seeds), and a
	// noise feature by s%3.
	feats := func(s uint64) ([]string, error) {
		out := []string{fmt.Sprintf("noise=%d", s%3)}
		if s%10 == 0 {
			out = append(out, "rare")
		}
		return out, nil
	}
	share := func(reward bool, seed uint64) (float64, []uint64) {
		s := New(Config{Seed: seed, First: 1}, feats)
		var order []uint64
		hits := 0
		for range 50 {
			seeds, err := s.Next(8)
			require.NoError(t, err)
			for _, x := range seeds {
				order = append(order, x)
				r := 0.0
				if x%10 == 0 && reward {
					r = 1
				}
				s.Observe(x, r)
			}
		}
		for _, x := range order[100:] {
			if x%10 == 0 {
				hits++
			}
		}
		return float64(hits) / float64(len(order)-100), order
	}
	learned, order := share(true, 1)
	// Eight candidates are drawn per pick, so at most 80% of the picks
	// can have a feature 10% of the seeds have.
	assert.Greater(t, learned, 0.6, "the rewarded feature is picked in most runs once learned")
	for i, x := range order[:16] {
		assert.Equal(t, uint64(i+1), x, "warm-up in order")
	}
	blind, border := share(false, 1)
	assert.InDelta(t, 0.1, blind, 0.01, "without rewards the picks are the seeds' own mix")
	for i, x := range border {
		require.Equal(t, uint64(i+1), x, "without rewards the picks are uniform's seeds, in order")
	}
	_, again := share(true, 1)
	assert.Equal(t, order, again, "deterministic")
	_, other := share(true, 2)
	assert.NotEqual(t, order, other, "another search seed picks other seeds")
	seen := map[uint64]bool{}
	for _, x := range order {
		assert.False(t, seen[x], "a seed is picked once")
		seen[x] = true
	}
}

func TestCounts(t *testing.T) {
	var c Counts
	assert.Equal(t, 0.0, c.Reward(0))
	for i := range 8 {
		assert.Equal(t, 0.5, c.Reward(uint64(10*(i+1))), "too few to compare with")
	}
	assert.Equal(t, 1.0, c.Reward(100), "beats every earlier value")
	assert.InDelta(t, 0.0, c.Reward(1), 1e-9, "beats none")
	assert.InDelta(t, 0.5*0.5*0.5*0.5, c.Reward(45), 0.01, "the median")
	assert.Equal(t, 0.0, c.Reward(0))
}

func TestClass(t *testing.T) {
	for in, want := range map[string]string{"": "all", "arbiter-1": "arbiter", "home-2.1": "home", "db": "db", "p1": "p", "7": "7"} {
		assert.Equal(t, want, class(in), in)
	}
}

// TestKnobSites: a knob's code is the statements that test it, found in
// the model's source.
func TestKnobSites(t *testing.T) {
	root := "../.."
	sites, err := KnobSites(root, "no-grace")
	require.NoError(t, err)
	require.Len(t, sites, 1)
	assert.Equal(t, "model/judge/arbiter.go", sites[0].File)
	src, err := os.ReadFile(filepath.Join(root, sites[0].File))
	require.NoError(t, err)
	lines := strings.Split(string(src), "\n")
	assert.Contains(t, lines[sites[0].From-1], "Has(NoGrace)")
	sites, err = KnobSites(root, "attempts-at-grant")
	require.NoError(t, err)
	assert.Len(t, sites, 2, "two statements in sql.go")
	sites, err = KnobSites(root, "check-then-insert")
	require.NoError(t, err)
	assert.Len(t, sites, 2, "schema.go and handler.go")
	_, err = KnobSites(root, "no-such-knob")
	assert.Error(t, err)
}

// TestEveryKnobHasSites: every knob of the registry has code to target.
func TestEveryKnobHasSites(t *testing.T) {
	for _, sys := range systems.All() {
		for _, k := range sys.Knobs() {
			sites, err := KnobSites("../..", k.Name)
			if assert.NoError(t, err, k.Name) {
				assert.NotEmpty(t, sites, k.Name)
			}
		}
	}
}

// TestSearchSteers: a search with levers picks uniform's seeds while no
// run is rewarded; once runs with feature "rare" (one world in ten) are,
// it steers seeds to it (its lever pulled) and most later picks have it,
// while a share of the picks stays plain; no seed is picked twice; the same search
// seed gives the same picks; a steered seed's features are its world's.
func TestSearchSteers(t *testing.T) {
	levers := []string{"rare", "other"}
	feats := func(s uint64) ([]string, error) {
		mask, n := sim.Steering(s)
		var out []string
		if n%10 == 0 || mask&1 != 0 {
			out = append(out, "rare")
		}
		if n%3 == 0 || mask&2 != 0 {
			out = append(out, "other")
		}
		return out, nil
	}
	picks := func(reward bool) []uint64 {
		s := New(Config{Seed: 4, First: 1, Levers: levers}, feats)
		var order []uint64
		for range 60 {
			seeds, err := s.Next(8)
			require.NoError(t, err)
			for _, x := range seeds {
				r := 0.0
				if f, _ := feats(x); reward && slices.Contains(f, "rare") {
					r = 1
				}
				s.Observe(x, r)
			}
			order = append(order, seeds...)
		}
		return order
	}
	for i, s := range picks(false) {
		require.Equal(t, uint64(i+1), s, "without a reward: uniform's seeds")
	}
	order := picks(true)
	assert.Equal(t, order, picks(true), "the same search seed and rewards: the same picks")
	steered, rare := 0, 0
	var plain []uint64
	for _, s := range order[160:] {
		mask, _ := sim.Steering(s)
		if mask != 0 {
			steered++
		} else {
			plain = append(plain, s)
		}
		if f, _ := feats(s); slices.Contains(f, "rare") {
			rare++
		}
	}
	assert.Greater(t, steered, 100, "seeds steered to the rewarded feature")
	assert.Greater(t, float64(rare)/float64(len(order)-160), 0.6, "most picks have the rewarded feature (one world in ten has it)")
	assert.NotEmpty(t, plain, "a share of the picks stays plain")
	seen := map[uint64]bool{}
	for _, s := range order {
		assert.False(t, seen[s], "seed %d picked twice", s)
		seen[s] = true
	}
}
