package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/fencesim/fencesim/traces"
)

// Input is everything one report shows. Only Header and Events are needed;
// every other part is left out of the page when empty.
type Input struct {
	Title      string // page title; default "<system> seed <seed>"
	Header     traces.Header
	Events     []traces.Event
	Nodes      []string    // lane order (optional): these first, then the others as they appear
	Violations []Violation // empty: the run passed
	Schedule   []string    // the minimized fault schedule, one action per line
	Probes     []Probe
	Timings    []Timing
	Hash       string // the trace's canonical hash
	Replay     string // a command to paste that replays the run
	TracePath  string // where the trace file is, if written

	// Story is the life of the key the failure is about (a submission, an
	// idempotency key, a transaction's gid): its state over time, drawn as
	// a lane of its own with the events that changed it (nil: none).
	Story *Story
	// Needed are the Seqs of the fault events the failure needs (of the
	// minimized schedule): labelled on the lanes they hit.
	Needed []uint64
	// Window is the time range [from, to] (world ns) the timeline opens on:
	// from the first needed fault to the violation. Zero: the page picks.
	Window [2]int64
	// Mattered are the Seqs of the send events of the messages that
	// mattered to the failure (the key's story), highlighted.
	Mattered []uint64

	// Linearization is a complete HTML document (porcupine's visualization)
	// shown in a sandboxed frame of the page.
	Linearization []byte
	// Extra is trusted HTML placed as is at the end of the page.
	Extra template.HTML

	// MaxEvents bounds the events drawn on the timeline (0: DefaultMaxEvents,
	// negative: no bound). A longer trace is drawn around its violation
	// and the page says how many events were left out; crash, pause and
	// partition shading always covers the whole run.
	MaxEvents int
	// Context is how many events before and after each violating event the
	// page lists in full (0: DefaultContext).
	Context int
}

// Violation is a property that failed, with the events that break it.
type Violation struct {
	Property string
	Message  string
	Events   []uint64 // Seq of the offending events
	Detail   string   // preformatted text, e.g. the linearization that failed
	// Explanation says in words why a history is not linearizable: the
	// shortest prefix that already is not, and the operation that cannot be
	// placed after it; Links are the Seqs of the events it names.
	Explanation string
	Links       []uint64
}

// Story is one key's life: what the failure is about, step by step.
type Story struct {
	Key   string // in words: "submission 104", "key evt-3", "gid g2"
	Steps []Step // in time order
}

// Step is one change of the key's state, or an event that acted on it.
type Step struct {
	Seq   uint64 // the event
	T     int64  // its world time, ns
	Node  string // where it happened
	What  string // the event in words: "home-2 claims it: token arbiter-1.1.8 gen 1"
	State string // the key's state after it, in words ("" when unchanged): "judging, token arbiter-1.1.8 gen 1, worker home-2"
	Bad   bool   // the step that breaks the property
}

// Probe counts how often something happened over Runs runs.
type Probe struct {
	Name  string
	Count int
	Runs  int
}

// Rate is Count/Runs (0 when there were no runs).
func (p Probe) Rate() float64 {
	if p.Runs == 0 {
		return 0
	}
	return float64(p.Count) / float64(p.Runs)
}

// Timing is how long one checker took.
type Timing struct {
	Name string
	D    time.Duration
}

// Defaults for Input's bounds.
const (
	DefaultMaxEvents = 50_000
	DefaultContext   = 12
	maxText          = 240 // characters of an event's text kept on the timeline
)

//go:embed page.html
var pageHTML string

//go:embed page.css
var pageCSS string

//go:embed page.js
var pageJS string

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"rate":  func(p Probe) string { return fmt.Sprintf("%.2f%%", 100*p.Rate()) },
	"dur":   func(d time.Duration) string { return d.String() },
	"words": func(e traces.Event) string { return words(&e) },
	"raw":   rawOf,
	"ts":    fmtTime,
}).Parse(pageHTML))

type row struct {
	traces.Event
	Hi  bool
	Gap bool // events were skipped before this one
}

type viewViolation struct {
	Violation
	Found        []traces.Event
	Missing      []uint64
	Linked       []traces.Event // the events of Links, in the order given
	LinksMissing []uint64
	SameLinks    bool // Links are the offending events: listed once
}

// storyRow is one line of the story: a step of the key, or a needed fault
// the steps do not name.
type storyRow struct {
	Seq     uint64
	T       int64
	Node    string
	What    string
	State   string
	Bad     bool
	Fault   bool
	Changed bool // its state differs from the one before
}

type kindCount struct {
	Kind string
	N    int
}

type view struct {
	In         Input
	Title      string
	Failed     bool
	CSS        template.CSS
	JS         template.JS
	Data       template.JS
	Violations []viewViolation
	Context    []row
	Design     string
	Workload   string
	Limits     string
	HeaderJSON string
	Kinds      []kindCount
	Lin        string     // porcupine's page, when it could not be drawn as LinView
	LinView    []linPart  // the linearization, drawn by the report
	Story      []storyRow // the story's steps and the needed faults, in time order
	StoryKey   string
	Nodes      int
	Messages   int
	Duration   string
	Omitted    int
	Shown      [2]uint64
}

// Write renders the report as one self-contained HTML page. The output is a
// function of in alone.
func Write(w io.Writer, in Input) error {
	v, err := prepare(in)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := page.Execute(&buf, v); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

func prepare(in Input) (*view, error) {
	maxEv := in.MaxEvents
	if maxEv == 0 {
		maxEv = DefaultMaxEvents
	}
	ctx := in.Context
	if ctx <= 0 {
		ctx = DefaultContext
	}
	var hi []uint64
	for _, v := range in.Violations {
		hi = append(hi, v.Events...)
	}
	m := build(in.Events, opts{nodes: in.Nodes, hi: hi, maxEvents: maxEv, maxText: maxText,
		window: in.Window, needed: in.Needed, mattered: in.Mattered, story: in.Story})
	data, err := json.Marshal(m) // escapes <, > and &: safe inside <script>
	if err != nil {
		return nil, fmt.Errorf("encode timeline: %w", err)
	}
	v := &view{
		In: in, Title: in.Title, Failed: len(in.Violations) > 0,
		CSS: template.CSS(pageCSS), JS: template.JS(pageJS), Data: template.JS(data),
		Nodes: len(m.Lanes), Messages: m.MsgCount, Omitted: m.Omitted, Shown: m.Shown,
		Design: pretty(in.Header.Design), Workload: pretty(in.Header.Workload), Limits: pretty(in.Header.Limits),
		Lin: string(in.Linearization),
	}
	if _, ok := indexOf(m.Lanes, World); ok {
		v.Nodes--
	}
	if v.Title == "" {
		v.Title = fmt.Sprintf("%s seed %d", orDefault(in.Header.System, "fencesim run"), in.Header.Seed)
	}
	if len(in.Events) > 0 {
		v.Duration = fmtTime(m.T1 - m.T0)
	}

	// Events by Seq, for the violations and the listing around them.
	pos := map[uint64]int{}
	want := map[uint64]bool{}
	for _, s := range hi {
		want[s] = true
	}
	look := map[uint64]bool{}
	for _, v := range in.Violations {
		for _, s := range v.Links {
			look[s] = true
		}
	}
	for _, s := range in.Needed {
		look[s] = true
	}
	found := map[uint64]int{} // links and needed faults
	for i := range in.Events {
		if want[in.Events[i].Seq] {
			pos[in.Events[i].Seq] = i
		}
		if look[in.Events[i].Seq] {
			found[in.Events[i].Seq] = i
		}
	}
	for _, vi := range in.Violations {
		vv := viewViolation{Violation: vi}
		for _, s := range vi.Events {
			if i, ok := pos[s]; ok {
				vv.Found = append(vv.Found, in.Events[i])
			} else {
				vv.Missing = append(vv.Missing, s)
			}
		}
		for _, s := range vi.Links {
			if i, ok := found[s]; ok {
				vv.Linked = append(vv.Linked, in.Events[i])
			} else {
				vv.LinksMissing = append(vv.LinksMissing, s)
			}
		}
		vv.SameLinks = len(vi.Links) > 0 && sameSet(vi.Links, vi.Events)
		v.Violations = append(v.Violations, vv)
	}
	var idx []int
	for _, i := range pos {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	next := 0 // first index not yet listed
	for _, i := range idx {
		from := max(i-ctx, next)
		to := min(i+ctx+1, len(in.Events))
		for j := from; j < to; j++ {
			v.Context = append(v.Context, row{Event: in.Events[j], Hi: want[in.Events[j].Seq], Gap: j == from && j > next && len(v.Context) > 0})
		}
		next = max(next, to)
	}

	if in.Story != nil {
		v.StoryKey = in.Story.Key
		named := map[uint64]bool{}
		prev := ""
		for _, st := range in.Story.Steps {
			named[st.Seq] = true
			changed := st.State != "" && st.State != prev
			if st.State != "" {
				prev = st.State
			}
			node := st.Node
			if strings.HasPrefix(st.What, node+" ") || strings.HasPrefix(st.What, node+":") {
				node = "" // the words name it already
			}
			v.Story = append(v.Story, storyRow{Seq: st.Seq, T: st.T, Node: node, What: st.What, State: st.State, Bad: st.Bad, Changed: changed})
		}
		for _, s := range in.Needed {
			if i, ok := found[s]; ok && !named[s] {
				e := &in.Events[i]
				what := words(e)
				if a, ok := actionOf(e); ok {
					what = faultWords(a)
				}
				v.Story = append(v.Story, storyRow{Seq: s, T: e.T, What: what, Fault: true})
			}
		}
		sort.SliceStable(v.Story, func(i, j int) bool {
			a, b := v.Story[i], v.Story[j]
			return a.T < b.T || (a.T == b.T && a.Seq < b.Seq)
		})
	}
	if len(in.Linearization) > 0 {
		if parts, ok := linView(in.Linearization, in.Events); ok {
			v.LinView, v.Lin = parts, ""
		}
	}

	counts := map[string]int{}
	for i := range in.Events {
		counts[in.Events[i].Kind]++
	}
	for _, k := range sortedKeys(counts) {
		v.Kinds = append(v.Kinds, kindCount{k, counts[k]})
	}
	hdr := in.Header
	hdr.Tape = nil // can be long; the entropy kind is shown
	if b, err := json.MarshalIndent(hdr, "", "  "); err == nil {
		v.HeaderJSON = string(b)
	}
	return v, nil
}

func pretty(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

// fmtTime renders simulated nanoseconds in seconds and milliseconds:
// "75.123 s".
func fmtTime(ns int64) string {
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns
	}
	return fmt.Sprintf("%s%d.%03d s", sign, ns/1e9, (ns%1e9)/1e6)
}

// rawOf is an event as the trace has it, as indented JSON.
func rawOf(e traces.Event) string {
	type line struct {
		Seq  uint64          `json:"seq"`
		T    int64           `json:"t"`
		Node string          `json:"node,omitempty"`
		Kind string          `json:"kind"`
		Text string          `json:"text,omitempty"`
		Data json.RawMessage `json:"data,omitempty"`
	}
	b, err := json.MarshalIndent(line{e.Seq, e.T, e.Node, e.Kind, e.Desc(), e.DataJSON()}, "", "  ")
	if err != nil {
		return e.Desc()
	}
	return string(b)
}

// sameSet reports whether a and b hold the same Seqs (and some).
func sameSet(a, b []uint64) bool {
	as, bs := map[uint64]bool{}, map[uint64]bool{}
	for _, x := range a {
		as[x] = true
	}
	for _, x := range b {
		if !as[x] {
			return false
		}
		bs[x] = true
	}
	return len(as) == len(bs) && len(as) > 0
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func indexOf(xs []string, x string) (int, bool) {
	for i, s := range xs {
		if s == x {
			return i, true
		}
	}
	return -1, false
}
