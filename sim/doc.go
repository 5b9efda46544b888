// Package sim is the kernel: a single-threaded discrete-event simulator.
//
// It owns the event queue (ordered by time, then by insertion sequence), the
// entropy (one root seed with named sub-streams, or a *rapid.T so that rapid
// records and shrinks every decision, or a recorded tape for replay), the
// node lifecycle (start, crash, restart, pause, resume), the fault Schedule
// and its rapid generator, faults placed on a fault-free reference run
// (placed.go: the systems' generic fault search), run limits, and the
// recorder hook that sees every event.
//
// Nodes are written as processes (proc.go; program.go runs them, queue.go
// links them): sim.Program runs a node's logic as ordinary sequential Go, one
// or more coroutines (iter.Pull) that the kernel alone resumes, one at a
// time, inside the node's Step. Blocking calls (Sleep, Recv, Call, Queue.Get,
// the database client's round trips) yield and return when their input
// arrives; each is a crash point named by what it waits for, and a
// crash-yield fault crashes a node at its N-th one. A crash unwinds every
// process of the node. Underneath, a node is a state machine (the Node
// interface) that reacts to one Input at its local time and answers with
// effects recorded on an Env (sends, timers, connection opens and closes,
// trace notes); the kernel carries the effects out. A node of either kind can
// be driven alone in a unit test.
//
// The kernel's files, one concern each: world.go (World, its run loop and
// the effects of a step), heap.go (the event queue and its side table),
// lifecycle.go (a node's slot, start, crash, pause, crash points),
// faults.go (the schedule's actions, bursts, message fates), record.go
// (what is recorded, numbered and how its text is made), limits.go
// (Limits and their errors); node.go (Node, Env and its backends, Disk),
// outside.go (Env outside the kernel: the live world).
//
// Coroutines exist only here: iter.Pull is allowed in package sim and
// nowhere else in the simulated world.
//
// It must never read the wall clock, sleep, use global or crypto randomness,
// read the environment, start goroutines, use channels, or depend on map
// iteration order. Parallelism exists only across worlds, never inside one.
// Package model builds worlds on it; package cmd and tests drive it.
package sim
