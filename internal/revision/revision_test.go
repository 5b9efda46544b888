package revision_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/internal/revision"
)

func TestShortAndFirstLine(t *testing.T) {
	assert.Equal(t, "0123456789ab", revision.Short("0123456789abcdef0123"))
	assert.Equal(t, "HEAD", revision.Short("HEAD"))
	assert.Equal(t, "fatal: bad", revision.FirstLine([]byte("  fatal: bad\nmore\n"), errors.New("exit status 128")))
	assert.Equal(t, "exit status 1", revision.FirstLine(nil, errors.New("exit status 1")), "no output: the error")
}

// TestResolveAndWorking runs git in a repository of its own.
func TestResolveAndWorking(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH")
	}
	root := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	git("init", "--quiet")
	assert.Equal(t, "no commit yet", revision.Working(root))
	require.NoError(t, os.WriteFile(filepath.Join(root, "a"), []byte("a"), 0o644))
	git("add", "a")
	git("commit", "--quiet", "-m", "a")

	rev, err := revision.Resolve(root, "HEAD")
	require.NoError(t, err)
	assert.Len(t, rev, 40)
	assert.Equal(t, "HEAD "+rev[:12], revision.Working(root))
	require.NoError(t, os.WriteFile(filepath.Join(root, "a"), []byte("b"), 0o644))
	assert.Equal(t, "HEAD "+rev[:12]+" with uncommitted changes", revision.Working(root))

	_, err = revision.Resolve(root, "no-such-branch")
	assert.ErrorContains(t, err, "--base no-such-branch: not a commit of")
	_, err = revision.Resolve(root, "--all")
	assert.ErrorContains(t, err, "want a git revision")
}
