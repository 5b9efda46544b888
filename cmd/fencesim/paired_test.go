package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/internal/stats"
	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/traces"
)

// pairedRecords makes n seeds of the arbiter whose MA2 and system_errors
// are 0 on the first side and moved on the second: up seeds +1, down
// seeds -1 (from 1 on the first side); the moved runs are altered.
func pairedRecords(n, up, down int) (a, b []seedRecord) {
	rec := func(seed uint64, wasted, errs float64, hash string) seedRecord {
		return seedRecord{Format: perSeedFormat, System: "arbiter", Seed: seed, Hash: hash, Failed: []string{}, Held: []string{"MA2 wasted-judgings"},
			Metrics: []systems.Metric{
				{Name: "extra_latency (MA1)", Unit: "s", Values: []float64{1.5, 2}},
				{Name: "wasted_judgings (MA2)", Values: []float64{wasted}},
				{Name: "system_errors", Values: []float64{errs}},
				{Name: "stuck_detect_time (MA4)", Unit: "s"}, // no sample: a total of 0
			}}
	}
	for i := range n {
		s := uint64(i + 1)
		switch {
		case i < up:
			a = append(a, rec(s, 0, 0, "h"))
			b = append(b, rec(s, 1, 1, "moved"))
		case i < up+down:
			a = append(a, rec(s, 1, 1, "h"))
			b = append(b, rec(s, 0, 0, "moved"))
		default:
			a = append(a, rec(s, 0, 0, "h"))
			b = append(b, rec(s, 0, 0, "h"))
		}
	}
	return a, b
}

// TestWarningRule: a promise metric significantly up warns, with the
// seeds up and down, the paired mean difference with its interval and p;
// a move that is not significant, a significant fall (better) and a
// metric that is not a promise's do not.
func TestWarningRule(t *testing.T) {
	a, b := pairedRecords(300, 41, 2)
	d := newDelta("arbiter", [2]string{"base", "working"}, a, b)
	require.Len(t, d.Warnings, 1, "only MA2: system_errors moved alike but is no promise's, MA1 did not move")
	w := d.Warnings[0]
	assert.Equal(t, "wasted_judgings (MA2)", w.Metric)
	assert.Equal(t, stats.Paired{Up: 41, Down: 2, Same: 257}, stats.Paired{Up: w.Paired.Up, Down: w.Paired.Down, Same: w.Paired.Same})
	assert.InDelta(t, 2.1532287064474076e-10, w.Paired.SignP, 1e-18)
	assert.InDelta(t, 39.0/300, w.Paired.All.Mean, 1e-12)
	assert.Positive(t, w.Paired.All.CI[0], "the paired interval excludes 0")
	assert.InDelta(t, 39.0/43, w.Paired.Altered.Mean, 1e-12)
	assert.Equal(t, 43, w.Paired.Altered.N)
	stuck := d.Metrics[3]
	require.Equal(t, "stuck_detect_time (MA4)", stuck.Name)
	assert.Equal(t, 300, stuck.Paired.Same, "a run without a sample pairs as a total of 0")
	assert.True(t, strings.HasPrefix(w.Text, "WARNING: arbiter wasted_judgings (MA2) worse: 41 seeds up, 2 down, p 2.2e-10; per run +0.13 ±0.04"), w.Text)
	var buf bytes.Buffer
	d.writeText(&buf, "your change")
	assert.Contains(t, buf.String(), "\n"+w.Text+"\n", "the text prints the warning on a line of its own")
	assert.Contains(t, buf.String(), "\nwasted_judgings (MA2) *  ", "a promise metric is marked")
	assert.Contains(t, buf.String(), "\nsystem_errors   ", "a metric of no promise is not")

	for _, tc := range []struct {
		name     string
		up, down int
	}{
		{"not significant (p 0.45)", 5, 2},
		{"lopsided but too few seeds (p 0.031)", 6, 0},
		{"significantly better", 2, 41},
		{"nothing moved", 0, 0},
	} {
		a, b := pairedRecords(300, tc.up, tc.down)
		d := newDelta("arbiter", [2]string{"base", "working"}, a, b)
		assert.Empty(t, d.Warnings, tc.name)
		var buf bytes.Buffer
		d.writeText(&buf, "your change")
		assert.NotContains(t, buf.String(), "WARNING", tc.name)
	}
	// A system the rule does not know has no promise metrics.
	a, b = pairedRecords(300, 41, 2)
	for i := range a {
		a[i].System, b[i].System = "other", "other"
	}
	assert.Empty(t, newDelta("other", [2]string{"base", "working"}, a, b).Warnings)
}

// TestPromiseMetricsExist: every promise metric is a metric its system
// reports (a renamed metric would silently never warn).
func TestPromiseMetricsExist(t *testing.T) {
	for _, sys := range []systems.System{systems.Arbiter{}, systems.Outbox{}, systems.TwoPC{}} {
		names, _ := metricsOf(sys)
		require.NotEmpty(t, sys.Supports().Promises, sys.Name())
		for _, m := range sys.Supports().Promises {
			assert.Contains(t, names, m, "%s's promise metric", sys.Name())
		}
	}
}

// TestFailOnNoiseIsPaired: --fail-on's "may be noise" reads the paired
// interval. Every seed rises by exactly 1 from values spread 0..1000:
// Welch's unpaired interval includes 0, the paired one is [1, 1].
func TestFailOnNoiseIsPaired(t *testing.T) {
	var a, b []seedRecord
	for s := uint64(1); s <= 40; s++ {
		v := float64((s * 397) % 1000)
		for i, x := range []float64{v, v + 1} {
			r := seedRecord{Format: perSeedFormat, System: "arbiter", Seed: s, Hash: []string{"a", "b"}[i], Failed: []string{}, Held: []string{},
				Metrics: []systems.Metric{{Name: "outage_retry_load (MA5)", Values: []float64{x}}}}
			if i == 0 {
				a = append(a, r)
			} else {
				b = append(b, r)
			}
		}
	}
	d := newDelta("arbiter", [2]string{"base", "working"}, a, b)
	m := d.Metrics[0]
	require.True(t, m.DiffCI[0] < 0 && m.DiffCI[1] > 0, "Welch's interval includes 0: %v", m.DiffCI)
	assert.Equal(t, [2]float64{1, 1}, m.Paired.All.CI)
	th, err := parseThreshold("MA5=+0.1%", []string{m.Name}, map[string]string{})
	require.NoError(t, err)
	th.judge(d)
	require.True(t, th.Crossed)
	assert.False(t, th.noise(d), "the paired interval excludes 0: not noise")
	d.Thresholds = []threshold{th}
	var buf bytes.Buffer
	d.writeText(&buf, "your change")
	assert.NotContains(t, buf.String(), "may be noise")
	require.Len(t, d.Warnings, 1, "every seed up: MA5 is worse")

	// Half the seeds up by 1, half down by 1: the paired interval holds 0.
	for i := range b {
		if i%2 == 0 {
			b[i].Metrics[0].Values[0] -= 2
		}
	}
	d = newDelta("arbiter", [2]string{"base", "working"}, a, b)
	th.judge(d)
	assert.True(t, th.noise(d))
}

// TestDeltaTextWidth: the text of real runs fits in 100 columns.
func TestDeltaTextWidth(t *testing.T) {
	for _, sys := range []systems.System{systems.Arbiter{}, systems.Outbox{}, systems.TwoPC{}} {
		var a, b []seedRecord
		for s := uint64(1); s <= 8; s++ {
			r := systems.Run(sys, sys.Default(), s, systems.Moderate, systems.Options{Full: true})
			x := recordOf(r, "base", traces.HashV2)
			y := recordOf(r, "working", traces.HashV2)
			y.Metrics = nil
			for _, m := range x.Metrics {
				v := append([]float64(nil), m.Values...)
				for i := range v {
					v[i] = v[i]*1.37 + float64(s%3) // moved, differently per seed
				}
				y.Metrics = append(y.Metrics, systems.Metric{Name: m.Name, Unit: m.Unit, Values: v})
			}
			y.Hash = "moved"
			y.Failed = append(append([]string(nil), x.Failed...), x.Held[0])
			a, b = append(a, x), append(b, y)
		}
		d := newDelta(sys.Name(), [2]string{"base", "working"}, a, b)
		var buf bytes.Buffer
		d.writeText(&buf, "your change")
		for _, l := range strings.Split(buf.String(), "\n") {
			assert.LessOrEqual(t, utf8.RuneCountInString(l), 100, "%s: %q", sys.Name(), l)
		}
	}
}

// TestStrictVerdict: a WARNING leaves the verdict "changed" (exit 0) and
// says --strict would fail it; under --strict the verdict fails naming
// the metric; a newly failing property fails either way.
func TestStrictVerdict(t *testing.T) {
	a, b := pairedRecords(300, 41, 2)
	d := newDelta("arbiter", [2]string{"base", "working"}, a, b)
	require.Len(t, d.Warnings, 1)
	for _, strict := range []bool{false, true} {
		r := &diffResult{Systems: []*runDelta{d}, Strict: strict}
		r.judge()
		var buf bytes.Buffer
		r.writeText(&buf)
		if strict {
			assert.Equal(t, "failed", r.Verdict)
			assert.Contains(t, buf.String(), "verdict: FAILED: arbiter wasted_judgings (MA2) worse (WARNING, --strict)")
		} else {
			assert.Equal(t, "changed", r.Verdict)
			assert.Contains(t, buf.String(), "verdict: changed, nothing newly failing and no threshold crossed; 1 WARNING (--strict would exit 1)")
		}
	}
	a, b = pairedRecords(300, 2, 41) // better: no warning, strict or not
	r := &diffResult{Systems: []*runDelta{newDelta("arbiter", [2]string{"base", "working"}, a, b)}, Strict: true}
	r.judge()
	assert.Equal(t, "changed", r.Verdict)
}
