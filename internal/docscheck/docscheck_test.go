package docscheck

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/model/outbox"
	"github.com/fencesim/fencesim/model/twopc"
)

// The documents, relative to the module root.
const (
	systemsDoc    = "docs/systems.md"
	propertiesDoc = "docs/properties.md"
)

// kinds are the ids the repository cites, and the document that must
// define each kind.
var kinds = []struct {
	what string
	re   *regexp.Regexp
	doc  string
}{
	{"property", regexp.MustCompile(`\bP[ABC][0-9]+\b`), propertiesDoc},
	{"metric", regexp.MustCompile(`\bM[ABC][0-9]+\b`), propertiesDoc},
	{"scenario", regexp.MustCompile(`\bA-S[0-9]+\b`), systemsDoc},
	{"section", regexp.MustCompile(`\b[ABC]\.[0-9]+[a-z]?\b`), systemsDoc},
}

// notIDs are strings that look like ids but are cited as what is not one.
var notIDs = map[string]string{
	"PB9": "checker/outbox/probes_test.go looks it up to show that an unknown id is not found",
}

// skipDirs are directories that hold no sources of ours: build outputs,
// failure artifacts, rapid's fail files.
var skipDirs = map[string]bool{"bin": true, "out": true, "fencesim-out": true, "rapid": true}

// root returns the module root: the nearest directory above the package's
// that holds go.mod.
func root(t *testing.T) string {
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		require.NotEqual(t, dir, up, "no go.mod above the test's directory")
		dir = up
	}
}

// citing reports whether a file may cite ids: Go files, Markdown outside
// the two documents, golden files; not this package's own, whose examples
// are made up.
func citing(rel string) bool {
	if rel == filepath.FromSlash(systemsDoc) || rel == filepath.FromSlash(propertiesDoc) ||
		filepath.Dir(rel) == filepath.FromSlash("internal/docscheck") {
		return false
	}
	switch filepath.Ext(rel) {
	case ".go", ".md", ".golden":
		return true
	}
	return false
}

// cited returns, for each id found in the repository's files, the first
// place that cites it ("path:line").
func cited(t *testing.T, dir string) map[string]string {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := e.Name()
		if e.IsDir() {
			if path != dir && (strings.HasPrefix(name, ".") || skipDirs[name]) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || !citing(rel) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, k := range kinds {
				for _, id := range k.re.FindAllString(line, -1) {
					if _, seen := out[id]; !seen {
						out[id] = fmt.Sprintf("%s:%d", filepath.ToSlash(rel), i+1)
					}
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// mentions reports whether text names id as a whole word: PA1 is not in
// PA10, C.8 is not in C.8a.
func mentions(text, id string) bool {
	re := regexp.MustCompile(`(?:^|[^A-Za-z0-9_])` + regexp.QuoteMeta(id) + `(?:[^A-Za-z0-9_]|$)`)
	return re.MatchString(text)
}

func read(t *testing.T, dir, doc string) string {
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(doc)))
	require.NoError(t, err, "%s must exist", doc)
	return string(data)
}

// TestCitedIDsAreDocumented: every id cited anywhere in the repository is
// defined in the document of its kind.
func TestCitedIDsAreDocumented(t *testing.T) {
	dir := root(t)
	docs := map[string]string{systemsDoc: read(t, dir, systemsDoc), propertiesDoc: read(t, dir, propertiesDoc)}
	ids := cited(t, dir)
	require.NotEmpty(t, ids, "no cited ids found under %s: the walk is broken", dir)
	t.Logf("%d distinct ids cited under %s", len(ids), dir)
	for _, must := range []string{"PA1", "MA3", "PB6", "PC5", "A-S9", "A.2", "B.7", "C.8a"} {
		assert.Contains(t, ids, must, "the walk must find the ids the code is known to cite")
	}
	var missing []string
	for id, where := range ids {
		if _, ok := notIDs[id]; ok {
			continue
		}
		for _, k := range kinds {
			if k.re.MatchString(id) && !mentions(docs[k.doc], id) {
				missing = append(missing, fmt.Sprintf("%s %s (cited at %s) is not in %s", k.what, id, where, k.doc))
			}
		}
	}
	sort.Strings(missing)
	assert.Empty(t, missing, "every id the repository cites must be documented")
}

type registry struct {
	system string
	knobs  map[string][]string // knob -> the ids that catch it
	params []string
}

func registries() []registry {
	var out []registry
	add := func(system string, params []string, knobs map[string][]string) {
		out = append(out, registry{system, knobs, params})
	}
	jk := map[string][]string{}
	for _, k := range judge.Knobs {
		jk[string(k.Knob)] = k.CaughtBy
	}
	add("arbiter", judge.ParamNames(), jk)
	ok := map[string][]string{}
	for _, k := range outbox.Knobs {
		ok[string(k.Knob)] = k.CaughtBy
	}
	add("outbox", outbox.ParamNames(), ok)
	tk := map[string][]string{}
	for _, k := range twopc.Knobs {
		tk[string(k.Knob)] = k.CaughtBy
	}
	add("twopc", twopc.ParamNames(), tk)
	return out
}

// TestKnobsAndParametersAreDocumented: every knob and parameter of the
// three registries is in docs/systems.md, and every id a registry says
// catches a knob is in docs/properties.md.
func TestKnobsAndParametersAreDocumented(t *testing.T) {
	dir := root(t)
	systems, properties := read(t, dir, systemsDoc), read(t, dir, propertiesDoc)
	for _, r := range registries() {
		require.NotEmpty(t, r.knobs, "%s: empty knob registry", r.system)
		for knob, by := range r.knobs {
			assert.True(t, strings.Contains(systems, "`"+knob+"`"), "%s knob %s is not in %s", r.system, knob, systemsDoc)
			for _, id := range by {
				assert.True(t, mentions(properties, id), "%s knob %s is caught by %s, which is not in %s", r.system, knob, id, propertiesDoc)
			}
		}
		for _, p := range r.params {
			assert.True(t, strings.Contains(systems, "`"+p+"`"), "%s parameter %s is not in %s", r.system, p, systemsDoc)
		}
	}
}

// TestMentions: the word match the checks rely on.
func TestMentions(t *testing.T) {
	assert.True(t, mentions("| PA1 | at-most-one-owner", "PA1"))
	assert.True(t, mentions("(A-S5)", "A-S5"))
	assert.True(t, mentions("### C.8 Beyond", "C.8"))
	assert.True(t, mentions("C.4.", "C.4"))
	assert.False(t, mentions("PA10", "PA1"))
	assert.False(t, mentions("C.8a", "C.8"))
	assert.False(t, mentions("A-S12", "A-S1"))
}
