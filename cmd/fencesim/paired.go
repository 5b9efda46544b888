package main

import (
	"fmt"
	"math"

	"github.com/fencesim/fencesim/internal/stats"
)

// warning is a promise metric that got significantly worse.
type warning struct {
	System string       `json:"system"`
	Metric string       `json:"metric"`
	Unit   string       `json:"unit,omitempty"`
	Paired stats.Paired `json:"paired"`
	Text   string       `json:"text"`
}

// warningsOf lists the promise metrics of a delta that got worse.
func warningsOf(d *runDelta) []warning {
	var out []warning
	for _, m := range d.Metrics {
		if !isPromise(d.System, m.Name) || !stats.Worse(m.Paired) {
			continue
		}
		w := warning{System: d.System, Metric: m.Name, Unit: m.Unit, Paired: m.Paired}
		p := m.Paired
		w.Text = fmt.Sprintf("WARNING: %s %s worse: %d seeds up, %d down, p %s; per run %s",
			d.System, m.Name, p.Up, p.Down, pText(p.SignP), plusMinus(p.All, m.Unit))
		out = append(out, w)
	}
	return out
}

// plusMinus is "+0.15 ±0.05", the short form of a symmetric interval.
func plusMinus(c stats.MeanCI, unit string) string {
	if math.IsNaN(c.Mean) {
		return "-"
	}
	if math.IsNaN(c.CI[0]) || c.CI[0] == c.CI[1] {
		return signed(c.Mean, unit)
	}
	return signed(c.Mean, unit) + " ±" + num((c.CI[1]-c.CI[0])/2, unit)
}

// pText is a p-value in a few characters: 1, 0.032, 2.1e-05.
func pText(p float64) string {
	switch {
	case math.IsNaN(p):
		return "-"
	case p >= 0.9995:
		return "1"
	case p >= 0.001:
		return fmt.Sprintf("%.3f", p)
	}
	return fmt.Sprintf("%.1e", p)
}
