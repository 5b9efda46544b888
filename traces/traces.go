package traces

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
)

// Format is the trace format version written in every header.
const Format = "fencesim-trace/1"

// Header is line 1 of a trace: everything a replay needs.
type Header struct {
	Format   string          `json:"format"`
	System   string          `json:"system"`
	Design   json.RawMessage `json:"design,omitempty"`
	Seed     uint64          `json:"seed"`
	Entropy  string          `json:"entropy"`        // "pcg" or "tape"
	Tape     []uint64        `json:"tape,omitempty"` // recorded draws when Entropy is "tape"
	Schedule json.RawMessage `json:"schedule,omitempty"`
	Workload json.RawMessage `json:"workload,omitempty"`
	Limits   json.RawMessage `json:"limits,omitempty"`
	Network  json.RawMessage `json:"network,omitempty"` // the base network policy
	Commit   string          `json:"commit,omitempty"`  // source revision; not part of the hash
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
}

// String renders an event for people: "#12 75.000s home-1 deliver text".
func (e Event) String() string {
	ns := e.T
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns
	}
	s := fmt.Sprintf("#%d %s%d.%03ds %s %s", e.Seq, sign, ns/1e9, (ns%1e9)/1e6, orDash(e.Node), e.Kind)
	if e.Text != "" {
		s += " " + e.Text
	}
	if len(e.Data) > 0 {
		s += " " + string(e.Data)
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
	switch h.Entropy {
	case "pcg", "tape":
	default:
		return fmt.Errorf(`header entropy %q is neither "pcg" nor "tape"`, h.Entropy)
	}
	return nil
}

// Writer streams a trace to an io.Writer and hashes it as it goes.
type Writer struct {
	w     *bufio.Writer
	h     hash.Hash
	buf   bytes.Buffer
	err   error
	lines int
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

func (tw *Writer) hashHeader(h Header) {
	h.Commit = ""
	b, _ := json.Marshal(h)
	tw.h.Write(b)
	tw.h.Write([]byte{'\n'})
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
	tw.buf.Reset()
	enc := json.NewEncoder(&tw.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		if tw.err == nil {
			tw.err = fmt.Errorf("encode event #%d: %w", e.Seq, err)
		}
		return
	}
	line := bytes.TrimSuffix(tw.buf.Bytes(), []byte{'\n'})
	tw.h.Write(line)
	tw.h.Write([]byte{'\n'})
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

// Memory is a recorder that keeps events in memory.
type Memory struct {
	Events []Event
}

// Record implements the kernel's recorder hook.
func (m *Memory) Record(e *Event) { m.Events = append(m.Events, *e) }

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

// Hasher is a recorder that only hashes events (no header), for determinism
// audits that do not need the trace itself.
type Hasher struct {
	h   hash.Hash
	buf bytes.Buffer
	N   int
}

// NewHasher returns an empty hasher.
func NewHasher() *Hasher { return &Hasher{h: sha256.New()} }

// Record implements the kernel's recorder hook.
func (x *Hasher) Record(e *Event) {
	x.buf.Reset()
	enc := json.NewEncoder(&x.buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(e)
	x.h.Write(x.buf.Bytes())
	x.N++
}

// Sum returns the hash so far.
func (x *Hasher) Sum() string { return hex.EncodeToString(x.h.Sum(nil)) }

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
	return a.Seq == b.Seq && a.T == b.T && a.Node == b.Node && a.Kind == b.Kind && a.Text == b.Text &&
		bytes.Equal(a.Data, b.Data)
}
