package sim

import (
	"time"

	"github.com/fencesim/fencesim/network"
)

// Queue is a FIFO between the processes of one node (a buffered channel
// that only the kernel schedules). The zero value is an empty queue.
type Queue[T any] struct {
	items   []T
	waiters []*Proc
}

// Put adds an item; it never blocks. The first waiting process gets it.
func (q *Queue[T]) Put(v T) {
	for len(q.waiters) > 0 {
		w := q.waiters[0]
		// Shift rather than reslice: the array keeps its capacity for the
		// next waiters (the list is short).
		n := copy(q.waiters, q.waiters[1:])
		q.waiters[n] = nil
		q.waiters = q.waiters[:n]
		if w.waiting && !w.h.dead {
			if w.h.env == nil {
				panic("sim: a Queue is shared between nodes; it belongs to the processes of one node")
			}
			w.list = nil
			w.h.wake(w, v, network.Message{}, nil)
			return
		}
	}
	q.items = append(q.items, v)
}

// Waiting returns how many processes wait for an item.
func (q *Queue[T]) Waiting() int { return len(q.waiters) }

// Len returns how many items wait to be taken.
func (q *Queue[T]) Len() int { return len(q.items) }

// Get takes the next item, waiting at most timeout (0: no timeout) for one.
// It returns ErrTimeout when the timeout passed first.
func (q *Queue[T]) Get(p *Proc, timeout time.Duration, label string) (T, error) {
	return q.get(p, timeout, label, false)
}

// Await is Get for a process that serves a request: it also returns
// ErrCanceled when the request's client hangs up (its connection breaks),
// as a select on an HTTP request's ctx.Done() would.
func (q *Queue[T]) Await(p *Proc, timeout time.Duration, label string) (T, error) {
	return q.get(p, timeout, label, p.reqConn != 0)
}

func (q *Queue[T]) get(p *Proc, timeout time.Duration, label string, cancel bool) (T, error) {
	p.Point(label)
	var zero T
	if len(q.items) > 0 {
		v := q.items[0]
		q.items = q.items[1:]
		return v, nil
	}
	q.waiters = append(q.waiters, p)
	p.list = q
	p.wantCancel = cancel
	p.wait(timeout, label)
	if p.err != nil {
		return zero, p.err
	}
	return p.val.(T), nil
}

func (q *Queue[T]) drop(p *Proc) {
	for i, w := range q.waiters {
		if w == p {
			q.waiters = append(q.waiters[:i], q.waiters[i+1:]...)
			return
		}
	}
}
