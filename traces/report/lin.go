package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fencesim/fencesim/traces"
)

// The linearization view: porcupine's visualization, embedded in a frame,
// measured its labels before the frame was laid out and drew them on top
// of each other. The report draws the same data itself instead: one row per
// operation (so no two labels share a line), its interval on porcupine's
// order axis, its place in the longest linearization porcupine found and
// the state after it, and a link to the operation's events on the
// timeline. The standalone porcupine file is left as porcupine writes it.

// porcData is the part of porcupine's visualization data (the JSON its page
// carries as "const data = ...") the view uses.
type porcData struct {
	Partitions []struct {
		History []struct {
			ClientID      int    `json:"ClientId"`
			Start         int64  `json:"Start"`
			End           int64  `json:"End"`
			OriginalStart string `json:"OriginalStart"`
			OriginalEnd   string `json:"OriginalEnd"`
			Description   string `json:"Description"`
		} `json:"History"`
		PartialLinearizations [][]struct {
			Index            int    `json:"Index"`
			StateDescription string `json:"StateDescription"`
		} `json:"PartialLinearizations"`
	} `json:"Partitions"`
}

// linPart is one partition of the history, as the page shows it.
type linPart struct {
	N      int // the partition's number, from 1
	Placed int // operations in the longest linearization
	Ops    []linOp
}

// linOp is one operation: a row of the view.
type linOp struct {
	Desc       string
	Client     int
	T0, T1     int64 // world time of call and return (ns)
	Left, Wide float64
	Order      int    // its place in the longest linearization (0: not placed)
	State      string // the state after it, when placed
	Seq        uint64 // an event at its call (0: none found)
	Last       bool   // placed last: what follows it cannot be placed
	Blocked    bool   // the first operation that cannot be placed after the last
}

// linData finds the data in porcupine's page.
func linData(page []byte) (*porcData, bool) {
	const marker = "const data = "
	i := bytes.Index(page, []byte(marker))
	if i < 0 {
		return nil, false
	}
	rest := page[i+len(marker):]
	if j := bytes.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	rest = bytes.TrimRight(bytes.TrimSpace(rest), ";")
	var d porcData
	if json.Unmarshal(rest, &d) != nil || len(d.Partitions) == 0 {
		return nil, false
	}
	return &d, true
}

// linView builds the view from porcupine's page; ok is false when the page
// has no data the view can read (the page then embeds porcupine's own).
func linView(page []byte, evs []traces.Event) ([]linPart, bool) {
	d, ok := linData(page)
	if !ok {
		return nil, false
	}
	// Events by time, for the links: only the times the operations name.
	want := map[int64]bool{}
	for _, p := range d.Partitions {
		for _, h := range p.History {
			if t, err := strconv.ParseInt(h.OriginalStart, 10, 64); err == nil {
				want[t] = true
			}
		}
	}
	at := map[int64][]int{}
	for i := range evs {
		if want[evs[i].T] {
			at[evs[i].T] = append(at[evs[i].T], i)
		}
	}
	var out []linPart
	for pi, p := range d.Partitions {
		part := linPart{N: pi + 1}
		best := -1
		for li, l := range p.PartialLinearizations {
			if best < 0 || len(l) > len(p.PartialLinearizations[best]) {
				best = li
			}
		}
		order := map[int]int{}
		state := map[int]string{}
		if best >= 0 {
			for k, x := range p.PartialLinearizations[best] {
				order[x.Index] = k + 1
				state[x.Index] = x.StateDescription
			}
			part.Placed = len(p.PartialLinearizations[best])
		}
		lo, hi := int64(0), int64(1)
		for k, h := range p.History {
			if k == 0 || h.Start < lo {
				lo = h.Start
			}
			hi = max(hi, h.End)
		}
		span := float64(max(hi-lo, 1))
		for k, h := range p.History {
			t0, _ := strconv.ParseInt(h.OriginalStart, 10, 64)
			t1, _ := strconv.ParseInt(h.OriginalEnd, 10, 64)
			op := linOp{
				Desc: h.Description, Client: h.ClientID, T0: t0, T1: t1,
				Left:  round2(100 * float64(h.Start-lo) / span),
				Wide:  round2(max(1.2, 100*float64(h.End-h.Start)/span)),
				Order: order[k], State: state[k], Last: order[k] != 0 && order[k] == part.Placed,
			}
			op.Left = min(op.Left, 100-op.Wide)
			who, _, _ := strings.Cut(h.Description, " ")
			for _, i := range at[t0] {
				if op.Seq == 0 || evs[i].Node == who {
					op.Seq = evs[i].Seq
					if evs[i].Node == who {
						break
					}
				}
			}
			part.Ops = append(part.Ops, op)
		}
		sort.SliceStable(part.Ops, func(i, j int) bool {
			a, b := part.Ops[i], part.Ops[j]
			if a.Left != b.Left {
				return a.Left < b.Left
			}
			return a.T0 < b.T0
		})
		for i := range part.Ops {
			if part.Ops[i].Order == 0 {
				part.Ops[i].Blocked = true
				break
			}
		}
		out = append(out, part)
	}
	return out, true
}

func round2(f float64) float64 {
	v, _ := strconv.ParseFloat(fmt.Sprintf("%.2f", f), 64)
	return v
}
