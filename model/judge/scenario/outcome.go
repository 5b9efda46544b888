package scenario

import (
	"time"

	"github.com/fencesim/fencesim/checker"
	jc "github.com/fencesim/fencesim/checker/judge"
	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// Outcome is a played run: the world, its trace, the checkers' verdicts.
type Outcome struct {
	World   *judge.World
	Header  traces.Header
	Events  []traces.Event
	Run     *jc.Run
	Result  jc.Result
	Options judge.Options
	Profile sim.Profile // the fault profile, for generated schedules
}

// Play runs a scenario's options and checks the trace.
func Play(o judge.Options) (*Outcome, error) {
	mem := &traces.Memory{}
	o.Recorder = mem
	w, err := judge.Simulate(o)
	if err != nil {
		return nil, err
	}
	h := o.Header(w)
	run, err := jc.Decode(h, mem.Events)
	if err != nil {
		return nil, err
	}
	return &Outcome{World: w, Header: h, Events: mem.Events, Run: run, Result: jc.Check(run), Options: o}, nil
}

// Failed returns the failing verdicts.
func (o *Outcome) Failed() []checker.Verdict { return checker.Failed(o.Result.Verdicts) }

// Transitions returns a submission's row versions that entered status to
// from status from.
func (o *Outcome) Transitions(sub int64, from, to string) []jc.Version {
	var out []jc.Version
	vs := o.Run.Subs[sub]
	for i := 1; i < len(vs); i++ {
		if vs[i-1].Status == from && vs[i].Status == to {
			out = append(out, vs[i])
		}
	}
	return out
}

// Ops returns the client operations of one kind (and token, if given).
func (o *Outcome) Ops(op, token string) []checker.Op {
	var out []checker.Op
	for _, x := range o.Run.Ops {
		if x.Call.Op == op && (token == "" || x.Call.Token == token) {
			out = append(out, x)
		}
	}
	return out
}

// Latency is a submission's time from arrival to its verdict (0 if none).
func (o *Outcome) Latency(sub int64) time.Duration {
	d := o.Run.DecidedAt(sub)
	if d == 0 {
		return 0
	}
	return time.Duration(d - o.Run.Arrived[sub])
}
