package report

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fencesim/fencesim/traces"
)

// The timeline model is what the page's script draws. It is built from the
// whole trace (so crash, pause and partition shading is always complete) and
// encoded as compact JSON arrays; messages and marks outside the drawn window
// are left out when the trace is longer than Input.MaxEvents.

// focusEvents is how many events on each side of the violation the first
// view of the timeline shows.
const focusEvents = 100

// World is the name of the lane for events that belong to no node.
const World = "(world)"

// Span kinds, as the script knows them.
const (
	spanDown     = 0 // crashed until restarted
	spanPause    = 1 // paused until resumed
	spanNotStart = 2 // before the node's first start
)

// Message fates.
const (
	fateDeliver  = 0
	fateDrop     = 1
	fateInFlight = 2 // neither delivered nor dropped when the trace ends
)

// Mark classes: fixed ones first, model notes after.
const (
	classStart = iota
	classCrash
	classFault
	classKernel // timer, conn-broken, command, dial, close, break
	classNote   // anything else: db, call, return, commit, verdict...
)

type model struct {
	T0, T1   int64 // time range of the whole trace
	W0, W1   int64 // time range of the drawn window
	Lanes    []string
	Spans    [][]any // [lane, from, to, kind, label]
	Bands    [][]any // [from, to, label, groups [][]lane, oneway]
	Bursts   [][]any // [from, to, label]
	Msgs     [][]any // [from, to, sendT, endT, fate, dup, sendSeq, endSeq, text, reason]
	Marks    [][]any // [lane, t, seq, kind index, class, words, raw data]
	Kinds    []string
	Hi       [][]any // [seq, t, lane, kind, words]: the violating events
	Needed   [][]any // [seq, t, end, lanes []lane, words]: the faults the failure needs
	Story    *storyModel
	Mattered []uint64 // send seqs of the messages that mattered
	Focus    [2]int64
	Omitted  int // events outside the drawn window
	Total    int // events in the trace
	Shown    [2]uint64
	MsgCount int
}

// storyModel is Input.Story for the script: the key and its steps as
// [seq, t, lane, what, state, bad].
type storyModel struct {
	Key   string  `json:"key"`
	Steps [][]any `json:"steps"`
}

func (m *model) MarshalJSON() ([]byte, error) {
	type out struct {
		T0       int64       `json:"t0"`
		T1       int64       `json:"t1"`
		W0       int64       `json:"w0"`
		W1       int64       `json:"w1"`
		Lanes    []string    `json:"lanes"`
		Spans    [][]any     `json:"spans"`
		Bands    [][]any     `json:"bands"`
		Bursts   [][]any     `json:"bursts"`
		Msgs     [][]any     `json:"msgs"`
		Marks    [][]any     `json:"marks"`
		Kinds    []string    `json:"kinds"`
		Hi       [][]any     `json:"hi"`
		Needed   [][]any     `json:"needed"`
		Story    *storyModel `json:"story"`
		Mattered []uint64    `json:"mattered"`
		Focus    [2]int64    `json:"focus"`
		Omitted  int         `json:"omitted"`
		Total    int         `json:"total"`
		Shown    [2]uint64   `json:"shown"`
		MsgCount int         `json:"msgCount"`
	}
	nz := func(a [][]any) [][]any {
		if a == nil {
			return [][]any{}
		}
		return a
	}
	lanes, kinds, mattered := m.Lanes, m.Kinds, m.Mattered
	if lanes == nil {
		lanes = []string{}
	}
	if kinds == nil {
		kinds = []string{}
	}
	if mattered == nil {
		mattered = []uint64{}
	}
	return json.Marshal(out{m.T0, m.T1, m.W0, m.W1, lanes, nz(m.Spans), nz(m.Bands), nz(m.Bursts), nz(m.Msgs), nz(m.Marks), kinds, nz(m.Hi), nz(m.Needed), m.Story, mattered, m.Focus, m.Omitted, m.Total, m.Shown, m.MsgCount})
}

// action is the part of a fault's data (sim.Action as JSON) the report uses.
type action struct {
	Kind   string        `json:"kind"`
	Node   string        `json:"node"`
	Peer   string        `json:"peer"`
	Groups [][]string    `json:"groups"`
	Rate   int64         `json:"rate"`
	For    time.Duration `json:"for"`
	Amount time.Duration `json:"amount"`
	Point  string        `json:"point"`
	Arg    string        `json:"arg"`
	Count  int           `json:"count"`
}

type msg struct {
	id           uint64
	from, to     string
	sendT, endT  int64
	sendSeq      uint64
	endSeq       uint64
	fate         int
	dup          bool
	text, reason string
	seen         bool // a send (or dup) event introduced it
}

type openSpan struct {
	from int64
	ok   bool
}

type builder struct {
	m       model
	lane    map[string]int
	kind    map[string]int
	msgs    map[uint64]*msg
	order   []*msg
	down    map[string]openSpan
	pause   map[string]openSpan
	up      map[string]bool
	started map[string]bool
	bands   []int // indexes of open bands
	maxText int
}

// opts is what build takes from the Input besides the events.
type opts struct {
	nodes     []string
	hi        []uint64 // the violating events
	maxEvents int
	maxText   int
	window    [2]int64 // Input.Window
	needed    []uint64 // Input.Needed
	mattered  []uint64 // Input.Mattered
	story     *Story
}

// rawText is how much of an event's JSON data a mark keeps for the raw
// toggle and the key filter.
const rawText = 1200

// build makes the timeline model. Lanes come first from nodes (in the given
// order), then in order of first appearance in the trace.
func build(evs []traces.Event, o opts) *model {
	b := &builder{
		lane: map[string]int{}, kind: map[string]int{}, msgs: map[uint64]*msg{},
		down: map[string]openSpan{}, pause: map[string]openSpan{}, up: map[string]bool{}, started: map[string]bool{},
		maxText: o.maxText,
	}
	b.m.Total = len(evs)
	for _, n := range o.nodes {
		b.laneOf(n)
	}
	if len(evs) > 0 {
		b.m.T0 = min(0, evs[0].T)
		b.m.T1 = evs[len(evs)-1].T
		for _, e := range evs {
			b.m.T0 = min(b.m.T0, e.T)
			b.m.T1 = max(b.m.T1, e.T)
		}
	}
	if b.m.T1 <= b.m.T0 {
		b.m.T1 = b.m.T0 + 1e9
	}
	win := o.window
	if win[1] <= win[0] {
		win = [2]int64{}
	}

	// The drawn window, by position in the trace.
	lo, hiIdx := window(evs, o.hi, win, o.maxEvents)
	b.m.Omitted = len(evs) - (hiIdx - lo)
	if len(evs) > 0 && hiIdx > lo {
		b.m.W0, b.m.W1 = evs[lo].T, evs[hiIdx-1].T
		b.m.Shown = [2]uint64{evs[lo].Seq, evs[hiIdx-1].Seq}
		if lo == 0 {
			b.m.W0 = b.m.T0
		}
		if hiIdx == len(evs) {
			b.m.W1 = b.m.T1
		}
	} else {
		b.m.W0, b.m.W1 = b.m.T0, b.m.T1
	}

	for i := range evs {
		b.event(&evs[i], i >= lo && i < hiIdx)
	}
	b.finish()

	// The violating events, the needed faults and the initial view.
	bySeq := map[uint64]int{}
	for _, s := range o.hi {
		bySeq[s] = -1
	}
	for _, s := range o.needed {
		bySeq[s] = -1
	}
	for i := range evs {
		if _, ok := bySeq[evs[i].Seq]; ok {
			bySeq[evs[i].Seq] = i
		}
	}
	first, last := -1, -1
	for _, s := range o.hi {
		i := bySeq[s]
		if i < 0 {
			continue
		}
		e := &evs[i]
		b.m.Hi = append(b.m.Hi, []any{e.Seq, e.T, b.laneOf(e.Node), e.Kind, b.clip(words(e))})
		if first < 0 || i < first {
			first = i
		}
		last = max(last, i)
	}
	for _, s := range o.needed {
		if i := bySeq[s]; i >= 0 {
			b.needed(&evs[i])
		}
	}
	b.m.Mattered = append([]uint64(nil), o.mattered...)
	if o.story != nil {
		st := &storyModel{Key: o.story.Key, Steps: [][]any{}}
		for _, x := range o.story.Steps {
			st.Steps = append(st.Steps, []any{x.Seq, x.T, b.laneOf(x.Node), b.clip(x.What), b.clip(x.State), x.Bad})
		}
		b.m.Story = st
	}
	switch {
	case win != [2]int64{}:
		// The caller's window (the first needed fault to the violation),
		// widened to the violating events if they fall outside, with a
		// margin so that neither end sits on the frame.
		f0, f1 := win[0], win[1]
		for _, h := range b.m.Hi {
			f0, f1 = min(f0, h[1].(int64)), max(f1, h[1].(int64))
		}
		pad := max((f1-f0)/25, 1e6)
		b.m.Focus = [2]int64{max(b.m.T0, f0-pad), min(b.m.T1, f1+pad)}
	case first >= 0:
		// Show the violation with the focusEvents events on each side, so
		// the first view is readable however long the trace.
		f0, f1 := evs[max(0, first-focusEvents)].T, evs[min(len(evs)-1, last+focusEvents)].T
		pad := max((f1-f0)/20, 1e6)
		b.m.Focus = [2]int64{max(b.m.T0, f0-pad), min(b.m.T1, f1+pad)}
	default:
		b.m.Focus = [2]int64{b.m.W0, b.m.W1}
	}
	if b.m.Focus[1] <= b.m.Focus[0] {
		b.m.Focus[1] = b.m.Focus[0] + 1e9
	}
	return &b.m
}

// needed adds a fault the failure needs, labelled on the lanes it hits:
// the first lane gets the words, the others a marker.
func (b *builder) needed(e *traces.Event) {
	a, ok := actionOf(e)
	if !ok {
		b.m.Needed = append(b.m.Needed, []any{e.Seq, e.T, e.T, []int{b.laneOf(e.Node)}, b.clip(words(e))})
		return
	}
	lanes := []int{}
	add := func(n string) {
		if n == "" {
			return
		}
		l := b.laneOf(n)
		for _, x := range lanes {
			if x == l {
				return
			}
		}
		lanes = append(lanes, l)
	}
	switch a.Kind {
	case "partition":
		// The smallest group first: "arbiter-1 cut off" reads from there.
		gs := append([][]string(nil), a.Groups...)
		sort.SliceStable(gs, func(i, j int) bool { return len(gs[i]) < len(gs[j]) })
		for _, g := range gs {
			for _, n := range g {
				add(n)
			}
		}
	default:
		add(a.Node)
		add(a.Peer)
	}
	end := e.T + int64(a.For)
	if a.Kind == "pause" || a.Kind == "crash" {
		kind := spanPause
		if a.Kind == "crash" {
			kind = spanDown
		}
		for _, sp := range b.m.Spans {
			if sp[3].(int) == kind && sp[1].(int64) == e.T && len(lanes) > 0 && sp[0].(int) == lanes[0] {
				end = sp[2].(int64)
			}
		}
	}
	b.m.Needed = append(b.m.Needed, []any{e.Seq, e.T, end, lanes, b.clip(faultWords(a))})
}

// window picks the events to draw: all of them if they fit, else maxEvents
// of them from a little before the caller's window (win, when set), or
// centred on the violating events (or the last ones).
func window(evs []traces.Event, hi []uint64, win [2]int64, maxEvents int) (int, int) {
	if maxEvents <= 0 || len(evs) <= maxEvents {
		return 0, len(evs)
	}
	if win != [2]int64{} {
		i := sort.Search(len(evs), func(i int) bool { return evs[i].T >= win[0] })
		lo := max(0, i-maxEvents/10)
		hi2 := min(len(evs), lo+maxEvents)
		return max(0, hi2-maxEvents), hi2
	}
	centre := len(evs) - 1
	if len(hi) > 0 {
		want := map[uint64]bool{}
		for _, s := range hi {
			want[s] = true
		}
		first, last := -1, -1
		for i := range evs {
			if want[evs[i].Seq] {
				if first < 0 {
					first = i
				}
				last = i
			}
		}
		if first >= 0 {
			centre = (first + last) / 2
		}
	}
	lo := max(0, centre-maxEvents*3/4) // more history than aftermath
	hi2 := min(len(evs), lo+maxEvents)
	lo = max(0, hi2-maxEvents)
	return lo, hi2
}

func (b *builder) laneOf(name string) int {
	if name == "" {
		name = World
	}
	if i, ok := b.lane[name]; ok {
		return i
	}
	b.lane[name] = len(b.m.Lanes)
	b.m.Lanes = append(b.m.Lanes, name)
	return b.lane[name]
}

func (b *builder) kindOf(k string) int {
	if i, ok := b.kind[k]; ok {
		return i
	}
	b.kind[k] = len(b.m.Kinds)
	b.m.Kinds = append(b.m.Kinds, k)
	return b.kind[k]
}

func (b *builder) clip(s string) string { return clip(s, b.maxText) }

// clip cuts s to at most n bytes (n <= 0: no bound), at a rune boundary,
// and says so with an ellipsis.
func clip(s string, n int) string {
	if n > 0 && len(s) > n {
		cut := n
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		return s[:cut] + "…"
	}
	return s
}

func isRuneStart(c byte) bool { return c&0xC0 != 0x80 }

func (b *builder) mark(e *traces.Event, class int, shown bool) {
	if !shown {
		return
	}
	raw := ""
	if e.HasData() {
		raw = clip(string(e.DataJSON()), rawText)
	}
	b.m.Marks = append(b.m.Marks, []any{b.laneOf(e.Node), e.T, e.Seq, b.kindOf(e.Kind), class, b.clip(words(e)), raw})
}

// parseID reads the "#<id>" that starts a message event's text.
func parseID(text string) (uint64, string, bool) {
	if !strings.HasPrefix(text, "#") {
		return 0, "", false
	}
	rest := text[1:]
	end := strings.IndexByte(rest, ' ')
	if end < 0 {
		end = len(rest)
	}
	id, err := strconv.ParseUint(rest[:end], 10, 64)
	if err != nil {
		return 0, "", false
	}
	return id, strings.TrimPrefix(rest[end:], " "), true
}

// parseRoute reads "<from>-><to>[ conn=<n>] <body>".
func parseRoute(s string) (from, to string, ok bool) {
	route, _, _ := strings.Cut(s, " ")
	from, to, ok = strings.Cut(route, "->")
	return from, to, ok && from != "" && to != ""
}

func (b *builder) event(e *traces.Event, shown bool) {
	switch e.Kind {
	case "start", "restart":
		b.laneOf(e.Node)
		if st, ok := b.down[e.Node]; ok && st.ok {
			b.m.Spans = append(b.m.Spans, []any{b.laneOf(e.Node), st.from, e.T, spanDown, "down"})
			delete(b.down, e.Node)
		} else if !b.started[e.Node] && e.T > b.m.T0 {
			b.m.Spans = append(b.m.Spans, []any{b.laneOf(e.Node), b.m.T0, e.T, spanNotStart, "not started"})
		}
		b.endPause(e.Node, e.T)
		b.started[e.Node] = true
		b.up[e.Node] = true
		b.mark(e, classStart, true)
	case "crash":
		b.endPause(e.Node, e.T)
		b.started[e.Node] = true
		b.up[e.Node] = false
		b.down[e.Node] = openSpan{from: e.T, ok: true}
		b.mark(e, classCrash, true)
	case "fault":
		b.fault(e)
		b.mark(e, classFault, true)
	case "send":
		id, rest, ok := parseID(e.Desc())
		from, to, ok2 := parseRoute(rest)
		if !ok || !ok2 {
			b.mark(e, classKernel, shown)
			return
		}
		b.laneOf(from)
		b.laneOf(to)
		m := b.msg(id)
		m.from, m.to, m.sendT, m.sendSeq, m.text, m.seen, m.fate = from, to, e.T, e.Seq, rest, true, fateInFlight
		m.endT = e.T
	case "deliver":
		id, rest, ok := parseID(e.Desc())
		if !ok {
			b.mark(e, classKernel, shown)
			return
		}
		m := b.msg(id)
		if !m.seen { // a send we never saw: take the route from the delivery
			if from, to, ok := parseRoute(rest); ok {
				m.from, m.to, m.sendT, m.text, m.seen = from, to, e.T, rest, true
			}
		}
		m.fate, m.endT, m.endSeq = fateDeliver, e.T, e.Seq
	case "drop":
		id, reason, ok := parseID(e.Desc())
		m := b.msgs[id]
		if !ok || m == nil || !m.seen {
			b.mark(e, classKernel, shown) // "conn 3 unknown: ..." has no message id
			return
		}
		m.fate, m.endT, m.endSeq, m.reason = fateDrop, e.T, e.Seq, reason
	case "dup":
		id, rest, ok := parseID(e.Desc())
		var id2 uint64
		if ok {
			id2, _, ok = parseID(strings.TrimPrefix(rest, "copied as "))
		}
		orig := b.msgs[id]
		if !ok || orig == nil {
			b.mark(e, classKernel, shown)
			return
		}
		c := b.msg(id2)
		c.from, c.to, c.sendT, c.sendSeq, c.text, c.seen, c.dup, c.fate = orig.from, orig.to, orig.sendT, e.Seq, orig.text, true, true, fateInFlight
		c.endT = orig.sendT
	case "timer", "conn-broken", "command", "dial", "close", "break":
		b.mark(e, classKernel, shown)
	default:
		b.mark(e, classNote, shown)
	}
}

func (b *builder) msg(id uint64) *msg {
	m := b.msgs[id]
	if m == nil {
		m = &msg{id: id, fate: fateInFlight}
		b.msgs[id] = m
		b.order = append(b.order, m)
	}
	return m
}

func (b *builder) endPause(node string, t int64) {
	if st, ok := b.pause[node]; ok && st.ok {
		b.m.Spans = append(b.m.Spans, []any{b.laneOf(node), st.from, t, spanPause, "paused"})
		delete(b.pause, node)
	}
}

func (b *builder) endBands(t int64) {
	for _, i := range b.bands {
		b.m.Bands[i][1] = t
	}
	b.bands = nil
}

func (b *builder) fault(e *traces.Event) {
	if !e.HasData() {
		return // "crash point reached", "loss burst 1 ended", "restart ignored"
	}
	var a action
	if json.Unmarshal(e.DataJSON(), &a) != nil {
		return
	}
	label := faultWords(a)
	switch a.Kind {
	case "pause":
		if b.up[a.Node] {
			if _, ok := b.pause[a.Node]; !ok {
				b.pause[a.Node] = openSpan{from: e.T, ok: true}
			}
		}
	case "resume":
		b.endPause(a.Node, e.T)
	case "partition":
		groups := make([][]int, len(a.Groups))
		for i, g := range a.Groups {
			groups[i] = []int{}
			for _, n := range g {
				groups[i] = append(groups[i], b.laneOf(n))
			}
		}
		b.bands = append(b.bands, len(b.m.Bands))
		b.m.Bands = append(b.m.Bands, []any{e.T, b.m.T1, label, groups, false})
	case "cut":
		b.bands = append(b.bands, len(b.m.Bands))
		b.m.Bands = append(b.m.Bands, []any{e.T, b.m.T1, label, [][]int{{b.laneOf(a.Node)}, {b.laneOf(a.Peer)}}, true})
	case "heal":
		b.endBands(e.T)
	case "heal-all":
		b.endBands(e.T)
		for _, n := range sortedKeys(b.pause) {
			b.endPause(n, e.T)
		}
	case "loss", "dup", "delay":
		b.m.Bursts = append(b.m.Bursts, []any{e.T, e.T + int64(a.For), faultWords(a)})
	}
}

// finish closes what is still open at the end of the trace and lays out the
// messages.
func (b *builder) finish() {
	for _, n := range sortedKeys(b.down) {
		b.m.Spans = append(b.m.Spans, []any{b.laneOf(n), b.down[n].from, b.m.T1, spanDown, "down"})
	}
	for _, n := range sortedKeys(b.pause) {
		b.m.Spans = append(b.m.Spans, []any{b.laneOf(n), b.pause[n].from, b.m.T1, spanPause, "paused"})
	}
	for _, m := range b.order {
		if !m.seen {
			continue
		}
		b.m.MsgCount++
		end := m.endT
		if m.fate == fateInFlight {
			end = b.m.T1
		}
		if end < b.m.W0 || m.sendT > b.m.W1 {
			continue
		}
		dup := 0
		if m.dup {
			dup = 1
		}
		b.m.Msgs = append(b.m.Msgs, []any{b.laneOf(m.from), b.laneOf(m.to), m.sendT, end, m.fate, dup, m.sendSeq, m.endSeq, b.clip("#" + strconv.FormatUint(m.id, 10) + " " + m.text), m.reason})
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
