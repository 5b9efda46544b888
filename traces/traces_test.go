package traces

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sample() (Header, []Event) {
	h := Header{System: "ping", Seed: 7, Entropy: "pcg", Schedule: json.RawMessage(`[{"at":0,"kind":"heal"}]`), Commit: "abc"}
	evs := []Event{
		{Seq: 1, T: 0, Node: "p0", Kind: "start", Text: "incarnation 0"},
		{Seq: 2, T: 1_000_000, Node: "p0", Kind: "send", Text: "#1 p0->p1 ping p0/1"},
		{Seq: 3, T: 2_000_000, Node: "p1", Kind: "recv", Text: "ping <p0/1> & more", Data: json.RawMessage(`{"from":"p0","seq":1}`)},
	}
	return h, evs
}

func write(t *testing.T, h Header, evs []Event) ([]byte, string) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, h)
	require.NoError(t, err)
	for i := range evs {
		w.Record(&evs[i])
	}
	require.NoError(t, w.Close())
	return buf.Bytes(), w.Hash()
}

func TestRoundTripKeepsHash(t *testing.T) {
	h, evs := sample()
	data, hash := write(t, h, evs)
	h2, evs2, err := ReadAll(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, Format, h2.Format)
	assert.True(t, Compare(evs, evs2).Identical, "events read back equal the events written")
	assert.Equal(t, hash, HashOf(h2, evs2), "the hash of what was read back is the hash written")
	data2, hash2 := write(t, h2, evs2)
	assert.Equal(t, data, data2, "rewriting gives the same bytes")
	assert.Equal(t, hash, hash2)
}

func TestHashIgnoresCommitOnly(t *testing.T) {
	h, evs := sample()
	base := HashOf(h, evs)
	h.Commit = "other"
	assert.Equal(t, base, HashOf(h, evs), "the source revision is not part of the run")
	h.Seed = 8
	assert.NotEqual(t, base, HashOf(h, evs), "the seed is")
	h.Seed = 7
	evs[1].T++
	assert.NotEqual(t, base, HashOf(h, evs), "every event field is")
}

func TestCompareFindsFirstDifference(t *testing.T) {
	_, a := sample()
	_, b := sample()
	b[2].Text = "changed"
	d := Compare(a, b)
	assert.False(t, d.Identical)
	assert.Equal(t, 2, d.Index)
	assert.Contains(t, d.String(), "first difference at event 3")
	assert.Contains(t, d.String(), "changed")
	d = Compare(a, a[:2])
	assert.Equal(t, 2, d.Index)
	assert.Contains(t, d.String(), "(trace ended)")
	assert.Equal(t, "identical", Compare(a, a).String())
}

func TestCorruptInputNamesTheLine(t *testing.T) {
	h, evs := sample()
	data, _ := write(t, h, evs)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	cases := map[string]string{
		"":                                                   "trace line 1: file is empty",
		"not json\n":                                         "trace line 1: expected a JSON header object",
		`{"format":"x","system":"a"}` + "\n":                 `trace line 1: format "x" is not`,
		lines[0] + "\n" + lines[1] + "\n{oops\n":             "trace line 3: expected a JSON event object",
		lines[0] + "\n" + lines[2] + "\n":                    "trace line 2: event seq is 2, expected 1",
		lines[0] + "\n" + lines[1] + "\n\n":                  "trace line 3: empty line",
		lines[0] + "\n" + `{"seq":1,"t":0}` + "\n":           `trace line 2: event has no "kind"`,
		lines[0] + "\n" + lines[1] + " 5\n":                  "trace line 2: trailing data",
		strings.Replace(lines[0], `"seed":7,`, ``, 1) + "\n": `trace line 1: header has no "seed"`,
	}
	for in, want := range cases {
		_, _, err := ReadAll(strings.NewReader(in))
		require.Error(t, err, "input %q", in)
		assert.Contains(t, err.Error(), want, "input %q", in)
	}
}

func FuzzReader(f *testing.F) {
	h, evs := sample()
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, h)
	for i := range evs {
		w.Record(&evs[i])
	}
	_ = w.Close()
	f.Add(buf.Bytes())
	f.Add([]byte("{}\n{}"))
	f.Add([]byte(`{"format":"fencesim-trace/1","system":"a","entropy":"pcg"}` + "\n" + `{"seq":1,"t":-5,"kind":"x","data":[1,2]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		hdr, got, err := ReadAll(bytes.NewReader(data))
		if err != nil {
			var le *LineError
			if !asLineError(err, &le) {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		// Whatever parses must survive a rewrite with the same hash.
		var out bytes.Buffer
		w, err := NewWriter(&out, hdr)
		if err != nil {
			t.Fatalf("rewrite header: %v", err)
		}
		for i := range got {
			w.Record(&got[i])
		}
		if err := w.Close(); err != nil {
			t.Fatalf("rewrite: %v", err)
		}
		if w.Hash() != HashOf(hdr, got) {
			t.Fatalf("hash mismatch")
		}
	})
}

func asLineError(err error, le **LineError) bool {
	e, ok := err.(*LineError)
	*le = e
	return ok
}

// said is a note whose text is its value's String (Event.TextOfValue);
// saidFast appends it (a StringAppender), its String a different text, so
// that the test shows which one renders. A said of no one renders nothing.
type said struct {
	Who string `json:"who"`
	N   int    `json:"n"`
}

func (s said) String() string {
	if s.Who == "" {
		return ""
	}
	return fmt.Sprintf("%s said %d", s.Who, s.N)
}

type saidFast said

func (s saidFast) String() string { return "not this one" }
func (s saidFast) AppendString(b []byte) []byte {
	return fmt.Appendf(b, "%s said %d fast", s.Who, s.N)
}

// A lazy event (a message's pieces, a typed value, a text that is its
// value's) reads, writes, hashes and compares as its rendered twin.
func TestLazyEventReadsAsRendered(t *testing.T) {
	type note struct {
		From string `json:"from"`
		Seq  int    `json:"seq"`
	}
	var nilNote *note
	lazy := []Event{
		{Seq: 1, T: 5, Node: "p0", Kind: "send", Msg: &Msg{ID: 7, From: "p0", To: "db", Conn: 3, Body: "req 1: BEGIN"}},
		{Seq: 2, T: 6, Node: "p1", Kind: "deliver", Msg: &Msg{ID: 8, From: "p0", To: "p1", Body: nil}},
		{Seq: 3, T: 7, Node: "p1", Kind: "recv", Text: "ping", Value: note{"p0", 4}},
		{Seq: 4, T: 8, Node: "p1", Kind: "odd", Value: nilNote},
		{Seq: 5, T: 9, Node: "p1", Kind: "said", Value: said{"p0", 2}, TextOfValue: true},
		{Seq: 6, T: 9, Node: "p1", Kind: "said", Value: saidFast{"p1", 3}, TextOfValue: true},
		{Seq: 7, T: 9, Node: "p1", Kind: "said", Value: said{}, TextOfValue: true},
	}
	rendered := []Event{
		{Seq: 1, T: 5, Node: "p0", Kind: "send", Text: "#7 p0->db conn=3 req 1: BEGIN"},
		{Seq: 2, T: 6, Node: "p1", Kind: "deliver", Text: "#8 p0->p1 <nil>"},
		{Seq: 3, T: 7, Node: "p1", Kind: "recv", Text: "ping", Data: json.RawMessage(`{"from":"p0","seq":4}`)},
		{Seq: 4, T: 8, Node: "p1", Kind: "odd", Data: json.RawMessage(`null`)},
		{Seq: 5, T: 9, Node: "p1", Kind: "said", Text: "p0 said 2", Data: json.RawMessage(`{"who":"p0","n":2}`)},
		{Seq: 6, T: 9, Node: "p1", Kind: "said", Text: "p1 said 3 fast", Data: json.RawMessage(`{"who":"p1","n":3}`)},
		{Seq: 7, T: 9, Node: "p1", Kind: "said", Data: json.RawMessage(`{"who":"","n":0}`)},
	}
	h := Header{System: "ping", Entropy: "pcg"}
	assert.Equal(t, HashOf(h, rendered), HashOf(h, lazy))
	for _, v := range []int{HashV1, HashV2} {
		assert.Equal(t, EventsHash(v, rendered), EventsHash(v, lazy), "version %d", v)
	}
	assert.True(t, Compare(rendered, lazy).Identical)
	for i := range lazy {
		assert.True(t, lazy[i].Lazy())
		assert.Equal(t, rendered[i].Desc(), lazy[i].Desc())
		assert.Equal(t, string(rendered[i].DataJSON()), string(lazy[i].DataJSON()))
		assert.Equal(t, rendered[i].String(), lazy[i].String())
		assert.Equal(t, rendered[i].HasData(), lazy[i].HasData())
	}
	Fill(lazy)
	for i := range lazy {
		assert.False(t, lazy[i].Lazy())
		assert.Nil(t, lazy[i].Msg)
		assert.False(t, lazy[i].TextOfValue)
		assert.Equal(t, rendered[i].Text, lazy[i].Text)
		assert.Equal(t, string(rendered[i].Data), string(lazy[i].Data))
	}
}

// TestEventsHashVersions: version 1 is the trace's hash with an empty
// header; version 2 is a hash of its own ("v2:", 32 hex digits), and it
// changes with every field of an event (its number, time, node, kind,
// text, data), with a field's bytes moving to the next field, and with an
// event more; a Digest gives what EventsHash gives, and passes on only
// what it keeps, rendered.
func TestEventsHashVersions(t *testing.T) {
	_, evs := sample()
	assert.Equal(t, HashOf(Header{}, evs), EventsHash(HashV1, evs))
	v2 := EventsHash(HashV2, evs)
	assert.Equal(t, HashV2, HashVersion(v2))
	assert.Equal(t, HashV1, HashVersion(EventsHash(HashV1, evs)))
	assert.Equal(t, 0, HashVersion("v3:abc"))
	assert.Len(t, v2, len("v2:")+32)
	changes := map[string]func(e *Event){
		"seq":  func(e *Event) { e.Seq++ },
		"time": func(e *Event) { e.T++ },
		"node": func(e *Event) { e.Node = "p9" },
		"kind": func(e *Event) { e.Kind = "recv2" },
		"text": func(e *Event) { e.Text += "!" },
		"data": func(e *Event) { e.Data = json.RawMessage(`{"from":"p0","seq":2}`) },
		// The same bytes, split between two fields otherwise.
		"node into kind": func(e *Event) { e.Node, e.Kind = "p1r", "ecv" },
		"text into data": func(e *Event) { e.Text, e.Data = "", json.RawMessage(`"ping <p0/1> & more"`) },
	}
	for name, change := range changes {
		c := append([]Event(nil), evs...)
		change(&c[2])
		assert.NotEqual(t, v2, EventsHash(HashV2, c), "a change of the %s", name)
	}
	assert.NotEqual(t, v2, EventsHash(HashV2, evs[:2]), "an event fewer")
	assert.NotEqual(t, v2, EventsHash(HashV2, append(append([]Event(nil), evs...), evs[2])), "an event more")

	for _, v := range []int{HashV1, HashV2} {
		var kept Memory
		d := NewDigest(v, func(kind string) bool { return kind == "send" }, &kept)
		lazy := Event{Seq: 2, T: 1_000_000, Node: "p0", Kind: "send", Msg: &Msg{ID: 1, From: "p0", To: "p1", Body: "ping p0/1"}}
		d.Record(&evs[0])
		d.Record(&lazy)
		d.Record(&evs[2])
		sum, n := d.Sum()
		assert.Equal(t, EventsHash(v, evs), sum, "version %d", v)
		assert.Equal(t, 3, n)
		require.Len(t, kept.Events, 1)
		assert.Equal(t, evs[1], kept.Events[0], "the kept event, its text rendered")
	}
	assert.Panics(t, func() { NewDigest(3, nil, nil) })
	for _, s := range []string{"1", "2"} {
		_, err := ParseHashVersion(s)
		assert.NoError(t, err)
	}
	_, err := ParseHashVersion("3")
	assert.Error(t, err)
}

// TestLiveHeaderReads: a live run's header (entropy "live", live true)
// reads back; entropy "live" without live true does not.
func TestLiveHeaderReads(t *testing.T) {
	var b bytes.Buffer
	w, err := NewWriter(&b, Header{System: "ping", Entropy: "live", Live: true})
	require.NoError(t, err)
	w.Record(&Event{Seq: 1, T: 5, Node: "p0", Kind: "note", Text: "x"})
	require.NoError(t, w.Close())
	h, evs, err := ReadAll(bytes.NewReader(b.Bytes()))
	require.NoError(t, err)
	assert.True(t, h.Live)
	assert.Len(t, evs, 1)

	_, _, err = ReadAll(strings.NewReader(`{"format":"` + Format + `","system":"ping","entropy":"live"}` + "\n"))
	assert.ErrorContains(t, err, `trace line 1: header entropy "live"`)
}
