// Package judge builds worlds of system A: a database (model/db) with the
// arbiter's schema, one or more arbiters, the workers (home first, then
// production), a monitor that polls the arbiters' probe and raises the
// "waiting and unpaired" alert (A-S8), and a web front that inserts
// submissions as they arrive. Build turns (Design, Workload, fault schedule,
// entropy) into a runnable sim.World; Spec describes it for generic fault
// generation; the scenario tests A-S1..A-S9 live here.
//
// Like every model package it never reads the wall clock, starts goroutines
// or depends on map order.
package judge
