package story

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
	"github.com/fencesim/fencesim/traces/report"
)

// Of builds the story of the key a violation is about: system is the
// trace's system ("arbiter", "outbox", "twopc"), events the run's full
// trace, violating the Seqs the checker named, message its words (a
// fallback to find the key). It returns nil when no key is found.
func Of(system string, events []traces.Event, violating []uint64, message string) *report.Story {
	bad := map[uint64]bool{}
	for _, s := range violating {
		bad[s] = true
	}
	switch system {
	case "arbiter":
		sub, ok := submissionOf(events, bad, message)
		if !ok {
			return nil
		}
		return submissionStory(events, sub, bad)
	default:
		key, ok := stringKeyOf(events, bad, message)
		if !ok {
			return nil
		}
		return keyStory(system, events, key, bad)
	}
}

// ---- system A: a submission ----

var subRe = regexp.MustCompile(`submission (\d+)`)

// submissionOf finds the submission the violating events are about: the
// one they name most, else the one the message names.
func submissionOf(events []traces.Event, bad map[uint64]bool, message string) (int64, bool) {
	count := map[int64]int{}
	for i := range events {
		e := &events[i]
		if !bad[e.Seq] {
			continue
		}
		for _, s := range subsOf(e) {
			count[s]++
		}
	}
	best, n := int64(0), 0
	for s, c := range count {
		if c > n || (c == n && s < best) {
			best, n = s, c
		}
	}
	if n > 0 {
		return best, true
	}
	if m := subRe.FindStringSubmatch(message); m != nil {
		v, err := strconv.ParseInt(m[1], 10, 64)
		return v, err == nil
	}
	return 0, false
}

// subsOf lists the submissions an event is about.
func subsOf(e *traces.Event) []int64 {
	switch e.Kind {
	case hist.KindCall, hist.KindReturn, hist.KindJudge, hist.KindResult:
		var x struct {
			Sub    int64        `json:"sub"`
			Leases []hist.Lease `json:"leases"`
		}
		if decode(e, &x) != nil {
			return nil
		}
		out := []int64{}
		if x.Sub != 0 {
			out = append(out, x.Sub)
		}
		for _, l := range x.Leases {
			if l.Sub != x.Sub {
				out = append(out, l.Sub)
			}
		}
		return out
	case hist.KindCommit:
		var out []int64
		for _, c := range changes(e) {
			if id, ok := rowSub(c); ok {
				out = append(out, id)
			}
		}
		return out
	}
	return nil
}

// rowSub is the submission a changed row belongs to.
func rowSub(c change) (int64, bool) {
	row := c.After
	if row == nil {
		row = c.Before
	}
	switch c.Table {
	case "submissions":
		if len(c.Key) > 0 {
			return toInt(c.Key[0])
		}
	case "submission_judgings":
		return toInt(row["submission_id"])
	}
	return 0, false
}

// submissionStory follows one submission through the run.
func submissionStory(events []traces.Event, sub int64, bad map[uint64]bool) *report.Story {
	st := &report.Story{Key: fmt.Sprintf("submission %d", sub)}
	calls := map[string]hist.Call{} // by id: a return names only its call
	for i := range events {
		e := &events[i]
		step := report.Step{Seq: e.Seq, T: e.T, Node: e.Node, Bad: bad[e.Seq]}
		switch e.Kind {
		case hist.KindCall:
			var c hist.Call
			if decode(e, &c) != nil {
				continue
			}
			calls[c.ID] = c
			if c.Sub != sub {
				continue
			}
			step.What = fmt.Sprintf("%s: %s%s", c.Client, c.Op, leaseText(c.Token, c.Gen))
			if c.Verdict != "" {
				step.What += " verdict " + c.Verdict
			}
		case hist.KindReturn:
			var r hist.Return
			if decode(e, &r) != nil {
				continue
			}
			c := calls[r.ID]
			mine := c.Sub == sub || r.Sub == sub
			for _, l := range r.Leases {
				mine = mine || l.Sub == sub
			}
			if !mine {
				continue
			}
			step.Node = c.Client
			step.What = fmt.Sprintf("%s: %s answered %d", c.Client, orText(c.Op, "call"), r.Code)
			if c.Op == "claim" && r.Code == 200 {
				tok, gen := r.Token, r.Gen
				for _, l := range r.Leases {
					if l.Sub == sub {
						tok, gen = l.Token, l.Gen
					}
				}
				step.What += ": granted" + leaseText(tok, gen)
			}
		case hist.KindJudge:
			var j hist.Judge
			if decode(e, &j) != nil || j.Sub != sub {
				continue
			}
			verb := map[string]string{hist.JudgeStart: "starts judging", hist.JudgeEnd: "ends judging", hist.JudgeAbandon: "abandons judging"}[j.Phase]
			step.What = fmt.Sprintf("%s %s%s", j.Worker, orText(verb, j.Phase), leaseText(j.Token, j.Gen))
			if j.Verdict != "" {
				step.What += ": " + j.Verdict
			}
		case hist.KindResult:
			var r hist.Result
			if decode(e, &r) != nil || r.Sub != sub {
				continue
			}
			step.What = fmt.Sprintf("%s: result %s %s%s", r.Worker, r.Verdict, r.Phase, leaseText(r.Token, r.Gen))
			if r.Code != 0 {
				step.What += fmt.Sprintf(" (%d)", r.Code)
			}
		case hist.KindCommit:
			var parts []string
			for _, c := range changes(e) {
				if id, ok := rowSub(c); !ok || id != sub {
					continue
				}
				switch c.Table {
				case "submissions":
					parts = append(parts, "submission "+diff(c.Before, c.After, "status", "worker_id", "lease_token", "lease_gen", "judge_attempts"))
					step.State = subState(c.After)
				case "submission_judgings":
					parts = append(parts, fmt.Sprintf("history: %v by %v under%s", c.After["verdict"], c.After["worker_id"], leaseText(str(c.After["lease_token"]), int64Of(c.After["lease_gen"]))))
				}
			}
			if len(parts) == 0 {
				continue
			}
			step.What = "commit: " + strings.Join(parts, "; ")
		case "command":
			if !strings.HasSuffix(e.Text, " "+strconv.FormatInt(sub, 10)) {
				continue
			}
			step.What = e.Node + ": " + e.Text
		default:
			continue
		}
		st.Steps = append(st.Steps, step)
	}
	return st
}

func leaseText(token string, gen int64) string {
	switch {
	case token == "":
		return ""
	case gen == 0: // a heartbeat names its token only
		return fmt.Sprintf(" (token %s)", token)
	}
	return fmt.Sprintf(" (token %s gen %d)", token, gen)
}

// subState is a submission row in words.
func subState(row map[string]any) string {
	if row == nil {
		return "deleted"
	}
	s := str(row["status"])
	if tok := str(row["lease_token"]); tok != "" {
		s += fmt.Sprintf(", token %s gen %d", tok, int64Of(row["lease_gen"]))
	}
	if w := str(row["worker_id"]); w != "" {
		s += ", worker " + w
	}
	return s
}

// diff renders what changed in the named columns: "status pending -> judging".
func diff(before, after map[string]any, cols ...string) string {
	if before == nil {
		return "inserted: " + subState(after)
	}
	if after == nil {
		return "deleted"
	}
	var parts []string
	for _, c := range cols {
		a, b := str(before[c]), str(after[c])
		if a != b {
			parts = append(parts, fmt.Sprintf("%s %s -> %s", c, orText(a, "null"), orText(b, "null")))
		}
	}
	if len(parts) == 0 {
		return "unchanged (lease extended)"
	}
	return strings.Join(parts, ", ")
}

// ---- systems B and C: a string key ----

// keyFields are the data fields that name a key, by preference.
var keyFields = []string{"gid", "key", "event", "event_id"}

// stringKeyOf finds the key the violating events name most (a gid, an
// idempotency key, an event id).
func stringKeyOf(events []traces.Event, bad map[uint64]bool, message string) (string, bool) {
	if k, ok := namedKey(events, bad); ok {
		return k, true
	}
	// The checker named no event: the key its message names first, of the
	// keys the trace holds.
	best, at := "", -1
	for _, field := range keyFields {
		seen := map[string]bool{}
		for i := range events {
			for _, v := range fieldValues(&events[i], field) {
				if seen[v] {
					continue
				}
				seen[v] = true
				if j := wordIndex(message, v); j >= 0 && (at < 0 || j < at || (j == at && len(v) > len(best))) {
					best, at = v, j
				}
			}
		}
		if at >= 0 {
			return best, true
		}
	}
	return "", false
}

// wordIndex is where w first appears in s as a whole word (-1: nowhere).
func wordIndex(s, w string) int {
	for from := 0; ; {
		i := strings.Index(s[from:], w)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(w)
		if (i == 0 || !wordByte(s[i-1])) && (end == len(s) || !wordByte(s[end])) {
			return i
		}
		from = i + 1
	}
}

func wordByte(c byte) bool {
	return c == '-' || c == '_' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// namedKey is the key the violating events name most.
func namedKey(events []traces.Event, bad map[uint64]bool) (string, bool) {
	for _, field := range keyFields {
		count := map[string]int{}
		for i := range events {
			e := &events[i]
			if !bad[e.Seq] {
				continue
			}
			for _, v := range fieldValues(e, field) {
				count[v]++
			}
		}
		best, n := "", 0
		for _, k := range sortedKeys(count) {
			if count[k] > n {
				best, n = k, count[k]
			}
		}
		if n > 0 {
			return best, true
		}
	}
	return "", false
}

// fieldValues are the non-empty string values of a field anywhere in an
// event's data (a commit's GID and rows included).
func fieldValues(e *traces.Event, field string) []string {
	var v any
	if decode(e, &v) != nil {
		return nil
	}
	var out []string
	var walk func(x any)
	walk = func(x any) {
		switch t := x.(type) {
		case map[string]any:
			for _, k := range sortedKeys(t) {
				if s, ok := t[k].(string); ok && s != "" && strings.EqualFold(k, field) {
					out = append(out, s)
				}
				walk(t[k])
			}
		case []any:
			for _, y := range t {
				walk(y)
			}
		}
	}
	walk(v)
	return out
}

// keyStory follows a string key through the run: every note and commit
// whose data holds it as a value.
func keyStory(system string, events []traces.Event, key string, bad map[uint64]bool) *report.Story {
	word := "key"
	if system == "twopc" {
		word = "gid"
	}
	st := &report.Story{Key: word + " " + key}
	needle, _ := json.Marshal(key)
	for i := range events {
		e := &events[i]
		if e.Kind == "send" || e.Kind == "deliver" {
			continue
		}
		if len(e.Data) == 0 {
			e.Fill()
		}
		if len(e.Data) == 0 || !bytes.Contains(e.Data, needle) {
			continue
		}
		step := report.Step{Seq: e.Seq, T: e.T, Node: e.Node, Bad: bad[e.Seq], What: orText(e.Node, "world") + ": " + e.Kind + " " + e.Text}
		if e.Kind == "fault" {
			step.What = orText(e.Node, "world") + ": " + faultText(e.Text)
		}
		if e.Kind == hist.KindCommit {
			var rows []string
			for _, c := range changes(e) {
				row := c.After
				if row == nil {
					row = c.Before
				}
				if !holds(row, key) && !holdsAny(c.Key, key) {
					continue
				}
				rows = append(rows, fmt.Sprintf("%s %s %s", c.Table, c.Op, compact(row)))
			}
			step.What = "commit: " + orText(strings.Join(rows, "; "), e.Text)
			if len(rows) > 0 {
				step.State = rows[len(rows)-1]
			}
		}
		st.Steps = append(st.Steps, step)
	}
	return st
}

func holds(row map[string]any, key string) bool {
	for _, v := range row {
		if s, ok := v.(string); ok && s == key {
			return true
		}
	}
	return false
}

func holdsAny(vs []any, key string) bool {
	for _, v := range vs {
		if s, ok := v.(string); ok && s == key {
			return true
		}
	}
	return false
}

// compact is a row in a few words: its columns in order, values shortened.
func compact(row map[string]any) string {
	var parts []string
	for _, k := range sortedKeys(row) {
		v := str(row[k])
		if n, ok := toInt(row[k]); ok && (k == "at" || strings.HasSuffix(k, "_at")) {
			v = seconds(n) // a timestamp: simulated nanoseconds
		}
		if len(v) > 24 {
			v = v[:24] + "..."
		}
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, " ")
}

// ---- decoding ----

type change struct {
	Table  string         `json:"table"`
	Op     string         `json:"op"`
	Key    []any          `json:"key"`
	Before map[string]any `json:"before"`
	After  map[string]any `json:"after"`
}

func changes(e *traces.Event) []change {
	var rec struct {
		Changes []change `json:"changes"`
	}
	if decode(e, &rec) != nil {
		return nil
	}
	return rec.Changes
}

// decode reads an event's data; an event still holding its typed value
// (a run in memory) is rendered first.
func decode(e *traces.Event, v any) error {
	if len(e.Data) == 0 {
		e.Fill()
	}
	if len(e.Data) == 0 {
		return fmt.Errorf("no data")
	}
	d := json.NewDecoder(bytes.NewReader(e.Data))
	d.UseNumber()
	return d.Decode(v)
}

func toInt(v any) (int64, bool) {
	switch t := v.(type) {
	case json.Number:
		n, err := t.Int64()
		return n, err == nil
	case float64:
		return int64(t), true
	case int64:
		return t, true
	case int:
		return int64(t), true
	}
	return 0, false
}

func int64Of(v any) int64 {
	n, _ := toInt(v)
	return n
}

func str(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case json.Number:
		return t.String()
	}
	return fmt.Sprint(v)
}

func orText(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

var tokenRe = regexp.MustCompile(`token (\S+?)[ )]`)

// maxMattered bounds the messages Mattered returns.
const maxMattered = 500

// Mattered returns the send events of the messages about the story's key:
// those that carry one of its lease tokens, or name its submission or its
// key.
func Mattered(events []traces.Event, st *report.Story) []uint64 {
	if st == nil {
		return nil
	}
	var needles []string
	word := "" // a string key, matched as a whole word
	seen := map[string]bool{}
	for _, s := range st.Steps {
		for _, m := range tokenRe.FindAllStringSubmatch(s.What+" ", -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				needles = append(needles, "token="+m[1])
			}
		}
	}
	if sub, ok := strings.CutPrefix(st.Key, "submission "); ok {
		needles = append(needles, "sub="+sub+" ", "sub="+sub+"\n")
	} else if _, key, ok := strings.Cut(st.Key, " "); ok {
		word = key
	}
	var out []uint64
	for i := range events {
		e := &events[i]
		if e.Kind != "send" {
			continue
		}
		text := e.Desc() + "\n"
		hit := word != "" && wordIndex(text, word) >= 0
		for _, n := range needles {
			hit = hit || strings.Contains(text, n)
		}
		if hit {
			out = append(out, e.Seq)
		}
		if len(out) == maxMattered {
			break
		}
	}
	return out
}
