//go:build race

package main

// slowdown is how much slower the race detector makes a run: the tests
// that give explore a wall-clock budget give it this many times more.
const slowdown = 10
