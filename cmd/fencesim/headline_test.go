package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/internal/systems"
)

// TestHeadlineNamesUndecided: a run whose PA3 check gave up within its
// bound (wide heavy seed 16000970: 86 operations on one lease) said
// "every property held (15)", and its report's title too, with the
// undecided check only in its own line below. The headline and the title
// now name it; a run whose checks all decided reads as before.
func TestHeadlineNamesUndecided(t *testing.T) {
	held := checker.Pass("PA1 at-most-one-owner")
	gaveUp := checker.Undecided("PA3 linearizable-api", "search limit")
	broke := checker.Fail("MA5 outage-load", nil, "too many")
	line := func(vs ...checker.Verdict) (string, string) {
		r := &systems.Result{Verdicts: vs}
		var b bytes.Buffer
		writeVerdicts(&b, "x", r)
		head, _, _ := bytes.Cut(b.Bytes(), []byte("\n"))
		return string(head), pageTitle("x", r)
	}
	head, title := line(held, held)
	assert.Equal(t, "x: every property held (2)", head)
	assert.Equal(t, "x: every property held", title)

	head, title = line(held, gaveUp)
	assert.Equal(t, "x: no property failed (2); PA3 undecided (its check could not decide: nothing was shown to break, nor to hold; its line says why)", head)
	assert.Equal(t, "x: no property failed; PA3 undecided", title)

	head, title = line(broke, gaveUp, held)
	assert.Equal(t, "x: 1 of 3 properties FAILED; PA3 undecided (its check could not decide: nothing was shown to break, nor to hold; its line says why)", head)
	assert.Equal(t, "x: MA5 failed; PA3 undecided", title)
}
