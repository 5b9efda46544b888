package report

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/fencesim/fencesim/traces"
)

// The page shows events in a person's words: the kind once, times in
// seconds and milliseconds, the kernel's terse formats spelled out; the raw
// text and JSON data stay one click away.

// words is one event in words, without its time and node (the page shows
// them beside it): "sends #543 to arbiter-1 (conn 76): resp 3: INSERT 0 0",
// "commit #50 tx 106 ...", "db: c76 INSERT INTO ...".
func words(e *traces.Event) string {
	desc := e.Desc()
	switch e.Kind {
	case "send", "deliver":
		if id, rest, ok := parseID(desc); ok {
			if from, to, ok := parseRoute(rest); ok {
				conn, body := splitConn(rest)
				if e.Kind == "send" {
					return fmt.Sprintf("sends #%d to %s%s: %s", id, to, conn, body)
				}
				return fmt.Sprintf("receives #%d from %s%s: %s", id, from, conn, body)
			}
		}
	case "drop":
		if id, reason, ok := parseID(desc); ok {
			return fmt.Sprintf("drops #%d: %s", id, reason)
		}
	case "dup":
		if id, rest, ok := parseID(desc); ok {
			return fmt.Sprintf("duplicates #%d: %s", id, rest)
		}
	case "start", "restart":
		if desc != "" {
			return e.Kind + "s (" + desc + ")"
		}
		return e.Kind + "s"
	case "crash":
		if desc != "" {
			return "crashes (" + desc + ")"
		}
		return "crashes"
	case "fault":
		if a, ok := actionOf(e); ok {
			return "fault: " + faultWords(a)
		}
		return "fault: " + strings.TrimPrefix(dropAt(desc), "fault ")
	case "dial":
		return "dials " + desc
	case "close":
		return "closes " + desc
	case "conn-broken":
		return desc + " broken"
	case "break":
		return "breaks " + desc
	}
	return kindOnce(e.Kind, desc)
}

// kindOnce is "kind: desc", or desc alone when it starts with the kind
// already ("commit #50 tx 106", "timer 3 tick").
func kindOnce(kind, desc string) string {
	switch {
	case desc == "":
		return kind
	case kind == "":
		return desc
	case desc == kind || strings.HasPrefix(desc, kind+" ") || strings.HasPrefix(desc, kind+":"):
		return desc
	}
	return kind + ": " + desc
}

// splitConn splits "<from>-><to>[ conn=<n>] <body>" into " (conn n)" and
// the body.
func splitConn(rest string) (string, string) {
	_, after, _ := strings.Cut(rest, " ")
	if c, body, ok := strings.Cut(after, " "); ok && strings.HasPrefix(c, "conn=") {
		return " (conn " + strings.TrimPrefix(c, "conn=") + ")", body
	}
	if strings.HasPrefix(after, "conn=") {
		return " (conn " + strings.TrimPrefix(after, "conn=") + ")", ""
	}
	return "", after
}

// dropAt removes the "@12.000s " a fault's text starts with.
func dropAt(s string) string {
	if strings.HasPrefix(s, "@") {
		if _, rest, ok := strings.Cut(s, " "); ok {
			return rest
		}
	}
	return s
}

func actionOf(e *traces.Event) (action, bool) {
	if e.Kind != "fault" || !e.HasData() {
		return action{}, false
	}
	var a action
	if json.Unmarshal(e.DataJSON(), &a) != nil || a.Kind == "" {
		return action{}, false
	}
	return a, true
}

// faultWords says what a fault action does: "arbiter-1 paused",
// "home-1 -> arbiter-1 stalled 40 s".
func faultWords(a action) string {
	link := a.Node + " -> " + a.Peer
	if a.Peer == "" {
		link = a.Node + " -> all"
		if a.Node == "" {
			link = "every link"
		}
	}
	forD := ""
	if a.For > 0 {
		forD = " for " + dur(a.For)
	}
	switch a.Kind {
	case "crash":
		return a.Node + " crashed"
	case "restart":
		return a.Node + " restarted"
	case "pause":
		return a.Node + " paused"
	case "resume":
		return a.Node + " resumed"
	case "partition":
		var gs []string
		for _, g := range a.Groups {
			gs = append(gs, "{"+strings.Join(g, ", ")+"}")
		}
		return "partition " + strings.Join(gs, " | ")
	case "cut":
		return a.Node + " -/-> " + a.Peer + " cut"
	case "heal":
		return "partitions healed"
	case "heal-all":
		return "every fault ended"
	case "loss":
		return fmt.Sprintf("%s losing %s of datagrams%s", link, pct(a.Rate), forD)
	case "dup":
		return fmt.Sprintf("%s duplicating %s of datagrams%s", link, pct(a.Rate), forD)
	case "delay":
		return fmt.Sprintf("%s delayed up to %s%s", link, dur(a.Amount), forD)
	case "stall":
		s := fmt.Sprintf("%s stalled %s", link, dur(a.For))
		if a.Amount > 0 {
			s += fmt.Sprintf(", then %s late", dur(a.Amount))
		}
		return s
	case "break":
		if a.Peer == "" {
			return a.Node + "'s connections broken"
		}
		return "connections " + a.Node + " <-> " + a.Peer + " broken"
	case "jump":
		return fmt.Sprintf("%s's clock jumps %s", a.Node, signed(a.Amount))
	case "drift":
		return fmt.Sprintf("%s's clock drifts %d ppm", a.Node, a.Rate)
	case "crash-at":
		return fmt.Sprintf("%s to crash the %s time it reaches %s", a.Node, ordinal(max(a.Count, 1)), a.Point)
	case "crash-yield":
		s := fmt.Sprintf("%s to crash at its %s blocking call", a.Node, ordinal(max(a.Count, 1)))
		if a.For > 0 {
			s += ", restarted " + dur(a.For) + " later"
		}
		return s
	case "pause-yield":
		return fmt.Sprintf("%s to freeze at its %s blocking call%s", a.Node, ordinal(max(a.Count, 1)), forD)
	case "message":
		return fmt.Sprintf("%s: the %s message %s", link, ordinal(max(a.Count, 1)), map[string]string{"drop": "dropped", "dup": "duplicated", "delay": "delayed " + dur(a.Amount)}[a.Arg])
	case "command":
		s := a.Node + " told " + a.Point
		if a.Arg != "" {
			s += " " + a.Arg
		}
		return s
	}
	return strings.TrimSpace(a.Kind + " " + a.Node + " " + a.Peer)
}

// ordinal is "1st", "2nd", "26th".
func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

func pct(perMillion int64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", float64(perMillion)/1e4), "0"), ".") + "%"
}

func signed(d time.Duration) string {
	if d < 0 {
		return "back " + dur(-d)
	}
	return "ahead " + dur(d)
}

// dur renders a simulated duration as the page does: "40 s", "10.781 s",
// "250 ms".
func dur(d time.Duration) string {
	if d < time.Second && d > -time.Second {
		ms := float64(d) / 1e6
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", ms), "0"), ".") + " ms"
	}
	s := fmt.Sprintf("%.3f", d.Seconds())
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".") + " s"
}
