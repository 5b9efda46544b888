package artifact

import (
	"bytes"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"

	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/report"
	"github.com/fencesim/fencesim/traces/story"
)

// Trace writes a run's header and events as JSON Lines and returns the
// trace's canonical hash. The header gets the source revision when it
// has none (not part of the hash: a seed reproduces a run only on its
// commit).
func Trace(path string, r *systems.Result) (string, error) {
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	h := r.Header
	if h.Commit == "" {
		h.Commit = Revision()
	}
	w, err := traces.NewWriter(f, h)
	if err != nil {
		f.Close()
		return "", err
	}
	for i := range r.Events {
		w.Record(&r.Events[i])
	}
	if err := w.Close(); err != nil {
		f.Close()
		return "", err
	}
	return w.Hash(), f.Close()
}

// Page is what a report shows beside the run itself.
type Page struct {
	Story     Story // the failure's story (StoryOf); zero: none
	Title     string
	Schedule  []string // the (minimized) schedule's lines, marked
	Probes    []report.Probe
	Replay    string // the command that replays the run
	TracePath string
	Hash      string
}

// Report writes a run's HTML report to path; with the run's porcupine
// visualisation (when a linearization failed) also written to porcupine
// (when not empty; a page of that name left by an earlier run is removed
// when none is written). It returns the porcupine file written, if any.
func Report(path, porcupine string, r *systems.Result, p Page) (string, error) {
	var lin []byte
	wrote := ""
	if r.Visualize != nil {
		var buf bytes.Buffer
		if err := r.Visualize(&buf); err == nil {
			lin = buf.Bytes()
			if porcupine != "" {
				if err := os.WriteFile(porcupine, lin, 0o644); err != nil {
					return "", err
				}
				wrote = porcupine
			}
		}
	}
	in := report.Input{
		Title:         p.Title,
		Header:        r.Header,
		Events:        r.Events,
		Nodes:         r.Nodes,
		Schedule:      p.Schedule,
		Probes:        p.Probes,
		Hash:          p.Hash,
		Replay:        p.Replay,
		TracePath:     p.TracePath,
		Linearization: lin,
		Story:         p.Story.Story,
		Needed:        p.Story.Needed,
		Window:        p.Story.Window,
		Mattered:      p.Story.Mattered,
	}
	for _, v := range r.Failed() {
		x := report.Violation{Property: v.Property, Message: v.Message, Events: v.Events, Detail: v.Detail}
		if strings.Contains(v.Message, "not linearizable") && v.Detail != "" {
			// A linearizability checker's detail says in words which
			// operation cannot be placed, and its events are that operation's.
			x.Explanation, x.Links, x.Detail = v.Detail, v.Events, ""
		}
		in.Violations = append(in.Violations, x)
	}
	for _, t := range r.Timings {
		in.Timings = append(in.Timings, report.Timing{Name: t.Name, D: t.D})
	}
	var page bytes.Buffer
	if err := report.Write(&page, in); err != nil {
		return wrote, err
	}
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		return wrote, err
	}
	if porcupine != "" && wrote == "" {
		// No linearization failed: a porcupine page of that name is an
		// earlier run's (the same seed, another design), not this one's.
		if fi, err := os.Lstat(porcupine); err == nil && fi.Mode().IsRegular() {
			if err := os.Remove(porcupine); err != nil {
				return wrote, err
			}
		}
	}
	return wrote, nil
}

// Revision is the source revision the binary was built from (with
// "-dirty" when the tree had changes): from the build's VCS stamp, else
// from git in the working directory (go run, go test, -buildvcs=false),
// else "unknown".
func Revision() string {
	rev, dirty := "", false
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if rev == "" {
		out, err := exec.Command("git", "rev-parse", "HEAD").Output()
		if err != nil {
			return "unknown"
		}
		rev = strings.TrimSpace(string(out))
		st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
		dirty = err == nil && len(strings.TrimSpace(string(st))) > 0
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}

// Story is what a report and a terminal timeline tell about a failure: the
// violating key's story, the needed faults' events, the window from the
// first of them to the violation, and the timeline's lines.
type Story struct {
	Story  *report.Story
	Needed []uint64
	Window [2]int64
	// Mattered are the send events of the messages about the key (its
	// tokens, or the key itself).
	Mattered []uint64
	Lines    []string
}

// StoryOf tells the story of a failing run recorded in full: the first
// failed property's key (or the named property's, when it failed), and
// the needed fault actions as they happened. maxLines bounds the timeline.
func StoryOf(r *systems.Result, property string, needed []sim.Action, maxLines int) Story {
	bad := r.Failed()
	if len(bad) == 0 {
		return Story{}
	}
	v := bad[0]
	for _, x := range bad {
		if property != "" && strings.HasPrefix(x.Property, property) {
			v = x
			break
		}
	}
	var want []story.Fault
	for _, a := range needed {
		want = append(want, story.Fault{At: int64(a.At), Kind: string(a.Kind), Node: a.Node})
	}
	st := story.Of(r.System, r.Events, v.Events, v.Message)
	faults := story.Faults(r.Events, want)
	return Story{Story: st, Needed: faults, Window: story.Window(r.Events, faults, st, v.Events),
		Mattered: story.Mattered(r.Events, st), Lines: story.Lines(r.Events, faults, st, v.Property, v.Message, maxLines)}
}
