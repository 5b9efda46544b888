package twopc

import (
	"testing"
	"time"
)

func TestEnumerateSmoke(t *testing.T) {
	for _, k := range append([]Knob{""}, CommitBeforeLog, TimeoutAbort, LogNotDurable, PresumeCommit) {
		d := Default()
		if k != "" {
			d = d.MustWith(k)
		}
		start := time.Now()
		h := DefaultHarness()
		cov := h.Enumerate(d, false, 100)
		t.Logf("%s sites=%d singles=%d pairs=%d runs=%d in %v failures=%d", k, len(cov.Sites), cov.Singles, cov.Pairs, cov.Runs, time.Since(start), len(cov.Failures))
		for _, f := range cov.Failures {
			t.Logf("   %v failed %v", f.Schedule, f.Failed())
		}
	}
}
