package story

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/report"
)

// Fault is a fault action as a schedule holds it: when, what, where.
type Fault struct {
	At   int64
	Kind string
	Node string
}

// Faults returns the Seqs of the trace's fault events that played the
// given actions (a minimized schedule's needed ones), matched by time,
// kind and node.
func Faults(events []traces.Event, want []Fault) []uint64 {
	var out []uint64
	used := map[uint64]bool{}
	for _, f := range want {
		for i := range events {
			e := &events[i]
			if e.Kind != "fault" || used[e.Seq] {
				continue
			}
			var a struct {
				At   int64  `json:"at"`
				Kind string `json:"kind"`
				Node string `json:"node"`
			}
			if decode(e, &a) != nil || a.At != f.At || a.Kind != f.Kind || a.Node != f.Node {
				continue
			}
			used[e.Seq] = true
			out = append(out, e.Seq)
			break
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Window is the time range a reader opens the run on: from the first
// needed fault (else the story's first step) to the last violating event
// (else the story's last step), with a small margin on each side.
func Window(events []traces.Event, faults []uint64, st *report.Story, violating []uint64) [2]int64 {
	at := map[uint64]int64{}
	for i := range events {
		at[events[i].Seq] = events[i].T
	}
	from, to := int64(-1), int64(-1)
	for _, s := range faults {
		if t, ok := at[s]; ok && (from < 0 || t < from) {
			from = t
		}
	}
	if from < 0 && st != nil && len(st.Steps) > 0 {
		from = st.Steps[0].T
	}
	for _, s := range violating {
		if t, ok := at[s]; ok && t > to {
			to = t
		}
	}
	if to < 0 && st != nil && len(st.Steps) > 0 {
		to = st.Steps[len(st.Steps)-1].T // the checker named no event: the story's end
	}
	if from < 0 || to < 0 {
		return [2]int64{}
	}
	if from > to {
		from, to = to, from
	}
	margin := max((to-from)/50, 100_000_000) // 2%, at least 100 ms
	return [2]int64{max(from-margin, 0), to + margin}
}

// line is one entry of the terminal timeline.
type line struct {
	t     int64
	seq   uint64
	mark  string
	node  string
	text  string
	keep  bool // never dropped to fit
	quiet bool // a routine step (a heartbeat): counted, not printed
}

// Lines renders the failure as a compact terminal timeline of at most max
// lines: the needed faults and the key's story in time order, one line per
// step (routine heartbeats counted, not printed), the violating step
// marked, earlier steps dropped first when it is too long. The needed
// faults and the violating steps are never dropped, even past max.
func Lines(events []traces.Event, faults []uint64, st *report.Story, property, message string, maxLines int) []string {
	var ls []line
	isFault := map[uint64]bool{}
	for _, s := range faults {
		isFault[s] = true
	}
	first, last := int64(-1), int64(-1) // the first needed fault, the last violating step
	for i := range events {
		e := &events[i]
		if isFault[e.Seq] {
			ls = append(ls, line{t: e.T, seq: e.Seq, mark: "fault", node: e.Node, text: faultText(e.Text), keep: true})
			if first < 0 {
				first = e.T
			}
		}
	}
	if st != nil {
		for _, s := range st.Steps {
			if s.Bad {
				last = s.T
			}
		}
	}
	// The heals between the first needed fault and the violation end what
	// the faults started (a pause's resume): they are part of the story.
	for i := range events {
		e := &events[i]
		if e.Kind == "fault" && !isFault[e.Seq] && first >= 0 && e.T >= first && (last < 0 || e.T <= last) && isHeal(e) {
			ls = append(ls, line{t: e.T, seq: e.Seq, mark: "heal", node: e.Node, text: faultText(e.Text)})
		}
	}
	quiet := map[string]int{}
	after := 0
	if st != nil {
		for _, s := range st.Steps {
			l := line{t: s.T, seq: s.Seq, node: s.Node, text: s.What}
			switch {
			case s.Bad:
				l.mark, l.keep = "VIOLATES", true
			case strings.Contains(s.What, "heartbeat") || strings.Contains(s.What, "(lease extended)"):
				l.quiet = true
				quiet["heartbeats"]++
			case strings.HasPrefix(s.What, "web: read"):
				l.quiet = true
				quiet["status reads"]++
			case last >= 0 && s.T > last:
				if after == 3 {
					l.quiet = true
					quiet["steps after the violation"]++
				}
				after = min(after+1, 3)
			}
			ls = append(ls, l)
		}
	}
	sort.SliceStable(ls, func(i, j int) bool {
		if ls[i].t != ls[j].t {
			return ls[i].t < ls[j].t
		}
		return ls[i].seq < ls[j].seq
	})
	var shown []line
	for _, l := range ls {
		if !l.quiet {
			shown = append(shown, l)
		}
	}
	key := "the run"
	if st != nil {
		key = st.Key
	}
	head := fmt.Sprintf("timeline of %s: %d needed faults, %d steps", key, len(faults), len(shown))
	var q []string
	for _, k := range sortedKeys(quiet) {
		q = append(q, fmt.Sprintf("%d %s", quiet[k], k))
	}
	if len(q) > 0 {
		head += " (not shown: " + strings.Join(q, ", ") + ")"
	}
	out := []string{head + "; #N: the event's number in the trace"}
	room := maxLines - 2 // the head and the verdict
	dropped := 0
	for len(shown) > room && room > 0 {
		i := 0
		for i < len(shown) && shown[i].keep {
			i++
		}
		if i == len(shown) {
			break
		}
		shown = append(shown[:i], shown[i+1:]...)
		dropped++
	}
	if dropped > 0 {
		room-- // the line that says so
		for len(shown) > room {
			i := 0
			for i < len(shown) && shown[i].keep {
				i++
			}
			if i == len(shown) {
				break // only the lines that stay are left
			}
			shown = append(shown[:i], shown[i+1:]...)
			dropped++
		}
		out = append(out, fmt.Sprintf("  ... %d earlier steps not shown", dropped))
	}
	for _, l := range shown {
		out = append(out, fmt.Sprintf("  %10s  #%-6d %-8s %-12s %s", seconds(l.t), l.seq, l.mark, l.node, clip(l.text, 140)))
	}
	return append(out, "  => "+property+": "+clip(message, 160))
}

// isHeal reports whether a fault event ends faults (heal-all, resume,
// unstall, heal, restart).
func isHeal(e *traces.Event) bool {
	var a struct {
		Kind string `json:"kind"`
	}
	if decode(e, &a) != nil {
		return false
	}
	switch a.Kind {
	case "heal-all", "heal", "resume", "unstall", "restart":
		return true
	}
	return false
}

func faultText(s string) string {
	if i := strings.Index(s, " "); i > 0 && strings.HasPrefix(s, "@") {
		return s[i+1:]
	}
	return s
}

func seconds(ns int64) string { return fmt.Sprintf("%d.%03ds", ns/1e9, (ns%1e9)/1e6) }

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
