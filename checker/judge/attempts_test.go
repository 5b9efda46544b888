package judge

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// PA9: at most max_attempts (3 here) leases between rejudges, and the
// last one's reclaim ends in system_error.

// leases gives submission 101 n leases from generation gen0 on (tokens
// named from tag), each but the last reclaimed to pending by the sweep;
// the last ends as end says: "pending", "system_error", or "" (still
// judging). Each lease is confirmed by a heartbeat (the attempt counts
// then, "先确认、再算数") and heartbeated once more (a row rewrite that is
// no new attempt).
func (b *h) leases(gen0 int64, n int, tag string, end string) {
	prev := sub(101, "pending", "", gen0, "")
	for i := 1; i <= n; i++ {
		g := gen0 + int64(i)
		tok := tag + string(rune('0'+i))
		granted := sub(101, "judging", tok, g, "home-1")
		b.move(prev, granted)
		cur := confirmed(granted)
		b.move(granted, cur) // the confirming heartbeat
		b.move(cur, cur)     // another heartbeat
		switch {
		case i < n:
			prev = sub(101, "pending", "", g, "")
			b.move(cur, prev)
		case end != "":
			b.move(cur, sub(101, end, "", g, ""))
		}
	}
}

// confirmed is a lease row after its first heartbeat.
func confirmed(r row) row {
	c := row{}
	for k, v := range r {
		c[k] = v
	}
	c["lease_confirmed"] = true
	return c
}

func inserted() *h {
	b := &h{}
	b.commit(ins("submissions", sub(101, "pending", "", 0, "")))
	return b
}

func TestAttemptCapMustPassPA9(t *testing.T) {
	b := inserted()
	b.leases(0, 3, "A", "system_error")
	assert.True(t, verdictOf(t, b.run(t), PA9).OK, "three leases, the third's reclaim ends in system_error")

	// A rejudge gives three attempts again.
	b.move(sub(101, "system_error", "", 3, ""), sub(101, "pending", "", 4, ""))
	b.leases(4, 3, "B", "system_error")
	assert.True(t, verdictOf(t, b.run(t), PA9).OK, "%s", verdictOf(t, b.run(t), PA9))

	// Two leases, then a verdict; a rejudge; a legacy worker's claim and
	// verdict.
	b = inserted()
	b.leases(0, 2, "A", "")
	b.move(sub(101, "judging", "A2", 2, "home-1"), sub(101, "AC", "A2", 2, "home-1"))
	b.move(sub(101, "AC", "A2", 2, "home-1"), sub(101, "pending", "", 3, ""))
	b.move(sub(101, "pending", "", 3, ""), sub(101, "judging", "", 3, "home-2"))
	b.move(sub(101, "judging", "", 3, "home-2"), sub(101, "WA", "", 3, "home-2"))
	assert.True(t, verdictOf(t, b.run(t), PA9).OK)

	// max_attempts 1: the first lease's reclaim is the last.
	b = inserted()
	b.leases(0, 1, "A", "system_error")
	assert.True(t, verdictOf(t, b.runWith(t, `"max_attempts":1`), PA9).OK)
}

func TestAttemptCapMustFailPA9(t *testing.T) {
	// The third lease reclaimed back to pending.
	b := inserted()
	b.leases(0, 3, "A", "pending")
	v := verdictOf(t, b.run(t), PA9)
	assert.False(t, v.OK)
	assert.Equal(t, "submission 101: its lease A3, attempt 3 of max_attempts 3, was reclaimed back to pending instead of to system_error", v.Message)
	assert.Equal(t, []uint64{b.evs[len(b.evs)-3].Seq, b.evs[len(b.evs)-1].Seq}, v.Events, "the third lease's confirmation and its reclaim")

	// A fourth lease after it: caught at the reclaim already.
	b = inserted()
	b.leases(0, 4, "A", "system_error")
	assert.Contains(t, verdictOf(t, b.run(t), PA9).Message, "lease A3, attempt 3 of max_attempts 3, was reclaimed back to pending")

	// A fourth lease handed over without the row going back to pending.
	b = inserted()
	b.leases(0, 3, "A", "")
	b.move(confirmed(sub(101, "judging", "A3", 3, "home-1")), sub(101, "judging", "A4", 4, "home-2"))
	v = verdictOf(t, b.run(t), PA9)
	assert.Equal(t, "submission 101: a lease A4 (gen 4) granted after its 3 attempts since the last rejudge; max_attempts is 3", v.Message)

	// A legacy worker's claim is an attempt: two leases, then a legacy
	// claim that goes back to pending.
	b = inserted()
	b.leases(0, 2, "A", "pending")
	b.move(sub(101, "pending", "", 2, ""), sub(101, "judging", "", 2, "home-2"))
	b.move(sub(101, "judging", "", 2, "home-2"), sub(101, "pending", "", 2, ""))
	v = verdictOf(t, b.run(t), PA9)
	assert.Equal(t, "submission 101: its lease (a legacy claim, no token), attempt 3 of max_attempts 3, was reclaimed back to pending instead of to system_error", v.Message)

	// The count goes on across reclaims: two leases, then a third
	// reclaimed to pending.
	b = inserted()
	b.leases(0, 2, "A", "pending")
	b.leases(2, 1, "B", "pending")
	assert.False(t, verdictOf(t, b.run(t), PA9).OK)

	// max_attempts 1: the first lease's reclaim to pending.
	b = inserted()
	b.leases(0, 1, "A", "pending")
	assert.False(t, verdictOf(t, b.runWith(t, `"max_attempts":1`), PA9).OK)

	// A row first seen with attempts made (its insert not in the log).
	b = &h{}
	b.commit(upd("submissions", row{"id": int64(101), "status": "pending", "lease_gen": int64(2), "judge_attempts": int64(2)}, sub(101, "pending", "", 2, "")))
	b.leases(2, 2, "C", "system_error")
	v = verdictOf(t, b.run(t), PA9)
	assert.Equal(t, "submission 101: its lease C1, attempt 3 of max_attempts 3, was reclaimed back to pending instead of to system_error", v.Message)
}

// TestAttemptCapFromTheFirstGrant: with the attempts made already past the
// cap, the first lease seen is reported alone (no earlier attempt event).
func TestAttemptCapFromTheFirstGrant(t *testing.T) {
	b := &h{}
	b.commit(ins("submissions", sub(101, "pending", "", 3, "")))
	b.leases(3, 1, "D", "system_error")
	v := verdictOf(t, b.run(t), PA9)
	assert.Equal(t, "submission 101: a lease D1 (gen 4) granted after its 3 attempts since the last rejudge; max_attempts is 3", v.Message)
	assert.Equal(t, []uint64{2}, v.Events)
}

// TestAttemptCapCountsConfirmedLeases: leases nobody confirmed (their claim's
// reply lost, their worker gone) spend no attempt; under attempts-at-grant
// every grant does.
func TestAttemptCapCountsConfirmedLeases(t *testing.T) {
	b := inserted()
	prev := sub(101, "pending", "", 0, "")
	for i := 1; i <= 5; i++ { // five orphan leases, each reclaimed
		g := int64(i)
		cur := sub(101, "judging", "O"+string(rune('0'+i)), g, "home-1")
		b.move(prev, cur)
		prev = sub(101, "pending", "", g, "")
		b.move(cur, prev)
	}
	assert.True(t, verdictOf(t, b.run(t), PA9).OK, "unconfirmed leases are no attempts")
	v := verdictOf(t, b.runWith(t, `"knobs":["attempts-at-grant"]`), PA9)
	assert.False(t, v.OK, "under attempts-at-grant the third orphan's reclaim to pending breaks the cap")
	assert.Contains(t, v.Message, "attempt 3 of max_attempts 3, was reclaimed back to pending")
}
