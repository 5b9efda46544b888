package sim

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/network"
)

// Kind is the kind of a fault action.
type Kind string

// The fault kinds. Node and Peer name nodes; "" in Node or Peer of a network
// burst means "every link".
const (
	Crash      Kind = "crash"       // Node loses its memory (disk kept); in-flight messages to it are lost
	Restart    Kind = "restart"     // Node is rebuilt from its factory and disk; also starts a node added down
	Pause      Kind = "pause"       // Node is stuck: receives nothing, fires no timers
	Resume     Kind = "resume"      // Node runs again; what arrived meanwhile is delivered
	Partition  Kind = "partition"   // Groups cannot talk to each other (both ways); crossing connections break
	Cut        Kind = "cut"         // one-way partition: Node -> Peer is blocked
	Heal       Kind = "heal"        // every partition and cut is removed
	Loss       Kind = "loss"        // for For: datagrams on Node -> Peer are lost at Rate per million
	Dup        Kind = "dup"         // for For: datagrams on Node -> Peer are duplicated at Rate per million
	Delay      Kind = "delay"       // for For: datagrams on Node -> Peer get up to Amount of extra delay (reordering)
	Stall      Kind = "stall"       // for For: messages on Node -> Peer are held, then arrive Amount after the stall ends, in order (late results)
	Break      Kind = "break"       // connections between Node and Peer ("" = all of Node's) break
	Jump       Kind = "jump"        // Node's wall clock jumps by Amount (negative: backwards)
	Drift      Kind = "drift"       // Node's clocks drift at Rate ppm from now on
	CrashAt    Kind = "crash-at"    // arm: Node crashes the Count-th time (default 1) it passes CrashPoint Point
	PauseAt    Kind = "pause-at"    // arm: Node freezes, for For, the Count-th time (default 1) it passes crash point Point (a GC pause at a moment the protocol names); with Peer, its idlest connection to Peer breaks as it freezes (a stalled leader's idle lock session ended)
	CrashYield Kind = "crash-yield" // arm: Node crashes at its Count-th blocking call (a process's yield; a state machine's input) from At on; with For, it restarts For after
	PauseYield Kind = "pause-yield" // arm: Node freezes at its Count-th blocking call from At on, for For (a GC pause or a SIGSTOP at a moment the protocol chose)
	Message    Kind = "message"     // arm: the Count-th message Node sends to Peer from At on is dropped (Arg "drop"), duplicated ("dup") or delayed by Amount ("delay")
	Do         Kind = "command"     // deliver the system-specific command Point (with Arg) to Node
	HealAll    Kind = "heal-all"    // end every fault: heal, end bursts, restart crashed, resume paused, stop drift
)

// Kinds lists every fault kind in a fixed order.
var Kinds = []Kind{Crash, Restart, Pause, Resume, Partition, Cut, Heal, Loss, Dup, Delay, Stall, Break, Jump, Drift, CrashAt, PauseAt, CrashYield, PauseYield, Message, Do, HealAll}

// The fates of a message fault (Action.Arg of kind Message).
const (
	FateDrop  = "drop"  // the message is lost (on a connection, the connection breaks with it: TCP does not lose one message and carry the next)
	FateDup   = "dup"   // a second copy arrives (a datagram only: a connection delivers each message once, so on one it does nothing)
	FateDelay = "delay" // the message arrives Amount late (on a connection, later ones queue behind it)
)

// Action is one timed fault.
type Action struct {
	At     clock.Time    `json:"at"`
	Kind   Kind          `json:"kind"`
	Node   string        `json:"node,omitempty"`
	Peer   string        `json:"peer,omitempty"`
	Groups [][]string    `json:"groups,omitempty"`
	Rate   int64         `json:"rate,omitempty"`
	For    time.Duration `json:"for,omitempty"`
	Amount time.Duration `json:"amount,omitempty"`
	Point  string        `json:"point,omitempty"`
	Arg    string        `json:"arg,omitempty"`
	Count  int           `json:"count,omitempty"`
	// FromStart arms a crash-yield, crash-at or message fault at time 0
	// before the nodes start, so that it counts their start-up too (an
	// arm at time 0 without it counts from just after the start).
	FromStart bool `json:"from_start,omitempty"`
}

// String renders an action canonically, as traces and reports show it.
func (a Action) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "@%s %s", a.At, a.Kind)
	if a.Node != "" {
		fmt.Fprintf(&b, " %s", a.Node)
	}
	if a.Peer != "" {
		fmt.Fprintf(&b, "->%s", a.Peer)
	}
	if len(a.Groups) > 0 {
		parts := make([]string, len(a.Groups))
		for i, g := range a.Groups {
			parts[i] = "{" + strings.Join(g, ",") + "}"
		}
		fmt.Fprintf(&b, " %s", strings.Join(parts, "|"))
	}
	if a.Rate != 0 {
		fmt.Fprintf(&b, " rate=%d", a.Rate)
	}
	if a.For != 0 {
		fmt.Fprintf(&b, " for=%v", a.For)
	}
	if a.Amount != 0 {
		fmt.Fprintf(&b, " amount=%v", a.Amount)
	}
	if a.Point != "" {
		fmt.Fprintf(&b, " point=%s", a.Point)
	}
	if a.Arg != "" {
		fmt.Fprintf(&b, " arg=%s", a.Arg)
	}
	if a.Count > 1 {
		fmt.Fprintf(&b, " count=%d", a.Count)
	}
	if a.FromStart {
		b.WriteString(" from-start")
	}
	return b.String()
}

// Schedule is a list of timed fault actions. It is data: generated by rapid,
// written into trace headers, read back for replay, and hand-written in
// scenario tests. Actions at the same time apply in list order.
type Schedule []Action

// Sorted returns the schedule ordered by time, keeping the list order of
// actions at the same time.
func (s Schedule) Sorted() Schedule {
	out := append(Schedule(nil), s...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}

// String renders one action per line.
func (s Schedule) String() string {
	if len(s) == 0 {
		return "(no faults)"
	}
	lines := make([]string, len(s))
	for i, a := range s {
		lines[i] = a.String()
	}
	return strings.Join(lines, "\n")
}

// JSON encodes the schedule.
func (s Schedule) JSON() json.RawMessage {
	if s == nil {
		s = Schedule{}
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("sim: schedule does not encode: %v", err))
	}
	return b
}

// ParseSchedule decodes and validates a schedule against the node names of a
// world. Unknown fields are errors.
func ParseSchedule(data []byte, nodes []string) (Schedule, error) {
	var s Schedule
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("schedule is not a JSON list of actions: %w", err)
	}
	return s, s.Validate(nodes)
}

// Validate checks every action against the node names of a world; the error
// names the action and what is wrong with it.
func (s Schedule) Validate(nodes []string) error {
	known := map[string]bool{}
	for _, n := range nodes {
		known[n] = true
	}
	for i, a := range s {
		if err := a.validate(known); err != nil {
			return fmt.Errorf("fault action %d (%s): %w", i+1, a.Kind, err)
		}
	}
	return nil
}

func (a Action) validate(known map[string]bool) error {
	node := func(name, field string, optional bool) error {
		if name == "" {
			if optional {
				return nil
			}
			return fmt.Errorf("needs %q, the node it applies to", field)
		}
		if !known[name] {
			return fmt.Errorf("%s %q is not a node of this world (nodes: %s)", field, name, strings.Join(sortedKeys(known), ", "))
		}
		return nil
	}
	if a.At < 0 {
		return fmt.Errorf("time %v is negative", a.At)
	}
	if a.FromStart && (a.At != 0 || (a.Kind != CrashYield && a.Kind != PauseYield && a.Kind != CrashAt && a.Kind != PauseAt && a.Kind != Message)) {
		return fmt.Errorf("from_start needs time 0 and a crash-yield, pause-yield, crash-at, pause-at or message fault")
	}
	switch a.Kind {
	case Crash, Restart, Pause, Resume:
		return node(a.Node, "node", false)
	case Partition:
		if len(a.Groups) < 2 {
			return fmt.Errorf("needs at least two groups, got %d", len(a.Groups))
		}
		seen := map[string]bool{}
		for _, g := range a.Groups {
			for _, n := range g {
				if err := node(n, "group member", false); err != nil {
					return err
				}
				if seen[n] {
					return fmt.Errorf("node %q is in two groups", n)
				}
				seen[n] = true
			}
		}
		return nil
	case Cut:
		if err := node(a.Node, "node", false); err != nil {
			return err
		}
		return node(a.Peer, "peer", false)
	case Heal, HealAll:
		return nil
	case Loss, Dup:
		if a.Rate < 0 || a.Rate > network.Million {
			return fmt.Errorf("rate %d is not in [0, %d] per million", a.Rate, network.Million)
		}
		fallthrough
	case Delay, Stall:
		if a.For <= 0 {
			return fmt.Errorf("needs a positive duration \"for\", got %v", a.For)
		}
		if a.Kind == Delay && a.Amount <= 0 {
			return fmt.Errorf("needs a positive extra delay \"amount\", got %v", a.Amount)
		}
		if a.Kind == Stall && a.Amount < 0 {
			return fmt.Errorf("release delay \"amount\" %v is negative", a.Amount)
		}
		if err := node(a.Node, "node", true); err != nil {
			return err
		}
		return node(a.Peer, "peer", true)
	case Break:
		if err := node(a.Node, "node", false); err != nil {
			return err
		}
		return node(a.Peer, "peer", true)
	case Jump:
		return node(a.Node, "node", false)
	case Drift:
		if err := clock.ValidDrift(clock.PPM(a.Rate)); err != nil {
			return err
		}
		return node(a.Node, "node", false)
	case CrashAt:
		if a.Point == "" {
			return fmt.Errorf("needs \"point\", the crash point's name")
		}
		if a.Count < 0 {
			return fmt.Errorf("count %d is negative", a.Count)
		}
		return node(a.Node, "node", false)
	case PauseAt:
		if a.Point == "" {
			return fmt.Errorf("needs \"point\", the crash point's name")
		}
		if a.Count < 0 {
			return fmt.Errorf("count %d is negative", a.Count)
		}
		if a.For <= 0 {
			return fmt.Errorf("needs a positive \"for\", how long the node stays frozen, got %v", a.For)
		}
		if err := node(a.Node, "node", false); err != nil {
			return err
		}
		return node(a.Peer, "peer", true)
	case CrashYield:
		if a.Count < 1 {
			return fmt.Errorf("needs \"count\" >= 1, the blocking call to crash at, got %d", a.Count)
		}
		if a.For < 0 {
			return fmt.Errorf("downtime \"for\" %v is negative", a.For)
		}
		return node(a.Node, "node", false)
	case PauseYield:
		if a.Count < 1 {
			return fmt.Errorf("needs \"count\" >= 1, the blocking call to freeze at, got %d", a.Count)
		}
		if a.For <= 0 {
			return fmt.Errorf("needs a positive \"for\", how long the node stays frozen, got %v", a.For)
		}
		return node(a.Node, "node", false)
	case Message:
		if a.Count < 1 {
			return fmt.Errorf("needs \"count\" >= 1, the message to hit, got %d", a.Count)
		}
		switch a.Arg {
		case FateDrop, FateDup:
		case FateDelay:
			if a.Amount <= 0 {
				return fmt.Errorf("fate delay needs a positive \"amount\", got %v", a.Amount)
			}
		default:
			return fmt.Errorf("needs \"arg\", the message's fate: %s, %s or %s; got %q", FateDrop, FateDup, FateDelay, a.Arg)
		}
		if err := node(a.Node, "node", false); err != nil {
			return err
		}
		return node(a.Peer, "peer", false)
	case Do:
		if a.Point == "" {
			return fmt.Errorf("needs \"point\", the command's name")
		}
		return node(a.Node, "node", false)
	case "":
		return fmt.Errorf("has no kind (one of: %s)", kindList())
	}
	return fmt.Errorf("unknown kind %q (one of: %s)", a.Kind, kindList())
}

func kindList() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

func sortedKeys(m map[string]bool) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
