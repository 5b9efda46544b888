package sim

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/traces"
)

// This file is the recording side of the kernel: which kinds are recorded
// (the Filter), how events are numbered, and how their texts are made.

// Recorder sees every event of a run. It must not keep the pointer (the
// event may be copied). An event may have lazy parts (traces.Event.Msg,
// Value, TextOfValue): read it with Desc and DataJSON, or Fill a copy.
type Recorder interface {
	Record(e *traces.Event)
}

// HeaderRecorder is a Recorder that reads only a message's header (its id,
// ends and connection), never its body or text: the kernel then records a
// send or deliver without rendering the body (RefRecorder). Its events'
// Msg has no Body.
type HeaderRecorder interface {
	Recorder
	HeadersOnly()
}

// ImmediateRecorder is a Recorder that reads every event at once, in
// Record, and keeps nothing it did not copy (traces.Digest): the kernel
// then hands it every send and deliver with its body as sent (Event.Msg),
// never rendering a text it would only hash.
type ImmediateRecorder interface {
	Recorder
	Immediate()
}

// kind is one of the kernel's own trace kinds, a bit of a kindSet.
type kind uint8

const (
	kDeliver kind = iota
	kSend
	kDrop
	kDup
	kTimer
	kConnBroken
	kCommand
	kCrash
	kRestart
	kStart
	kFault
	kDial
	kClose
	kBreak
	kNote
)

// kernelKinds are the trace kinds of the kernel's own events, by bit.
var kernelKinds = [...]string{kDeliver: "deliver", kSend: "send", kDrop: "drop", kDup: "dup", kTimer: "timer",
	kConnBroken: "conn-broken", kCommand: "command", kCrash: "crash", kRestart: "restart", kStart: "start",
	kFault: "fault", kDial: "dial", kClose: "close", kBreak: "break", kNote: "note"}

// kindSet is a set of kernel kinds: the filter asked once per kind, at New.
type kindSet uint32

func (s kindSet) has(k kind) bool { return s&(1<<k) != 0 }

func (w *World) recordInput(s *slot, in *Input) {
	switch in.Kind {
	case Timer:
		if w.wants(kTimer) {
			// Rendered now: a tag's text may change (a process's label).
			b := append(w.text[:0], "timer "...)
			b = strconv.AppendUint(b, uint64(in.TimerID), 10)
			b = append(b, ' ')
			b = traces.AppendValue(b, in.Tag)
			w.text = b
			w.emit(s.name, kTimer, string(b))
		}
	case ConnBroken:
		if w.wants(kConnBroken) {
			w.emit(s.name, kConnBroken, connText("conn ", in.Conn, " to ", in.Peer))
		}
	case Command:
		if w.wants(kCommand) {
			w.emit(s.name, kCommand, strings.TrimSpace(in.Cmd.Name+" "+in.Cmd.Arg))
		}
	}
}

// connText renders "<a><conn><b><peer>" ("conn 3 to db").
func connText(a string, c network.ConnID, b string, peer network.Addr) string {
	buf := make([]byte, 0, len(a)+len(b)+len(peer)+8)
	buf = append(buf, a...)
	buf = strconv.AppendUint(buf, uint64(c), 10)
	buf = append(buf, b...)
	buf = append(buf, peer...)
	return string(buf)
}

// idText renders "#<id> <why>".
func idText(id uint64, why string) string {
	buf := make([]byte, 0, len(why)+12)
	buf = append(buf, '#')
	buf = strconv.AppendUint(buf, id, 10)
	buf = append(buf, ' ')
	buf = append(buf, why...)
	return string(buf)
}

// wantsNote reports whether notes of a kind are recorded. The filter is
// asked once per kind.
func (w *World) wantsNote(kind string) bool {
	if w.rec == nil {
		return false
	}
	if w.filter == nil {
		return true
	}
	// A run notes a handful of kinds, most often the same few: a list
	// searched in order costs less than hashing the kind into a map.
	for i := range w.notes {
		if w.notes[i].kind == kind {
			return w.notes[i].ok
		}
	}
	ok := w.filter(kind)
	w.notes = append(w.notes, noteKind{kind, ok})
	return ok
}

// noteKind is the filter's answer for a kind of note (World.wantsNote).
type noteKind struct {
	kind string
	ok   bool
}

// wants reports whether a kernel event of kind k is recorded. An event the
// filter refuses still takes its number, so that a run recorded through a
// Filter numbers its events as the full record of the same run does: the
// events a checker names are the lines of the trace file written from a
// full run (fencesim explore prints the checker's numbers, its artifacts
// are full runs).
func (w *World) wants(k kind) bool {
	if w.want.has(k) {
		return true
	}
	if w.rec != nil {
		w.recSeq++
		w.recAt = w.now
	}
	return false
}

// skipNote numbers a note the filter refused before it was made (Env.Note,
// Env.Skip): see wants.
func (w *World) skipNote() {
	if w.rec != nil {
		w.recSeq++
		w.recAt = w.now
	}
}

// emit records a kernel event whose kind the caller checked (w.wants).
func (w *World) emit(node string, k kind, text string) {
	w.record(traces.Event{Node: node, Kind: kernelKinds[k], Text: text})
}

// emitMsg records a send or deliver. When the body cannot change (frozen),
// its text is rendered from the message only when someone reads it
// (traces.Event.Msg); otherwise now, as the body is now.
func (w *World) emitMsg(node string, k kind, m *network.Message) {
	tm := traces.Msg{ID: m.ID, From: string(m.From), To: string(m.To), Conn: uint64(m.Conn), Body: m.Body}
	if w.headers || w.immediate {
		// The recorder reads the message at once and keeps nothing: one
		// Msg of the world's serves every send.
		if w.headers {
			tm.Body = nil
		}
		w.hdr = tm
		w.record(traces.Event{Node: node, Kind: kernelKinds[k], Msg: &w.hdr})
		return
	}
	if !w.frozen(m.Body) {
		w.record(traces.Event{Node: node, Kind: kernelKinds[k], Text: tm.Text()})
		return
	}
	if len(w.msgs) == cap(w.msgs) {
		w.msgs = make([]traces.Msg, 0, 256)
	}
	w.msgs = append(w.msgs, tm)
	w.record(traces.Event{Node: node, Kind: kernelKinds[k], Msg: &w.msgs[len(w.msgs)-1]})
}

// frozen reports whether a message body's text may be rendered later: its
// type holds no pointer, slice, map, interface, channel or function, so the
// value the message holds (a copy) cannot change after the send. A body
// that shares memory with its sender (a reused statement buffer) is
// rendered at once, as it reads at the time of the event.
func (w *World) frozen(body any) bool {
	t := reflect.TypeOf(body)
	if t == nil {
		return true
	}
	// A world sends a handful of body types: a short list beats a map.
	for i := range w.bodyTypes {
		if w.bodyTypes[i].t == t {
			return w.bodyTypes[i].frozen
		}
	}
	f := plainType(t, 0)
	w.bodyTypes = append(w.bodyTypes, bodyType{t, f})
	return f
}

// bodyType is frozen's answer for one type.
type bodyType struct {
	t      reflect.Type
	frozen bool
}

// plainType reports whether values of t hold only numbers, booleans and
// strings (in structs and arrays).
func plainType(t reflect.Type, depth int) bool {
	if depth > 8 {
		return false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		return true
	case reflect.Array:
		return plainType(t.Elem(), depth+1)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if !plainType(t.Field(i).Type, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// note records a note of any kind. Typed data is kept as the event's Value
// and encoded only when the trace is written, hashed, or its Data is read
// (traces.Event.DataJSON); JSON is kept as is.
func (w *World) note(node, kind, text string, data any) { w.noteOf(node, kind, text, data, false) }

// noteOf records a note; lazy says its text is data's String, left for
// whoever reads it (traces.Event.TextOfValue).
func (w *World) noteOf(node, kind, text string, data any, lazy bool) {
	if !w.wantsNote(kind) {
		w.skipNote()
		return
	}
	ev := traces.Event{Node: node, Kind: kind, Text: text, TextOfValue: lazy}
	switch d := data.(type) {
	case nil:
	case json.RawMessage:
		ev.Data = d
	default:
		ev.Value = d
	}
	w.record(ev)
}

// record hands an event to the recorder. The event passes through a field
// of the world, so that it does not escape to the heap (a recorder must not
// keep the pointer).
func (w *World) record(ev traces.Event) {
	w.recSeq++
	w.recAt = w.now
	ev.Seq, ev.T = w.recSeq, int64(w.now)
	w.ev = ev
	w.rec.Record(&w.ev)
	w.ev = traces.Event{}
}

// Recorded returns how many events the run has numbered so far and the
// time of the last: the length and end of the full record, whether or not
// a Filter refused some of them (a run recorded through a Filter knows
// what its full record would hold). Zero without a Recorder.
func (w *World) Recorded() (uint64, clock.Time) { return w.recSeq, w.recAt }

// Note records a trace event that belongs to no node (a harness's verdict).
func (w *World) Note(kind, text string, data any) { w.note("", kind, text, data) }
