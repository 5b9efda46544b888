package judge

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/traces/hist"
)

// on places the next event at time t exactly.
func (b *h) on(t int64) *h { b.t = t - s/10; return b }

// move commits one submission row's change.
func (b *h) move(before, after row) { b.commit(upd("submissions", before, after)) }

func (b *h) judge(worker string, sub int64, token, phase string) {
	b.add(worker, hist.KindJudge, hist.Judge{Worker: worker, Sub: sub, Token: token, Phase: phase})
}

func (b *h) fault(f map[string]any) { b.add("", "fault", f) }

// TestExtraLatencyMA1: a submission's extra latency is arrival to verdict,
// less the judging that produced the verdict (the last lease's, after a
// rejudge); a system_error has no such judging; an undecided submission is
// not measured; a judging whose end the trace does not show costs nothing.
func TestExtraLatencyMA1(t *testing.T) {
	b := &h{}
	b.on(1 * s).commit(ins("submissions", sub(101, "pending", "", 0, "")))
	b.on(2*s).move(sub(101, "pending", "", 0, ""), sub(101, "judging", "A", 1, "home-1"))
	b.on(3*s).judge("home-1", 101, "A", hist.JudgeStart)
	b.on(13*s).judge("home-1", 101, "A", hist.JudgeEnd) // 10 s of judging
	b.on(20*s).commit(ins("submission_judgings", judging(101, "A", 1, "home-1", "AC", 1)), upd("submissions", sub(101, "judging", "A", 1, "home-1"), sub(101, "AC", "A", 1, "home-1")))

	b.on(30 * s).commit(ins("submissions", sub(102, "pending", "", 0, "")))
	b.on(31*s).move(sub(102, "pending", "", 0, ""), sub(102, "judging", "B", 1, "home-2"))
	b.on(32*s).judge("home-2", 102, "B", hist.JudgeStart) // its end is not in the trace
	b.on(40*s).commit(ins("submission_judgings", judging(102, "B", 1, "home-2", "WA", 1)), upd("submissions", sub(102, "judging", "B", 1, "home-2"), sub(102, "WA", "B", 1, "home-2")))

	b.on(50 * s).commit(ins("submissions", sub(103, "pending", "", 0, "")))
	b.on(51*s).move(sub(103, "pending", "", 0, ""), sub(103, "judging", "C", 1, "home-1"))
	b.on(52*s).judge("home-1", 103, "C", hist.JudgeStart)
	b.on(57*s).judge("home-1", 103, "C", hist.JudgeEnd)
	b.on(70*s).move(sub(103, "judging", "C", 1, "home-1"), sub(103, "system_error", "", 1, ""))

	b.on(80 * s).commit(ins("submissions", sub(104, "pending", "", 0, ""))) // never decided

	b.on(90 * s).commit(ins("submissions", sub(105, "pending", "", 0, "")))
	b.on(91*s).move(sub(105, "pending", "", 0, ""), sub(105, "judging", "D", 1, "home-1"))
	b.on(92*s).judge("home-1", 105, "D", hist.JudgeStart)
	b.on(94*s).judge("home-1", 105, "D", hist.JudgeEnd) // 2 s
	b.on(95*s).commit(ins("submission_judgings", judging(105, "D", 1, "home-1", "AC", 1)), upd("submissions", sub(105, "judging", "D", 1, "home-1"), sub(105, "AC", "D", 1, "home-1")))
	b.on(100*s).move(sub(105, "AC", "D", 1, "home-1"), sub(105, "pending", "", 2, ""))
	b.on(101*s).move(sub(105, "pending", "", 2, ""), sub(105, "judging", "E", 2, "home-2"))
	b.on(102*s).judge("home-2", 105, "E", hist.JudgeStart)
	b.on(106*s).judge("home-2", 105, "E", hist.JudgeEnd) // 4 s
	b.on(110*s).commit(ins("submission_judgings", judging(105, "E", 2, "home-2", "WA", 2)), upd("submissions", sub(105, "judging", "E", 2, "home-2"), sub(105, "WA", "E", 2, "home-2")))

	m := Measure(b.run(t))
	assert.Equal(t, map[int64]time.Duration{
		101: 9 * time.Second,  // 20 - 1 - 10
		102: 10 * time.Second, // 40 - 30, no judging time known
		103: 20 * time.Second, // 70 - 50: a system_error's wait is all extra
		105: 6 * time.Second,  // 110 - 100 - 4: from its rejudge, less the deciding lease's judging
	}, m.ExtraLatency)
	id, d := m.MaxExtra()
	assert.Equal(t, int64(103), id)
	assert.Equal(t, 20*time.Second, d)
}

// TestMaxExtraNamesTheFirstOfTheLatest: on a tie the smallest submission id
// is named, so a report does not depend on map order.
func TestMaxExtraNamesTheFirstOfTheLatest(t *testing.T) {
	id, d := Metrics{ExtraLatency: map[int64]time.Duration{7: 5 * time.Second, 3: 5 * time.Second, 9: time.Second}}.MaxExtra()
	assert.Equal(t, int64(3), id)
	assert.Equal(t, 5*time.Second, d)
}

// TestBoundsAtTheirEdges: a metric exactly at its bound passes; one unit
// over fails.
func TestBoundsAtTheirEdges(t *testing.T) {
	at := Metrics{ExtraLatency: map[int64]time.Duration{101: 10 * time.Second}, OutageLoad: 14}
	for _, v := range (Bounds{ExtraLatency: 10 * time.Second, OutageLoad: 14}).Check(at) {
		assert.True(t, v.OK, "at the bound: %s", v)
	}
	over := Metrics{ExtraLatency: map[int64]time.Duration{101: 10*time.Second + 1}, Wasted: 1, WastedSubs: []int64{101}, FalseSystemErrors: 1, OutageLoad: 15}
	vs := (Bounds{ExtraLatency: 10 * time.Second, OutageLoad: 14}).Check(over)
	require.Len(t, vs, 2, "MA2 and MA3 are invariants: their bounds check nothing")
	for _, v := range vs {
		assert.False(t, v.OK, "one over the bound: %s", v.Property)
	}
	assert.Contains(t, vs[0].Message, "submission 101 got its verdict 10s late", "rounded to 100 ms")
	assert.Contains(t, vs[1].Message, "15 requests")
	assert.Empty(t, (Bounds{}).Check(over), "a zero bound checks nothing")
}

// TestWastedJudgingsMA2: a judging whose result was not accepted is
// wasted unless its worker crashed, or a network fault touched it, while it
// judged; an abandoned judging counts too; one that never ended is not a
// judging yet.
func TestWastedJudgingsMA2(t *testing.T) {
	b := &h{}
	judged := func(worker string, sub int64, token string, from, to int64) {
		b.on(from).judge(worker, sub, token, hist.JudgeStart)
		b.on(to).judge(worker, sub, token, hist.JudgeEnd)
	}
	// 101: healthy worker, result never accepted: wasted.
	judged("home-1", 101, "A", 10*s, 20*s)
	// 102: its worker crashed while it judged.
	b.on(10*s).judge("home-2", 102, "B", hist.JudgeStart)
	b.on(15*s).add("home-2", "crash", nil)
	b.on(16*s).add("home-2", "restart", nil)
	b.on(20*s).judge("home-2", 102, "B", hist.JudgeEnd)
	// 103: partitioned away from every arbiter until a heal at 12 s.
	b.on(5 * s).fault(map[string]any{"kind": "partition", "groups": [][]string{{"home-3"}, {"arbiter-1", "db", "home-1"}}})
	b.on(12 * s).fault(map[string]any{"kind": "heal"})
	judged("home-3", 103, "C", 10*s, 20*s)
	// 104: a cut of its link that ended before it started: wasted.
	b.on(30 * s).fault(map[string]any{"kind": "cut", "node": "home-4", "for": 5 * s})
	judged("home-4", 104, "D", 40*s, 50*s)
	// 105: a cut that ended at the very instant it started: not wasted.
	b.on(30 * s).fault(map[string]any{"kind": "cut", "node": "home-5", "for": 10 * s})
	judged("home-5", 105, "E", 40*s, 50*s)
	// 106: a stall lasts for + amount: into its judging.
	b.on(35 * s).fault(map[string]any{"kind": "stall", "node": "db", "peer": "home-6", "for": 2 * s, "amount": 4 * s})
	judged("home-6", 106, "F", 40*s, 50*s)
	// 115: a cut that began at the very instant it ended.
	judged("home-11", 115, "O", 40*s, 50*s)
	b.on(50 * s).fault(map[string]any{"kind": "cut", "node": "home-11", "for": 1 * s})
	// 107: a cut whose far end is the worker.
	b.on(61 * s).fault(map[string]any{"kind": "cut", "node": "db", "peer": "home-7", "for": 2 * s})
	judged("home-7", 107, "G", 60*s, 70*s)
	// 108: abandoned on a 410, worker healthy: wasted.
	b.on(60*s).judge("home-8", 108, "H", hist.JudgeStart)
	b.on(65*s).judge("home-8", 108, "H", hist.JudgeAbandon)
	// 109: a fault kind that is not a network fault (its clock jumped)
	// excuses nothing.
	b.on(80 * s).fault(map[string]any{"kind": "jump", "node": "home-9", "amount": 50 * s})
	judged("home-9", 109, "I", 90*s, 95*s)
	// 118: its links' datagrams delayed (up to 5 s, for 20 s from 220 s):
	// a link fault, as a stall is, until the last may arrive (245 s).
	b.on(220 * s).fault(map[string]any{"kind": "delay", "node": "home-14", "for": 20 * s, "amount": 5 * s})
	judged("home-14", 118, "R", 244*s, 250*s)
	// 110: a loss on every link (no node named) while it judged.
	b.on(100 * s).fault(map[string]any{"kind": "loss", "for": 20 * s})
	judged("home-1", 110, "J", 110*s, 115*s)
	// 111: accepted: not wasted.
	judged("home-2", 111, "K", 130*s, 135*s)
	b.on(136 * s).commit(ins("submission_judgings", judging(111, "K", 1, "home-2", "AC", 1)))
	// 112: never ended: not counted.
	b.on(140*s).judge("home-3", 112, "L", hist.JudgeStart)
	// 113: an open-ended cut (for 0) lasts until the next heal-all.
	b.on(150 * s).fault(map[string]any{"kind": "cut", "node": "home-4"})
	b.on(170 * s).fault(map[string]any{"kind": "heal-all"})
	judged("home-4", 113, "M", 165*s, 168*s)
	// 114: ...and not after it.
	judged("home-4", 114, "N", 171*s, 172*s)

	// 116: its worker crashed at the instant it ended; 117: its worker
	// came back at the instant it started.
	judged("home-12", 116, "P", 200*s, 210*s)
	b.on(210*s).add("home-12", "crash", nil)
	b.on(190*s).add("home-13", "crash", nil)
	b.on(200*s).add("home-13", "restart", nil)
	judged("home-13", 117, "Q", 200*s, 205*s)

	m := Measure(b.run(t))
	assert.Equal(t, []int64{101, 104, 108, 109, 114}, m.WastedSubs)
	assert.Equal(t, 5, m.Wasted)
	assert.Equal(t, 17, m.Judgings)
}

// TestFalseSystemErrorsMA3: a system_error is false unless max_attempts (3)
// judgings since the last rejudge lost their worker (it died, crashed, or
// a network fault cut it off); a judging cut short by a 410 is the
// arbiter's doing.
func TestFalseSystemErrorsMA3(t *testing.T) {
	b := &h{}
	at := int64(0)
	next := func() int64 { at += 10 * s; return at }
	// attempts leases sub three times, each judging ending as fate says,
	// and fails it to system_error.
	attempts := func(id int64, gen0 int64, fate func(worker, token string)) {
		prev := sub(id, "pending", "", gen0, "")
		for i := int64(1); i <= 3; i++ {
			tok := string(rune('A'+id%10)) + string(rune('0'+i+gen0))
			w := "home-1"
			cur := sub(id, "judging", tok, gen0+i, w)
			b.on(next()).move(prev, cur)
			b.on(next()).judge(w, id, tok, hist.JudgeStart)
			fate(w, tok)
			if i < 3 {
				prev = sub(id, "pending", "", gen0+i, "")
				b.on(next()).move(cur, prev)
			} else {
				b.on(next()).move(cur, sub(id, "system_error", "", gen0+i, ""))
			}
		}
	}
	died := func(string, string) {}
	// 203: judgings that ended, each with its worker crashing or cut off
	// meanwhile: genuine.
	b.on(next()).commit(ins("submissions", sub(203, "pending", "", 0, "")))
	n := 0
	attempts(203, 0, func(w, tok string) {
		n++
		if n == 2 {
			b.on(next()).fault(map[string]any{"kind": "cut", "node": w, "for": 1 * s})
		} else {
			b.on(next()).add(w, "crash", nil)
			b.on(next()).add(w, "restart", nil)
		}
		b.on(next()).judge(w, 203, tok, hist.JudgeEnd)
	})
	// 202: three judgings abandoned on a 410: false, though their worker
	// crashed before (in 203's judgings) and 201's die after.
	b.on(next()).commit(ins("submissions", sub(202, "pending", "", 0, "")))
	attempts(202, 0, func(w, tok string) { b.on(next()).judge(w, 202, tok, hist.JudgeAbandon) })
	// 201: three workers died: a true system_error.
	b.on(next()).commit(ins("submissions", sub(201, "pending", "", 0, "")))
	attempts(201, 0, died)
	// 204: three genuine failures, a rejudge, then one abandoned judging:
	// counted from the rejudge, false.
	b.on(next()).commit(ins("submissions", sub(204, "pending", "", 0, "")))
	attempts(204, 0, died)
	b.on(next()).move(sub(204, "system_error", "", 3, ""), sub(204, "pending", "", 4, ""))
	attempts(204, 4, func(w, tok string) { b.on(next()).judge(w, 204, tok, hist.JudgeAbandon) })
	// 205: two died, one ended healthy: false.
	b.on(next()).commit(ins("submissions", sub(205, "pending", "", 0, "")))
	n = 0
	attempts(205, 0, func(w, tok string) {
		if n++; n == 3 {
			b.on(next()).judge(w, 205, tok, hist.JudgeEnd)
		}
	})

	m := Measure(b.run(t))
	assert.Equal(t, 6, m.SystemErrors, "204 became system_error twice")
	assert.Equal(t, 3, m.FalseSystemErrors, "202, 204 and 205")
}

// TestStuckArbiterDetectionMA4: a stall or an arbiter's pause is detected
// by the first alert on it from its start to a threshold and a probe
// period after its end; one that lasted longer than the
// probe threshold plus a probe period without an alert is undetected; an
// alert is false unless an arbiter was stuck (up to a threshold and a
// period after) or an outage explains it.
func TestStuckArbiterDetectionMA4(t *testing.T) {
	alert := func(b *h, at int64, target string) {
		b.on(at).add("monitor", hist.KindAlert, hist.Alert{Monitor: "monitor", Target: target, Reason: "stuck"})
	}
	b := &h{}
	b.on(100 * s).fault(map[string]any{"kind": "command", "node": "arbiter-1", "point": "stall", "arg": "40s"})
	alert(b, 125*s, "arbiter-1") // detected after 25 s
	alert(b, 175*s, "arbiter-1") // 140 s + 30 s + 5 s: still explained
	b.on(200 * s).fault(map[string]any{"kind": "pause", "node": "arbiter-2"})
	b.on(260 * s).fault(map[string]any{"kind": "resume", "node": "arbiter-2"}) // 60 s, no alert: undetected
	b.on(300 * s).fault(map[string]any{"kind": "pause", "node": "arbiter-2"})
	b.on(335 * s).fault(map[string]any{"kind": "resume", "node": "arbiter-2"}) // 35 s: too short to expect one
	b.on(400 * s).fault(map[string]any{"kind": "pause", "node": "home-10"})
	b.on(500 * s).fault(map[string]any{"kind": "resume", "node": "home-10"}) // a worker: not an arbiter stuck
	b.on(420 * s).fault(map[string]any{"kind": "pause", "node": "home-1"})
	b.on(520 * s).fault(map[string]any{"kind": "resume", "node": "home-1"})
	alert(b, 600*s, "arbiter-1") // nothing explains it: false
	b.on(700*s).add("db", "crash", nil)
	b.on(710*s).add("db", "restart", nil)
	alert(b, 745*s, "arbiter-1") // 710 s + 35 s: the outage explains it
	b.on(800 * s).fault(map[string]any{"kind": "command", "node": "arbiter-1", "point": "stall", "arg": "soon"})
	alert(b, 900*s, "arbiter-1") // an unparsable stall is no episode: false
	b.on(940 * s).fault(map[string]any{"kind": "pause", "node": "home-2"})
	alert(b, 950*s, "arbiter-2")                                               // a worker's pause explains nothing: false
	b.on(1000 * s).fault(map[string]any{"kind": "pause", "node": "arbiter-1"}) // paused to the end
	alert(b, 1010*s, "arbiter-3")                                              // another arbiter, while arbiter-1 is frozen (its transaction may hold the rows arbiter-3 waits for): explained
	b.on(1050 * s).fault(map[string]any{"kind": "command", "node": "arbiter-4", "point": "stall", "arg": "10s"})
	alert(b, 1050*s, "arbiter-4") // at the instant it stalled
	b.on(1100 * s).fault(map[string]any{"kind": "command", "node": "arbiter-5", "point": "stall", "arg": "10s"})
	b.on(1200 * s).fault(map[string]any{"kind": "command", "node": "arbiter-5", "point": "stall", "arg": "60s"})
	alert(b, 1230*s, "arbiter-5") // the second stall's, 30 s in; not the first one's, 130 s after it began
	b.on(1400*s).add("db", "state", hist.State{What: "idle"})

	m := Measure(b.run(t))
	assert.Equal(t, []time.Duration{25 * time.Second, 0, 30 * time.Second}, m.DetectTimes)
	assert.Equal(t, 2, m.Undetected, "arbiter-2's long pause and arbiter-1's last one")
	assert.Equal(t, 3, m.FalseAlerts)
}

// TestFalseAlertsMA4: the source promises an accurate alert (000, scenario
// 8); an alert with nothing on the alerted arbiter's dispatch path to
// explain it fails the run. Each explanation alone, within the threshold
// and a probe period (35 s) before the alert, and each just outside it.
func TestFalseAlertsMA4(t *testing.T) {
	run := func(trouble func(b *h)) *Run {
		b := &h{}
		trouble(b)
		b.on(100*s).add("monitor", hist.KindAlert, hist.Alert{Monitor: "monitor", Target: "arbiter-1", Reason: "1 waiting, last dispatch round 31s ago"})
		b.on(300*s).add("db", "state", hist.State{What: "idle"})
		return b.run(t)
	}
	explained := map[string]func(b *h){
		"a stall of the arbiter": func(b *h) {
			b.on(70 * s).fault(map[string]any{"kind": "command", "node": "arbiter-1", "point": "stall", "arg": "60s"})
		},
		"the arbiter paused":     func(b *h) { b.on(65 * s).fault(map[string]any{"kind": "pause", "node": "arbiter-1"}) },
		"another arbiter frozen": func(b *h) { b.on(66 * s).fault(map[string]any{"kind": "pause", "node": "arbiter-2"}) },
		"the database crashed":   func(b *h) { b.on(60*s).add("db", "crash", nil); b.on(66*s).add("db", "restart", nil) },
		"a delay on the database's link": func(b *h) {
			b.on(50 * s).fault(map[string]any{"kind": "delay", "node": "db", "peer": "arbiter-1", "for": 20 * s})
		},
		"a stall on the arbiter's link": func(b *h) {
			b.on(70 * s).fault(map[string]any{"kind": "stall", "node": "arbiter-1", "peer": "db", "for": 5 * s})
		},
		"a loss on the monitor's link": func(b *h) {
			b.on(80 * s).fault(map[string]any{"kind": "loss", "node": "monitor", "peer": "arbiter-1", "for": 5 * s})
		},
		"a loss on every link": func(b *h) { b.on(80 * s).fault(map[string]any{"kind": "loss", "for": 5 * s}) },
		"all the database's links stalled": func(b *h) {
			b.on(80 * s).fault(map[string]any{"kind": "stall", "node": "db", "for": 5 * s})
		},
		"another arbiter's database link": func(b *h) {
			b.on(80 * s).fault(map[string]any{"kind": "stall", "node": "db", "peer": "arbiter-2", "for": 5 * s})
		},
		"all the monitor's links": func(b *h) {
			b.on(80 * s).fault(map[string]any{"kind": "delay", "node": "monitor", "for": 5 * s})
		},
		"a stall sent to the arbiter while it was frozen (it stalls from its thaw)": func(b *h) {
			b.on(1 * s).fault(map[string]any{"kind": "pause", "node": "arbiter-1"})
			b.on(5 * s).fault(map[string]any{"kind": "command", "node": "arbiter-1", "point": "stall", "arg": "30s"})
			b.on(60 * s).fault(map[string]any{"kind": "resume", "node": "arbiter-1"})
		},
		"a partition (an outage)": func(b *h) {
			b.on(80 * s).fault(map[string]any{"kind": "partition", "groups": [][]string{{"arbiter-1"}, {"db", "home-1"}}})
		},
		"the database paused (an outage)": func(b *h) {
			b.on(80 * s).fault(map[string]any{"kind": "pause", "node": "db"})
		},
	}
	for name, trouble := range explained {
		v := NoFalseAlerts(run(trouble))
		assert.True(t, v.OK, "%s: %s", name, v)
	}
	unexplained := map[string]func(b *h){
		"nothing at all":  func(b *h) {},
		"a worker paused": func(b *h) { b.on(80 * s).fault(map[string]any{"kind": "pause", "node": "home-1"}) },
		"a worker's link cut": func(b *h) {
			b.on(80 * s).fault(map[string]any{"kind": "cut", "node": "home-1", "peer": "arbiter-1", "for": 5 * s})
		},
		"a rejudge": func(b *h) {
			b.on(80 * s).fault(map[string]any{"kind": "command", "node": "arbiter-1", "point": "rejudge", "arg": "101"})
		},
		"the arbiter's clock jumped": func(b *h) { b.on(80 * s).fault(map[string]any{"kind": "jump", "node": "arbiter-1", "amount": 40 * s}) },
		"a stall that ended before": func(b *h) {
			b.on(20 * s).fault(map[string]any{"kind": "command", "node": "arbiter-1", "point": "stall", "arg": "10s"})
		},
		"a delay that ended 35 s before": func(b *h) {
			b.on(50 * s).fault(map[string]any{"kind": "delay", "node": "db", "peer": "arbiter-1", "for": 15*s - 1})
		},
		"the database back 35 s before": func(b *h) { b.on(30*s).add("db", "crash", nil); b.on(65*s-1).add("db", "restart", nil) },
		"all of a worker's links cut": func(b *h) {
			b.on(80 * s).fault(map[string]any{"kind": "cut", "node": "home-1", "for": 5 * s})
		},
		"a stall on a worker's link": func(b *h) {
			b.on(80 * s).fault(map[string]any{"kind": "stall", "node": "arbiter-1", "peer": "home-1", "for": 5 * s})
		},
	}
	for name, trouble := range unexplained {
		v := NoFalseAlerts(run(trouble))
		assert.False(t, v.OK, "%s", name)
		assert.Contains(t, v.Message, "the monitor alerted on arbiter-1 at 1m40s (1 waiting, last dispatch round 31s ago) although nothing held up its dispatch loop", name)
	}
}

// TestOutageLoadMA5: the most claims and submits one worker sent within a
// minute of an outage, after its first two backoff caps (60 s here);
// heartbeats do not count, nor an outage too short to have such a minute.
func TestOutageLoadMA5(t *testing.T) {
	calls := func(b *h, client, op string, ts ...int64) {
		for _, at := range ts {
			b.on(at).call(client+op+string(rune(at/s)), client, op, 0, "", 0, "")
		}
	}
	load := func(build func(b *h)) int {
		b := &h{}
		b.on(1000*s).add("db", "crash", nil)
		build(b)
		b.on(1300*s).add("db", "restart", nil)
		// a short outage: down 100 s, no minute after the warm-up
		b.on(2000*s).add("arbiter-1", "crash", nil)
		calls(b, "home-3", "claim", 2060*s, 2061*s, 2062*s, 2063*s, 2064*s, 2065*s, 2066*s, 2067*s, 2068*s, 2069*s, 2070*s, 2071*s)
		b.on(2100*s).add("arbiter-1", "restart", nil)
		return Measure(b.run(t)).OutageLoad
	}
	// Seven within [1060 s, 1120 s); the one at 1120 s is the next minute's.
	assert.Equal(t, 6, load(func(b *h) {
		calls(b, "home-1", "claim", 1059*s, 1060*s, 1070*s, 1080*s)
		calls(b, "home-1", "submit", 1090*s, 1100*s, 1110*s, 1120*s)
		calls(b, "home-2", "heartbeat", 1061*s, 1062*s, 1063*s, 1064*s, 1065*s, 1066*s, 1067*s, 1068*s)
	}))
	// From the first instant after the warm-up.
	assert.Equal(t, 4, load(func(b *h) { calls(b, "home-1", "claim", 1060*s, 1061*s, 1062*s, 1063*s) }))
	// A partition is an outage until its heal.
	b := &h{}
	b.on(10 * s).fault(map[string]any{"kind": "partition", "groups": [][]string{{"home-1"}, {"arbiter-1", "db"}}})
	calls(b, "home-1", "claim", 100*s, 101*s, 102*s)
	b.on(200 * s).fault(map[string]any{"kind": "heal"})
	calls(b, "home-1", "claim", 201*s, 202*s, 203*s, 204*s)
	assert.Equal(t, 3, Measure(b.run(t)).OutageLoad)
}

// TestOutageEndsAtTakeover: an arbiter's crash is an outage only until
// another arbiter is up (found by explore, seed 10702: a standby took over
// and the requests of its first minutes counted as outage retries).
func TestOutageEndsAtTakeover(t *testing.T) {
	load := func(takeover bool) int {
		b := &h{}
		b.on(0).add("arbiter-1", "start", nil)
		b.on(1000*s).add("arbiter-1", "crash", nil)
		if takeover {
			b.on(1100*s).add("arbiter-2", "start", nil)
		}
		for i := int64(0); i < 10; i++ {
			b.on((1160+i)*s).call(fmt.Sprintf("c%d", i), "home-1", "claim", 0, "", 0, "")
		}
		b.on(2000*s).add("arbiter-1", "restart", nil)
		return Measure(b.run(t)).OutageLoad
	}
	assert.Equal(t, 10, load(false), "no arbiter up: ten claims in a minute of the outage")
	assert.Equal(t, 0, load(true), "arbiter-2 is up from 1100 s: no outage then")
}

// TestOutageLoadRunsOfFailures: an answer for good ends a retry stream's
// run of failures (a claim's 200 or 204, a submit's 200 or 410), and the
// minute counts, per stream, the most requests of one run; a 503 or no
// answer leaves the run going, and one stream's answer does not end the
// other's.
func TestOutageLoadRunsOfFailures(t *testing.T) {
	load := func(answer func(b *h)) int {
		b := &h{}
		b.on(1000*s).add("db", "crash", nil)
		for i, at := range []int64{1060, 1061, 1062} {
			b.on(at*s).call(fmt.Sprintf("c%d", i), "home-1", "claim", 0, "", 0, "")
			b.on(at*s).call(fmt.Sprintf("u%d", i), "home-1", "submit", 101, "A", 1, "")
		}
		answer(b)
		for i, at := range []int64{1070, 1071, 1072, 1073} {
			b.on(at*s).call(fmt.Sprintf("c%d", i+3), "home-1", "claim", 0, "", 0, "")
			b.on(at*s).call(fmt.Sprintf("u%d", i+3), "home-1", "submit", 101, "A", 1, "")
		}
		b.on(1300*s).add("db", "restart", nil)
		return Measure(b.run(t)).OutageLoad
	}
	ret := func(id string, code int) func(b *h) {
		return func(b *h) { b.on(1065*s).ret(id, "home-1", code, 101, "A", 1) }
	}
	assert.Equal(t, 14, load(func(*h) {}), "no answers: one run each, 7 + 7")
	assert.Equal(t, 11, load(ret("c2", 200)), "a claim paired: its stream's runs are 3 and 4")
	assert.Equal(t, 11, load(ret("c2", 204)), "a claim with no work in its hold")
	assert.Equal(t, 14, load(ret("c2", 503)), "a 503 is a failure: the run goes on")
	assert.Equal(t, 11, load(ret("u2", 410)), "a stale submit is answered for good")
	assert.Equal(t, 11, load(ret("u2", 200)), "a submit recorded")
	assert.Equal(t, 14, load(ret("u2", 204)), "204 answers only a claim")
	assert.Equal(t, 8, load(func(b *h) { ret("c2", 200)(b); ret("u2", 200)(b) }), "both streams answered: 4 + 4")
}

// TestHeartbeatLoadMA5: MA5's heartbeats are counted per worker process
// and lease, in a minute of an outage from its start (no warm-up: the
// bound holds a whole ramp of the confirming heartbeat's retries), every
// try counted; a heartbeat outside the outage does not count, nor one for
// another lease; the bound fails the run past it.
func TestHeartbeatLoadMA5(t *testing.T) {
	b := &h{}
	b.on(1000*s).add("db", "crash", nil)
	beat := func(id, client string, sub int64, token string, ts ...int64) {
		for i, at := range ts {
			b.on(at*s).call(fmt.Sprintf("%s.%d", id, i), client, "heartbeat", sub, token, 1, "")
		}
	}
	beat("a", "home-1", 101, "A", 990, 1000, 1001, 1002, 1003, 1004, 1005, 1059, 1061) // 7 in [1000 s, 1060 s)
	beat("b", "home-1", 102, "B", 1010, 1011, 1012)                                    // another lease
	beat("c", "home-2", 101, "A", 1020, 1021)                                          // another process
	b.on(1300*s).add("db", "restart", nil)
	beat("d", "home-1", 101, "A", 1301, 1302, 1303, 1304, 1305, 1306, 1307, 1308, 1309) // after the outage (and its probe margin)
	m := Measure(b.run(t))
	assert.Equal(t, 7, m.HeartbeatLoad)
	assert.Equal(t, 0, m.OutageLoad, "heartbeats are not the claims' and submits' load")

	v := Bounds{OutageLoad: 14, HeartbeatLoad: 6}.Check(m)[0]
	assert.False(t, v.OK)
	assert.Equal(t, "a worker sent 7 heartbeats for one lease in one minute of an outage (bound 6)", v.Message)
	assert.True(t, Bounds{OutageLoad: 14, HeartbeatLoad: 7}.Check(m)[0].OK)
}

// TestExtraLatencyFromTheRejudge: a rejudged submission's extra latency
// counts from its rejudge, not from its first arrival (the time it had a
// verdict is not lateness; a review found MA1 counting it).
func TestExtraLatencyFromTheRejudge(t *testing.T) {
	b := happy()
	b.at(100 * s)
	b.move(sub(101, "AC", "A", 1, "home-1"), sub(101, "pending", "", 1, ""))
	b.move(sub(101, "pending", "", 1, ""), sub(101, "judging", "B", 2, "home-1"))
	b.decide(sub(101, "judging", "B", 2, "home-1"), sub(101, "WA", "B", 2, "home-1"), "B", 2, "WA", 2)
	extra := Measure(b.run(t)).ExtraLatency[101]
	assert.Less(t, extra, time.Second, "from the rejudge at 100 s")
	assert.Positive(t, extra)
}

// TestPausedDatabaseIsAnOutage: a paused database (its queries hang, the
// arbiter's answers time out) is an outage for MA5, as a crashed one is.
func TestPausedDatabaseIsAnOutage(t *testing.T) {
	b := &h{}
	b.on(1000 * s).fault(map[string]any{"kind": "pause", "node": "db"})
	for i, at := range []int64{1060, 1061, 1062, 1063, 1064} {
		b.on(at*s).call(fmt.Sprintf("c%d", i), "home-1", "claim", 0, "", 0, "")
	}
	b.on(1300 * s).fault(map[string]any{"kind": "resume", "node": "db"})
	assert.Equal(t, 5, Measure(b.run(t)).OutageLoad)
}
