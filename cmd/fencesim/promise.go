package main

import "github.com/fencesim/fencesim/internal/systems"

// isPromise says whether a metric of a system measures a promise the
// design makes (its Support.Promises: the arbiter's MA1, MA2, MA3 and MA5,
// the outbox's retry load and give-ups, two-phase commit's blocking and
// leftover prepared transactions). Worse is up for every one of them.
func isPromise(system, metric string) bool {
	sys, err := systems.ByName(system)
	return err == nil && contains(sys.Supports().Promises, metric)
}
