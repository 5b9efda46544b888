// Package network owns the simulated network: addresses, messages as data in
// an in-flight set, per-link policies (loss, duplication, a delay distribution
// that reorders), one-way and two-way partitions, and connections that a fault
// can break.
//
// It decides each message's fate from the entropy stream it is handed and
// never schedules anything itself: the kernel (package sim) turns its
// decisions into events, asks it at delivery time whether a message still
// arrives, and tells it when nodes crash. It must never read the wall clock,
// use global randomness, start goroutines or iterate a map without sorting.
//
// Two kinds of traffic exist. Datagrams (Conn == 0) model request/response
// protocols such as HTTP between workers and an arbiter: they can be lost,
// duplicated, delayed and reordered. Connection traffic (Conn != 0) models a
// TCP session such as a database connection: FIFO, never lost or duplicated,
// only delayed; its failure mode is a break, which both ends observe.
package network
