package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/internal/revision"
)

// TestRecordCache: the base's records kept between diffs are found again
// under the same binary, flags and design only (a byte of the binary, a
// flag or the design file's content changed is another key); a seed a
// system lacks runs again whole; many files are compacted to one; the
// newest keys are kept; with the build cache off there is none.
func TestRecordCache(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("FENCESIM_BUILD_CACHE", cache)
	dir := t.TempDir()
	bin := filepath.Join(dir, "fencesim-base")
	require.NoError(t, os.WriteFile(bin, []byte("a binary"), 0o755))
	design := filepath.Join(dir, "design.json")
	require.NoError(t, os.WriteFile(design, []byte(`{"lease":"30s"}`), 0o644))
	args := []string{"--design", design, "--faults", "moderate", "--per-seed-hash", "2"}

	rc := openRecordCache(bin, args, design)
	require.NotNil(t, rc)
	p := plan{first: 1, last: 4}
	kept, missing := rc.lookup(p, []string{"arbiter"})
	assert.Empty(t, kept)
	assert.Equal(t, []uint64{1, 2, 3, 4}, missing, "nothing kept yet")
	var ran []seedRecord
	for s := uint64(1); s <= 4; s++ {
		ran = append(ran, seedRecord{Format: perSeedFormat, System: "arbiter", Seed: s, Hash: "v2:" + string(rune('a'+s)), Failed: []string{}, Held: []string{"PA1"}, Metrics: nil, Cover: []uint64{s}})
	}
	ran = append(ran, seedRecord{Format: perSeedFormat, System: "outbox", Seed: 2, Hash: "v2:o", Failed: []string{}, Held: []string{}})
	rc.store(ran)
	kept, missing = rc.lookup(p, []string{"arbiter"})
	assert.Nil(t, missing)
	require.Len(t, kept, 4, "what this diff stored is served")
	for _, r := range kept {
		assert.False(t, r.kept, "seed %d: this diff ran it, no earlier diff", r.Seed)
	}

	again := openRecordCache(bin, args, design)
	kept, missing = again.lookup(p, []string{"arbiter"})
	assert.Nil(t, missing)
	require.Len(t, kept, 4)
	assert.Equal(t, ran[2].Hash, kept[2].Hash)
	assert.Equal(t, []uint64{3}, kept[2].Cover)
	for _, r := range kept {
		assert.True(t, r.kept, "seed %d: an earlier diff's", r.Seed)
	}
	kept, missing = again.lookup(p, []string{"arbiter", "outbox"})
	assert.Equal(t, []uint64{1, 3, 4}, missing, "outbox ran seed 2 only")
	assert.Len(t, kept, 2, "seed 2 of both systems")

	other := func(what string, rc *recordCache) {
		t.Helper()
		require.NotNil(t, rc)
		_, missing := rc.lookup(p, []string{"arbiter"})
		assert.Len(t, missing, 4, "%s: another key", what)
	}
	other("another flag", openRecordCache(bin, []string{"--design", design, "--faults", "heavy", "--per-seed-hash", "2"}, design))
	other("another hash version", openRecordCache(bin, args[:4], design))
	require.NoError(t, os.WriteFile(design, []byte(`{"lease":"31s"}`), 0o644))
	other("the design file edited", openRecordCache(bin, args, design))
	require.NoError(t, os.WriteFile(design, []byte(`{"lease":"30s"}`), 0o644))
	require.NoError(t, os.WriteFile(bin, []byte("a binary!"), 0o755))
	other("another binary", openRecordCache(bin, args, design))
	require.NoError(t, os.WriteFile(bin, []byte("a binary"), 0o755))

	// Compaction: past recordsMaxFiles files, one.
	rc = openRecordCache(bin, args, design)
	for s := uint64(10); s < 10+recordsMaxFiles; s++ {
		rc.store([]seedRecord{{Format: perSeedFormat, System: "arbiter", Seed: s, Hash: "h", Failed: []string{}, Held: []string{}}})
	}
	files, _ := filepath.Glob(filepath.Join(rc.dir, "*.jsonl"))
	assert.Greater(t, len(files), recordsMaxFiles)
	rc = openRecordCache(bin, args, design)
	files, _ = filepath.Glob(filepath.Join(rc.dir, "*.jsonl"))
	assert.Len(t, files, 1, "compacted")
	kept, missing = rc.lookup(plan{first: 1, last: 10 + recordsMaxFiles - 1}, []string{"arbiter"})
	assert.Equal(t, []uint64{5, 6, 7, 8, 9}, missing)
	assert.Len(t, kept, 4+recordsMaxFiles)
	again = openRecordCache(bin, args, design)
	_, missing = again.lookup(plan{first: 1, last: 10 + recordsMaxFiles - 1}, []string{"arbiter"})
	assert.Equal(t, []uint64{5, 6, 7, 8, 9}, missing, "the compacted file reads whole")

	// Records are kept as the child wrote them: a field this binary does
	// not know survives, compaction included.
	future, err := readPerSeedLines(strings.NewReader(`{"format":"`+perSeedFormat+`","system":"arbiter","seed":99,"hash":"h","failed":[],"held":[],"metrics":[],"future":7}`+"\n"), "x", true)
	require.NoError(t, err)
	rc.store(future)
	for range recordsMaxFiles {
		rc.store([]seedRecord{{Format: perSeedFormat, System: "arbiter", Seed: 1000, Hash: "h", Failed: []string{}, Held: []string{}}})
	}
	rc = openRecordCache(bin, args, design)
	files, _ = filepath.Glob(filepath.Join(rc.dir, "*.jsonl"))
	require.Len(t, files, 1, "compacted")
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	assert.Contains(t, string(b), `"future":7`)
	kept, missing = rc.lookup(plan{first: 99, last: 99}, []string{"arbiter"})
	assert.Nil(t, missing)
	require.Len(t, kept, 1)

	// The newest keys are kept; the binaries' trim leaves records alone.
	for i := range recordsKeep + 3 {
		openRecordCache(bin, []string{"--set", string(rune('a' + i))}, "").store([]seedRecord{{Format: perSeedFormat, System: "arbiter", Seed: 1, Hash: "h", Failed: []string{}, Held: []string{}}})
	}
	keys, err := os.ReadDir(filepath.Join(cache, revision.RecordsDir))
	require.NoError(t, err)
	assert.Len(t, keys, recordsKeep)

	t.Setenv("FENCESIM_BUILD_CACHE", "off")
	assert.Nil(t, openRecordCache(bin, args, design))
}
