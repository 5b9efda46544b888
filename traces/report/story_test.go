package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/report"
)

// storied is the failing register run with the parts a minimized failure
// carries: the story of write n (its put, the crash of the replica, the
// commit that breaks durability), the needed faults (backup-1's pause and
// backup-2's crash), the window from the first of them to the violation,
// the messages that mattered, and the violation's explanation and links.
func storied(t testing.TB) report.Input {
	t.Helper()
	in := failing(t)
	var pause, crashFault, crash, commit, put, ack traces.Event
	for _, e := range in.Events {
		switch {
		case e.Kind == "fault" && strings.Contains(e.Text, "pause backup-1") && pause.Seq == 0:
			pause = e
		case e.Kind == "fault" && strings.Contains(e.Text, "crash backup-2") && crashFault.Seq == 0:
			crashFault = e
		case e.Kind == "crash" && crash.Seq == 0:
			crash = e
		}
	}
	commitSeq := in.Violations[0].Events[1]
	for _, e := range in.Events {
		if e.Seq == commitSeq {
			commit = e
		}
	}
	// The last put sent to backup-1 before the commit, and the ack that
	// made the commit.
	for _, e := range in.Events {
		if e.Seq >= commit.Seq {
			break
		}
		if e.Kind == "send" && strings.Contains(e.Desc(), "primary->backup-1 put") {
			put = e
		}
		if e.Kind == "send" && strings.Contains(e.Desc(), "->primary ack") {
			ack = e
		}
	}
	require.NotZero(t, pause.Seq, "the schedule pauses backup-1")
	require.NotZero(t, crashFault.Seq, "the schedule crashes backup-2")
	require.NotZero(t, put.Seq, "the primary sends puts to backup-1 before the commit")
	require.NotZero(t, ack.Seq, "an ack reaches the primary before the commit")
	in.Story = &report.Story{Key: "write " + strings.TrimPrefix(commit.Desc(), "n="), Steps: []report.Step{
		{Seq: put.Seq, T: put.T, Node: "primary", What: "primary sends the write to backup-1", State: "replicating"},
		{Seq: crash.Seq, T: crash.T, Node: "backup-2", What: "backup-2 crashes", State: ""},
		{Seq: ack.Seq, T: ack.T, Node: "backup-1", What: "backup-1 acknowledges", State: "acknowledged once"},
		{Seq: commit.Seq, T: commit.T, Node: "primary", What: "primary commits on one ack <b>", State: "committed, 1 durable copy", Bad: true},
	}}
	in.Needed = []uint64{pause.Seq, crashFault.Seq}
	in.Window = [2]int64{pause.T, commit.T}
	in.Mattered = []uint64{put.Seq, ack.Seq}
	in.Violations[0].Explanation = "The commit <i>needs</i> two durable acks; backup-2 was down, so only one was possible."
	in.Violations[0].Links = []uint64{crash.Seq, ack.Seq, 999_999}
	return in
}

func TestWindowOpensOnTheCause(t *testing.T) {
	in := storied(t)
	d := timelineData(t, render(t, in))
	focus := field[[2]int64](t, d, "focus")
	assert.LessOrEqual(t, focus[0], in.Window[0], "the first view starts at or before the first needed fault")
	assert.GreaterOrEqual(t, focus[1], in.Window[1], "the first view ends at or after the violation")
	assert.Less(t, focus[1]-focus[0], (in.Window[1]-in.Window[0])*3/2, "the first view is the window with a margin, not the whole run")

	// A window that leaves the violation out is widened to it.
	in.Window = [2]int64{in.Window[0], in.Window[0] + int64(time.Millisecond)}
	focus = field[[2]int64](t, timelineData(t, render(t, in)), "focus")
	hi := field[[][]any](t, timelineData(t, render(t, in)), "hi")
	for _, h := range hi {
		assert.GreaterOrEqual(t, float64(focus[1]), h[1].(float64), "the violating events stay in the first view")
	}

	// Without a window the page opens on the violation alone, which here
	// leaves the pause out: what the window is for.
	in.Window = [2]int64{}
	focus = field[[2]int64](t, timelineData(t, render(t, in)), "focus")
	assert.Greater(t, focus[0], storied(t).Window[0], "without a window the first view does not reach back to the pause")

	// An empty or reversed window is no window.
	in.Window = [2]int64{5e9, 4e9}
	assert.Equal(t, focus, field[[2]int64](t, timelineData(t, render(t, in)), "focus"), "a reversed window is ignored")
}

func TestNeededFaultsInWords(t *testing.T) {
	act := func(v string) json.RawMessage { return json.RawMessage(v) }
	s := int64(time.Second)
	evs := []traces.Event{
		{Seq: 1, T: 0, Node: "arbiter-1", Kind: "start", Text: "incarnation 0"},
		{Seq: 2, T: 0, Node: "home-1", Kind: "start", Text: "incarnation 0"},
		{Seq: 3, T: 1 * s, Node: "arbiter-1", Kind: "fault", Text: "@1.000s pause arbiter-1", Data: act(`{"at":1000000000,"kind":"pause","node":"arbiter-1"}`)},
		{Seq: 4, T: 2 * s, Node: "home-1", Kind: "fault", Text: "@2.000s stall home-1->arbiter-1 for=40s", Data: act(`{"at":2000000000,"kind":"stall","node":"home-1","peer":"arbiter-1","for":40000000000}`)},
		{Seq: 5, T: 3 * s, Kind: "fault", Text: "@3.000s partition {arbiter-1}|{home-1,db}", Data: act(`{"at":3000000000,"kind":"partition","groups":[["home-1","db"],["arbiter-1"]]}`)},
		{Seq: 6, T: 4 * s, Node: "arbiter-1", Kind: "fault", Text: "@4.000s resume arbiter-1", Data: act(`{"at":4000000000,"kind":"resume","node":"arbiter-1"}`)},
		{Seq: 7, T: 5 * s, Node: "x", Kind: "fault", Text: "crash point reached"},
		{Seq: 8, T: 50 * s, Node: "home-1", Kind: "db", Text: "SELECT 1"},
	}
	in := report.Input{Events: evs, Needed: []uint64{3, 4, 5, 7, 42}}
	d := timelineData(t, render(t, in))
	lanes := field[[]string](t, d, "lanes")
	lane := func(n string) float64 {
		for i, l := range lanes {
			if l == n {
				return float64(i)
			}
		}
		t.Fatalf("no lane %q in %v", n, lanes)
		return -1
	}
	// [seq, t, end, lanes, words]
	want := [][]any{
		{3.0, 1e9, 4e9, []any{lane("arbiter-1")}, "arbiter-1 paused"},
		{4.0, 2e9, 42e9, []any{lane("home-1"), lane("arbiter-1")}, "home-1 -> arbiter-1 stalled 40 s"},
		{5.0, 3e9, 3e9, []any{lane("arbiter-1"), lane("home-1"), lane("db")}, "partition {home-1, db} | {arbiter-1}"},
		{7.0, 5e9, 5e9, []any{lane("x")}, "fault: crash point reached"},
	}
	assert.Equal(t, want, field[[][]any](t, d, "needed"),
		"each needed fault in words, on the lanes it hits (the pause until its resume, the stall for its duration, the partition's smaller side first); an unknown seq is left out")
}

func TestStoryIsDrawn(t *testing.T) {
	in := storied(t)
	page := render(t, in)
	d := timelineData(t, page)
	var st struct {
		Key   string  `json:"key"`
		Steps [][]any `json:"steps"`
	}
	require.NoError(t, json.Unmarshal(d["story"], &st), "the timeline data carries the story")
	assert.Equal(t, in.Story.Key, st.Key)
	require.Len(t, st.Steps, len(in.Story.Steps), "every step is in the story lane's data")
	lanes := field[[]string](t, d, "lanes")
	for i, s := range in.Story.Steps {
		got := st.Steps[i]
		assert.Equal(t, float64(s.Seq), got[0], "step %d: seq", i)
		assert.Equal(t, s.Node, lanes[int(got[2].(float64))], "step %d: the lane of its node", i)
		assert.Equal(t, s.What, got[3], "step %d: its words", i)
		assert.Equal(t, s.Bad, got[5], "step %d: bad", i)
	}
	assert.Equal(t, []uint64{in.Mattered[0], in.Mattered[1]}, field[[]uint64](t, d, "mattered"), "the messages that mattered are marked")

	// The list under the timeline: every step, the needed faults it does
	// not name, the bad one marked, each a link to its event.
	assert.Contains(t, page, `id="story"`)
	assert.Contains(t, page, "The failure, step by step: "+in.Story.Key)
	assert.Contains(t, page, "primary commits on one ack &lt;b&gt;", "the story's words are escaped")
	assert.NotContains(t, page, "one ack <b>")
	assert.Regexp(t, `<li class="bad"><a href="#timeline" class="seq" data-seq="`+fmt.Sprint(in.Story.Steps[3].Seq)+`"`, page, "the bad step is marked and links to its event")
	assert.Contains(t, page, "backup-1 paused", "the needed pause is in the list, in words")
	assert.Equal(t, 2, strings.Count(page, `<span class="tag">needed fault</span>`), "both needed faults are listed")

	// Without a story: no lane, no list.
	in.Story = nil
	page = render(t, in)
	assert.NotContains(t, page, `id="story"`)
	assert.Equal(t, "null", string(timelineData(t, page)["story"]))
}

func TestViolationExplanationAndLinks(t *testing.T) {
	in := storied(t)
	page := render(t, in)
	assert.Contains(t, page, `<p class="explain">The commit &lt;i&gt;needs&lt;/i&gt; two durable acks;`, "the explanation is shown, escaped")
	for _, s := range in.Violations[0].Links[:2] {
		assert.Regexp(t, `<ol class="evs links">(?s:.*?)data-seq="`+fmt.Sprint(s)+`" data-t="\d+">#`+fmt.Sprint(s)+`</a>`, page, "link #%d jumps to its event", s)
	}
	assert.Contains(t, page, "named events not in this trace: #999999", "a link to an event the trace lacks is said")
	assert.Contains(t, page, "the offending events</div>", "links other than the offending events: both lists")

	// Links that are the offending events are listed once.
	in.Violations[0].Links = append([]uint64(nil), in.Violations[0].Events...)
	page = render(t, in)
	assert.Contains(t, page, "the offending events, which it names")
	assert.NotContains(t, page, "the offending events</div>", "the same events are not listed twice")

	// A second violation's explanation is folded, the first one's open.
	in.Violations = append(in.Violations, report.Violation{Property: "q", Explanation: "second why"})
	page = render(t, in)
	assert.Contains(t, page, `<details class="explain"><summary>why</summary><p class="explain">second why</p></details>`)
}

func TestEventsInWords(t *testing.T) {
	evs := []traces.Event{
		{Seq: 1, T: 75_123_456_789, Node: "db", Kind: "commit", Text: "commit #50 tx 106 at 75.123s: insert submission_judgings(13)", Data: json.RawMessage(`{"seq":50,"at":75123456789}`)},
		{Seq: 2, T: 75_200_000_000, Node: "db", Kind: "send", Text: "#543 db->arbiter-1 conn=76 resp 3: INSERT 0 0"},
		{Seq: 3, T: 75_300_000_000, Node: "arbiter-1", Kind: "db", Text: "c76 SELECT 1"},
	}
	page := render(t, report.Input{Events: evs, Violations: []report.Violation{{Property: "p", Events: []uint64{1}}}})
	assert.False(t, strings.Contains(page, "commit commit"), "the kind is said once")
	assert.Contains(t, page, "<td>75.123 s</td>", "times in seconds and milliseconds")
	assert.Contains(t, page, "sends #543 to arbiter-1 (conn 76): resp 3: INSERT 0 0", "a send in words")
	assert.Contains(t, page, "db: c76 SELECT 1", "a note: its kind, then its text")
	raw := regexp.MustCompile(`(?s)<details class="raw"><summary>raw</summary><pre>(.*?)</pre></details>`).FindAllStringSubmatch(page, -1)
	require.NotEmpty(t, raw, "every listed event has its raw text behind a toggle")
	assert.Contains(t, raw[0][1], "&#34;at&#34;: 75123456789", "the raw data (with its nanoseconds) is behind the toggle")
	assert.Contains(t, raw[0][1], "&#34;kind&#34;: &#34;commit&#34;", "the raw event is the trace's line")
	words := regexp.MustCompile(`(?s)<ol class="evs">\s*<li><a [^>]*>#1</a>(.*?)<details`).FindStringSubmatch(page)
	require.Len(t, words, 2)
	assert.NotContains(t, words[1], "75123456789", "no nanoseconds in the words")

	marks := field[[][]any](t, timelineData(t, page), "marks")
	require.Len(t, marks, 2, "the commit and the db note are marks")
	assert.Equal(t, "commit #50 tx 106 at 75.123s: insert submission_judgings(13)", marks[0][5], "the mark's words")
	assert.Equal(t, `{"seq":50,"at":75123456789}`, marks[0][6], "the mark's raw data, for the toggle and the key filter")
	assert.Equal(t, "", marks[1][6], "no data, no raw")
}

// register is a porcupine model of one register, for a real porcupine page.
var register = porcupine.Model{
	Init: func() any { return 0 },
	Step: func(state, input, output any) (bool, any) {
		in := input.([2]int)
		if in[0] == 0 { // write
			return true, in[1]
		}
		return output.(int) == state.(int), state
	},
	DescribeOperation: func(input, output any) string {
		in := input.([2]int)
		if in[0] == 0 {
			return fmt.Sprintf("client-w write(%d)", in[1])
		}
		return fmt.Sprintf("client-r read() -> %d", output.(int))
	},
	DescribeState: func(state any) string { return fmt.Sprintf("{v=%d}", state.(int)) },
}

// porcupinePage is porcupine's own visualization of a history that is not
// linearizable: the read sees 1 after the write of 2 returned.
func porcupinePage(t testing.TB, calls []int64) []byte {
	t.Helper()
	ops := []porcupine.Operation{
		{ClientId: 0, Input: [2]int{0, 1}, Call: calls[0], Output: 0, Return: calls[0] + 10},
		{ClientId: 0, Input: [2]int{0, 2}, Call: calls[1], Output: 0, Return: calls[1] + 10},
		{ClientId: 1, Input: [2]int{1, 0}, Call: calls[2], Output: 1, Return: calls[2] + 10},
	}
	res, info := porcupine.CheckOperationsVerbose(register, ops, 0)
	require.Equal(t, porcupine.Illegal, res, "the history must not be linearizable")
	var b bytes.Buffer
	require.NoError(t, porcupine.Visualize(register, info, &b))
	return b.Bytes()
}

func TestLinearizationView(t *testing.T) {
	in := failing(t)
	calls := []int64{in.Events[10].T, in.Events[20].T, in.Events[30].T}
	in.Linearization = porcupinePage(t, calls)
	page := render(t, in)
	assert.NotContains(t, page, "<iframe", "porcupine's data is drawn by the report, not in a frame")
	assert.Contains(t, page, `id="linearization" class="linview"`)
	rows := regexp.MustCompile(`<a href="#timeline" class="seq linop[^"]*"[^>]*>`).FindAllString(page, -1)
	require.Len(t, rows, 3, "one row per operation")
	assert.Contains(t, page, "2 of 3 operations linearized")
	assert.Contains(t, page, "client-r read() -&gt; 1")
	assert.Contains(t, page, "cannot be placed after 2", "the operation that cannot follow the longest linearization is named")
	assert.Contains(t, page, "{v=2}", "the state after each linearized operation")
	for i, c := range calls {
		assert.Contains(t, rows[i], fmt.Sprintf(`data-t="%d"`, c), "row %d jumps to its time", i)
	}
	assert.Contains(t, rows[0], fmt.Sprintf(`data-seq="%d"`, in.Events[10].Seq), "a row links the event at its call")

	// What porcupine's page carries is a contract of porcupine's: a page
	// without it is shown as it is.
	in.Linearization = []byte("<!DOCTYPE html><p>no data here</p>")
	page = render(t, in)
	assert.Contains(t, page, "<iframe", "an unreadable page is embedded as it is")
	assert.NotContains(t, page, `class="linview"`)
}

// TestLongTraceWithWindow: a window early in a long trace is drawn, though
// the violation is far later.
func TestLongTraceWithWindow(t *testing.T) {
	in := longInput()
	var evs []traces.Event
	for i := 0; i < 5; i++ {
		evs = append(evs, in.Events...)
	}
	for i := range evs {
		evs[i].Seq = uint64(i + 1)
		evs[i].T += int64(i/len(in.Events)) * 30e9
	}
	last := evs[len(evs)-100]
	in.Events = evs
	in.Violations[0].Events = []uint64{last.Seq}
	in.Window = [2]int64{evs[len(evs)/2].T, last.T}
	in.Needed = []uint64{evs[len(evs)/2].Seq}
	d := timelineData(t, render(t, in))
	w0 := field[int64](t, d, "w0")
	assert.LessOrEqual(t, w0, in.Window[0], "the drawn events start before the window")
	assert.Positive(t, field[int](t, d, "omitted"), "the trace is longer than what is drawn")
}
