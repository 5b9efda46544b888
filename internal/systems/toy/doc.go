// Package toy is a demonstration system: a lessor hands a client a lease
// by ping and pong, and the client acts only while it holds one. It exists
// to prove the system contract (model/contract): one package implementing
// contract.System and one line in internal/systems/registry.go put a
// system through every command (explore, run, replay, diff, report) and
// the Go route (simtest), which the tests of cmd/fencesim, simtest and this
// package do. It is registered hidden: --system toy names it, "all" and the
// help texts leave it out.
//
// The design: the client pings the lessor every ping_every; the lessor
// answers each ping with a lease of lease; the client counts its lease from
// the moment it sent the ping (it cannot know when the lessor granted it,
// only that it was after the send) and acts every tick while the lease
// holds. Its one knob, lease-from-receipt, counts from the pong's receipt
// instead: a pong that is delayed or held while the client is paused then
// stretches the client's lease past the lessor's, which TL1 catches.
//
// Properties (judged on the trace's true times): TL1 lease-safety, every
// act of the client falls within a lease the lessor granted (granted at or
// before it, not yet expired); TL2 act-after-heal, once the faults heal
// the client acts again within 2 ping_every + 1 s. Metric acts: the acts
// made.
//
// It must never read the wall clock or start goroutines (the kernel's
// rules hold here as in model/); its only user besides the tests is the
// registry.
package toy
