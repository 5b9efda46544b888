package traces

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/zeebo/xxh3"

	"github.com/fencesim/fencesim/traces/canon"
)

// Format is the trace format version written in every header.
const Format = "fencesim-trace/1"

// Header is line 1 of a trace: everything a replay needs.
type Header struct {
	Format   string          `json:"format"`
	System   string          `json:"system"`
	Design   json.RawMessage `json:"design,omitempty"`
	Seed     uint64          `json:"seed"`
	Entropy  string          `json:"entropy"`        // "pcg" or "tape"; "live" for a live run
	Tape     []uint64        `json:"tape,omitempty"` // recorded draws when Entropy is "tape"
	Schedule json.RawMessage `json:"schedule,omitempty"`
	Workload json.RawMessage `json:"workload,omitempty"`
	Limits   json.RawMessage `json:"limits,omitempty"`
	Network  json.RawMessage `json:"network,omitempty"` // the base network policy
	Commit   string          `json:"commit,omitempty"`  // source revision; not part of the hash
	// Live marks the record of a live run (fencesim live): real processes,
	// sockets and a real PostgreSQL. It cannot be replayed.
	Live bool `json:"live,omitempty"`
}

// Event is one line after the header.
type Event struct {
	Seq  uint64          `json:"seq"`            // position in the run, from 1
	T    int64           `json:"t"`              // world time, ns
	Node string          `json:"node,omitempty"` // the node it happened at, if any
	Kind string          `json:"kind"`           // deliver, drop, dup, send, timer, crash, restart, fault, note, ...
	Text string          `json:"text,omitempty"` // canonical description
	Data json.RawMessage `json:"data,omitempty"` // structured data for checkers
	// Value is the note's data as the model wrote it (a typed value), kept
	// beside its JSON for in-memory checkers: a checker that reads the same
	// type takes it as is instead of decoding Data. It is never written to
	// a trace file, never hashed; an event read back from a file has none.
	Value any `json:"-"`
	// Msg is the message a send or deliver event is about, kept so that its
	// text is rendered only when someone reads it (Desc), writes or hashes
	// the event: Text is empty while Msg is set. Like Value it is never
	// written; the line written is the one with the rendered text.
	Msg *Msg `json:"-"`
	// TextOfValue says the text is Value's own (a note's String), left
	// unrendered: Text is empty and Desc renders it. The kernel leaves a
	// note so in a record that is the checkers' alone (sim.Env.ForCheckers),
	// whose checkers read values. Like Msg it is never written.
	TextOfValue bool `json:"-"`
}

// Msg is what the text of a message event is rendered from.
type Msg struct {
	ID   uint64
	From string
	To   string
	Conn uint64 // 0: a datagram
	Body any    // rendered with fmt's %v
}

// Text renders the message as the kernel's traces show it:
// "#12 p0->p1 conn=3 ping p0/4" (no conn= for a datagram).
func (m *Msg) Text() string { return string(m.AppendText(make([]byte, 0, 64))) }

// AppendText appends the message's text (Text) to b.
func (m *Msg) AppendText(b []byte) []byte {
	b = append(b, '#')
	b = strconv.AppendUint(b, m.ID, 10)
	b = append(b, ' ')
	b = append(b, m.From...)
	b = append(b, "->"...)
	b = append(b, m.To...)
	if m.Conn != 0 {
		b = append(b, " conn="...)
		b = strconv.AppendUint(b, m.Conn, 10)
	}
	b = append(b, ' ')
	return AppendValue(b, m.Body)
}

// StringAppender is a Stringer that appends its String to a buffer, as
// AppendValue would render it, without the intermediate string.
type StringAppender interface {
	fmt.Stringer
	AppendString(b []byte) []byte
}

// appendString appends v's String (a StringAppender's own appending): the
// text of a note whose text is its value's (Event.TextOfValue).
func appendString(b []byte, v any) []byte {
	if a, ok := v.(StringAppender); ok {
		return a.AppendString(b)
	}
	return append(b, v.(fmt.Stringer).String()...)
}

// AppendValue appends fmt's %v of v to b, without fmt for the common cases
// that fmt renders the same way (nil, a string, a Stringer that is neither
// an error nor a Formatter nor a nil pointer; a StringAppender's own
// appending).
func AppendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "<nil>"...)
	case string:
		return append(b, x...)
	case error, fmt.Formatter:
	case StringAppender:
		if r := reflect.ValueOf(v); r.Kind() != reflect.Pointer || !r.IsNil() {
			return x.AppendString(b)
		}
	case fmt.Stringer:
		if r := reflect.ValueOf(v); r.Kind() != reflect.Pointer || !r.IsNil() {
			return append(b, x.String()...)
		}
	}
	return fmt.Append(b, v)
}

// Desc returns the event's canonical text: Text, or the text rendered from
// Msg or Value (TextOfValue) when the kernel left it for later.
func (e Event) Desc() string {
	if e.Text == "" {
		switch {
		case e.Msg != nil:
			return e.Msg.Text()
		case e.TextOfValue:
			return string(appendString(nil, e.Value))
		}
	}
	return e.Text
}

// appendDesc appends the event's canonical text (Desc) to b.
func (e *Event) appendDesc(b []byte) []byte {
	if e.Text == "" {
		switch {
		case e.Msg != nil:
			return e.Msg.AppendText(b)
		case e.TextOfValue:
			return appendString(b, e.Value)
		}
	}
	return append(b, e.Text...)
}

// DataJSON returns the event's structured data as JSON: Data, or Value
// encoded when the kernel left the encoding for later (nil: no data). It
// panics when Value does not encode (a model's bug: trace data must be
// JSON-encodable).
func (e Event) DataJSON() json.RawMessage {
	if len(e.Data) > 0 || e.Value == nil {
		return e.Data
	}
	if a, ok := e.Value.(canon.Appender); ok && !canon.IsNilPointer(e.Value) {
		return a.AppendJSON(nil) // json.Marshal's bytes, without reflection
	}
	b, err := json.Marshal(e.Value)
	if err != nil {
		panic(e.encodeError(err))
	}
	return b
}

func (e *Event) encodeError(err error) string {
	return fmt.Sprintf("traces: the data of event #%d (%s %s) does not encode: %v", e.Seq, e.Node, e.Kind, err)
}

// HasData reports whether the event carries structured data (Data, or a
// Value not encoded yet), without encoding it.
func (e Event) HasData() bool { return len(e.Data) > 0 || e.Value != nil }

// Lazy reports whether the event still has a part to render (its text from
// Msg or Value, its data from Value).
func (e *Event) Lazy() bool {
	return ((e.Msg != nil || e.TextOfValue) && e.Text == "") || (e.Value != nil && len(e.Data) == 0)
}

// Fill renders the lazy parts of an event in place: Text from Msg (Msg is
// then dropped) and Data from Value (Value is kept). What the event reads,
// writes and hashes as does not change.
func (e *Event) Fill() {
	if e.Msg != nil || e.TextOfValue {
		e.Text = e.Desc()
		e.Msg, e.TextOfValue = nil, false
	}
	if e.Value != nil && len(e.Data) == 0 {
		e.Data = e.DataJSON()
	}
}

// Fill renders the lazy parts of every event (see Event.Fill).
func Fill(evs []Event) {
	for i := range evs {
		evs[i].Fill()
	}
}

// String renders an event for people: "#12 75.000s home-1 deliver text".
func (e Event) String() string {
	ns := e.T
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns
	}
	s := fmt.Sprintf("#%d %s%d.%03ds %s %s", e.Seq, sign, ns/1e9, (ns%1e9)/1e6, orDash(e.Node), e.Kind)
	if text := e.Desc(); text != "" {
		s += " " + text
	}
	if data := e.DataJSON(); len(data) > 0 {
		s += " " + string(data)
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Validate checks a header read back from a file.
func (h *Header) Validate() error {
	if h.Format != Format {
		return fmt.Errorf("format %q is not %q: this file was not written by this fencesim, or is not a trace", h.Format, Format)
	}
	if h.System == "" {
		return errors.New(`header has no "system": the trace is incomplete`)
	}
	switch {
	case h.Entropy == "pcg" || h.Entropy == "tape":
	case h.Entropy == "live" && h.Live:
	default:
		return fmt.Errorf(`header entropy %q is neither "pcg" nor "tape" (nor "live", with "live": true)`, h.Entropy)
	}
	return nil
}

// Writer streams a trace to an io.Writer and hashes it as it goes.
type Writer struct {
	w     *bufio.Writer
	h     hash.Hash
	enc   encoder
	err   error
	lines int
}

// encoder renders events as trace lines, reusing its buffers. It writes
// by hand what encoding/json writes for an Event (an Encoder with
// SetEscapeHTML(false), of the event with its lazy parts rendered): the
// envelope's fields in order, omitempty as tagged, the data as
// json.Marshal encodes the note (its AppendJSON when it has one, else
// encoding/json) or Data compacted as a json.RawMessage is.
type encoder struct {
	buf  []byte
	jd   []byte       // an event's data (HashV2)
	text []byte       // a message's text
	data bytes.Buffer // encoding/json's output
	enc  *json.Encoder
}

// line returns the event's line (without the newline): the lazy parts
// rendered, byte for byte what an eagerly rendered event encodes to. The
// slice is valid until the next call.
func (x *encoder) line(e *Event) ([]byte, error) {
	b := append(x.buf[:0], `{"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, e.T, 10)
	if e.Node != "" {
		b = append(b, `,"node":`...)
		b = canon.Text(b, e.Node)
	}
	b = append(b, `,"kind":`...)
	b = canon.Text(b, e.Kind)
	switch {
	case e.Text != "":
		b = append(b, `,"text":`...)
		b = canon.Text(b, e.Text)
	case e.Msg != nil || e.TextOfValue:
		x.text = e.appendDesc(x.text[:0])
		if len(x.text) > 0 {
			b = append(b, `,"text":`...)
			b = canon.Text(b, x.text)
		}
	}
	if e.HasData() {
		b = append(b, `,"data":`...)
		var err error
		if b, err = x.appendData(b, e); err != nil {
			x.buf = b
			return nil, err
		}
	}
	b = append(b, '}')
	x.buf = b
	return b, nil
}

// appendData appends the event's data as its line has it: Data compacted,
// or Value encoded as json.Marshal encodes it (its AppendJSON when it has
// one). An event without data appends nothing.
func (x *encoder) appendData(b []byte, e *Event) ([]byte, error) {
	switch {
	case len(e.Data) > 0:
		if compact(e.Data) {
			// What compacting it gives: a note's JSON rendered by
			// Fill, or a line's data read back.
			return append(b, e.Data...), nil
		}
		x.data.Reset()
		if err := json.Compact(&x.data, e.Data); err != nil {
			return b, err
		}
		return append(b, x.data.Bytes()...), nil
	case e.Value != nil:
		if a, ok := e.Value.(canon.Appender); ok && !canon.IsNilPointer(e.Value) {
			return a.AppendJSON(b), nil
		}
		if x.enc == nil {
			x.enc = json.NewEncoder(&x.data) // HTML escaped, as json.Marshal
		}
		x.data.Reset()
		if err := x.enc.Encode(e.Value); err != nil {
			panic(e.encodeError(err))
		}
		return append(b, bytes.TrimSuffix(x.data.Bytes(), []byte{'\n'})...), nil
	}
	return b, nil
}

// compact reports whether JSON data has no whitespace outside its
// strings: json.Compact would return it unchanged. It does not check that
// the data is JSON (Data is: encoding/json's output, or a trace line's).
func compact(data []byte) bool {
	in := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}

// NewWriter writes the header at once.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	tw := &Writer{w: bufio.NewWriterSize(w, 64<<10), h: sha256.New()}
	if h.Format == "" {
		h.Format = Format
	}
	line, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("encode trace header: %w", err)
	}
	tw.hashHeader(h)
	tw.writeLine(line)
	return tw, tw.err
}

func (tw *Writer) hashHeader(h Header) { hashHeader(tw.h, h) }

// newline ends each line a hash is given (a slice made once: a literal
// handed to hash.Hash's Write would be allocated at every event).
var newline = []byte{'\n'}

// hashHeader writes a header's line to a hash as the canonical hash has
// it: the commit left out.
func hashHeader(x hash.Hash, h Header) {
	h.Commit = ""
	b, _ := json.Marshal(h)
	x.Write(b)
	x.Write(newline)
}

func (tw *Writer) writeLine(b []byte) {
	if tw.err != nil {
		return
	}
	if _, err := tw.w.Write(b); err != nil {
		tw.err = err
		return
	}
	tw.err = tw.w.WriteByte('\n')
	tw.lines++
}

// Record appends one event. Errors stick and are reported by Close.
func (tw *Writer) Record(e *Event) {
	line, err := tw.enc.line(e)
	if err != nil {
		if tw.err == nil {
			tw.err = fmt.Errorf("encode event #%d: %w", e.Seq, err)
		}
		return
	}
	tw.h.Write(line)
	tw.h.Write(newline)
	tw.writeLine(line)
}

// Hash returns the canonical hash of what was written so far.
func (tw *Writer) Hash() string { return hex.EncodeToString(tw.h.Sum(nil)) }

// Close flushes the writer and returns the first error.
func (tw *Writer) Close() error {
	if tw.err != nil {
		return tw.err
	}
	return tw.w.Flush()
}

// Memory is a recorder that keeps events in memory. The kernel's events
// keep their lazy parts (see Event.Msg, Event.Value): read them with Desc
// and DataJSON, or Fill them.
type Memory struct {
	Events []Event
}

// Record implements the kernel's recorder hook.
func (m *Memory) Record(e *Event) {
	if len(m.Events) == cap(m.Events) {
		// Double: append grows large slices by a quarter, which copies
		// every event about four times over a long run.
		grown := make([]Event, len(m.Events), 2*cap(m.Events)+256)
		copy(grown, m.Events)
		m.Events = grown
	}
	m.Events = append(m.Events, *e)
}

// HashOf returns the canonical hash of a header and events, the same value a
// Writer computes when it writes them.
func HashOf(h Header, events []Event) string {
	tw := &Writer{w: bufio.NewWriter(io.Discard), h: sha256.New()}
	if h.Format == "" {
		h.Format = Format
	}
	tw.hashHeader(h)
	for i := range events {
		tw.Record(&events[i])
	}
	return tw.Hash()
}

// The versions of a run's hash (Digest, EventsHash).
const (
	// HashV1 is the sha256 of the trace's lines, the header's first (a
	// trace's hash, HashOf; a --per-seed hash has the empty header's):
	// 64 hex digits.
	HashV1 = 1
	// HashV2 is the xxh3-128 of every event's fields in turn, each
	// length-prefixed: its number and time (varints), node, kind, text
	// (rendered as its line has it) and data (its line's JSON). No JSON
	// line is made, no string escaped: "v2:" and 32 hex digits. A run
	// hashes the same whether its events were rendered or left lazy.
	HashV2 = 2
)

// hashPrefix is what a hash of each version begins with.
var hashPrefix = [...]string{HashV1: "", HashV2: "v2:"}

// HashVersion returns the version of a hash (Digest.Sum, HashOf,
// EventsHash); 0 when it is neither.
func HashVersion(h string) int {
	switch {
	case strings.HasPrefix(h, hashPrefix[HashV2]) && len(h) == len(hashPrefix[HashV2])+32:
		return HashV2
	case len(h) == 64:
		return HashV1
	}
	return 0
}

// ParseHashVersion reads a hash version, "1" or "2".
func ParseHashVersion(s string) (int, error) {
	switch s {
	case "1":
		return HashV1, nil
	case "2":
		return HashV2, nil
	}
	return 0, fmt.Errorf("hash version %q: want 1 (sha256 of the trace lines, as fencesim before hash versions) or 2 (xxh3-128 of the events' fields)", s)
}

// Digest is a recorder that hashes every event as it is recorded, the
// header left out (a --per-seed record's hash: EventsHash of the same
// events), and passes on to Next only the events Keep accepts, their
// message text rendered: a run hashed in full whose record holds only what
// its checkers read. It reads each event at once and keeps nothing of it,
// so the kernel hands it a message event with the body as sent, unrendered
// (Immediate; sim.ImmediateRecorder).
type Digest struct {
	keep    func(kind string) bool
	next    interface{ Record(*Event) }
	version int
	h       hash.Hash    // HashV1
	x       *xxh3.Hasher // HashV2
	enc     encoder
	n       int
}

// NewDigest returns a digest of a hash version (HashV1, HashV2) that
// passes the events keep accepts to next (nil keep: none).
func NewDigest(version int, keep func(kind string) bool, next interface{ Record(*Event) }) *Digest {
	d := &Digest{keep: keep, next: next, version: version}
	switch version {
	case HashV1:
		d.h = sha256.New()
		hashHeader(d.h, Header{Format: Format})
	case HashV2:
		d.x = xxh3.New()
	default:
		panic(fmt.Sprintf("traces: no hash version %d", version))
	}
	return d
}

// Immediate marks the digest as a recorder that reads each event at once
// (sim.ImmediateRecorder).
func (d *Digest) Immediate() {}

// Record implements the kernel's recorder hook.
func (d *Digest) Record(e *Event) {
	// A line that does not encode is left out, as HashOf leaves it.
	if d.version == HashV1 {
		if line, err := d.enc.line(e); err == nil {
			d.h.Write(line)
			d.h.Write(newline)
		}
	} else if b, err := d.enc.fields(e); err == nil {
		d.x.Write(b)
	}
	d.n++
	if d.keep == nil || !d.keep(e.Kind) {
		return
	}
	c := *e
	if c.Msg != nil {
		if c.Text == "" {
			c.Text = c.Msg.Text()
		}
		c.Msg = nil
	}
	d.next.Record(&c)
}

// Sum returns the hash of the events so far and how many there were.
func (d *Digest) Sum() (string, int) {
	if d.version == HashV1 {
		return hex.EncodeToString(d.h.Sum(nil)), d.n
	}
	sum := d.x.Sum128().Bytes()
	return hashPrefix[HashV2] + hex.EncodeToString(sum[:]), d.n
}

// EventsHash returns the hash of a run's events of a version, the header
// left out: what a Digest of the version gives for the same run.
func EventsHash(version int, events []Event) string {
	d := NewDigest(version, nil, nil)
	for i := range events {
		d.Record(&events[i])
	}
	h, _ := d.Sum()
	return h
}

// fields returns the event's fields as HashV2 hashes them. The slice is
// valid until the next call.
func (x *encoder) fields(e *Event) ([]byte, error) {
	b := binary.AppendUvarint(x.buf[:0], e.Seq)
	b = binary.AppendVarint(b, e.T)
	b = appendField(b, e.Node)
	b = appendField(b, e.Kind)
	switch {
	case e.Text != "":
		b = appendField(b, e.Text)
	case e.Msg != nil || e.TextOfValue:
		x.text = e.appendDesc(x.text[:0])
		b = appendField(b, x.text)
	default:
		b = append(b, 0)
	}
	var err error
	x.jd, err = x.appendData(x.jd[:0], e)
	x.buf = appendField(b, x.jd)
	return x.buf, err
}

// appendField appends a length-prefixed field.
func appendField[S []byte | string](b []byte, s S) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// MaxLine is the longest line the reader accepts.
const MaxLine = 64 << 20

// Reader reads a trace back, line by line.
type Reader struct {
	s      *bufio.Scanner
	line   int
	Header Header
}

// LineError is an error at a line of a trace file.
type LineError struct {
	Line int
	Msg  string
}

func (e *LineError) Error() string { return fmt.Sprintf("trace line %d: %s", e.Line, e.Msg) }

// NewReader reads and validates the header.
func NewReader(r io.Reader) (*Reader, error) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64<<10), MaxLine)
	tr := &Reader{s: s}
	if !s.Scan() {
		if err := s.Err(); err != nil {
			return nil, &LineError{1, "cannot read the header: " + err.Error()}
		}
		return nil, &LineError{1, "file is empty: expected a JSON header line with \"format\": \"" + Format + "\""}
	}
	tr.line = 1
	dec := json.NewDecoder(bytes.NewReader(s.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&tr.Header); err != nil {
		return nil, &LineError{1, "expected a JSON header object: " + err.Error()}
	}
	if err := tr.Header.Validate(); err != nil {
		return nil, &LineError{1, err.Error()}
	}
	if tr.Header.Entropy == "pcg" {
		// A seeded run replays from its seed: a header without one
		// would replay seed 0, another run (a Writer always writes it).
		var has struct {
			Seed *json.RawMessage `json:"seed"`
		}
		if json.Unmarshal(s.Bytes(), &has) == nil && has.Seed == nil {
			return nil, &LineError{1, `header has no "seed" (its entropy is "pcg": the run replays from its seed): the trace is incomplete`}
		}
	}
	return tr, nil
}

// Next returns the next event, or io.EOF at the end.
func (tr *Reader) Next() (Event, error) {
	if !tr.s.Scan() {
		if err := tr.s.Err(); err != nil {
			return Event{}, &LineError{tr.line + 1, "cannot read: " + err.Error()}
		}
		return Event{}, io.EOF
	}
	tr.line++
	var e Event
	b := tr.s.Bytes()
	if len(bytes.TrimSpace(b)) == 0 {
		return Event{}, &LineError{tr.line, "empty line: expected a JSON event object"}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return Event{}, &LineError{tr.line, "expected a JSON event object with seq, t, kind: " + err.Error()}
	}
	if dec.More() {
		return Event{}, &LineError{tr.line, "trailing data after the event object"}
	}
	if e.Kind == "" {
		return Event{}, &LineError{tr.line, `event has no "kind"`}
	}
	if want := uint64(tr.line - 1); e.Seq != want {
		return Event{}, &LineError{tr.line, fmt.Sprintf("event seq is %d, expected %d: lines are missing or out of order", e.Seq, want)}
	}
	return e, nil
}

// ReadAll reads a whole trace.
func ReadAll(r io.Reader) (Header, []Event, error) {
	tr, err := NewReader(r)
	if err != nil {
		return Header{}, nil, err
	}
	var evs []Event
	for {
		e, err := tr.Next()
		if err == io.EOF {
			return tr.Header, evs, nil
		}
		if err != nil {
			return tr.Header, evs, err
		}
		evs = append(evs, e)
	}
}

// Diff is the result of comparing two event sequences.
type Diff struct {
	Identical bool
	Index     int    // index of the first difference
	Want, Got *Event // nil when that side ended
}

// String renders the comparison as replay prints it.
func (d Diff) String() string {
	if d.Identical {
		return "identical"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at event %d:\n", d.Index+1)
	show := func(name string, e *Event) {
		if e == nil {
			fmt.Fprintf(&b, "  %s: (trace ended)\n", name)
		} else {
			fmt.Fprintf(&b, "  %s: %s\n", name, e)
		}
	}
	show("recorded", d.Want)
	show("replayed", d.Got)
	return strings.TrimRight(b.String(), "\n")
}

// Compare reports whether two event sequences are identical, or where they
// first differ.
func Compare(want, got []Event) Diff {
	n := len(want)
	if len(got) < n {
		n = len(got)
	}
	for i := 0; i < n; i++ {
		if !sameEvent(&want[i], &got[i]) {
			return Diff{Index: i, Want: &want[i], Got: &got[i]}
		}
	}
	switch {
	case len(want) > n:
		return Diff{Index: n, Want: &want[n]}
	case len(got) > n:
		return Diff{Index: n, Got: &got[n]}
	}
	return Diff{Identical: true}
}

func sameEvent(a, b *Event) bool {
	return a.Seq == b.Seq && a.T == b.T && a.Node == b.Node && a.Kind == b.Kind && a.Desc() == b.Desc() &&
		bytes.Equal(a.DataJSON(), b.DataJSON())
}
