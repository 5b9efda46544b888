// Package artifact writes what a failing (or kept) run leaves behind: its
// trace as JSON Lines, its self-contained HTML report and porcupine's
// visualisation, the same files from fencesim explore, fencesim run and
// the Go route (package simtest).
//
// It owns file writing only: it runs nothing and judges nothing. It is
// driven by cmd/fencesim and simtest with a judged systems.Result.
package artifact
