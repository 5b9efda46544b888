package clock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestPerfectClock(t *testing.T) {
	var c Clock
	assert.Equal(t, Time(5*time.Second), c.Wall(Time(5*time.Second)))
	assert.Equal(t, time.Second, c.Elapse(time.Second))
}

func TestJumpMovesWallNotMono(t *testing.T) {
	var c Clock
	c.Jump(-30 * time.Second)
	at := Time(100 * time.Second)
	assert.Equal(t, Time(70*time.Second), c.Wall(at), "wall clock jumped back 30s")
	assert.Equal(t, at, c.Mono(at), "monotonic clock ignores jumps")
}

func TestDriftAccumulates(t *testing.T) {
	var c Clock
	c.SetDrift(Time(10*time.Second), 1000) // +1ms per second from t=10s
	assert.Equal(t, Time(10*time.Second), c.Wall(Time(10*time.Second)))
	assert.Equal(t, Time(20*time.Second+10*time.Millisecond), c.Wall(Time(20*time.Second)))
	c.SetDrift(Time(20*time.Second), 0)
	assert.Equal(t, Time(30*time.Second+10*time.Millisecond), c.Wall(Time(30*time.Second)), "drift stopped, offset kept")
	c.SetDrift(Time(30*time.Second), 500_000)
	assert.Less(t, c.Elapse(time.Second), time.Second, "a fast clock fires timers sooner")
}

func TestTimeString(t *testing.T) {
	assert.Equal(t, "75.000s", Time(75*time.Second).String())
	assert.Equal(t, "-1.500s", Time(-1500*time.Millisecond).String())
	assert.Error(t, ValidDrift(-500_000))
	assert.NoError(t, ValidDrift(100))
}
