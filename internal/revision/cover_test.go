package revision

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/internal/changecov"
)

// coverPosOf instruments src with go tool cover and returns its blocks'
// positions (coverPos).
func coverPosOf(t *testing.T, src string) []uint32 {
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
	return pos
}

// attributorOf instruments src with go tool cover and returns its
// attributor.
func attributorOf(t *testing.T, src string) *attributor {
	t.Helper()
	pos := coverPosOf(t, src)
	return newAttributor([]byte(src), tighten([]byte(src), pos), pos)
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
		blocks, _, parts, start := a.attribute(c.from, c.to)
		assert.Equal(t, c.parts, parts, "%d-%d: %s", c.from, c.to, c.what)
		assert.Len(t, blocks, len(c.parts), "%d-%d: %s", c.from, c.to, c.what)
		assert.Equal(t, c.start, start, "%d-%d: %s", c.from, c.to, c.what)
	}
}

// TestAttributeCases: a case's expressions count with their switch's
// block less the bodies of the clauses before it that matched (a clause
// entered by fallthrough left out), a default's with every other
// clause's body taken; the first case with its switch's block as it is;
// a select's cases with their select; with a build whose changecov takes
// no counts, every case with its switch.
func TestAttributeCases(t *testing.T) {
	src := `package x

func s(x int, v any, ch chan int) int {
	y := 0
	switch z := x; z {
	case 1:
		y = 1
		fallthrough
	case 2:
		y++
	default:
	case 3,
		4:
		y = 3
	}
	switch v.(type) {
	case int:
		y++
	case string:
	}
	select {
	case <-ch:
		y++
	default:
	}
	return y
}
`
	a := attributorOf(t, src)
	// The blocks: go tool cover's, by their first line (tightened).
	at := func(l int) int {
		bs := a.blocksAt(l)
		require.Len(t, bs, 1, "line %d", l)
		return bs[0]
	}
	sw, case1, case34, tsw, caseInt, sel := at(4), at(7), at(14), at(16), at(18), at(21)
	assert.NotEqual(t, sw, at(10), "case 2 has a body block of its own")
	for _, c := range []struct {
		line int
		less []int
		what string
	}{
		{6, nil, "the first case: its switch's passes"},
		{9, []int{case1}, "case 2: less case 1's matches"},
		{11, []int{case1, case34}, "default: less every matching clause (case 2 is entered by fallthrough too: left out)"},
		{12, []int{case1}, "case 3, 4 on two lines"},
		{13, []int{case1}, "its second line"},
	} {
		blocks, less, parts, _ := a.attribute(c.line, c.line)
		assert.Equal(t, []int{sw}, blocks, "line %d: %s", c.line, c.what)
		assert.Equal(t, []changecov.Part{{From: c.line, To: c.line}}, parts, "line %d", c.line)
		if c.less == nil {
			assert.Nil(t, less, "line %d: %s", c.line, c.what)
		} else {
			assert.Equal(t, [][]int{c.less}, less, "line %d: %s", c.line, c.what)
		}
	}
	blocks, less, _, _ := a.attribute(19, 19)
	assert.Equal(t, []int{tsw}, blocks, "a type switch's case")
	assert.Equal(t, [][]int{{caseInt}}, less)
	blocks, less, _, _ = a.attribute(22, 22)
	assert.Equal(t, []int{sel}, blocks, "a select's case: its select")
	assert.Nil(t, less)

	// A switch line and its first case are one part; the next case another.
	blocks, less, parts, _ := a.attribute(5, 9)
	assert.Equal(t, []int{sw, case1, sw}, blocks)
	assert.Equal(t, [][]int{nil, nil, {case1}}, less)
	assert.Equal(t, []changecov.Part{{From: 5, To: 6}, {From: 7, To: 8}, {From: 9, To: 9}}, parts)

	old := newAttributor([]byte(src), a.pos, nil)
	blocks, less, _, _ = old.attribute(11, 11)
	assert.Equal(t, []int{sw}, blocks, "no counts taken: the switch")
	assert.Nil(t, less)
}

// TestCompilerLine: a tree that does not build is said in the compiler's
// first error, not the "# package" line go prints above it.
func TestCompilerLine(t *testing.T) {
	out := []byte("# github.com/fencesim/fencesim/model/twopc\nmodel/twopc/agent.go:204:9: undefined: undefinedThing\n")
	assert.Equal(t, "model/twopc/agent.go:204:9: undefined: undefinedThing", compilerLine(out, errors.New("exit status 1")))
	assert.Equal(t, "exit status 1", compilerLine(nil, errors.New("exit status 1")))
	assert.Equal(t, "# only a header", compilerLine([]byte("# only a header\n"), errors.New("exit status 1")))
}
