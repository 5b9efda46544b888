// Package sim is the kernel: a single-threaded discrete-event simulator.
//
// It owns the event queue (ordered by time, then by insertion sequence), the
// entropy (one root seed with named sub-streams, or a *rapid.T so that rapid
// records and shrinks every decision, or a recorded tape for replay), the
// node lifecycle (start, crash, restart, pause, resume), the fault Schedule
// and its rapid generator, run limits, and the recorder hook that sees every
// event.
//
// Nodes are pure state machines (the Node interface): they react to one Input
// at their local time and answer with effects recorded on an Env (sends,
// timers, connection opens and closes, trace notes); the kernel carries the
// effects out. A node can therefore be stepped alone in a unit test.
//
// It must never read the wall clock, sleep, use global or crypto randomness,
// read the environment, start goroutines, use channels, or depend on map
// iteration order. Parallelism exists only across worlds, never inside one.
// Package model builds worlds on it; package cmd and tests drive it.
package sim
