package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// grace is how long the runs in progress may take to finish once a
// command stops starting runs (Ctrl-C, SIGTERM, or the end of --time):
// after it they are abandoned (their results are not counted) and the
// command prints what finished.
const grace = 2 * time.Second

// exitInterrupted is the exit code of a command stopped by SIGINT or
// SIGTERM (128 + SIGINT, as shells report it).
const exitInterrupted = 130

// interrupts returns a context that ends at the first SIGINT or SIGTERM,
// and a function to call when the command is done. After the first
// signal the default handling is back: a second Ctrl-C kills the process
// at once.
func interrupts() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	quit := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			cancel(interrupted{s})
		case <-quit:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(quit)
		cancel(nil)
	}
}

// interrupted is the cause of a context ended by a signal.
type interrupted struct{ sig os.Signal }

func (i interrupted) Error() string { return "interrupted by " + signalName(i.sig) }

func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// interruption names the signal that ended ctx, or "" when none did.
func interruption(ctx context.Context) string {
	if i, ok := context.Cause(ctx).(interrupted); ok {
		return signalName(i.sig)
	}
	return ""
}

// within runs f and waits for it; once ctx ends, it waits at most grace
// more. It reports whether f finished (when it did not, f goes on in the
// background and its effects must be ignored).
func within(ctx context.Context, f func()) bool {
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
		return true
	case <-ctx.Done():
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// collect passes each run of the pool's output to each until the pool is
// done. Once stop ends it waits at most grace for the runs in progress,
// then abandons them (they are drained in the background and not
// counted) and returns true.
func collect(stop context.Context, out <-chan finished, each func(finished)) (abandoned bool) {
	done := stop.Done()
	var late <-chan time.Time
	for {
		select {
		case x, ok := <-out:
			if !ok {
				return false
			}
			each(x)
		case <-done:
			done = nil
			t := time.NewTimer(grace)
			defer t.Stop()
			late = t.C
		case <-late:
			go func() {
				for range out {
				}
			}()
			return true
		}
	}
}
