package revision

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTreeKey: the working tree's key follows its content: the same
// files give the same key, an edit, a new untracked file or a deleted
// tracked file another; an ignored file does not count.
func TestTreeKey(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	dir := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	git("init", "-q")
	write("a.go", "package a\n")
	write(".gitignore", "out/\n")
	git("add", "-A")
	git("commit", "-qm", "one")
	key := func() string {
		k, err := treeKey(dir)
		require.NoError(t, err)
		return k
	}
	k1 := key()
	assert.Equal(t, k1, key(), "the same tree, the same key")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "out"), 0o755))
	write("out/x.go", "ignored")
	assert.Equal(t, k1, key(), "an ignored file does not count")
	write("a.go", "package a // edited\n")
	k2 := key()
	assert.NotEqual(t, k1, k2, "an edit")
	write("b.go", "package a\n")
	k3 := key()
	assert.NotEqual(t, k2, k3, "an untracked file")
	require.NoError(t, os.Remove(filepath.Join(dir, "b.go")))
	assert.Equal(t, k2, key(), "back to the edited tree")
	require.NoError(t, os.Remove(filepath.Join(dir, "a.go")))
	assert.NotEqual(t, k2, key(), "a deleted tracked file")
}

// TestCacheStoreFetchTrim: a stored binary is fetched back byte for byte,
// a missing entry is not, and the cache keeps its newest entries only.
func TestCacheStoreFetchTrim(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(t.TempDir(), "fencesim")
	require.NoError(t, os.WriteFile(bin, []byte("binary"), 0o755))
	e := cached(dir, "rev abc", "go1.26")
	assert.NotEqual(t, e, cached(dir, "rev abc", "go1.27"), "another toolchain, another entry")
	dst := filepath.Join(t.TempDir(), "out")
	assert.False(t, fetch(e, dst), "nothing stored yet")
	store(bin, e)
	require.True(t, fetch(e, dst))
	b, err := os.ReadFile(dst)
	require.NoError(t, err)
	assert.Equal(t, "binary", string(b))
	for i := range keep + 4 {
		store(bin, cached(dir, "rev "+string(rune('a'+i)), "go1.26"))
	}
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, es, keep, "the cache keeps its newest entries")
}
