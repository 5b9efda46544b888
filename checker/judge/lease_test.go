package judge

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// Histories at the edges of the lease specification (PA1's oracle view,
// PA3's client view).

// claimed: 101 arrives and home-1 holds lease A (gen 1), heartbeated.
func claimed() *h {
	b := happy()
	b.evs = b.evs[:6]
	return b
}

func linearizable(t *testing.T, b *h, view View) bool {
	t.Helper()
	v, _ := Linearizable(b.run(t), view)
	return v.OK
}

// TestRefusalVoidsForGood: a 410 voids a token for good: a later 200 for
// it is a second truth, even when the refused token was the current one,
// and even after another token was refused too.
func TestRefusalVoidsForGood(t *testing.T) {
	b := claimed()
	b.call("h2", "home-1", "heartbeat", 101, "A", 0, "")
	b.ret("h2", "home-1", 410, 101, "A", 0)
	b.call("h3", "home-1", "heartbeat", 101, "A", 0, "")
	b.ret("h3", "home-1", 200, 101, "A", 0)
	assert.False(t, linearizable(t, b, ClientView), "A refused, then renewed")

	b = claimed()
	b.call("h2", "home-1", "heartbeat", 101, "A", 0, "")
	b.ret("h2", "home-1", 410, 101, "A", 0)
	b.call("h3", "home-2", "heartbeat", 101, "B", 0, "")
	b.ret("h3", "home-2", 410, 101, "B", 0)
	b.call("s2", "home-1", "submit", 101, "A", 1, "")
	b.ret("s2", "home-1", 200, 101, "A", 0)
	assert.False(t, linearizable(t, b, ClientView), "A refused, B refused, then A's result accepted")
}

// TestOneTokenPerGeneration: two claims answered with different tokens of
// one generation are two owners.
func TestOneTokenPerGeneration(t *testing.T) {
	b := claimed()
	b.call("c2", "home-2", "claim", 0, "", 0, "q1")
	b.ret("c2", "home-2", 200, 101, "B", 1)
	assert.False(t, linearizable(t, b, ClientView))
	b = claimed()
	b.call("c1b", "home-1", "claim", 0, "", 0, "r1")
	b.ret("c1b", "home-1", 200, 101, "A", 1)
	assert.True(t, linearizable(t, b, ClientView), "the same grant announced again")
}

// TestReadNotFound: a 404 is what a read sees before anything happened to
// the row, never after; a read of the first state shows it.
func TestReadNotFound(t *testing.T) {
	b := &h{}
	b.read("r0", 101, 404, "", 0)
	b.commit(ins("submissions", sub(101, "pending", "", 0, "")))
	b.read("r1", 101, 200, "pending", 0)
	assert.True(t, linearizable(t, b, OracleView))
	b = claimed()
	b.read("r1", 101, 404, "", 0)
	assert.False(t, linearizable(t, b, OracleView), "not found while judging")
	b = claimed()
	b.read("r1", 101, 200, "pending", 0)
	assert.False(t, linearizable(t, b, OracleView), "pending while judging")
}

// TestLostSubmitReply: a submit whose reply was lost may have decided the
// submission; a heartbeat then refused, and the retried submit answered
// 200 as the duplicate it is, are linearizable.
func TestLostSubmitReply(t *testing.T) {
	b := claimed()
	b.call("s1", "home-1", "submit", 101, "A", 1, "")
	b.call("h2", "home-1", "heartbeat", 101, "A", 0, "")
	b.ret("h2", "home-1", 410, 101, "A", 0)
	b.call("s2", "home-1", "submit", 101, "A", 1, "")
	b.ret("s2", "home-1", 200, 101, "A", 0)
	assert.True(t, linearizable(t, b, ClientView))
}

// TestOracleSettlesAtTheAttemptsEdges: in the oracle's view, an attempt
// answered 503 applied its result when the commit that recorded it falls
// within the attempt, its edges included; then a heartbeat's 200 for the
// decided lease is a second truth, and a read sees the verdict.
func TestOracleSettlesAtTheAttemptsEdges(t *testing.T) {
	for _, edge := range []string{"call", "return"} {
		b := claimed()
		b.add("home-1", hist.KindCall, hist.Call{ID: "s1", Client: "home-1", Op: "submit", Sub: 101, Token: "A", Gen: 1, Verdict: "AC"})
		if edge == "call" {
			b.t -= s / 10 // the commit at the instant of the call
		}
		b.commit(ins("submission_judgings", judging(101, "A", 1, "home-1", "AC", 1)), upd("submissions", sub(101, "judging", "A", 1, "home-1"), sub(101, "AC", "A", 1, "home-1")))
		if edge == "return" {
			b.t -= s / 10 // the 503 at the instant of the commit
		}
		b.ret("s1", "home-1", 503, 101, "A", 0)
		good := *b
		good.evs = append([]traces.Event(nil), b.evs...)
		good.read("r1", 101, 200, "AC", 1)
		assert.True(t, linearizable(t, &good, OracleView), "commit at the attempt's %s: applied", edge)
		b.call("h2", "home-1", "heartbeat", 101, "A", 0, "")
		b.ret("h2", "home-1", 200, 101, "A", 0)
		assert.False(t, linearizable(t, b, OracleView), "commit at the attempt's %s: a heartbeat after the verdict", edge)
		assert.True(t, linearizable(t, b, ClientView), "the client cannot tell")
	}
}

// TestViewsNameTheirProperty: the oracle view's verdict is PA1's, the
// client view's PA3's.
func TestViewsNameTheirProperty(t *testing.T) {
	r := happy().run(t)
	o, _ := Linearizable(r, OracleView)
	c, _ := Linearizable(r, ClientView)
	assert.Equal(t, PA1+" (porcupine, oracle view)", o.Property)
	assert.Equal(t, PA3, c.Property)
	res := Check(r)
	require.True(t, res.OK())
	assert.Equal(t, len(Invariants)+2, len(res.Verdicts))
}

// TestSetsStaySorted: add keeps a set sorted and without duplicates,
// whatever the order items come in.
func TestSetsStaySorted(t *testing.T) {
	set := ""
	for _, x := range []string{"m", "c", "x", "", "a", "m", "c=1", "z", "b"} {
		set = add(set, x)
	}
	assert.Equal(t, "|a|b|c|c=1|m|x|z|", set)
	assert.True(t, has(set, "c=1"))
	assert.False(t, has(set, "c=2"))
	assert.Equal(t, "", add("", ""))
}

// TestUnansweredRejudgesSettledOnce: found in the drawn world (seed
// 8094): two rejudges whose replies were lost while the database was
// down, then a third answered 200, and one commit that left AC. The
// commit is the third's; the two others had no effect. Each commit
// settles one rejudge only (each raises lease_gen), and an unanswered
// rejudge with a commit of its own applied.
func TestUnansweredRejudgesSettledOnce(t *testing.T) {
	rejudges := func(lost int, answered bool, commits int) *h {
		b := happy() // 101 is AC in generation 1
		for i := 0; i < lost; i++ {
			b.call(fmt.Sprintf("j%d", i), "operator", "rejudge", 101, "", 0, "")
		}
		if answered {
			b.call("jz", "operator", "rejudge", 101, "", 0, "")
		}
		gen := int64(1)
		for i := 0; i < commits; i++ {
			b.move(sub(101, "AC", "A", gen, "home-1"), sub(101, "pending", "", gen+1, ""))
			gen++
			if i < commits-1 { // decided again (by a legacy worker), to be rejudged again
				b.move(sub(101, "pending", "", gen, ""), sub(101, "judging", "", gen, "home-2"))
				b.move(sub(101, "judging", "", gen, "home-2"), sub(101, "AC", "A", gen, "home-1"))
			}
		}
		if answered {
			b.ret("jz", "operator", 200, 101, "", 0)
		}
		b.read("r1", 101, 200, "pending", gen)
		return b
	}
	for _, c := range []struct {
		lost     int
		answered bool
		commits  int
	}{{2, true, 1}, {1, false, 1}, {2, false, 1}, {2, false, 2}, {1, false, 0}} {
		b := rejudges(c.lost, c.answered, c.commits)
		if c.commits == 0 {
			b.evs = b.evs[:len(b.evs)-2]
			b.read("r1", 101, 200, "AC", 1)
		}
		assert.True(t, linearizable(t, b, OracleView), "%+v", c)
	}
	// Two commits, one rejudge: one of them is nobody's.
	b := rejudges(1, false, 2)
	assert.False(t, linearizable(t, b, OracleView), "two rejudges' worth of commits for one rejudge")
}
