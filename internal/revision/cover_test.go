package revision

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/internal/changecov"
)

// attributorOf instruments src with go tool cover and returns its
// attributor.
func attributorOf(t *testing.T, src string) *attributor {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs go")
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "x.go"), filepath.Join(dir, "cover.go")
	require.NoError(t, os.WriteFile(in, []byte(src), 0o644))
	b, err := exec.Command("go", "tool", "cover", "-mode=count", "-var=V", "-o", out, in).CombinedOutput()
	require.NoError(t, err, "%s", b)
	pos, err := coverPos(out, "V")
	require.NoError(t, err)
	return newAttributor([]byte(src), tighten([]byte(src), pos))
}

// TestAttributeFuncLitInVar: a function literal a package variable holds
// runs when it is called, in a run, not when the program starts: its
// lines are counted by its blocks (its signature with its body). One the
// declaration calls runs at start-up, as init does.
func TestAttributeFuncLitInVar(t *testing.T) {
	a := attributorOf(t, `package x

var pick = func(n int) int {
	n = n * 2
	return n
}

var table = map[string]func(int) int{
	"a": func(x int) int {
		return x + 1
	},
}

var once = func() int {
	return 3
}()

func init() { pick(1) }
`)
	for _, c := range []struct {
		from, to int
		parts    []changecov.Part
		start    bool
		what     string
	}{
		{3, 6, []changecov.Part{{From: 3, To: 5}}, false, "a var holding a function literal: its body's block, its signature with it"},
		{4, 4, []changecov.Part{{From: 4, To: 4}}, false, "a statement of the literal's body"},
		{10, 10, []changecov.Part{{From: 10, To: 10}}, false, "a statement of a literal in a table"},
		{8, 8, []changecov.Part{}, true, "the table's declaration line runs at start-up"},
		{14, 16, []changecov.Part{}, true, "a literal the declaration calls runs at start-up"},
		{18, 18, []changecov.Part{}, true, "init"},
	} {
		blocks, parts, start := a.attribute(c.from, c.to)
		assert.Equal(t, c.parts, parts, "%d-%d: %s", c.from, c.to, c.what)
		assert.Len(t, blocks, len(c.parts), "%d-%d: %s", c.from, c.to, c.what)
		assert.Equal(t, c.start, start, "%d-%d: %s", c.from, c.to, c.what)
	}
}
