package artifact

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/sim"
)

// TestStoryOfEachSystem: a minimized failure of each system has a story:
// the key, the violating step among its steps, a window from the needed
// faults to the violation, and a timeline of at most 25 lines.
func TestStoryOfEachSystem(t *testing.T) {
	for _, tc := range []struct {
		system, knob, key string
		named             bool // the checker names the violating events
	}{
		{"arbiter", "fence-by-worker-id", "submission ", true},
		{"outbox", "check-then-insert", "key ", true},
		{"twopc", "commit-before-log", "gid ", true},
	} {
		t.Run(tc.system, func(t *testing.T) {
			sys, err := systems.ByName(tc.system)
			require.NoError(t, err)
			d, err := sys.NewDesign([]string{tc.knob}, nil, nil)
			require.NoError(t, err)
			var r *systems.Result
			var seed uint64
			for seed = 1; seed <= 300; seed++ {
				if r = systems.Run(sys, d, seed, systems.Moderate, systems.Options{}); len(r.Failed()) > 0 {
					break
				}
			}
			require.NotEmpty(t, r.Failed(), "%s fails within 300 seeds", tc.knob)
			m, err := systems.Minimize(sys, d, seed, systems.Moderate, r, 300)
			require.NoError(t, err)
			var needed []sim.Action
			for i, a := range m.Schedule {
				if systems.Removable(a) && m.Needed[i] {
					needed = append(needed, a)
				}
			}
			full := systems.Run(sys, d, seed, systems.Moderate, systems.Options{Full: true, Schedule: m.Schedule, Given: true})
			require.NotEmpty(t, full.Failed(), "the minimized schedule fails")
			s := StoryOf(full, m.Property, needed, 25)
			require.NotNil(t, s.Story, "seed %d: %s", seed, full.Failed()[0])
			assert.Contains(t, s.Story.Key, tc.key)
			bad := 0
			for _, st := range s.Story.Steps {
				if st.Bad {
					bad++
				}
			}
			if tc.named {
				assert.Positive(t, bad, "the violating event is a step of the story")
			} else {
				assert.Zero(t, bad, "no event named, none marked")
			}
			assert.Len(t, s.Needed, len(needed), "every needed fault is found in the trace")
			assert.Less(t, s.Window[0], s.Window[1])
			assert.LessOrEqual(t, len(s.Lines), 25)
			t.Logf("seed %d, %s: %d steps, %d needed faults\n%s", seed, s.Story.Key, len(s.Story.Steps), len(s.Needed), s.Lines[len(s.Lines)-1])
		})
	}
}

// TestReportRemovesAStalePorcupinePage: a run written where an earlier run
// of the same name left porcupine's page (fencesim run --seed 2 with a
// knob, then without) leaves no page of the other run beside its trace.
func TestReportRemovesAStalePorcupinePage(t *testing.T) {
	sys, err := systems.ByName("arbiter")
	require.NoError(t, err)
	d, err := sys.NewDesign(nil, nil, nil)
	require.NoError(t, err)
	r := systems.Run(sys, d, 1, systems.None, systems.Options{Full: true})
	require.Empty(t, r.Failed())
	dir := t.TempDir()
	por := filepath.Join(dir, "arbiter-seed-1-porcupine.html")
	require.NoError(t, os.WriteFile(por, []byte("<html>an earlier run's linearization</html>"), 0o644))
	wrote, err := Report(filepath.Join(dir, "arbiter-seed-1-report.html"), por, r, Page{Title: "t"})
	require.NoError(t, err)
	assert.Empty(t, wrote)
	assert.NoFileExists(t, por, "the earlier run's porcupine page is not left beside this run's trace")
}
