package sim

import (
	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
)

// This file is the event queue: a binary heap of pointer-free events
// ordered by (at, seq), and the side table of what a few events carry.

type evKind uint8

const (
	evStart evKind = iota + 1
	evDeliver
	evTimer
	evConnBroken
	evFault
	evHeld // an input held while its node was paused
	evBurstEnd
)

// event is one entry of the queue. It holds no pointer, so that the GC never
// scans the queue: what a few kinds carry besides numbers (a timer's tag, a
// broken connection's peer, a held input) sits in the side table at aux.
type event struct {
	at   clock.Time
	seq  uint64
	id   uint64 // deliver: message; timer: timer; conn-broken: connection; fault: schedule index; burst-end: burst
	node int32
	inc  uint32
	aux  uint32 // deliver: the flight slot; timer, conn-broken, held: the side-table index
	kind evKind
}

// payload is a side-table entry: what an event carries that has pointers.
type payload struct {
	tag  any
	peer network.Addr
}

// put stores an event's payload in the side table and returns its index.
func (w *World) put(p payload) uint32 {
	if n := len(w.freeSide); n > 0 {
		i := w.freeSide[n-1]
		w.freeSide = w.freeSide[:n-1]
		w.side[i] = p
		return i
	}
	w.side = append(w.side, p)
	return uint32(len(w.side) - 1)
}

// take returns an event's payload and frees its entry.
func (w *World) take(i uint32) payload {
	p := w.side[i]
	w.side[i] = payload{}
	w.freeSide = append(w.freeSide, i)
	return p
}

// ---- the event queue: a binary heap ordered by (at, seq) ----

func (w *World) push(e event) {
	w.seq++
	e.seq = w.seq
	w.queue = append(w.queue, e)
	q := w.queue
	// Sift up, moving parents down into the hole instead of swapping.
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !less(&e, &q[p]) {
			break
		}
		q[i] = q[p]
		i = p
	}
	q[i] = e
}

func (w *World) pop() event {
	q := w.queue
	top := q[0]
	n := len(q) - 1
	last := q[n]
	q = q[:n]
	w.queue = q
	if n == 0 {
		return top
	}
	// Sift the last event down from the root, moving children up.
	siftDown(q, 0, last)
	return top
}

// siftDown places e at index i of the heap q or below, moving the smaller
// children up into the hole.
func siftDown(q []event, i int, e event) {
	n := len(q)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && less(&q[r], &q[l]) {
			m = r
		}
		if !less(&q[m], &e) {
			break
		}
		q[i] = q[m]
		i = m
	}
	q[i] = e
}

// heapify restores the heap order after events' times changed in place.
func (w *World) heapify() {
	q := w.queue
	for i := len(q)/2 - 1; i >= 0; i-- {
		siftDown(q, i, q[i])
	}
}

func less(a, b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// Pending returns the number of queued events.
func (w *World) Pending() int { return len(w.queue) }
