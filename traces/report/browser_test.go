package report_test

import (
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/internal/browsertest"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/report"
)

// The browser tests load generated reports in headless Chromium. Without
// Chromium they skip, except under CI=true, where they fail. Set
// FENCESIM_REPORT_KEEP=<dir> to keep the pages and screenshots there.

func chromium(t *testing.T) string { return browsertest.Chromium(t) }

func outDir(t *testing.T) string {
	if d := os.Getenv("FENCESIM_REPORT_KEEP"); d != "" {
		require.NoError(t, os.MkdirAll(d, 0o755))
		return d
	}
	return t.TempDir()
}

func browse(_ *testing.T, bin, page string, flags ...string) (string, string, error) {
	return browsertest.Browse(bin, page, flags...)
}

var (
	consoleErrors = browsertest.ConsoleErrors
	rendered      = browsertest.Rendered
	bodyAttr      = browsertest.BodyAttr
	pageErrors    = browsertest.PageErrors
)

func TestBrowserRendersReport(t *testing.T) {
	bin := chromium(t)
	dir := outDir(t)

	failingPage := filepath.Join(dir, "report.html")
	in := failing(t)
	in.TracePath = "/tmp/fencesim/register-seed7.trace"
	writePage(t, failingPage, in)

	longPage := filepath.Join(dir, "long.html")
	writePage(t, longPage, longInput())

	// A page whose extra HTML throws: proves the test sees script errors.
	brokenPage := filepath.Join(dir, "broken.html")
	writePage(t, brokenPage, report.Input{Extra: template.HTML(`<script>undefinedFunction()</script>`)})

	type result struct {
		dom, stderr string
		err         error
	}
	shot := filepath.Join(dir, "report.png")
	jobs := []struct {
		page  string
		flags []string
	}{
		{failingPage, []string{"--dump-dom"}},
		{failingPage + "#selftest", []string{"--dump-dom"}},
		{longPage, []string{"--dump-dom"}},
		{longPage + "#selftest", []string{"--dump-dom"}},
		{failingPage, []string{"--screenshot=" + shot, "--window-size=1400,900"}},
		{brokenPage, []string{"--dump-dom"}},
	}
	res := make([]result, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i].dom, res[i].stderr, res[i].err = browse(t, bin, j.page, j.flags...)
		}()
	}
	wg.Wait()
	for _, r := range res {
		require.NoError(t, r.err, "headless chromium must run")
	}
	main, self, long, lself := res[0], res[1], res[2], res[3]
	shotStderr := res[4].stderr

	// The failing run: every lane, arrows, the violation, no errors.
	r := rendered(t, main.dom)
	assert.Equal(t, 4, r["lanes"], "three nodes and the world lane")
	assert.Greater(t, r["arrows"], 10, "messages around the violation are drawn")
	assert.Equal(t, 2, r["violation"], "both violating events are highlighted in the first view")
	assert.Positive(t, r["spans"], "crash and pause are shaded")
	assert.Positive(t, r["bands"], "the partition is shaded")
	for _, want := range []string{"<svg", "data-m=", "data-h=", "durable-commit"} {
		assert.True(t, strings.Contains(main.dom, want), "the dumped DOM must contain %q: the timeline SVG, messages drawn one by one, violating events marked, the violation", want)
	}
	assert.Empty(t, pageErrors(t, main.dom), "the page must run without script errors")
	assert.Empty(t, consoleErrors(main.stderr), "the browser must log no console errors")

	assert.Equal(t, "ok described=6 tip=1", bodyAttr(t, self.dom, "data-selftest"), "the self-test works every control and describes every kind of element")
	assert.Empty(t, pageErrors(t, self.dom), "the self-test must run without script errors")
	assert.Empty(t, consoleErrors(self.stderr))

	// The long trace: drawn, batched when zoomed out, without errors.
	lr := rendered(t, long.dom)
	assert.Equal(t, 5, lr["lanes"])
	assert.Positive(t, lr["arrows"])
	assert.Equal(t, 1, lr["violation"])
	assert.Empty(t, pageErrors(t, long.dom))
	assert.Empty(t, consoleErrors(long.stderr))
	assert.Contains(t, bodyAttr(t, lself.dom, "data-selftest"), "ok", "the self-test runs on the long trace")
	assert.Empty(t, pageErrors(t, lself.dom))
	assert.Empty(t, consoleErrors(lself.stderr))

	broken := res[5]
	assert.Contains(t, pageErrors(t, broken.dom), "undefinedFunction", "a script error must be recorded in data-errors")
	assert.NotEmpty(t, consoleErrors(broken.stderr), "a script error must show in the browser log")
	assert.Equal(t, 0, rendered(t, broken.dom)["lanes"], "an empty run still renders")

	st, err := os.Stat(shot)
	require.NoError(t, err, "chromium must write the screenshot; stderr:\n%s", shotStderr)
	assert.Greater(t, st.Size(), int64(20_000), "the screenshot must show something")
	t.Logf("report %s, screenshot %s", failingPage, shot)
}

func writePage(t *testing.T, path string, in report.Input) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, report.Write(f, in))
	require.NoError(t, f.Close())
}

// longInput is a run of 30k message events among five nodes with a
// violation in the middle: the first view has thousands of arrows.
func longInput() report.Input {
	var evs []traces.Event
	seq := uint64(0)
	add := func(e traces.Event) {
		seq++
		e.Seq = seq
		evs = append(evs, e)
	}
	names := []string{"n0", "n1", "n2", "n3", "n4"}
	for _, nm := range names {
		add(traces.Event{Node: nm, Kind: "start", Text: "incarnation 0"})
	}
	var target uint64
	for id := uint64(1); id <= 10_000; id++ {
		tm := int64(id) * 2e6
		from, to := names[id%5], names[(id*3+1)%5]
		if from == to {
			to = names[(id+1)%5]
		}
		add(traces.Event{T: tm, Node: from, Kind: "send", Text: fmt.Sprintf("#%d %s->%s req %d", id, from, to, id)})
		if id%97 == 0 {
			add(traces.Event{T: tm, Node: from, Kind: "drop", Text: fmt.Sprintf("#%d loss", id)})
			continue
		}
		add(traces.Event{T: tm + 7e5, Node: to, Kind: "deliver", Text: fmt.Sprintf("#%d %s->%s req %d", id, from, to, id)})
		add(traces.Event{T: tm + 7e5, Node: to, Kind: "db", Text: fmt.Sprintf("UPDATE t SET v = %d", id)})
		if id == 5000 {
			target = seq
		}
	}
	return report.Input{
		Header:     traces.Header{System: "synthetic", Seed: 1, Entropy: "pcg"},
		Events:     evs,
		Violations: []report.Violation{{Property: "p", Message: "synthetic", Events: []uint64{target}}},
	}
}
