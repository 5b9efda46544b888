package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/report"
)

// failing builds the input of a failing run of the test register: the
// violation is the first commit after backup-2 crashed, with the crash.
func failing(t testing.TB) report.Input {
	t.Helper()
	h, evs := run(t, schedule(), 8*time.Second)
	var crash, commit uint64
	for _, e := range evs {
		if e.Kind == "crash" && crash == 0 {
			crash = e.Seq
		}
		if e.Kind == "commit" && crash != 0 && commit == 0 {
			commit = e.Seq
		}
	}
	require.NotZero(t, crash, "the schedule crashes backup-2: the trace must have a crash event")
	require.NotZero(t, commit, "the primary must commit after the crash")
	var lines []string
	for _, a := range schedule() {
		lines = append(lines, a.String())
	}
	return report.Input{
		Header: h,
		Events: evs,
		Nodes:  nodes,
		Violations: []report.Violation{{
			Property: "durable-commit",
			Message:  "a write was committed while a replica that acknowledged it was down <not really>",
			Events:   []uint64{crash, commit},
			Detail:   "expected: commit only after 2 durable acks\nobserved: 1 ack",
		}},
		Schedule: lines,
		Probes: []report.Probe{
			{Name: "crash during commit", Count: 3, Runs: 200},
			{Name: "partition healed", Count: 200, Runs: 200},
		},
		Timings: []report.Timing{{Name: "porcupine kv", D: 12 * time.Millisecond}, {Name: "invariants", D: 850 * time.Microsecond}},
		Hash:    traces.HashOf(h, evs),
		Replay:  "go run ./cmd/fencesim replay /tmp/fencesim/register-seed7.trace",
	}
}

func render(t testing.TB, in report.Input) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, report.Write(&b, in))
	return b.String()
}

// timelineData extracts the JSON the page's script draws.
func timelineData(t testing.TB, page string) map[string]json.RawMessage {
	t.Helper()
	re := regexp.MustCompile(`(?s)<script id="timeline-data" type="application/json">(.*?)</script>`)
	m := re.FindStringSubmatch(page)
	require.Len(t, m, 2, "the page must carry the timeline data in a JSON script")
	var d map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(m[1]), &d), "the timeline data must be valid JSON")
	return d
}

func field[T any](t testing.TB, d map[string]json.RawMessage, name string) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(d[name], &v), "timeline field %q", name)
	return v
}

func TestWriteIsDeterministic(t *testing.T) {
	in := failing(t)
	a, b := render(t, in), render(t, in)
	assert.Equal(t, a, b, "the same input must give the same bytes")

	st := storied(t)
	st.Linearization = porcupinePage(t, []int64{st.Events[10].T, st.Events[20].T, st.Events[30].T})
	a, b = render(t, st), render(t, st)
	assert.True(t, a == b, "the same input with a story and a linearization must give the same bytes")
}

func TestPageHasEveryPart(t *testing.T) {
	in := failing(t)
	in.Linearization = []byte(`<!DOCTYPE html><html><body><p>linearization "history" & more</p></body></html>`)
	in.Extra = template.HTML(`<p id="extra-marker">extra</p>`)
	page := render(t, in)
	for _, want := range []string{
		"FAIL", "durable-commit", "Minimized schedule", "@5.000s crash backup-2", "Probes", "crash during commit",
		"1.50%", "Checker timings", "porcupine kv", "12ms", in.Hash, "replay /tmp/fencesim/register-seed7.trace",
		`&#34;majority&#34;: 2`, "Events around the violation", `id="extra-marker"`, "srcdoc=",
		"expected: commit only after 2 durable acks",
	} {
		assert.Contains(t, page, want, "the page must show %q", want)
	}
	assert.NotContains(t, page, "<not really>", "text must be escaped")
	assert.Contains(t, page, "&lt;not really&gt;")
	// Nothing outside the file: no links, sources or imports from elsewhere.
	for _, re := range []string{`(?i)(src|href)\s*=\s*["']?(https?:)?//`, `(?i)<link\b`, `(?i)@import`, `(?i)url\(\s*["']?https?:`} {
		assert.NotRegexp(t, re, page, "the page must not load anything from elsewhere")
	}

	d := timelineData(t, page)
	lanes := field[[]string](t, d, "lanes")
	assert.Equal(t, []string{"primary", "backup-1", "backup-2", report.World}, lanes, "lanes: the given nodes first, then the world lane")
	hi := field[[][]any](t, d, "hi")
	assert.Len(t, hi, 2, "both violating events are on the timeline")
}

func TestPassingRun(t *testing.T) {
	h, evs := run(t, nil, 2*time.Second)
	page := render(t, report.Input{Header: h, Events: evs})
	assert.Contains(t, page, "PASS")
	assert.NotContains(t, page, `id="violations"`, "a passing run has no violation section")
	assert.NotContains(t, page, `id="context"`)
	d := timelineData(t, page)
	assert.Equal(t, []string{"primary", "backup-1", "backup-2"}, field[[]string](t, d, "lanes"), "lanes in order of first appearance")
}

func TestEmptyInput(t *testing.T) {
	page := render(t, report.Input{})
	assert.Contains(t, page, "PASS")
	d := timelineData(t, page)
	assert.Empty(t, field[[]string](t, d, "lanes"))
}

func TestHostileText(t *testing.T) {
	evil := `</script><script>alert(1)</script><img src=x onerror=alert(2)>`
	evs := []traces.Event{
		{Seq: 1, T: 0, Node: "a" + evil, Kind: "start", Text: "incarnation 0"},
		{Seq: 2, T: 5, Node: "a" + evil, Kind: "db" + evil, Text: evil, Data: json.RawMessage(`{"x":"` + strings.ReplaceAll(evil, `"`, `\"`) + `"}`)},
		{Seq: 3, T: 6, Node: "a" + evil, Kind: "send", Text: "#1 a->b " + evil},
	}
	page := render(t, report.Input{
		Header:     traces.Header{System: evil, Design: json.RawMessage(`{"k":"` + strings.ReplaceAll(evil, `"`, `\"`) + `"}`)},
		Events:     evs,
		Violations: []report.Violation{{Property: evil, Message: evil, Events: []uint64{2}, Detail: evil}},
		Schedule:   []string{evil},
		Probes:     []report.Probe{{Name: evil}},
		Timings:    []report.Timing{{Name: evil}},
		Replay:     evil,
		Hash:       evil,
	})
	assert.NotContains(t, page, "<script>alert", "no text may open a script")
	assert.NotContains(t, page, "<img", "no text may add an element")
	assert.Equal(t, 3, strings.Count(page, "<script"), "the page has exactly its own three scripts")
	timelineData(t, page)
}

// TestModel checks the timeline model on a hand-written trace in the
// kernel's formats.
func TestModel(t *testing.T) {
	s := int64(time.Second)
	act := func(v string) json.RawMessage { return json.RawMessage(v) }
	evs := []traces.Event{
		{Seq: 1, T: 0, Node: "a", Kind: "start", Text: "incarnation 0"},
		{Seq: 2, T: 0, Node: "b", Kind: "start", Text: "incarnation 0"},
		{Seq: 3, T: 1 * s, Node: "a", Kind: "send", Text: "#1 a->b ping a/1"},
		{Seq: 4, T: 1*s + 5e6, Node: "b", Kind: "deliver", Text: "#1 a->b ping a/1"},
		{Seq: 5, T: 2 * s, Node: "a", Kind: "send", Text: "#2 a->b ping a/2"},
		{Seq: 6, T: 2 * s, Node: "a", Kind: "drop", Text: "#2 loss"},
		{Seq: 7, T: 3 * s, Node: "a", Kind: "send", Text: "#3 a->b conn=4 beat 1"},
		{Seq: 8, T: 3 * s, Node: "a", Kind: "dup", Text: "#3 copied as #4"},
		{Seq: 9, T: 3*s + 1e6, Node: "b", Kind: "deliver", Text: "#3 a->b conn=4 beat 1"},
		{Seq: 10, T: 3*s + 2e6, Node: "b", Kind: "deliver", Text: "#4 a->b conn=4 beat 1"},
		{Seq: 11, T: 4 * s, Node: "b", Kind: "fault", Text: "@4.000s pause b", Data: act(`{"at":4000000000,"kind":"pause","node":"b"}`)},
		{Seq: 12, T: 5 * s, Node: "b", Kind: "fault", Text: "@5.000s resume b", Data: act(`{"at":5000000000,"kind":"resume","node":"b"}`)},
		{Seq: 13, T: 6 * s, Kind: "fault", Text: "@6.000s partition {a}|{b,c}", Data: act(`{"at":6000000000,"kind":"partition","groups":[["a"],["b","c"]]}`)},
		{Seq: 14, T: 7 * s, Kind: "fault", Text: "@7.000s heal", Data: act(`{"at":7000000000,"kind":"heal"}`)},
		{Seq: 15, T: 8 * s, Node: "b", Kind: "fault", Text: "@8.000s crash b", Data: act(`{"at":8000000000,"kind":"crash","node":"b"}`)},
		{Seq: 16, T: 8 * s, Node: "b", Kind: "crash", Text: "fault"},
		{Seq: 17, T: 8*s + 1, Node: "a", Kind: "send", Text: "#5 a->b ping a/3"},
		{Seq: 18, T: 8*s + 3e6, Node: "b", Kind: "drop", Text: "#5 destination down"},
		{Seq: 19, T: 9 * s, Node: "b", Kind: "restart", Text: "incarnation 1"},
		{Seq: 20, T: 9 * s, Node: "b", Kind: "db", Text: "SELECT 1"},
		{Seq: 21, T: 9 * s, Node: "a", Kind: "timer", Text: "timer 1 tick"},
		{Seq: 22, T: 9 * s, Node: "a", Kind: "fault", Text: "@9.000s loss a->b rate=1000 for=1s", Data: act(`{"at":9000000000,"kind":"loss","node":"a","peer":"b","rate":1000,"for":1000000000}`)},
		{Seq: 23, T: 9 * s, Node: "c", Kind: "start", Text: "incarnation 0"},
		{Seq: 24, T: 10 * s, Node: "a", Kind: "send", Text: "#6 a->c ping a/4"},
	}
	page := render(t, report.Input{Events: evs, Violations: []report.Violation{{Property: "p", Events: []uint64{18, 99}}}})
	assert.Contains(t, page, "events not in this trace: #99")
	d := timelineData(t, page)
	assert.Equal(t, []string{"a", "b", "c", report.World}, field[[]string](t, d, "lanes"))
	// [from, to, sendT, endT, fate, dup, sendSeq, endSeq, text, reason]
	msgs := field[[][]any](t, d, "msgs")
	require.Len(t, msgs, 6, "messages: #1, #2, #3, its copy #4, #5, #6")
	want := [][]any{
		{0.0, 1.0, 1e9, 1e9 + 5e6, 0.0, 0.0, 3.0, 4.0, "#1 a->b ping a/1", ""},
		{0.0, 1.0, 2e9, 2e9, 1.0, 0.0, 5.0, 6.0, "#2 a->b ping a/2", "loss"},
		{0.0, 1.0, 3e9, 3e9 + 1e6, 0.0, 0.0, 7.0, 9.0, "#3 a->b conn=4 beat 1", ""},
		{0.0, 1.0, 3e9, 3e9 + 2e6, 0.0, 1.0, 8.0, 10.0, "#4 a->b conn=4 beat 1", ""},
		{0.0, 1.0, 8e9 + 1, 8e9 + 3e6, 1.0, 0.0, 17.0, 18.0, "#5 a->b ping a/3", "destination down"},
		{0.0, 2.0, 10e9, 10e9, 2.0, 0.0, 24.0, 0.0, "#6 a->c ping a/4", ""},
	}
	assert.Equal(t, want, msgs, "messages matched by id: delivered, dropped at send, duplicated, dropped at arrival, in flight")
	// [lane, from, to, kind, label]
	spans := field[[][]any](t, d, "spans")
	assert.Equal(t, [][]any{
		{1.0, 4e9, 5e9, 1.0, "paused"},
		{1.0, 8e9, 9e9, 0.0, "down"},
		{2.0, 0.0, 9e9, 2.0, "not started"},
	}, spans)
	bands := field[[][]any](t, d, "bands")
	assert.Equal(t, [][]any{{6e9, 7e9, "partition {a} | {b, c}", []any{[]any{0.0}, []any{1.0, 2.0}}, false}}, bands)
	assert.Equal(t, [][]any{{9e9, 10e9, "a -> b losing 0.1% of datagrams for 1 s"}}, field[[][]any](t, d, "bursts"))
	hi := field[[][]any](t, d, "hi")
	require.Len(t, hi, 1, "the unknown seq 99 is left out of the timeline")
	assert.Equal(t, 18.0, hi[0][0])
	kinds := field[[]string](t, d, "kinds")
	assert.Contains(t, kinds, "db")
	assert.Contains(t, kinds, "timer")
}

// TestLongTrace renders a trace of 120k events: the page stays small, draws
// a window around the violation and says what it left out.
func TestLongTrace(t *testing.T) {
	const n = 120_000
	evs := make([]traces.Event, 0, n)
	seq := uint64(0)
	add := func(e traces.Event) {
		seq++
		e.Seq = seq
		evs = append(evs, e)
	}
	names := []string{"n0", "n1", "n2", "n3", "n4"}
	for _, nm := range names {
		add(traces.Event{Node: nm, Kind: "start", Text: "incarnation 0"})
	}
	id := uint64(0)
	for len(evs) < n {
		i := len(evs)
		tm := int64(i) * 1e6
		from, to := names[i%5], names[(i/5+1+i)%5]
		if from == to {
			to = names[(i+1)%5]
		}
		id++
		add(traces.Event{T: tm, Node: from, Kind: "send", Text: fmt.Sprintf("#%d %s->%s req %d", id, from, to, id)})
		add(traces.Event{T: tm + 3e5, Node: to, Kind: "deliver", Text: fmt.Sprintf("#%d %s->%s req %d", id, from, to, id)})
		add(traces.Event{T: tm + 3e5, Node: to, Kind: "db", Text: fmt.Sprintf("UPDATE t SET v = %d", id)})
	}
	target := evs[n/3].Seq
	start := time.Now()
	page := render(t, report.Input{Events: evs, Violations: []report.Violation{{Property: "p", Message: "m", Events: []uint64{target}}}})
	elapsed := time.Since(start)
	t.Logf("%d events: %d bytes in %v", len(evs), len(page), elapsed)
	assert.Less(t, len(page), 12<<20, "a long trace must give a page of reasonable size (got %d bytes)", len(page))
	assert.Less(t, elapsed, 5*time.Second, "rendering 120k events must be quick")
	assert.Contains(t, page, "leaves out", "the page says events were left out")
	d := timelineData(t, page)
	shown := field[[2]uint64](t, d, "shown")
	assert.LessOrEqual(t, shown[0], target)
	assert.GreaterOrEqual(t, shown[1], target, "the drawn window contains the violating event")
	assert.Equal(t, len(evs)-report.DefaultMaxEvents, field[int](t, d, "omitted"))
	assert.Equal(t, int(id), field[int](t, d, "msgCount"), "the summary counts every message")
}
