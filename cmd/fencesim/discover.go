package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"text/tabwriter"

	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/model/design"
	"github.com/fencesim/fencesim/sim"
)

// The listings of what --knob and --set take, from the systems' own
// registries and parameter tables (systems.Knob, design.Info).

// listed is one system's knobs or parameters, for --json.
type listed struct {
	System string         `json:"system"`
	Knobs  []systems.Knob `json:"knobs,omitempty"`
	Params []design.Info  `json:"params,omitempty"`
	Levers []leverInfo    `json:"levers,omitempty"`
}

// leverInfo is a lever as levers --json lists it.
type leverInfo struct {
	Name  string `json:"name"`
	Label string `json:"draw"`
	Value string `json:"value"`
}

// listFlags parses the flags of knobs and params: --system and --json.
func listFlags(e *env, name string, args []string) (_ []systems.System, asJSON bool, code int, done bool) {
	c := commandByName(name)
	fs := newFlags(c.name)
	sel := selection{system: "all"}
	fs.StringVar(&sel.system, "system", "all", "the system: "+strings.Join(systems.Names(), ", ")+", or all (a comma-separated list works too)")
	j := fs.Bool("json", false, "print the listing as JSON")
	pos, code, done := parse(e, fs, c, args)
	if done {
		return nil, false, code, true
	}
	if len(pos) > 0 {
		return nil, false, e.fail(c.name, usagef("unexpected argument %q (%s takes flags only: --system S)", pos[0], c.name)), true
	}
	sys, err := sel.systems(true)
	if err != nil {
		return nil, false, e.fail(c.name, err), true
	}
	return sys, *j, 0, false
}

// runLevers lists each system's levers (--steer; docs/directed.md), in
// the order of its steered seeds' format: a diff reads its base's.
func runLevers(e *env, args []string) int {
	return runList(e, "levers", args, func(sys systems.System) listed {
		out := listed{System: sys.Name(), Levers: []leverInfo{}}
		for _, l := range sys.Supports().Levers {
			out.Levers = append(out.Levers, leverInfo{Name: l.Name, Label: l.Label, Value: leverValue(l)})
		}
		return out
	}, writeLevers)
}

func leverValue(l sim.Lever) string {
	if l.Value == sim.LeverMax {
		return "highest"
	}
	return fmt.Sprint(l.Value)
}

// writeLevers renders a system's levers as a table.
func writeLevers(w io.Writer, sys systems.System) {
	ls := sys.Supports().Levers
	fmt.Fprintf(w, "== %s (%s): %d levers, --steer NAME,NAME ==\n", sys.Name(), sys.Title(), len(ls))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "bit\tlever\tthe draw it forces\tto\n")
	for i, l := range ls {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", 32+i, l.Name, l.Label, leverValue(l))
	}
	tw.Flush()
}

func runKnobs(e *env, args []string) int {
	return runList(e, "knobs", args, func(sys systems.System) listed { return listed{System: sys.Name(), Knobs: sys.Knobs()} }, writeKnobs)
}

// runList is knobs and params: each system's entry as JSON, or its table.
func runList(e *env, name string, args []string, entry func(systems.System) listed, write func(io.Writer, systems.System)) int {
	all, asJSON, code, done := listFlags(e, name, args)
	if done {
		return code
	}
	if asJSON {
		var out []listed
		for _, sys := range all {
			out = append(out, entry(sys))
		}
		return printJSON(e, name, out)
	}
	for i, sys := range all {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		write(e.stdout, sys)
	}
	return exitOK
}

// writeKnobs renders a system's knob registry as a table.
func writeKnobs(w io.Writer, sys systems.System) {
	fmt.Fprintf(w, "== %s (%s): %d knobs, --knob NAME ==\n", sys.Name(), sys.Title(), len(sys.Knobs()))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "knob\texpected\tcaught by\twhere it shows\twhat it removes or changes\n")
	for _, k := range sys.Knobs() {
		expected, by := "harmless", "-"
		if k.Harmful {
			expected = "harmful"
		}
		if len(k.CaughtBy) > 0 {
			by = strings.Join(k.CaughtBy, ", ")
		}
		where := strings.Join(k.Scenarios, ", ")
		if k.Faults != "" {
			where = k.Faults
		}
		if where == "" {
			where = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k.Name, expected, by, where, k.Removes)
	}
	tw.Flush()
}

func runParams(e *env, args []string) int {
	return runList(e, "params", args, func(sys systems.System) listed { return listed{System: sys.Name(), Params: sys.ParamInfos()} }, writeParams)
}

// writeParams renders a system's parameter table.
func writeParams(w io.Writer, sys systems.System) {
	ps := sys.ParamInfos()
	fmt.Fprintf(w, "== %s (%s): %d parameters, --set name=value (durations in simulated time: 500ms, 10s, 1m30s) ==\n", sys.Name(), sys.Title(), len(ps))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "parameter\ttype\tdefault\tvalid range\tmeaning\n")
	waived := false
	for _, p := range ps {
		rng := []string{p.Range}
		for _, r := range p.Rules {
			// A rule that bounds the parameter itself reads as its range:
			// "heartbeat < lease" is "< lease" in heartbeat's row.
			r = strings.TrimPrefix(r, p.Name+" ")
			if strings.HasSuffix(r, waivable) {
				r, waived = strings.TrimSuffix(r, waivable)+"*", true
			}
			rng = append(rng, r)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, p.Type, p.Default, strings.Join(rng, ", "), p.Doc)
	}
	tw.Flush()
	if waived {
		fmt.Fprintf(w, "* a timing rule allow_unsafe waives (fencesim --unsafe runs such a design, with a warning)\n")
	}
}

// waivable is how design.Infos marks a rule allow_unsafe waives.
const waivable = " (unless allow_unsafe)"

func printJSON(e *env, cmd string, v any) int {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return e.fail(cmd, err)
	}
	fmt.Fprintln(e.stdout, string(b))
	return exitOK
}

func runVersion(e *env, args []string) int {
	c := commandByName("version")
	fs := newFlags(c.name)
	pos, code, done := parse(e, fs, c, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return e.fail(c.name, usagef("unexpected argument %q (version takes none)", pos[0]))
	}
	info, ok := debug.ReadBuildInfo()
	fmt.Fprintln(e.stdout, versionText(info, ok))
	return exitOK
}

// versionText is what fencesim --version prints: the module's version, the
// VCS revision the binary was built from ("(modified)" when the tree had
// changes) and its time, and the Go version.
func versionText(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "fencesim: no build information (a binary built without module support)"
	}
	version := info.Main.Version
	if version == "" {
		version = "(unknown version)"
	}
	rev, at, dirty := "", "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	s := "fencesim " + version
	if info.Main.Path != "" {
		s = "fencesim " + info.Main.Path + " " + version
	}
	if rev == "" {
		s += ", revision unknown (built without VCS information: go build in a git checkout stamps it)"
	} else {
		s += ", revision " + rev
		if dirty {
			s += " (modified)"
		}
		if at != "" {
			s += " of " + at
		}
	}
	return s + ", " + info.GoVersion
}

// listingExits is the exit status of the commands that judge nothing
// themselves, the listings, report and merge ("" for the others:
// exitStatus).
func listingExits(name string) string {
	switch name {
	case "knobs", "params", "version":
		return "0 listed, 2 bad usage"
	case "merge":
		return "the whole exploration's, as one machine running every seed would exit: 0 every property held in every shard, 1 one failed (or a run was not deterministic, or a knob was not judged as expected), 130 a shard's summary says it was interrupted (whatever failed before: as that shard exited); 2 bad usage or input (summaries that are not shards of one run, a shard missing without --partial)"
	case "report":
		return "0 written (whatever the run's verdicts), 1 the trace does not replay identically (the report shows the replayed run), 2 bad usage or input (a missing file, not a trace); a live run's trace (fencesim live) is judged as recorded, not replayed: 0 every property held, 1 one failed"
	}
	return ""
}
