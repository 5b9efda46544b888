package judge

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fencesim/fencesim/clock"
)

const sec = clock.Time(time.Second)

// TestUnpairedCountsFromTheWait: the source's alert, "有可领的提交、有 worker
// 挂着请求在等,却超过 30 秒没配上对" (000, scenario 8), counts from the
// latest of the oldest waiting worker's first claim, the first pick that
// found work, and the last pairing. Before, it counted from the last
// pairing alone: moderate seed 205 alerted 12 ms after a claim arrived.
func TestUnpairedCountsFromTheWait(t *testing.T) {
	arb := func() *Arbiter {
		return &Arbiter{leader: true, waitSince: map[string]clock.Time{}, leftAt: map[string]clock.Time{}}
	}
	wait := func(a *Arbiter, worker string, since clock.Time) {
		w := &waitClaim{worker: worker}
		a.waiting = append(a.waiting, w)
		a.waitSince[w.key()] = since
	}
	// Seed 205: nothing paired for 300 s, work claimable since a pick at
	// 335 s, the claim came at 334.99 s: 10 ms, not 35 s.
	a := arb()
	a.lastPair, a.lastRound = 0, 335*sec
	a.claimable, a.claimableAt = true, 335*sec
	wait(a, "home-1", 335*sec-10*clock.Time(time.Millisecond))
	pr := a.probeAt(335*sec + 10*clock.Time(time.Millisecond))
	assert.Equal(t, 10*time.Millisecond, pr.Unpaired)
	assert.Empty(t, stuck(pr, 30*time.Second))

	// A worker waiting since 100 s (claims hung again after each "no
	// work"), work claimable since 110 s, last pairing at 90 s: at 141 s
	// it has waited 31 s with work claimable and nothing paired.
	a = arb()
	a.lastPair, a.lastRound = 90*sec, 140*sec
	a.claimable, a.claimableAt = true, 110*sec
	wait(a, "home-1", 100*sec)
	wait(a, "home-2", 130*sec)
	pr = a.probeAt(141 * sec)
	assert.Equal(t, 31*time.Second, pr.Unpaired)
	assert.Equal(t, "2 waiting, work claimable, nothing paired for 31s", stuck(pr, 30*time.Second))
	// ... from the last pairing if later,
	a.lastPair = 120 * sec
	assert.Equal(t, 21*time.Second, a.probeAt(141*sec).Unpaired)
	// ... from the oldest wait if later,
	a.lastPair, a.waitSince["home-1/"] = 90*sec, 125*sec
	assert.Equal(t, 16*time.Second, a.probeAt(141*sec).Unpaired)
	// ... and not at all with nothing claimable, or nobody waiting.
	a.claimable = false
	assert.Zero(t, a.probeAt(141*sec).Unpaired)
	a.claimable, a.waiting = true, nil
	assert.Zero(t, a.probeAt(141*sec).Unpaired)

	// The dispatch loop's heartbeat: a claim waiting, no round for 31 s.
	assert.Equal(t, "1 waiting, last dispatch round 31s ago", stuck(ProbeInfo{Leader: true, Waiting: 1, RoundAge: 31 * time.Second}, 30*time.Second))
	assert.Empty(t, stuck(ProbeInfo{Leader: true, Waiting: 0, RoundAge: 31 * time.Second}, 30*time.Second), "nobody waiting")
	assert.Empty(t, stuck(ProbeInfo{Leader: false, Waiting: 3, RoundAge: time.Hour, Unpaired: time.Hour}, 30*time.Second), "a follower dispatches nothing")
	assert.Empty(t, stuck(ProbeInfo{Leader: true, Waiting: 1, RoundAge: 30 * time.Second, Unpaired: 30 * time.Second}, 30*time.Second), "at the threshold")
}
