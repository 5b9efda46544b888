package sim

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fencesim/fencesim/clock"
	"pgregory.net/rapid"
)

// GenSpec says what generic faults a generated schedule may contain.
type GenSpec struct {
	Nodes      []string      // nodes that faults may hit (crash, pause, clocks, links)
	Horizon    time.Duration // faults start in [0, Horizon)
	MaxActions int           // at most this many drawn faults (each may add its undo)
	Kinds      []Kind        // allowed kinds; nil means GenericKinds
	MaxDown    time.Duration // longest crash downtime / pause / partition / burst
	MaxJump    time.Duration // largest clock jump (either way)
	MaxDrift   clock.PPM     // largest drift rate (either way)
	Points     []PointSpec   // crash points that crash-at (and pause-at, when in Kinds) may arm
	Commands   []CmdSpec     // system-specific commands that may be drawn
	Crashable  []string      // nodes that may crash or pause; nil means Nodes
	// Yields are the nodes written as processes (Program) that crash-yield
	// may crash, and pause-yield freeze, at their N-th blocking call, N
	// drawn in [0, MaxYield]; a zero draw is no fault, so shrinking removes
	// it. Both time a fault by the node's own progress through the
	// protocol rather than by the clock.
	Yields   []string
	MaxYield int // 0 means 200
	// Links are the links (from, to) whose messages message faults may
	// hit; nil means any two nodes. A system whose clients give up on a
	// call after a timeout lists those links: a request lost on a
	// connection whose client waits without one models no real network
	// (TCP retransmits; the connection breaks instead).
	Links [][2]string
	// Landmarks are the protocol's own durations (a request timeout, a
	// lease, a lease plus its grace): when set, half of the lengths of
	// pauses, downtimes, stalls and delays are one of them plus a second or
	// two, so that a fault outlasts a deadline by a little as often as it
	// falls short, however the entropy leans (rapid's draws lean small).
	Landmarks []time.Duration
	// ByProgress draws half of the faults from the kinds timed by the
	// protocol's own progress (crash-at, pause-at, crash-yield,
	// pause-yield, message: at a named point, a blocking call, the n-th
	// message) and half from those timed by the clock, when the profile
	// has both: a profile has few of the first, which would otherwise be
	// a small share of the draws.
	ByProgress bool
}

// progressKinds are the kinds timed by a node's progress through the
// protocol rather than by the clock (GenSpec.ByProgress).
var progressKinds = []Kind{CrashAt, PauseAt, CrashYield, PauseYield, Message}

// PointSpec names the crash points of one node.
type PointSpec struct {
	Node   string
	Points []string
}

// CmdSpec is a system-specific command that a schedule may contain.
type CmdSpec struct {
	Node string
	Name string
	Args []string // one is drawn; empty means no argument
}

// GenericKinds are the kinds a generator draws when GenSpec.Kinds is nil.
var GenericKinds = []Kind{Crash, Pause, Partition, Cut, Loss, Dup, Delay, Stall, Break, Jump, Drift}

// Profile is the first thing a generator draws: which fault kinds are on.
// Shrinking switches whole kinds off, so a shrunk failure says which kinds it
// needs (swarm testing, as TigerBeetle's VOPR does).
type Profile struct {
	On []Kind
}

// String lists the kinds that are on.
func (p Profile) String() string {
	if len(p.On) == 0 {
		return "no faults"
	}
	s := make([]string, len(p.On))
	for i, k := range p.On {
		s[i] = string(k)
	}
	return strings.Join(s, ",")
}

// Validate reports a spec that cannot generate.
func (g GenSpec) Validate() error {
	if len(g.Nodes) == 0 {
		return fmt.Errorf("fault generator needs at least one node")
	}
	if g.Horizon <= 0 {
		return fmt.Errorf("fault generator needs a positive horizon, got %v", g.Horizon)
	}
	if g.MaxActions < 0 {
		return fmt.Errorf("fault generator: max actions %d is negative", g.MaxActions)
	}
	return nil
}

// Generate draws a profile and then a schedule from r. With r backed by a
// *rapid.T (NewRapid), every choice shrinks toward "no fault": fewer actions,
// kinds off, earlier times, smaller magnitudes. With a seeded stream it gives
// the schedules of an exploration.
func Generate(r Rand, g GenSpec) (Schedule, Profile) {
	if err := g.Validate(); err != nil {
		panic("sim: " + err.Error())
	}
	kinds := g.Kinds
	if kinds == nil {
		kinds = GenericKinds
	}
	if len(g.Points) > 0 && !hasKind(kinds, CrashAt) {
		kinds = append(append([]Kind(nil), kinds...), CrashAt)
	}
	if len(g.Yields) > 0 && !hasKind(kinds, CrashYield) {
		kinds = append(append([]Kind(nil), kinds...), CrashYield)
	}
	if len(g.Commands) > 0 && !hasKind(kinds, Do) {
		kinds = append(append([]Kind(nil), kinds...), Do)
	}
	crashable := g.Crashable
	if crashable == nil {
		crashable = g.Nodes
	}
	maxDown := g.MaxDown
	if maxDown <= 0 {
		maxDown = g.Horizon / 4
	}
	var prof Profile
	for _, k := range kinds {
		if (k == Crash || k == Pause) && len(crashable) == 0 {
			continue
		}
		if r.Uint64n("kind-on/"+string(k), 2) == 1 {
			prof.On = append(prof.On, k)
		}
	}
	var s Schedule
	if len(prof.On) == 0 {
		return s, prof
	}
	if rr, ok := r.(*Rapid); ok {
		// Under rapid, each action is one element of a drawn slice, so the
		// shrinker can delete whole actions.
		// Under NewRapidUniform each action is drawn either evenly over
		// its ranges (a time over the horizon, a length up to minutes) or,
		// on a zero draw, with rapid's own lean toward small values (early,
		// short faults, the first kinds and nodes), which finds what a
		// fault at the start does: half of each.
		one := rapid.Custom(func(t *rapid.T) []Action {
			e := &Rapid{t: t}
			e.uniform = rr.uniform && e.Uint64n("fault-even", 2) == 1
			return g.drawAction(e, prof, crashable, maxDown)
		})
		for _, acts := range rapid.SliceOfN(one, 0, g.MaxActions).Draw(rr.t, "faults") {
			s = append(s, acts...)
		}
	} else {
		n := int(r.Uint64n("faults", uint64(g.MaxActions)+1))
		for i := 0; i < n; i++ {
			s = append(s, g.drawAction(r, prof, crashable, maxDown)...)
		}
	}
	sort.SliceStable(s, func(i, j int) bool { return s[i].At < s[j].At })
	return s, prof
}

// drawAction draws one fault and the action that undoes it, if any.
func (g GenSpec) drawAction(r Rand, prof Profile, crashable []string, maxDown time.Duration) []Action {
	var out []Action
	pick := func(label string, names []string) string {
		return names[r.Uint64n(label, uint64(len(names)))]
	}
	orAll := func(label string) string { // 0: every link
		i := r.Uint64n(label, uint64(len(g.Nodes))+1)
		if i == 0 {
			return ""
		}
		return g.Nodes[i-1]
	}
	dur := func(label string, max time.Duration) time.Duration {
		return time.Duration(r.Uint64n(label, uint64(max/time.Millisecond)+1)) * time.Millisecond
	}
	length := func(label string, max time.Duration) time.Duration {
		if len(g.Landmarks) == 0 || r.Uint64n(label+"-landmark", 2) == 0 {
			return dur(label, max)
		}
		m := g.Landmarks[r.Uint64n(label+"-which", uint64(len(g.Landmarks)))]
		return m + dur(label+"-past", 2*time.Second)
	}
	signed := func(label string, max int64) int64 {
		v := int64(r.Uint64n(label, uint64(max)+1))
		if r.Uint64n(label+"-neg", 2) == 1 {
			v = -v
		}
		return v
	}
	k := g.kind(r, prof)
	at := clock.Time(dur("at", g.Horizon))
	switch k {
	case Crash:
		node := pick("node", crashable)
		down := length("down", maxDown)
		return append(out, Action{At: at, Kind: Crash, Node: node}, Action{At: at.Add(down), Kind: Restart, Node: node})
	case Pause:
		node := pick("node", crashable)
		d := length("stuck", maxDown)
		return append(out, Action{At: at, Kind: Pause, Node: node}, Action{At: at.Add(d), Kind: Resume, Node: node})
	case Partition:
		var a, b []string
		for _, nd := range g.Nodes {
			if r.Uint64n("side/"+nd, 2) == 1 {
				b = append(b, nd)
			} else {
				a = append(a, nd)
			}
		}
		d := dur("for", maxDown)
		if len(a) == 0 || len(b) == 0 {
			return nil
		}
		return append(out, Action{At: at, Kind: Partition, Groups: [][]string{a, b}}, Action{At: at.Add(d), Kind: Heal})
	case Cut:
		from, to := pick("from", g.Nodes), pick("to", g.Nodes)
		d := dur("for", maxDown)
		if from == to {
			return nil
		}
		return append(out, Action{At: at, Kind: Cut, Node: from, Peer: to}, Action{At: at.Add(d), Kind: Heal})
	case Loss, Dup:
		from, to := orAll("from"), orAll("to")
		rate := int64(r.Uint64n("rate", 1_000_000)) + 1
		d := dur("for", maxDown) + time.Millisecond
		return append(out, Action{At: at, Kind: k, Node: from, Peer: to, Rate: rate, For: d})
	case Delay:
		from, to := orAll("from"), orAll("to")
		amt := dur("amount", maxDown/4) + time.Millisecond
		d := dur("for", maxDown) + time.Millisecond
		return append(out, Action{At: at, Kind: Delay, Node: from, Peer: to, Amount: amt, For: d})
	case Stall:
		from, to := orAll("from"), orAll("to")
		d := length("for", maxDown) + time.Millisecond
		late := dur("late", maxDown)
		return append(out, Action{At: at, Kind: Stall, Node: from, Peer: to, For: d, Amount: late})
	case Break:
		node := pick("node", g.Nodes)
		return append(out, Action{At: at, Kind: Break, Node: node, Peer: orAll("peer")})
	case Jump:
		max := g.MaxJump
		if max <= 0 {
			max = time.Minute
		}
		return append(out, Action{At: at, Kind: Jump, Node: pick("node", g.Nodes), Amount: time.Duration(signed("jump", int64(max/time.Millisecond))) * time.Millisecond})
	case Drift:
		max := g.MaxDrift
		if max <= 0 {
			max = 100_000
		}
		return append(out, Action{At: at, Kind: Drift, Node: pick("node", g.Nodes), Rate: signed("drift", int64(max))})
	case CrashAt:
		ps := g.Points[r.Uint64n("point-node", uint64(len(g.Points)))]
		if len(ps.Points) == 0 {
			return nil
		}
		point := pick("point", ps.Points)
		count := int(r.Uint64n("count", 3)) + 1
		down := length("down", maxDown)
		return append(out, Action{At: at, Kind: CrashAt, Node: ps.Node, Point: point, Count: count},
			Action{At: at.Add(down + time.Millisecond), Kind: Restart, Node: ps.Node})
	case PauseAt:
		if len(g.Points) == 0 {
			return nil
		}
		ps := g.Points[r.Uint64n("point-node", uint64(len(g.Points)))]
		if len(ps.Points) == 0 {
			return nil
		}
		point := pick("point", ps.Points)
		count := int(r.Uint64n("count", 3)) + 1
		return append(out, Action{At: at, Kind: PauseAt, Node: ps.Node, Point: point, Count: count, For: length("stuck", maxDown) + time.Millisecond})
	case CrashYield:
		node, n := g.yieldAt(r, pick)
		if n == 0 {
			return nil // zero is no crash
		}
		down := length("down", maxDown)
		return append(out, Action{At: at, Kind: CrashYield, Node: node, Count: n},
			Action{At: at.Add(down + time.Millisecond), Kind: Restart, Node: node})
	case PauseYield:
		if len(g.Yields) == 0 {
			return nil
		}
		node, n := g.yieldAt(r, pick)
		if n == 0 {
			return nil // zero is no freeze
		}
		return append(out, Action{At: at, Kind: PauseYield, Node: node, Count: n, For: length("stuck", maxDown) + time.Millisecond})
	case Message:
		var from, to string
		if len(g.Links) > 0 {
			l := g.Links[r.Uint64n("link", uint64(len(g.Links)))]
			from, to = l[0], l[1]
		} else {
			from, to = pick("from", g.Nodes), pick("to", g.Nodes)
		}
		if from == to {
			return nil
		}
		n := int(r.Uint64n("message", 50)) + 1
		switch r.Uint64n("fate", 3) {
		case 0:
			return append(out, Action{At: at, Kind: Message, Node: from, Peer: to, Arg: FateDrop, Count: n})
		case 1:
			return append(out, Action{At: at, Kind: Message, Node: from, Peer: to, Arg: FateDup, Count: n})
		}
		return append(out, Action{At: at, Kind: Message, Node: from, Peer: to, Arg: FateDelay, Count: n, Amount: length("late", maxDown) + time.Millisecond})
	case Do:
		c := g.Commands[r.Uint64n("command", uint64(len(g.Commands)))]
		arg := ""
		if len(c.Args) > 0 {
			arg = pick("arg", c.Args)
		}
		return append(out, Action{At: at, Kind: Do, Node: c.Node, Point: c.Name, Arg: arg})
	}
	return out
}

// kind draws the kind of a fault among the profile's (GenSpec.ByProgress:
// first whether it is timed by the protocol's progress or by the clock).
func (g GenSpec) kind(r Rand, prof Profile) Kind {
	on := prof.On
	if g.ByProgress {
		var timed, clocked []Kind
		for _, k := range on {
			if hasKind(progressKinds, k) {
				timed = append(timed, k)
			} else {
				clocked = append(clocked, k)
			}
		}
		if len(timed) > 0 && len(clocked) > 0 {
			on = clocked
			if r.Uint64n("kind-by-progress", 2) == 1 {
				on = timed
			}
		}
	}
	return on[r.Uint64n("kind", uint64(len(on)))]
}

// yieldAt draws the node and the blocking call a crash-yield or a
// pause-yield hits (0: none).
func (g GenSpec) yieldAt(r Rand, pick func(string, []string) string) (string, int) {
	node := pick("yield-node", g.Yields)
	max := g.MaxYield
	if max <= 0 {
		max = 200
	}
	return node, int(r.Uint64n("yield", uint64(max)+1))
}

func hasKind(ks []Kind, k Kind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// Kinds returns the distinct kinds of a schedule, in the fixed order of Kinds.
func (s Schedule) Kinds() []Kind {
	seen := map[Kind]bool{}
	for _, a := range s {
		seen[a.Kind] = true
	}
	var out []Kind
	for _, k := range Kinds {
		if seen[k] {
			out = append(out, k)
		}
	}
	return out
}

// Faults counts the actions that inject a fault, not counting the ones that
// undo one (restart, resume, heal, heal-all).
func (s Schedule) Faults() int {
	n := 0
	for _, a := range s {
		switch a.Kind {
		case Restart, Resume, Heal, HealAll:
		default:
			n++
		}
	}
	return n
}
