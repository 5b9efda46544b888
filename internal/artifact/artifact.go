package artifact

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"

	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/report"
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
	Title     string
	Schedule  []string // the (minimized) schedule's lines, marked
	Probes    []report.Probe
	Replay    string // the command that replays the run
	TracePath string
	Hash      string
}

// Report writes a run's HTML report to path; with the run's porcupine
// visualisation (when a linearization failed) also written to porcupine
// (when not empty). It returns the porcupine file written, if any.
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
	}
	for _, v := range r.Failed() {
		in.Violations = append(in.Violations, report.Violation{Property: v.Property, Message: v.Message, Events: v.Events, Detail: v.Detail})
	}
	for _, t := range r.Timings {
		in.Timings = append(in.Timings, report.Timing{Name: t.Name, D: t.D})
	}
	var page bytes.Buffer
	if err := report.Write(&page, in); err != nil {
		return wrote, err
	}
	return wrote, os.WriteFile(path, page.Bytes(), 0o644)
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

// GoType is a system's type name in package simtest (and internal/systems).
func GoType(sys systems.System) string {
	switch sys.(type) {
	case systems.Arbiter:
		return "Arbiter"
	case systems.Outbox:
		return "Outbox"
	case systems.TwoPC:
		return "TwoPC"
	}
	return fmt.Sprintf("%T", sys)
}
