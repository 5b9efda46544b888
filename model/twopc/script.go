package twopc

import (
	"fmt"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
)

// Script is a scripted database client (a business session, a DBA at a
// psql prompt): it runs its steps in order on one connection (one session),
// each at its time (or as soon as the previous step was answered), and
// records every answer with the time it arrived. The scenarios of C.2 and
// C.3 use it.
type Script struct {
	DB      network.Addr
	Steps   []ScriptStep
	Answers []ScriptAnswer
}

// ScriptStep is one request. Fn, when set, computes the statements at send
// time (a DBA who reads the decision log first).
type ScriptStep struct {
	At    time.Duration
	Stmts []db.Stmt
	Fn    func() []db.Stmt
}

// ScriptAnswer is one answer: the step, when it was sent and answered, the
// results of the statements that ran and the request's error.
type ScriptAnswer struct {
	Step     int
	Sent, At clock.Time
	Results  []db.Result
	Err      error
}

// Took is how long the request took, network included.
func (a ScriptAnswer) Took() time.Duration { return time.Duration(a.At - a.Sent) }

// Last returns the result of the request's last statement.
func (a ScriptAnswer) Last() db.Result {
	if len(a.Results) == 0 {
		return db.Result{}
	}
	return a.Results[len(a.Results)-1]
}

// Factory returns the factory of the script's node.
func (s *Script) Factory() sim.Factory {
	return func(string, *sim.Disk) sim.Node { return sim.Program(s.run) }
}

func (s *Script) run(p *sim.Proc) {
	conn := &db.Conn{DB: s.DB}
	start := p.Mono()
	for i, st := range s.Steps {
		if wait := st.At - time.Duration(p.Mono()-start); wait > 0 {
			p.Sleep(wait, fmt.Sprintf("script step %d", i))
		}
		stmts := st.Stmts
		if st.Fn != nil {
			stmts = st.Fn()
		}
		sent := p.Now()
		rs, err := conn.Batch(p, stmts...)
		s.Answers = append(s.Answers, ScriptAnswer{Step: i, Sent: sent, At: p.Now(), Results: rs, Err: err})
	}
}

// Answer returns the answer to step i (ok false if none came).
func (s *Script) Answer(i int) (ScriptAnswer, bool) {
	for _, a := range s.Answers {
		if a.Step == i {
			return a, true
		}
	}
	return ScriptAnswer{}, false
}
