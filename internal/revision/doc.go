// Package revision owns what fencesim diff needs from git and go: the
// checkout it runs in (Root), a revision resolved to its commit (Resolve),
// a description of the working tree (Working), and the two binaries of a
// diff, the base revision built in a temporary git worktree and the
// working tree built in place (Build); for change coverage, the hunks of
// the change under model/ (ChangedHunks) and binaries that count how often
// each hunk's lines ran (BuildCovered, BuildCounting), instrumented by go
// tool cover through go build -overlay.
//
// It runs git and go as child processes and never changes the checkout
// (instrumented files exist only in a build's overlay; the worktree it
// adds lives under the caller's temporary directory and is removed by the
// cleanup it returns). It knows nothing of runs, seeds or systems.
// cmd/fencesim's diff drives it.
package revision
