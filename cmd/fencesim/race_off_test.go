//go:build !race

package main

// slowdown is how much slower the race detector makes a run (1: it is off).
const slowdown = 1
