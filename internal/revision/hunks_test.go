package revision

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/internal/changecov"
)

// repo is a scratch git repository for the tests.
type repo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	r := &repo{t, t.TempDir()}
	r.git("init", "-q")
	return r
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = r.dir
	out, err := cmd.CombinedOutput()
	require.NoError(r.t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

func (r *repo) write(name, text string) {
	r.t.Helper()
	p := filepath.Join(r.dir, filepath.FromSlash(name))
	require.NoError(r.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(r.t, os.WriteFile(p, []byte(text), 0o644))
}

const judgeGo = `package judge

// Arbiter leases submissions.
type Arbiter struct{ n int }

func (a *Arbiter) sweep() int {
	a.n++
	return a.n
}

func claimBatch(n int) int {
	if n > 1 {
		return n
	}
	return 1
}

func (a Arbiter) String() string { return "arbiter" }
`

// partsGo is a file whose hunks run in part (TestBuildCovered): parts(3)
// and parts(4) are called.
const partsGo = `package judge

var table = map[int]int{1: 1}

func init() { table[2] = 2 }

func parts(x int) int {
	y := x + table[1]
	if y < 0 {
		y = 0
	}
	// a comment between two statements
	y++
	switch {
	case y > 100:
		return 1
	case y > 5:
		return 2
	}
	return y
}
`

// casesGo is a switch whose first case always matches (TestBuildCovered):
// cases(1) and cases(2) are called.
const casesGo = `package judge

func cases(x int) int {
	switch {
	case x > 0:
		return 1
	case x > 100:
		return 2
	default:
		return 3
	}
}
`

// TestChangedHunks: a modification, an insertion and a deletion in a
// model file, each with its lines on both sides and its function; test
// files, non-Go files and files outside model/ do not count; an
// uncommitted change and an untracked file do.
func TestChangedHunks(t *testing.T) {
	r := newRepo(t)
	r.write("model/judge/arbiter.go", judgeGo)
	r.write("model/judge/gone.go", "package judge\n\nfunc gone() {}\n")
	r.write("model/judge/arbiter_test.go", "package judge\n")
	r.write("model/judge/notes.md", "notes\n")
	r.write("sim/kernel.go", "package sim\n")
	r.git("add", "-A")
	r.git("commit", "-qm", "base")
	rev := r.git("rev-parse", "HEAD")

	hunks, err := ChangedHunks(r.dir, rev)
	require.NoError(t, err)
	assert.Empty(t, hunks, "no change")

	changed := strings.Replace(judgeGo, "\ta.n++\n", "\ta.n += 2\n", 1)                                    // modification, line 7
	changed = strings.Replace(changed, "\tif n > 1 {\n", "\tif n > 1 {\n\t\tn = min(n, 8)\n", 1)           // insertion after line 12
	changed = strings.Replace(changed, "func (a Arbiter) String() string { return \"arbiter\" }\n", "", 1) // deletion of line 18
	r.write("model/judge/arbiter.go", changed)
	r.write("model/judge/arbiter_test.go", "package judge\n\n// changed\n")
	r.write("model/judge/notes.md", "other notes\n")
	r.write("sim/kernel.go", "package sim\n\n// changed\n")
	require.NoError(t, os.Remove(filepath.Join(r.dir, "model/judge/gone.go")))
	r.write("model/judge/fresh.go", "package judge\n\nfunc fresh() {}\n")
	r.write("model/judge/fresh_test.go", "package judge\n")

	hunks, err = ChangedHunks(r.dir, rev)
	require.NoError(t, err)
	assert.Equal(t, []Hunk{
		{File: "model/judge/arbiter.go", Base: Lines{7, 7}, Work: Lines{7, 7}, BaseFunc: "(*Arbiter).sweep", WorkFunc: "(*Arbiter).sweep"},
		{File: "model/judge/arbiter.go", Base: Lines{13, 12}, Work: Lines{13, 13}, WorkFunc: "claimBatch"},
		{File: "model/judge/arbiter.go", Base: Lines{18, 18}, Work: Lines{19, 18}, BaseFunc: "Arbiter.String"},
		{File: "model/judge/fresh.go", Base: Lines{1, 0}, Work: Lines{1, 3}, WorkFunc: "fresh"},
		{File: "model/judge/gone.go", Base: Lines{1, 3}, Work: Lines{1, 0}, BaseFunc: "gone"},
	}, hunks)
	assert.True(t, hunks[1].Base.Empty())
	assert.Equal(t, "(none, after line 12)", hunks[1].Base.String())
	assert.Equal(t, "1-3", hunks[3].Work.String())

	_, err = ChangedHunks(r.dir, "0000000000000000000000000000000000000000")
	assert.ErrorContains(t, err, "git diff")
}

// TestHunkHeader: git's hunk headers, with and without counts.
func TestHunkHeader(t *testing.T) {
	for line, want := range map[string]Hunk{
		"@@ -7 +7 @@ func (a *Arbiter) sweep() int {": {Base: Lines{7, 7}, Work: Lines{7, 7}},
		"@@ -12,0 +13,2 @@":                           {Base: Lines{13, 12}, Work: Lines{13, 14}},
		"@@ -18,3 +17,0 @@":                           {Base: Lines{18, 20}, Work: Lines{18, 17}},
	} {
		h, err := hunkHeader(line)
		require.NoError(t, err, line)
		assert.Equal(t, want, h, line)
	}
	_, err := hunkHeader("@@ -x +1 @@")
	assert.Error(t, err)
}

// TestBuildCovered builds a small fencesim-shaped module with a file of
// model/ instrumented, and its binary counts each target: a line that
// runs, a line that does not, a comment; the tree itself is unchanged.
func TestBuildCovered(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs go")
	}
	r := newRepo(t)
	r.write("go.mod", "module github.com/fencesim/fencesim\n\ngo 1.26\n")
	_, self, _, _ := runtime.Caller(0)
	for _, f := range []string{"changecov.go", "doc.go"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(self), "..", "changecov", f))
		require.NoError(t, err)
		r.write("internal/changecov/"+f, string(b))
	}
	r.write("model/judge/arbiter.go", judgeGo)
	r.write("cmd/fencesim/main.go", `package main

import (
	"encoding/json"
	"os"

	"github.com/fencesim/fencesim/internal/changecov"
	"github.com/fencesim/fencesim/model/judge"
)

func main() {
	changecov.Reset()
	judge.Run()
	counts, parts := changecov.TakeParts()
	json.NewEncoder(os.Stdout).Encode(map[string]any{"targets": changecov.Targets(), "counts": counts, "parts": parts})
}
`)
	r.write("model/judge/run.go", "package judge\n\nfunc Run() {\n\ta := &Arbiter{}\n\tfor range 3 {\n\t\ta.sweep()\n\t}\n\tclaimBatch(1)\n\tparts(3)\n\tparts(4)\n\tcases(1)\n\tcases(2)\n}\n")
	r.write("model/judge/parts.go", partsGo)
	r.write("model/judge/cases.go", casesGo)
	before := r.git("status", "--porcelain")
	bin := filepath.Join(t.TempDir(), "fencesim")
	targets := []changecov.Target{
		{ID: 0, File: "model/judge/arbiter.go", From: 7, To: 7, Func: "(*Arbiter).sweep"}, // a.n++: 3 times
		{ID: 1, File: "model/judge/arbiter.go", From: 13, To: 13, Func: "claimBatch"},     // return n: never
		{ID: 2, File: "model/judge/arbiter.go", From: 3, To: 3},                           // a comment
		{ID: 3, File: "model/judge/run.go", From: 8, To: 8, Func: "Run"},                  // once
		{ID: 4, File: "model/judge/arbiter.go", From: 14, To: 14, Func: "claimBatch"},     // the if's closing brace
		{ID: 5, File: "model/judge/arbiter.go", From: 11, To: 12, Func: "claimBatch"},     // the signature and the if: once
		{ID: 6, File: "model/judge/parts.go", From: 8, To: 10, Func: "parts"},             // an if that runs, a body that never does
		{ID: 7, File: "model/judge/parts.go", From: 12, To: 12, Func: "parts"},            // a comment between two statements
		{ID: 8, File: "model/judge/parts.go", From: 15, To: 15, Func: "parts"},            // a case that never matches: its switch ran
		{ID: 9, File: "model/judge/parts.go", From: 3, To: 5},                             // a package variable and init
		{ID: 10, File: "model/judge/parts.go", From: 17, To: 18, Func: "parts"},           // a case that matches once, and its body
		{ID: 11, File: "model/judge/cases.go", From: 5, To: 5, Func: "cases"},             // a case that matches twice
		{ID: 12, File: "model/judge/cases.go", From: 7, To: 7, Func: "cases"},             // a case never reached: the one before always matched
		{ID: 13, File: "model/judge/cases.go", From: 9, To: 9, Func: "cases"},             // a default never reached
	}
	require.NoError(t, BuildCovered(context.Background(), r.dir, bin, targets))
	assert.Equal(t, before, r.git("status", "--porcelain"), "the tree is not modified")
	out, err := exec.Command(bin).Output()
	require.NoError(t, err)
	var got struct {
		Targets []changecov.Target
		Counts  []uint64
		Parts   []uint64
	}
	require.NoError(t, json.Unmarshal(out, &got))
	assert.Equal(t, []uint64{3, 0, 0, 1, 0, 1, 2, 0, 2, 0, 2, 2, 0, 0}, got.Counts, "a brace's line is not the code of the blocks it closes; a case counts the passes that reached it")
	require.Len(t, got.Targets, 14)
	assert.Equal(t, []uint64{0b01, 0, 0b1, 0, 0b11, 0b1, 0, 0}, got.Parts[6:], "which parts ran")
	assert.Positive(t, got.Targets[12].Stmts, "a case never reached is code that never ran, not a line without statements")
	assert.Equal(t, []changecov.Part{{From: 8, To: 9, Stmts: 2}, {From: 10, To: 10, Stmts: 1}}, got.Targets[6].Parts, "the if's block and its body's")
	assert.Zero(t, got.Targets[7].Stmts, "a comment between two statements holds none")
	assert.Equal(t, []changecov.Part{{From: 15, To: 15, Stmts: 2}}, got.Targets[8].Parts, "a case's expressions count with their switch (y++ and the switch)")
	assert.Equal(t, []changecov.Part{{From: 17, To: 17, Stmts: 2}, {From: 18, To: 18, Stmts: 1}}, got.Targets[10].Parts, "a case with its switch, its body on its own")
	assert.True(t, got.Targets[9].Start, "a package variable and init run at start-up")
	assert.Zero(t, got.Targets[9].Stmts, "and in no run")
	assert.False(t, got.Targets[6].Start)
	assert.Zero(t, got.Targets[4].Stmts, "a closing brace holds no statement")
	assert.Positive(t, got.Targets[0].Stmts)
	assert.Positive(t, got.Targets[1].Stmts)
	assert.Zero(t, got.Targets[2].Stmts, "a comment holds no statement")
	assert.Equal(t, "claimBatch", got.Targets[1].Func)

	require.NoError(t, os.RemoveAll(filepath.Join(r.dir, "internal", "changecov")))
	assert.ErrorIs(t, BuildCovered(context.Background(), r.dir, bin, targets), ErrPredates)
}

// TestTighten: go tool cover's blocks, narrowed to their code: the line of
// "} else {" and a comment line belong to no block, and every statement's
// line to one.
func TestTighten(t *testing.T) {
	src := `package x

func f(a, b bool) int {
	if a {
		return 1
	} else {
		// a comment
		b = !b
	}
	return 2
}
`
	pos := coverPosOf(t, src)
	lines := map[uint32]int{}
	for i, p := range tighten([]byte(src), pos) {
		if i%3 == 2 || p == 0 {
			continue
		}
		lines[p]++
	}
	for _, l := range []uint32{4, 5, 8, 10} {
		assert.Positive(t, lines[l], "line %d is a block's code", l)
	}
	for _, l := range []uint32{3, 6, 7, 9, 11} {
		assert.Zero(t, lines[l], "line %d is no block's code", l)
	}
}
