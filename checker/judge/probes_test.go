package judge

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// text appends an event that carries only its text (a note about a fault,
// a state change, a reply as the trace renders it).
func (b *h) text(node, kind, text string) {
	b.t += s / 10
	b.evs = append(b.evs, traces.Event{Seq: uint64(len(b.evs) + 1), T: b.t, Node: node, Kind: kind, Text: text})
}

// TestProbes: each probe on a hand-made history that reaches it, and the
// near miss that does not.
func TestProbes(t *testing.T) {
	assert.Empty(t, Probes(happy().run(t)), "the happy history reaches no hard case")

	expired := func(crash bool) *h {
		b := happy()
		b.evs = b.evs[:7]
		b.on(10*s).judge("home-1", 101, "A", hist.JudgeStart)
		if crash {
			b.on(20*s).add("home-1", "crash", nil)
			b.on(21*s).add("home-1", "restart", nil)
		}
		b.on(30*s).move(sub(101, "judging", "A", 1, "home-1"), sub(101, "pending", "", 1, ""))
		b.on(50*s).judge("home-1", 101, "A", hist.JudgeEnd)
		return b
	}
	assert.True(t, Probes(expired(false).run(t))[ProbeLeaseExpiredWhileJudging])
	assert.False(t, Probes(expired(true).run(t))[ProbeLeaseExpiredWhileJudging], "its worker crashed meanwhile")
	b := happy()
	b.evs = b.evs[:7]
	b.on(10*s).judge("home-1", 101, "A", hist.JudgeStart)
	b.on(30*s).move(sub(101, "judging", "A", 1, "home-1"), sub(101, "pending", "", 1, ""))
	b.on(50*s).judge("home-1", 101, "A", hist.JudgeAbandon)
	assert.True(t, Probes(b.run(t))[ProbeLeaseExpiredWhileJudging], "abandoned after the reclaim")
	b = happy()
	b.on(10*s).judge("home-1", 101, "A", hist.JudgeStart)
	b.on(50*s).judge("home-1", 101, "A", hist.JudgeEnd)
	assert.False(t, Probes(b.run(t))[ProbeLeaseExpiredWhileJudging], "decided, not reclaimed")

	b = happy()
	b.call("s2", "home-1", "submit", 101, "A", 1, "")
	b.ret("s2", "home-1", 410, 101, "A", 0)
	assert.True(t, Probes(b.run(t))[ProbeStaleTokenRejected])

	b = happy()
	b.call("s2", "home-1", "submit", 101, "A", 1, "")
	b.ret("s2", "home-1", 200, 101, "A", 0)
	assert.True(t, Probes(b.run(t))[ProbeDuplicateSubmit200])
	b = happy()
	b.call("s2", "home-1", "submit", 101, "B", 1, "")
	b.ret("s2", "home-1", 200, 101, "B", 0)
	assert.False(t, Probes(b.run(t))[ProbeDuplicateSubmit200], "another token's submit is no duplicate")

	b = happy()
	b.text("", "fault", "crash point claim-after-commit on arbiter-1")
	assert.True(t, Probes(b.run(t))[ProbeCrashCommitReply])

	down := func(up bool) *h {
		b := happy()
		b.text("db", "state", "db-down")
		if up {
			b.text("db", "state", "db-up")
		}
		b.call("s9", "home-1", "submit", 101, "A", 1, "")
		b.ret("s9", "home-1", 503, 101, "A", 0)
		b.evs[len(b.evs)-1].Text = "s9 submit -> 503"
		return b
	}
	assert.True(t, Probes(down(false).run(t))[ProbeDBDownWhileRetrying])
	assert.False(t, Probes(down(true).run(t))[ProbeDBDownWhileRetrying], "the 503 came after the database was back")

	two := func(gap int64, second string) *h {
		b := &h{}
		b.commit(ins("submissions", sub(101, "pending", "", 0, "")), ins("submissions", sub(102, "pending", "", 0, "")))
		b.on(10*s).move(sub(101, "pending", "", 0, ""), sub(101, "judging", "arbiter-1.1", 1, "home-1"))
		b.on(10*s+gap).move(sub(102, "pending", "", 0, ""), sub(102, "judging", second, 1, "home-2"))
		return b
	}
	assert.True(t, Probes(two(10*s-1, "arbiter-2.1").run(t))[ProbeTwoArbitersDispatch])
	assert.False(t, Probes(two(10*s, "arbiter-2.1").run(t))[ProbeTwoArbitersDispatch], "10 s apart")
	assert.False(t, Probes(two(1*s, "arbiter-1.2").run(t))[ProbeTwoArbitersDispatch], "one arbiter")
}
