package sim

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/traces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// drainPool ends every parked coroutine: a test that counts goroutines or
// wants fresh coroutines starts from an empty pool.
func drainPool() {
	for c := coros.get(); c != nil; c = coros.get() {
		c.stop()
	}
}

// crashingWorld runs a node with a ticking process and a main process
// blocked forever, crashed at 2.5 s (both unwound inside their functions)
// and restarted at 3 s (its processes spawned on pooled coroutines), and
// returns the texts of its events.
func crashingWorld(t *testing.T) []string {
	t.Helper()
	mem := &traces.Memory{}
	w := New(Config{Entropy: NewPCG(7), Recorder: mem, Schedule: Schedule{
		{At: clock.Time(2500 * time.Millisecond), Kind: Crash, Node: "n"},
		{At: clock.Time(3 * time.Second), Kind: Restart, Node: "n"},
	}, Limits: Limits{MaxTime: clock.Time(6 * time.Second)}})
	w.Add("n", func(string, *Disk) Node {
		return Program(func(p *Proc) {
			p.Go("ticker", func(p *Proc) {
				for i := 0; ; i++ {
					p.Sleep(time.Second, fmt.Sprintf("tick %d", i))
					p.Go("short", func(p *Proc) { p.Sleep(time.Millisecond, "short") })
				}
			})
			var q Queue[int]
			_, _ = q.Get(p, 0, "forever")
		})
	})
	require.NoError(t, w.Run())
	w.Close()
	var out []string
	for i := range mem.Events {
		out = append(out, fmt.Sprintf("%d %s %s %s", mem.Events[i].T, mem.Events[i].Node, mem.Events[i].Kind, mem.Events[i].Desc()))
	}
	return out
}

// TestPooledCoroutinesChangeNoRun: a world run on fresh coroutines, on
// coroutines parked by the same world's run, and again on fresh ones
// records the same events; a parked coroutine keeps nothing of its world.
func TestPooledCoroutinesChangeNoRun(t *testing.T) {
	drainPool()
	fresh := crashingWorld(t)
	require.NotEmpty(t, coros.parked, "the closed world parked its coroutines")
	for _, c := range coros.parked {
		assert.True(t, c.h == nil && c.p == nil && c.fn == nil && !c.busy, "a parked coroutine holds no host, process or function")
		assert.False(t, c.ended, "a parked coroutine has not ended")
	}
	pooled := crashingWorld(t)
	assert.Equal(t, fresh, pooled, "the same run on pooled coroutines")
	drainPool()
	assert.Equal(t, fresh, crashingWorld(t), "and on fresh ones again")
}

// TestClosedWorldsKeepOnlyThePool: closed worlds leave no goroutine beyond
// the pool's parked coroutines, and the pool stays within its bound.
func TestClosedWorldsKeepOnlyThePool(t *testing.T) {
	drainPool()
	before := runtime.NumGoroutine()
	for range 50 {
		crashingWorld(t)
	}
	runtime.GC()
	assert.LessOrEqual(t, len(coros.parked), maxParked)
	assert.LessOrEqual(t, runtime.NumGoroutine(), before+len(coros.parked)+2)
	drainPool()
	runtime.GC()
	assert.LessOrEqual(t, runtime.NumGoroutine(), before+2, "a drained pool leaves nothing")
}

// TestAbandonNeverStartsAProcess: a process spawned but not yet run when
// its node crashes never runs, even though its coroutine goes back to the
// pool and runs other processes later.
func TestAbandonNeverStartsAProcess(t *testing.T) {
	ran := false
	w := New(Config{Entropy: NewPCG(1), Limits: Limits{MaxTime: clock.Time(time.Second)}})
	w.Add("n", func(string, *Disk) Node {
		return Program(func(p *Proc) {
			p.Go("late", func(*Proc) { ran = true })
			p.Die("before late runs", 0)
		})
	})
	require.NoError(t, w.Run())
	w.Close()
	assert.False(t, ran, "the spawned process never ran")
	crashingWorld(t) // its coroutine serves another world
	assert.False(t, ran)
}

// TestPanickedCoroutineIsNotParked: a process's real panic (a model's bug)
// ends its coroutine and leaves the world; closing that world afterwards
// must not park the ended coroutine, or the next world's process on it
// would never run.
func TestPanickedCoroutineIsNotParked(t *testing.T) {
	drainPool()
	func() {
		w := New(Config{Entropy: NewPCG(1), Limits: Limits{MaxTime: clock.Time(time.Minute)}})
		w.Add("n", func(string, *Disk) Node {
			return Program(func(p *Proc) {
				p.Sleep(time.Second, "before the bug")
				panic("a model's bug")
			})
		})
		defer w.Close()
		assert.PanicsWithValue(t, "a model's bug", func() { _ = w.Run() })
	}()
	for _, c := range coros.parked {
		assert.False(t, c.ended, "no ended coroutine in the pool")
	}
	ran := false
	w := New(Config{Entropy: NewPCG(1), Limits: Limits{MaxTime: clock.Time(time.Second)}})
	w.Add("n", func(string, *Disk) Node { return Program(func(*Proc) { ran = true }) })
	require.NoError(t, w.Run())
	w.Close()
	assert.True(t, ran, "the next world's process runs")
}

// TestSpawnWhileUnwindingIsParked: a deferred call that spawns while its
// process unwinds at Close leaves no process, and no coroutine, behind.
func TestSpawnWhileUnwindingIsParked(t *testing.T) {
	drainPool()
	before := runtime.NumGoroutine()
	var h *host
	lateRan := false
	w := New(Config{Entropy: NewPCG(1), Limits: Limits{MaxTime: clock.Time(time.Second)}})
	w.Add("n", func(string, *Disk) Node {
		n := Program(func(p *Proc) {
			defer p.Go("late", func(*Proc) { lateRan = true })
			var q Queue[int]
			_, _ = q.Get(p, 0, "forever")
		})
		h = n.(*host)
		return n
	})
	require.NoError(t, w.Run())
	w.Close()
	assert.Empty(t, h.procs, "the process spawned while unwinding was parked too")
	assert.Empty(t, h.idle)
	assert.False(t, lateRan, "and never ran")
	drainPool()
	runtime.GC()
	assert.LessOrEqual(t, runtime.NumGoroutine(), before+2, "no coroutine left behind")
}
