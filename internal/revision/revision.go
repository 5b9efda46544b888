package revision

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Root is the top of the git checkout the command runs in, which must
// hold fencesim's source.
func Root() (string, error) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("run diff inside a git checkout of fencesim (git rev-parse: %s)", FirstLine(out, err))
	}
	root := strings.TrimSpace(string(out))
	if _, err := os.Stat(filepath.Join(root, "cmd", "fencesim")); err != nil {
		return "", fmt.Errorf("%s has no cmd/fencesim: run diff inside a checkout of fencesim", root)
	}
	return root, nil
}

// Resolve resolves a revision to its commit.
func Resolve(root, rev string) (string, error) {
	if rev == "" || strings.HasPrefix(rev, "-") {
		return "", fmt.Errorf("--base %q: want a git revision, e.g. --base HEAD~1 or --base origin/main", rev)
	}
	cmd := exec.Command("git", "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("--base %s: not a commit of %s (git log --oneline lists them)", rev, root)
	}
	return strings.TrimSpace(string(out)), nil
}

// Working says what the working tree is: its HEAD and whether it has
// changes.
func Working(root string) string {
	cmd := exec.Command("git", "rev-parse", "--short=12", "HEAD")
	cmd.Dir = root
	head, err := cmd.Output()
	if err != nil {
		return "no commit yet"
	}
	cmd = exec.Command("git", "status", "--porcelain")
	cmd.Dir = root
	st, _ := cmd.Output()
	s := "HEAD " + strings.TrimSpace(string(head))
	if len(bytes.TrimSpace(st)) > 0 {
		s += " with uncommitted changes"
	}
	return s
}

// Short is a commit's first 12 hex digits.
func Short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// FirstLine is the first line of a child's output, or its error when it
// printed nothing.
func FirstLine(out []byte, err error) string {
	s := strings.TrimSpace(string(out))
	if s == "" {
		return err.Error()
	}
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// Build builds the base revision's fencesim in a temporary git worktree
// under tmp and the working tree's, and returns the two binaries (base,
// working) and a cleanup that removes the worktree. A binary built before
// from the same commit, or from the same working-tree content, with the
// same toolchain, comes from the cache instead (cache.go); cached tells
// which did.
func Build(ctx context.Context, root, rev, tmp string) (bins [2]string, cleanup func(), cachedBins [2]bool, err error) {
	bins = [2]string{filepath.Join(tmp, "fencesim-base"), filepath.Join(tmp, "fencesim-working")}
	wt := filepath.Join(tmp, "base")
	cleanup = func() {}
	var entries [2]string
	if dir := cacheDir(); dir != "" {
		if tool, err := toolKey(ctx, root); err == nil {
			entries[0] = cached(dir, "rev "+rev, tool)
			if tk, err := treeKey(root); err == nil {
				entries[1] = cached(dir, "tree "+tk, tool)
			}
		}
	}
	for i := range bins {
		cachedBins[i] = entries[i] != "" && fetch(entries[i], bins[i])
	}
	if !cachedBins[0] {
		add := exec.CommandContext(ctx, "git", "worktree", "add", "--detach", "--quiet", wt, rev)
		add.Dir = root
		if out, err := add.CombinedOutput(); err != nil {
			return bins, cleanup, cachedBins, fmt.Errorf("git worktree add %s: %s", Short(rev), FirstLine(out, err))
		}
		cleanup = func() {
			rm := exec.Command("git", "worktree", "remove", "--force", wt)
			rm.Dir = root
			if rm.Run() != nil {
				prune := exec.Command("git", "worktree", "prune")
				prune.Dir = root
				_ = prune.Run()
			}
		}
	}
	for i, dir := range [2]string{wt, root} {
		if cachedBins[i] {
			continue
		}
		// -trimpath: the build does not depend on the directory, so the
		// two sides share the build cache for every package they share.
		b := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bins[i], "./cmd/fencesim")
		b.Dir = dir
		if out, err := b.CombinedOutput(); err != nil {
			what := "base revision " + Short(rev)
			if i == 1 {
				what = "working tree"
			}
			if errors.Is(err, exec.ErrNotFound) {
				return bins, cleanup, cachedBins, errors.New("diff builds fencesim with the go command: put go on PATH")
			}
			return bins, cleanup, cachedBins, fmt.Errorf("the %s does not build: %s", what, FirstLine(out, err))
		}
		if entries[i] != "" {
			store(bins[i], entries[i])
		}
	}
	return bins, cleanup, cachedBins, nil
}
