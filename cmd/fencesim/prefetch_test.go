package main

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/internal/summary"
)

// part is a finished prefetch part of seeds first..last of systems a and
// b, without the records lacking names (system and seed).
func part(first, last uint64, lacking ...seedRecord) *prePart {
	pt := &prePart{p: plan{first: first, last: last}, done: make(chan struct{})}
	for s := first; s <= last; s++ {
		for _, sys := range []string{"a", "b"} {
			r := seedRecord{System: sys, Seed: s}
			if !hasRecord(lacking, r) {
				pt.recs = append(pt.recs, r)
			}
		}
	}
	close(pt.done)
	return pt
}

func hasRecord(rs []seedRecord, r seedRecord) bool {
	for _, x := range rs {
		if x.System == r.System && x.Seed == r.Seed {
			return true
		}
	}
	return false
}

func seedsOf(rs []seedRecord) map[uint64]int {
	out := map[uint64]int{}
	for _, r := range rs {
		out[r.Seed]++
	}
	return out
}

// TestPrefetchTake: a run takes a part's records of its seeds and systems
// only; a seed some system lacks (a part interrupted) is missing and none
// of its records is served (it runs again whole); a dropped part is
// neither waited for nor served; a failed part's error is the run's; a
// shard takes its seeds only; covers says when the parts hold a plan.
func TestPrefetchTake(t *testing.T) {
	pf := &prefetch{parts: []*prePart{part(1, 32), part(33, 100, seedRecord{System: "b", Seed: 40})}}

	served, missing, err := pf.take(plan{first: 1, last: 32}, []string{"a", "b"})
	require.NoError(t, err)
	assert.Nil(t, missing)
	assert.Len(t, served, 64)
	assert.True(t, pf.parts[0].taken)
	assert.False(t, pf.parts[1].taken, "a part the plan does not reach is not taken")

	served, missing, err = pf.take(plan{first: 35, last: 45}, []string{"a", "b"})
	require.NoError(t, err)
	assert.Equal(t, []uint64{40}, missing, "b's seed 40 is lacking")
	got := seedsOf(served)
	assert.Len(t, served, 20)
	assert.NotContains(t, got, uint64(40), "a missing seed's other records are not served: it runs again whole")

	served, missing, err = pf.take(plan{first: 35, last: 45}, []string{"a"})
	require.NoError(t, err)
	assert.Nil(t, missing, "a has seed 40")
	assert.Len(t, served, 11)
	for _, r := range served {
		assert.Equal(t, "a", r.System)
	}

	served, missing, err = pf.take(plan{first: 50, last: 60, shard: summary.Shard{I: 1, N: 2}}, []string{"a", "b"})
	require.NoError(t, err)
	assert.Nil(t, missing)
	for s := range seedsOf(served) {
		assert.Equal(t, uint64(1), s%2, "shard 1/2 takes odd seeds")
	}
	assert.Len(t, served, 10)

	list := plan{first: 3, last: 200, list: []uint64{3, 70, 150, 200}}
	served, missing, err = pf.take(list, []string{"a", "b"})
	require.NoError(t, err)
	assert.Equal(t, []uint64{150, 200}, missing, "seeds past the parts run")
	assert.Equal(t, map[uint64]int{3: 2, 70: 2}, seedsOf(served))

	assert.True(t, pf.covers(plan{first: 33, last: 100}))
	assert.True(t, pf.covers(plan{first: 2, last: 30}))
	assert.False(t, pf.covers(plan{first: 30, last: 40}), "two parts hold it, not one")
	assert.False(t, pf.covers(plan{first: 90, last: 101}))

	// A part not yet run and dropped: take does not wait for it.
	_, cancel := context.WithCancel(context.Background())
	pending := &prePart{p: plan{first: 101, last: 300}, done: make(chan struct{}), cancel: cancel}
	pf.parts = append(pf.parts, pending)
	assert.True(t, pf.covers(plan{first: 150, last: 160}))
	pf.dropRest()
	assert.True(t, pending.dropped)
	assert.False(t, pf.parts[0].dropped, "a taken part stays")
	assert.False(t, pf.covers(plan{first: 150, last: 160}))
	served, missing, err = pf.take(plan{first: 150, last: 152}, []string{"a"})
	require.NoError(t, err)
	assert.Empty(t, served)
	assert.Equal(t, []uint64{150, 151, 152}, missing)

	failed := part(1, 5)
	failed.err = errors.New("flag provided but not defined: -x")
	pf = &prefetch{parts: []*prePart{failed}}
	_, _, err = pf.take(plan{first: 1, last: 5}, []string{"a"})
	assert.ErrorContains(t, err, "-x")

	var none *prefetch
	assert.False(t, none.covers(plan{first: 1, last: 5}))
	none.dropRest()
	none.stop()
}

// TestMissingPlan: the missing seeds of a range are a range when they
// are one (in its shard), else the range whole (a base from before
// --seeds took lists plays only ranges); of a list, a list.
func TestMissingPlan(t *testing.T) {
	p := plan{first: 1, last: 100}
	got, whole := missingPlan(p, []uint64{4, 5, 6})
	assert.Equal(t, plan{first: 4, last: 6}, got)
	assert.False(t, whole)
	got, whole = missingPlan(p, []uint64{4, 5, 7})
	assert.Equal(t, p, got)
	assert.True(t, whole, "two blocks: the range whole")
	half := plan{first: 1, last: 100, shard: summary.Shard{I: 1, N: 2}}
	got, whole = missingPlan(half, []uint64{51, 53, 55})
	assert.Equal(t, plan{first: 51, last: 55, shard: half.shard}, got)
	assert.False(t, whole, "one block of the shard")
	_, whole = missingPlan(half, []uint64{51, 55})
	assert.True(t, whole)
	list := plan{first: 3, last: 90, list: []uint64{3, 7, 40, 90}}
	got, whole = missingPlan(list, []uint64{7, 90})
	assert.Equal(t, plan{first: 7, last: 90, list: []uint64{7, 90}}, got)
	assert.False(t, whole)
}

// TestPrefetchParts: what runs ahead on the base is the plan a diff
// runs: whole without focus, the warm-up and the rest under
// --focus=auto, the warm-up only under --focus; nothing for steered
// seeds or no system.
func TestPrefetchParts(t *testing.T) {
	p := plan{first: 11, last: 310}
	assert.Equal(t, []plan{p}, prefetchParts(p, "off", 1))
	assert.Equal(t, []plan{{first: 11, last: 42}, {first: 43, last: 310}}, prefetchParts(p, "auto", 1))
	assert.Equal(t, []plan{{first: 11, last: 42}}, prefetchParts(p, "on", 1))
	assert.Equal(t, []plan{{first: 11, last: 30}}, prefetchParts(plan{first: 11, last: 30}, "auto", 1), "all seeds are the warm-up's")
	assert.Nil(t, prefetchParts(p, "off", 0))
	assert.Nil(t, prefetchParts(plan{first: 1, last: 3, list: []uint64{1, 3}, steer: "arbiters=2"}, "off", 1))
}
