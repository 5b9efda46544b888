package directed

import (
	"sort"
	"strings"

	"github.com/fencesim/fencesim/model/contract"
)

// Featurer is a system's drawn world that names its own choices for the
// search ("arbiters=2", "poison"): contract.World.V may implement it.
type Featurer interface {
	Features() []string
}

// Features names what a drawn world chose: the fault kinds its profile
// turned on ("on:crash"), each kind of fault action by the class of node
// it hits ("crash@arbiter", and "crash@arbiter*2" when it hits that class
// twice or more), a crash point by name ("crash-at@arbiter:after-grant"),
// how many fault actions ("faults>=4"), and the system's own choices when
// its world is a Featurer. The names are sorted and unique; they are what
// the search learns over (a world's "dimensions").
func Features(w *contract.World) []string {
	set := map[string]bool{}
	add := func(s string) { set[s] = true }
	if w.Profile != "" && w.Profile != "given" && w.Profile != "no faults" {
		for _, k := range strings.Split(w.Profile, ",") {
			add("on:" + k)
		}
	}
	count := map[string]int{}
	faults := 0
	for _, a := range w.Schedule {
		k := string(a.Kind)
		switch k {
		case "heal-all", "restart", "resume", "heal", "command":
			// Undoing actions and the world's own commands say nothing
			// the action they undo does not.
			if k == "restart" {
				count["restart@"+class(a.Node)]++
			}
			continue
		}
		faults++
		key := k + "@" + class(a.Node)
		count[key]++
		if a.Point != "" {
			add(key + ":" + a.Point)
		}
	}
	for k, n := range count {
		add(k)
		if n >= 2 {
			add(k + "*2")
		}
	}
	for _, b := range []int{1, 2, 4, 8} {
		if faults >= b {
			add("faults>=" + string(rune('0'+b)))
		}
	}
	if f, ok := w.V.(Featurer); ok {
		for _, s := range f.Features() {
			add(s)
		}
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// class is a node's class: its name up to the first digit, without a
// trailing dash ("home-2.w1" is "home", "arbiter-1" is "arbiter", "" is
// "all" for an action on every link).
func class(node string) string {
	if node == "" {
		return "all"
	}
	i := strings.IndexAny(node, "0123456789")
	if i < 0 {
		return node
	}
	c := strings.TrimRight(node[:i], "-_.")
	if c == "" {
		return node
	}
	return c
}
