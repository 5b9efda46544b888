package sim

import (
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
)

// This file is the process API's second world: a node stepped by a driver
// outside the kernel (the live world, internal/live), which turns the
// effects of each step into real ones (sockets, timers, files) and its real
// inputs (a reply read from a socket, a timer that fired) into the node's
// next Step. The node's code is the very code the kernel runs; only the Env
// differs.

// Outside is what a driver keeps across a node's steps: its address, its
// timer and connection numbering, and the hooks for the places where the
// kernel would inject a fault.
type Outside struct {
	Self network.Addr
	// Dial numbers a new connection to another node (the driver opens it
	// when it carries out the step's EffDial).
	Dial func(to network.Addr) network.ConnID
	// Point is called at every crash point of the node's code (nil: none),
	// with the step's environment (what the step asked for so far): a live
	// crash-at fault carries that out and kills the process there.
	Point func(e *Env, label string)
	// Die is called when the node's code dies of its own doing (Proc.Die),
	// with the supervisor's restart delay; it may end the process (nil: the
	// node just ends, as when stepped alone).
	Die func(label string, restart time.Duration)

	timers TimerID
}

// Env returns the environment of one step: the node's clocks read now and
// mono, draws come from r.
func (o *Outside) Env(now, mono clock.Time, r Rand, disk *Disk) *Env {
	return &Env{self: o.Self, now: now, mono: mono, rnd: r, disk: disk, recording: true,
		nextTimer: &o.timers, back: o}
}

// An Outside is the backend of the Envs it makes: dials are numbered by
// the driver, crash points and deaths go to its hooks, every note is
// recorded. A state machine's crash points (Env.CrashPoint) are not
// hooked: no live node is one.
func (o *Outside) dial(_, to network.Addr) network.ConnID { return o.Dial(to) }
func (o *Outside) records(string) bool                    { return true }
func (o *Outside) skips(string) bool                      { return false }
func (o *Outside) armed() bool                            { return o.Point != nil }
func (o *Outside) crashAt(string, bool) bool              { return false }

func (o *Outside) point(e *Env, label string) (crash bool, frozen time.Duration) {
	if o.Point != nil {
		o.Point(e, label)
	}
	return false, 0
}

func (o *Outside) die(label string, restart time.Duration) {
	if o.Die != nil {
		o.Die(label, restart)
	}
}

// Crashed reports whether the node crashed in the step (a crash point that
// fired, or Proc.Die): the driver must step it no more.
func (e *Env) Crashed() bool { return e.crashed }

// Snapshot returns a copy of the disk's durable contents (what a crash
// keeps), for a driver that stores them in a file.
func (d *Disk) Snapshot() map[string]any {
	out := make(map[string]any, len(d.durable))
	for k, v := range d.durable {
		out[k] = v
	}
	return out
}

// Version counts the changes to the disk's durable contents: a driver
// writes the disk out when it moved.
func (d *Disk) Version() uint64 { return d.version }

// LoadDisk returns a disk whose durable contents are m (read back from a
// file), with AutoSync as given.
func LoadDisk(m map[string]any, autoSync bool) *Disk {
	d := NewDisk()
	d.AutoSync = autoSync
	for k, v := range m {
		d.durable[k] = v
	}
	return d
}

// Spec is one node of a world as a system's builder lists it: the kernel
// adds it to a simulated world, the live world runs it as a process of its
// own. Both build it with the same factory.
type Spec struct {
	Name    string
	Factory Factory
	Down    bool // added down: a restart action starts it
}
