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
// psql prompt): it sends its steps at fixed times on one connection (one
// session) and records every answer with the time it arrived. The
// scenarios of C.2 and C.3 use it.
type Script struct {
	DB      network.Addr
	Steps   []ScriptStep
	Answers []ScriptAnswer
	cl      db.Client
	sent    map[uint64]clock.Time
}

var _ sim.Node = (*Script)(nil)

// ScriptStep is one request. Fn, when set, computes the statements at send
// time (a DBA who reads the decision log first).
type ScriptStep struct {
	At    time.Duration
	Stmts []db.Stmt
	Fn    func() []db.Stmt
}

// ScriptAnswer is one answer: the step, when it was sent and answered.
type ScriptAnswer struct {
	Step     int
	Sent, At clock.Time
	Resp     db.Response
}

// Took is how long the request took, network included.
func (a ScriptAnswer) Took() time.Duration { return time.Duration(a.At - a.Sent) }

// Last returns the result of the request's last statement.
func (a ScriptAnswer) Last() db.Result {
	if len(a.Resp.Results) == 0 {
		return db.Result{}
	}
	return a.Resp.Results[len(a.Resp.Results)-1]
}

type scriptTag int

func (s scriptTag) String() string { return fmt.Sprintf("script step %d", int(s)) }

// Step implements sim.Node.
func (s *Script) Step(env *sim.Env, in sim.Input) {
	switch in.Kind {
	case sim.Start:
		s.cl.DB = s.DB
		s.sent = map[uint64]clock.Time{}
		for i, st := range s.Steps {
			env.After(st.At, scriptTag(i))
		}
		return
	case sim.Timer:
		if i, ok := in.Tag.(scriptTag); ok {
			st := s.Steps[i]
			stmts := st.Stmts
			if st.Fn != nil {
				stmts = st.Fn()
			}
			id := s.cl.Exec(env, int(i), stmts...)
			s.sent[id] = env.Now()
			return
		}
	}
	if done, ok := s.cl.Handle(in); ok {
		for _, d := range done {
			s.Answers = append(s.Answers, ScriptAnswer{Step: d.Tag.(int), Sent: s.sent[d.ID], At: env.Now(), Resp: d.Resp})
		}
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
