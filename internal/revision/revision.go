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
	"sync"

	"github.com/fencesim/fencesim/internal/changecov"
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
	p, cleanup, err := BuildCounting(ctx, root, rev, tmp, [2][]changecov.Target{}, nil)
	return p.Bins, cleanup, p.Cached, err
}

// Pair is the two binaries of a diff, base first.
type Pair struct {
	Bins   [2]string
	Cached [2]bool // from the build cache
	// Counted: the binary counts its side's targets (BuildCovered); false
	// when the side has none, or the base revision predates change
	// coverage (it is then built as Build builds it).
	Counted [2]bool
}

// BuildCounting is Build with each side's binary counting that side's
// targets (BuildCovered), the base's in the base revision's files and the
// working tree's in its own; a side without targets is built as Build
// builds it. Covered binaries are cached too, by what they are built from
// and a hash of their targets. baseReady, when not nil, is called once
// the base's binary is in place (fetched or built: bin, and whether it
// counts), while the working tree may still be building; a caller may
// start running it then.
func BuildCounting(ctx context.Context, root, rev, tmp string, targets [2][]changecov.Target, baseReady func(bin string, counted bool)) (p Pair, cleanup func(), err error) {
	p.Bins = [2]string{filepath.Join(tmp, "fencesim-base"), filepath.Join(tmp, "fencesim-working")}
	wt := filepath.Join(tmp, "base")
	cleanup = func() {}
	for i := range targets {
		p.Counted[i] = len(targets[i]) > 0
	}
	if p.Counted[0] && !hasChangecov(root, rev) {
		p.Counted[0] = false // its fencesim would not take the counts
	}
	ready := func() {
		if baseReady != nil {
			baseReady(p.Bins[0], p.Counted[0])
		}
	}
	// The base first: a cached base starts running (baseReady) while
	// the working tree's content is hashed for its own entry.
	var entries [2]string
	dir := cacheDir()
	tool := ""
	if dir != "" {
		tool, _ = toolKey(ctx, root)
	}
	entry := func(i int, what string) {
		if p.Counted[i] {
			what += "\x00covering " + targetsKey(targets[i])
		}
		entries[i] = cached(dir, what, tool)
		p.Cached[i] = fetch(entries[i], p.Bins[i])
	}
	if tool != "" {
		entry(0, "rev "+rev)
	}
	if p.Cached[0] {
		ready()
	}
	if tool != "" {
		if tk, err := treeKey(root); err == nil {
			entry(1, "tree "+tk)
		}
	}
	if !p.Cached[0] {
		add := exec.CommandContext(ctx, "git", "worktree", "add", "--detach", "--quiet", wt, rev)
		add.Dir = root
		if out, err := add.CombinedOutput(); err != nil {
			return p, cleanup, fmt.Errorf("git worktree add %s: %s", Short(rev), FirstLine(out, err))
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
	// The two builds run at once (a link is mostly one core's work).
	var errs [2]error
	var wg sync.WaitGroup
	for i, dir := range [2]string{wt, root} {
		if p.Cached[i] {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if i == 0 && errs[0] == nil {
					ready()
				}
			}()
			if p.Counted[i] {
				errs[i] = BuildCovered(ctx, dir, p.Bins[i], targets[i])
				if errors.Is(errs[i], ErrPredates) { // a working tree without the package
					p.Counted[i] = false
					errs[i] = goBuild(ctx, dir, p.Bins[i])
				}
				return
			}
			errs[i] = goBuild(ctx, dir, p.Bins[i])
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if p.Cached[i] {
			continue
		}
		if err != nil {
			what := "base revision " + Short(rev)
			if i == 1 {
				what = "working tree"
			}
			if errors.Is(err, errNoGo) {
				return p, cleanup, err
			}
			var be *buildError
			if errors.As(err, &be) {
				return p, cleanup, fmt.Errorf("the %s does not build: %s", what, be.msg)
			}
			return p, cleanup, fmt.Errorf("the %s: %v", what, err)
		}
		if entries[i] != "" && p.Counted[i] == (len(targets[i]) > 0) {
			store(p.Bins[i], entries[i])
		}
	}
	return p, cleanup, nil
}

// hasChangecov reports whether rev has internal/changecov.
func hasChangecov(root, rev string) bool {
	cmd := exec.Command("git", "cat-file", "-e", rev+":internal/changecov/changecov.go")
	cmd.Dir = root
	return cmd.Run() == nil
}
