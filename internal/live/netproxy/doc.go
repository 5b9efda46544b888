// Package netproxy makes the simulator's network faults real for a live run:
// it puts one toxiproxy proxy (github.com/Shopify/toxiproxy/v2, embedded as a
// library, no API server) in front of every directed client->server link on
// 127.0.0.1, and turns the schedule's network kinds into toxics and proxy
// restarts.
//
// It owns the proxies, their toxics and the timers that end timed faults. It
// must never start processes, read a schedule or decide when a fault happens:
// the live runner (fencesim live) starts the servers, calls Start with their
// addresses, hands each client the address Addr gives it, and calls the fault
// methods at the schedule's times. It never talks to a toxiproxy server over
// HTTP and keeps no mutable global state: each Net has its own toxiproxy
// ApiServer value, so tests may run several at once (the one process-wide act
// is registering the drop toxic's type with toxiproxy, once, at init).
//
// # Directions
//
// A Link is one client->server connection path (From dials To). Data from
// From to To is toxiproxy's "upstream" stream of that link; data from To back
// to From (the replies) is its "downstream" stream. A directed fault
// (from, to) therefore lands on the upstream stream of the link from>to and
// on the downstream stream of the link to>from, whichever exist. An empty
// from or to matches every node, as in the schedule ("" both: every link).
//
// # How each fault is made
//
// The simulator's rules (sim/schedule.go, network/network.go) are quoted
// first; the toxiproxy mechanism follows.
//
//   - Cut(from, to), "Node -> Peer is blocked", and the simulator breaks every
//     connection between the two: the links between them are restarted
//     (proxy Stop then Start on the same port, which closes every connection
//     through it at once; a dial in that instant is refused), and a drop
//     toxic (drop.go, registered with toxiproxy) at rate one million goes on
//     the from->to stream: data sent that way is swallowed, so a request (or
//     its reply) never arrives and the caller's own timeout fires, as for a
//     dropped datagram. A connection dialed during the cut is accepted but
//     carries nothing that way. We do not refuse new connections (by
//     disabling the proxy): a partitioned network never answers a SYN with a
//     refusal, it lets the dial or the call time out.
//   - Partition(groups), "groups cannot talk to each other (both ways);
//     crossing connections break": Cut both ways for every pair of nodes in
//     different groups. Nodes in no group are untouched.
//   - Heal(): the cut toxics are removed, and every connection that lost
//     data to one is closed (a stream with a gap is no stream): the
//     simulator's "broken connections stay broken". A connection that sent
//     nothing across the cut lives on.
//   - Break(from, to), "connections between Node and Peer break" (either
//     direction): the links between them are restarted. New connections work
//     at once.
//   - Stall(from, to, d), "messages are held, then arrive in order": a
//     latency toxic of d goes on the from->to stream and is removed after d.
//     A chunk read at the start waits d; a later one waits until the removal,
//     which lets everything held through in order. The schedule's late
//     Amount is Stall(from, to, For+Amount): on one TCP connection what is
//     sent after For queues behind the held data anyway.
//   - Delay(from, to, amount, d), "up to Amount of extra delay": a latency
//     toxic of amount/2 with jitter amount/2 (uniform in [0, amount)) for d.
//     A connection stays in order, so it delays but never reorders.
//   - Loss(from, to, perMillion, d), "datagrams are lost at Rate per
//     million": TCP cannot lose one message and carry the next (the
//     schedule's own note for a dropped message on a connection: the
//     connection breaks with it). A drop toxic at rate perMillion goes on the
//     from->to stream for d: each chunk read from that stream is lost with
//     that probability, and after a loss so is the rest of that
//     connection's stream, so the caller times out; when d ends, the
//     connections that lost data are closed. A chunk is what one read
//     returned, about one request on a quiet link, not one message.
//   - HealAll(): Heal, and every timed fault ends at once.
//
// # Limits
//
// Times are whole milliseconds (toxiproxy's unit): a duration is rounded up.
// toxiproxy draws jitter from the global math/rand and the drop toxic from
// math/rand/v2's, so a live run is not reproducible from a seed; its trace is
// the record. The drop toxic's name, fencesim_drop, is registered in
// toxiproxy's process-wide toxic registry by this package's init. A toxic
// change waits until every connection of the link is at a chunk boundary: a
// receiver that does not read (a paused process whose buffers are full) holds
// the change up, and toxiproxy can wedge for good when a destination dies
// with a chunk in flight (toxiproxy issues #412, #558). Each change is
// therefore bounded by Wait (5 s): past it the method returns an error
// naming the link, which stays wedged (its later changes fail at once), and
// the stuck goroutines are left behind. Close still stops its listener.
package netproxy
