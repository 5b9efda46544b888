package report_test

import (
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	art "github.com/fencesim/fencesim/internal/artifact"
	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// A page under test: what it must show first.
type storyPage struct {
	name       string
	path       string
	events     []traces.Event
	needed     []uint64 // the needed faults' events (none: the failure needs none, a race)
	first      uint64   // the event the first view must start by: the first needed fault, else the story's first step
	violation  []uint64 // the violating events (else the story's bad steps)
	lin        bool     // it has a linearization view
	screenshot string
}

// result is what Chromium saw of a page.
type seen struct {
	dom, stderr, selftest, whole string
	err                          error
}

// look loads every page in Chromium (its DOM after the script ran, its
// self-test and a screenshot), two pages at a time.
func look(t *testing.T, bin string, pages []storyPage) []seen {
	out := make([]seen, len(pages))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, p := range pages {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i].dom, out[i].stderr, out[i].err = browse(t, bin, p.path, "--dump-dom", "--window-size=1400,1000")
			if out[i].err != nil {
				return
			}
			var self string
			self, _, out[i].err = browse(t, bin, p.path+"#selftest", "--dump-dom")
			out[i].selftest = self
			if out[i].err != nil {
				return
			}
			out[i].whole, _, out[i].err = browse(t, bin, p.path+"#whole", "--dump-dom", "--window-size=1400,1000")
			if out[i].err != nil {
				return
			}
			_, _, out[i].err = browse(t, bin, p.path, "--screenshot="+p.screenshot, "--window-size=1400,1500")
		}()
	}
	wg.Wait()
	return out
}

var viewAttr = regexp.MustCompile(`<body[^>]*\bdata-view="(-?\d+) (-?\d+)"`)

// checkStoryPage is what every report with a story must show in the
// browser: a first view from the first needed fault to the violation, the
// story lane, labels that do not overlap (timeline and linearization), and
// no errors.
func checkStoryPage(t *testing.T, p storyPage, s seen) {
	t.Helper()
	require.NoError(t, s.err, "%s: headless chromium must run", p.name)
	assert.Empty(t, pageErrors(t, s.dom), "%s: the page must run without script errors", p.name)
	assert.Empty(t, consoleErrors(s.stderr), "%s: the browser must log no console errors", p.name)

	m := viewAttr.FindStringSubmatch(s.dom)
	require.Len(t, m, 3, "%s: the page records its first view in data-view", p.name)
	v0, _ := strconv.ParseInt(m[1], 10, 64)
	v1, _ := strconv.ParseInt(m[2], 10, 64)
	at := map[uint64]int64{}
	for _, e := range p.events {
		at[e.Seq] = e.T
	}
	first := at[p.first]
	for _, n := range p.needed {
		first = min(first, at[n])
	}
	assert.LessOrEqual(t, v0, first, "%s: the first view [%d, %d] must contain the first needed fault or story step (%d)", p.name, v0, v1, first)
	require.NotEmpty(t, p.violation, "%s: a violating event to look for", p.name)
	for _, s := range p.violation {
		assert.True(t, at[s] >= v0 && at[s] <= v1, "%s: the first view [%d, %d] must contain the violating event #%d (%d)", p.name, v0, v1, s, at[s])
	}

	r := rendered(t, s.dom)
	assert.Equal(t, 1, r["story"], "%s: the story lane is drawn", p.name)
	assert.Positive(t, r["steps"], "%s: the story's steps are in the first view", p.name)
	assert.Contains(t, s.dom, `class="hover story-step`, "%s: the story's steps are labelled", p.name)
	if len(p.needed) > 0 {
		assert.Equal(t, len(p.needed), r["needed"], "%s: the needed faults are in the first view", p.name)
		assert.Contains(t, s.dom, `class="hover needed-label"`, "%s: the needed faults are labelled in words", p.name)
	}
	assert.Equal(t, 0, r["overlaps"], "%s: no two labels of the timeline overlap", p.name)
	assert.Equal(t, 0, r["clipped"], "%s: no mark or tick label is cut by the plot's frame", p.name)
	w := rendered(t, s.whole)
	assert.Equal(t, 0, w["overlaps"], "%s: no two labels overlap in the whole-run view", p.name)
	assert.Equal(t, 0, w["clipped"], "%s: no mark or tick label is cut in the whole-run view (a lane's first mark, the first tick)", p.name)
	assert.Empty(t, pageErrors(t, s.whole), "%s: the whole-run view runs without script errors", p.name)

	lin := bodyAttr(t, s.dom, "data-lin")
	if p.lin {
		var labels, overlaps int
		_, err := fmt.Sscanf(lin, "labels=%d overlaps=%d", &labels, &overlaps)
		require.NoError(t, err, "%s: data-lin %q", p.name, lin)
		assert.Positive(t, labels, "%s: the linearization view has labels", p.name)
		assert.Zero(t, overlaps, "%s: no two labels of the linearization view overlap (%d labels)", p.name, labels)
		assert.NotContains(t, s.dom, "<iframe", "%s: the linearization is drawn by the page", p.name)
	}

	assert.True(t, strings.HasPrefix(bodyAttr(t, s.selftest, "data-selftest"), "ok"), "%s: the self-test works every control", p.name)
	assert.Empty(t, pageErrors(t, s.selftest), "%s: the self-test must run without script errors", p.name)
	st, err := os.Stat(p.screenshot)
	require.NoError(t, err, "%s: chromium must write the screenshot", p.name)
	assert.Greater(t, st.Size(), int64(20_000), "%s: the screenshot must show something", p.name)
	t.Logf("%s: %s, screenshot %s, first view %d..%d, rendered %v, lin %q", p.name, p.path, p.screenshot, v0, v1, r, lin)
}

// TestBrowserStory: the synthetic failure with a story, needed faults, a
// window, the messages that mattered and a real porcupine page.
func TestBrowserStory(t *testing.T) {
	bin := chromium(t)
	dir := outDir(t)
	in := storied(t)
	in.Linearization = porcupinePage(t, []int64{in.Events[10].T, in.Events[20].T, in.Events[30].T})
	path := filepath.Join(dir, "story.html")
	writePage(t, path, in)
	p := storyPage{name: "synthetic", path: path, events: in.Events, needed: in.Needed, first: in.Needed[0], violation: in.Violations[0].Events, lin: true,
		screenshot: filepath.Join(dir, "story.png")}
	// The same page with its labels forced on top of each other: the
	// page's overlap checks must see it (a must-fail for the probe).
	in.Extra = template.HTML(`<style>svg .lane-label { font-size: 90px; } #linearization .linop > span { position: absolute; left: 0; }</style>`)
	bad := filepath.Join(dir, "story-overlapping.html")
	writePage(t, bad, in)
	q := p
	q.name, q.path, q.screenshot = "overlapping", bad, filepath.Join(dir, "story-overlapping.png")
	res := look(t, bin, []storyPage{p, q})
	checkStoryPage(t, p, res[0])

	// The key filter keeps the events that mention the key (and the
	// story's own): "k1" is in the text of one put in three.
	filtered, stderr, err := browse(t, bin, path+"#key=k1", "--dump-dom", "--window-size=1400,1000")
	require.NoError(t, err)
	assert.Empty(t, pageErrors(t, filtered))
	assert.Empty(t, consoleErrors(stderr))
	all, some := rendered(t, res[0].dom), rendered(t, filtered)
	assert.Positive(t, some["marks"], "the events about k1 are kept")
	assert.Less(t, some["marks"], all["marks"], "the others are filtered out")
	assert.Less(t, some["arrows"], all["arrows"], "messages not about k1 are filtered out")
	require.NoError(t, res[1].err)
	assert.Positive(t, rendered(t, res[1].dom)["overlaps"], "lane names of 90px must overlap, and the probe must say so")
	assert.NotContains(t, bodyAttr(t, res[1].dom, "data-lin"), "overlaps=0", "linearization labels stacked at one place must overlap, and the probe must say so")
}

// TestBrowserRealFailures: a real failure of each system, minimized as
// explore minimizes it, its report written as explore writes it (the
// minimized run with its story, needed faults and window).
func TestBrowserRealFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs and minimizes three systems")
	}
	bin := chromium(t)
	dir := outDir(t)
	var pages []storyPage
	for _, c := range []struct {
		sys  systems.System
		knob string
	}{
		{systems.Arbiter{}, "fence-by-worker-id"},
		{systems.Outbox{}, "check-then-insert"},
		{systems.TwoPC{}, "commit-before-log"},
	} {
		d, err := c.sys.NewDesign([]string{c.knob}, nil, nil)
		require.NoError(t, err, "%s: design with %s", c.sys.Name(), c.knob)
		var seed uint64
		var r *systems.Result
		for s := uint64(1); s <= 300 && r == nil; s++ {
			if x := systems.Run(c.sys, d, s, systems.Moderate, systems.Options{}); len(x.Failed()) > 0 {
				seed, r = s, x
			}
		}
		require.NotNil(t, r, "%s with %s must fail within 300 seeds", c.sys.Name(), c.knob)
		m, err := systems.Minimize(c.sys, d, seed, systems.Moderate, r, 300)
		require.NoError(t, err, "%s seed %d: minimize", c.sys.Name(), seed)
		var needed []sim.Action
		for i, a := range m.Schedule {
			if systems.Removable(a) && m.Needed[i] {
				needed = append(needed, a)
			}
		}
		run := systems.Run(c.sys, d, seed, systems.Moderate, systems.Options{Full: true, Schedule: m.Schedule, Given: true})
		require.NotEmpty(t, run.Failed(), "%s seed %d: the minimized schedule must fail when run in full", c.sys.Name(), seed)
		st := art.StoryOf(run, m.Property, needed, 25)
		require.NotNil(t, st.Story, "%s seed %d: the failure has a story", c.sys.Name(), seed)
		name := fmt.Sprintf("%s-seed-%d", c.sys.Name(), seed)
		path := filepath.Join(dir, name+"-report.html")
		porc, err := art.Report(path, filepath.Join(dir, name+"-porcupine.html"), run, art.Page{
			Story: st, Title: fmt.Sprintf("%s seed %d: %s failed (%s)", c.sys.Name(), seed, m.Property, c.knob),
			Replay: "fencesim replay " + name + ".jsonl",
		})
		require.NoError(t, err, "%s seed %d: write the report", c.sys.Name(), seed)
		var viol []uint64
		for _, v := range run.Failed() {
			if strings.HasPrefix(v.Property, m.Property) {
				viol = v.Events
				break
			}
		}
		if len(viol) == 0 { // the checker named no event: the story's bad steps, else its end
			for _, x := range st.Story.Steps {
				if x.Bad {
					viol = append(viol, x.Seq)
				}
			}
			if len(viol) == 0 {
				viol = []uint64{st.Story.Steps[len(st.Story.Steps)-1].Seq}
			}
			t.Logf("%s: the violation names no event; looking for #%v of the story instead", name, viol)
		}
		pages = append(pages, storyPage{name: name, path: path, events: run.Events, needed: st.Needed, first: st.Story.Steps[0].Seq, violation: viol,
			lin: porc != "", screenshot: filepath.Join(dir, name+".png")})
	}
	res := look(t, bin, pages)
	for i, p := range pages {
		checkStoryPage(t, p, res[i])
	}
}
