package story

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/report"
)

func ev(seq uint64, t int64, node, kind, text string, data any) traces.Event {
	e := traces.Event{Seq: seq, T: t * 1e9, Node: node, Kind: kind, Text: text}
	if data != nil {
		b, _ := json.Marshal(data)
		e.Data = b
	}
	return e
}

func subRow(status, token string, gen int, worker string) map[string]any {
	r := map[string]any{"id": 7, "status": status, "lease_gen": gen}
	if token != "" {
		r["lease_token"], r["worker_id"] = token, worker
	}
	return r
}

func commit(seq uint64, t int64, before, after map[string]any, extra ...map[string]any) traces.Event {
	ch := []map[string]any{{"table": "submissions", "op": "update", "key": []any{7}, "before": before, "after": after}}
	ch = append(ch, extra...)
	return ev(seq, t, "db", "commit", "commit", map[string]any{"changes": ch})
}

// arbiterRun: submission 7 is claimed by w1 (gen 1), w1 is paused, the
// lease is reclaimed by w2 (gen 2), w1's stale result is accepted (#9).
func arbiterRun() []traces.Event {
	return []traces.Event{
		ev(1, 1, "w1", "call", "claim", map[string]any{"id": "c1", "client": "w1", "op": "claim"}),
		commit(2, 1, subRow("pending", "", 0, ""), subRow("judging", "t1", 1, "w")),
		ev(3, 1, "w1", "return", "200", map[string]any{"id": "c1", "code": 200, "sub": 7, "token": "t1", "gen": 1}),
		ev(4, 2, "w1", "fault", "@2.000s pause w1", map[string]any{"at": 2e9, "kind": "pause", "node": "w1"}),
		ev(5, 3, "w1", "call", "heartbeat", map[string]any{"id": "h1", "client": "w1", "op": "heartbeat", "sub": 7, "token": "t1", "gen": 1}),
		commit(6, 60, subRow("judging", "t1", 1, "w"), subRow("judging", "t2", 2, "w")),
		ev(7, 90, "", "fault", "@90.000s heal-all", map[string]any{"at": 90e9, "kind": "heal-all"}),
		ev(8, 90, "w1", "call", "submit", map[string]any{"id": "s1", "client": "w1", "op": "submit", "sub": 7, "token": "t1", "gen": 1, "verdict": "AC"}),
		commit(9, 91, subRow("judging", "t2", 2, "w"), subRow("AC", "t2", 2, "w"),
			map[string]any{"table": "submission_judgings", "op": "insert", "key": []any{1}, "after": map[string]any{"submission_id": 7, "verdict": "AC", "worker_id": "w", "lease_token": "t1", "lease_gen": 1}}),
		ev(10, 92, "w3", "call", "submit", map[string]any{"id": "s2", "client": "w3", "op": "submit", "sub": 8, "token": "t9", "gen": 1}),
		ev(11, 93, "arbiter", "send", "#5 arbiter->w1 POST /submit sub=7 token=t1", nil),
		ev(12, 93, "arbiter", "send", "#6 arbiter->w3 POST /submit sub=8 token=t9", nil),
	}
}

func TestSubmissionStory(t *testing.T) {
	evs := arbiterRun()
	st := Of("arbiter", evs, []uint64{9}, "")
	require.NotNil(t, st)
	assert.Equal(t, "submission 7", st.Key)
	var seqs []uint64
	for _, s := range st.Steps {
		seqs = append(seqs, s.Seq)
		assert.Equal(t, s.Seq == 9, s.Bad, "only the violating step is bad: %+v", s)
	}
	assert.Equal(t, []uint64{2, 3, 5, 6, 8, 9}, seqs, "the steps about submission 7, and only those")
	assert.Equal(t, "judging, token t2 gen 2, worker w", st.Steps[3].State)
	assert.Contains(t, st.Steps[1].What, "granted (token t1 gen 1)")
	assert.Contains(t, st.Steps[5].What, "history: AC by w under (token t1 gen 1)")
	assert.Equal(t, []uint64{11}, Mattered(evs, st), "the message carrying its token")
	assert.Nil(t, Of("arbiter", evs, []uint64{4}, "no submission named"), "no key: no story")
	assert.Equal(t, "submission 8", Of("arbiter", evs, nil, "PA5: submission 8 twice").Key, "the message names it when the events do not")
}

func TestTimeline(t *testing.T) {
	evs := arbiterRun()
	st := Of("arbiter", evs, []uint64{9}, "")
	faults := Faults(evs, []Fault{{At: 2e9, Kind: "pause", Node: "w1"}})
	assert.Equal(t, []uint64{4}, faults)
	w := Window(evs, faults, st, []uint64{9})
	assert.Equal(t, [2]int64{2e9 - 178e7, 91e9 + 178e7}, w, "from the pause to the violation, 2%% on each side")
	lines := Lines(evs, faults, st, "PA1 at-most-one-owner", "stale result accepted", 25)
	text := strings.Join(lines, "\n")
	order := []string{"fault    w1", "heal", "w1: submit (token t1 gen 1) verdict AC", "VIOLATES", "=> PA1"}
	at := -1
	for _, o := range order {
		i := strings.Index(text, o)
		require.Greater(t, i, at, "%q after the previous line in:\n%s", o, text)
		at = i
	}
	assert.Contains(t, lines[0], "not shown: 1 heartbeats")
	assert.NotContains(t, text, "#5 ", "the heartbeat is counted, not printed")
}

func TestTimelineFits(t *testing.T) {
	evs := []traces.Event{ev(1, 0, "n", "fault", "@0.000s crash n", map[string]any{"at": 0, "kind": "crash", "node": "n"})}
	for i := 2; i < 200; i++ {
		evs = append(evs, ev(uint64(i), int64(i), "db", "2pc", "note", map[string]any{"what": "vote", "gid": "g1"}))
	}
	st := Of("twopc", evs, []uint64{150}, "")
	require.NotNil(t, st)
	assert.Equal(t, "gid g1", st.Key)
	lines := Lines(evs, []uint64{1}, st, "PC1", "split", 25)
	assert.Len(t, lines, 25)
	text := strings.Join(lines, "\n")
	assert.Contains(t, text, "earlier steps not shown")
	assert.Contains(t, text, "fault", "the needed fault stays")
	assert.Contains(t, text, "VIOLATES", "the violating step stays")
	assert.Contains(t, text, fmt.Sprintf("#%-6d", 150))
}

// TestReviewFindings: the violating line stays however many needed faults
// crowd it; a string key matters only as a whole word.
func TestReviewFindings(t *testing.T) {
	var evs []traces.Event
	var faults []uint64
	for i := uint64(1); i <= 5; i++ {
		evs = append(evs, ev(i, int64(i), "n", "fault", "@1.000s crash n", map[string]any{"at": i * 1e9, "kind": "crash", "node": "n"}))
		faults = append(faults, i)
	}
	evs = append(evs, ev(6, 6, "db", "2pc", "vote", map[string]any{"what": "vote", "gid": "g1"}), ev(7, 7, "db", "2pc", "decide", map[string]any{"what": "decide", "gid": "g1"}))
	st := Of("twopc", evs, []uint64{7}, "")
	lines := Lines(evs, faults, st, "PC1", "split", 6)
	text := strings.Join(lines, "\n")
	assert.Contains(t, text, "VIOLATES", "the violating step is never dropped")
	assert.Equal(t, 5, strings.Count(text, " fault "), "nor a needed fault, even past the bound")
	assert.Contains(t, text, "1 earlier steps not shown", "only the ordinary step goes")

	sends := []traces.Event{ev(1, 1, "a", "send", "#1 a->b key=evt-12", nil), ev(2, 2, "a", "send", "#2 a->b key=evt-1 x", nil)}
	assert.Equal(t, []uint64{2}, Mattered(sends, &report.Story{Key: "key evt-1"}), "evt-12 is another key")
}
