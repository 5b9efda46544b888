package systems

import (
	"fmt"
	"strings"
	"time"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/model/contract"
	"github.com/fencesim/fencesim/traces"
)

// The contract's types, under the names the command line has always used.
type (
	System            = contract.System
	Support           = contract.Support
	Knob              = contract.Knob
	Design            = contract.Design
	Faults            = contract.Faults
	Options           = contract.Options
	Metric            = contract.Metric
	Result            = contract.Result
	Timing            = contract.Timing
	World             = contract.World
	Outcome           = contract.Outcome
	Exhaustive        = contract.Exhaustive
	ExhaustiveFailure = contract.ExhaustiveFailure
)

// The fault intensities.
const (
	None     = contract.None
	Moderate = contract.Moderate
	Heavy    = contract.Heavy
)

// RunProperty and LimitProperty are the property names of a run that could
// not be played and of one that hit a budget of its limits.
const (
	RunProperty   = contract.RunProperty
	LimitProperty = contract.LimitProperty
)

// ParseFaults reads a fault intensity.
func ParseFaults(s string) (Faults, error) { return contract.ParseFaults(s) }

// PropertyID is the id of a property name: its first word.
func PropertyID(name string) string { return contract.PropertyID(name) }

// Run plays one seed of a system under a fault intensity and judges it
// (contract.Run: Draw, Play, Judge).
// The checkers are timed with the wall clock unless o.Clock says
// otherwise.
func Run(sys System, d Design, seed uint64, f Faults, o Options) *Result {
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return contract.Run(sys, d, seed, f, o)
}

// Judge runs a system's checkers on a record made elsewhere (a live
// run's), timed with the wall clock.
func Judge(sys System, h traces.Header, evs []traces.Event) *Result {
	return sys.Judge(&Outcome{Header: h, Events: evs, Clock: time.Now})
}

func runFailed(err error) checker.Verdict { return contract.RunFailed(err) }

// All returns the systems users pick from (the registry's, hidden ones
// aside), in order.
func All() []System {
	var out []System
	for _, s := range registry {
		if !s.Supports().Hidden {
			out = append(out, s)
		}
	}
	return out
}

// Names lists the systems' names (hidden ones aside).
func Names() []string {
	var out []string
	for _, s := range All() {
		out = append(out, s.Name())
	}
	return out
}

// ByName returns a system by its name (a hidden one too).
func ByName(name string) (System, error) {
	for _, s := range registry {
		if s.Name() == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("unknown system %q (systems: %s)", name, strings.Join(Names(), ", "))
}

// OwnerOf returns the system a knob belongs to.
func OwnerOf(knob string) (System, bool) {
	for _, s := range registry {
		for _, k := range s.Knobs() {
			if k.Name == knob {
				return s, true
			}
		}
	}
	return nil, false
}
