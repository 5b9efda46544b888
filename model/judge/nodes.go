package judge

import (
	"fmt"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/arbiter"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// ---- monitor ----

// Monitor polls every arbiter's probe and raises an alert when the dispatch
// loop is stuck (A.4, A-S8): a claim is waiting and no dispatch round has
// completed (or nothing was paired while work was claimable) for longer than
// the threshold, or the probe went unanswered that long. One alert per
// episode and arbiter.
type Monitor struct {
	d        arbiter.Design
	arbiters []network.Addr
	no       uint64
	answered map[network.Addr]clock.Time
	alerted  map[network.Addr]bool
}

type probeTick struct{}

func (probeTick) String() string { return "probe" }

// NewMonitor returns the monitor's factory.
func NewMonitor(d arbiter.Design, arbiters []network.Addr) sim.Factory {
	return func(string, *sim.Disk) sim.Node {
		return &Monitor{d: d, arbiters: arbiters, answered: map[network.Addr]clock.Time{}, alerted: map[network.Addr]bool{}}
	}
}

// Step implements sim.Node.
func (m *Monitor) Step(env *sim.Env, in sim.Input) {
	switch in.Kind {
	case sim.Start:
		env.After(m.d.ProbeEvery, probeTick{})
	case sim.Timer:
		now := env.Now()
		for _, a := range m.arbiters {
			last, seen := m.answered[a]
			if seen && now.Sub(last) > m.d.ProbeThreshold {
				m.alert(env, a, fmt.Sprintf("probe unanswered for %v", now.Sub(last)))
			}
			if !seen {
				m.answered[a] = now // start counting from the first poll
			}
			m.no++
			env.Send(a, arbiter.Request{No: m.no, Op: arbiter.OpProbe})
		}
		env.After(m.d.ProbeEvery, probeTick{})
	case sim.Deliver:
		r, ok := in.Msg.Body.(arbiter.Reply)
		if !ok || r.Op != arbiter.OpProbe {
			return
		}
		a, now, p := in.Msg.From, env.Now(), r.Probe
		m.answered[a] = now
		stuck := p.Leader && p.Waiting > 0 && (now.Sub(p.LastRound) > m.d.ProbeThreshold ||
			(p.Claimable && now.Sub(p.LastPair) > m.d.ProbeThreshold))
		if stuck {
			m.alert(env, a, fmt.Sprintf("%d waiting, last dispatch round %v ago, last pairing %v ago", p.Waiting, now.Sub(p.LastRound), now.Sub(p.LastPair)))
		} else if p.Waiting == 0 || now.Sub(p.LastRound) <= m.d.ProbeThreshold {
			m.alerted[a] = false // the episode is over
		}
	}
}

func (m *Monitor) alert(env *sim.Env, a network.Addr, why string) {
	if m.alerted[a] {
		return
	}
	m.alerted[a] = true
	env.Note(hist.KindAlert, string(a)+": "+why, hist.Alert{Monitor: string(env.Self()), Target: string(a), Reason: why})
}

// ---- web front ----

// Arrival is one submission arriving.
type Arrival struct {
	At      time.Duration `json:"at"`
	ID      int64         `json:"id"`
	User    int64         `json:"user"`
	Problem int64         `json:"problem"`
}

// Web inserts submissions as they arrive (the online judge's front end),
// retrying an insert whose outcome is unknown; a unique violation on retry
// means the first attempt committed.
type Web struct {
	cl       db.Client
	arrivals []Arrival
	pending  map[int64]bool
	reads    int
}

type arrive struct{ i int }

func (a arrive) String() string { return fmt.Sprintf("arrival %d", a.i) }

// readTick: the web front shows a submission's status (a user looking at the
// result page), every ReadEvery, cycling through the arrivals.
type readTick struct{}

func (readTick) String() string { return "read" }

// readDone tags a status read in flight.
type readDone struct {
	id  string
	sub int64
}

// ReadEvery is how often the web front reads a submission's status.
const ReadEvery = 7 * time.Second

// NewWeb returns the web front's factory.
func NewWeb(dbAddr network.Addr, arrivals []Arrival) sim.Factory {
	return func(string, *sim.Disk) sim.Node {
		return &Web{cl: db.Client{DB: dbAddr}, arrivals: arrivals, pending: map[int64]bool{}}
	}
}

// Step implements sim.Node. A restarted web front re-sends every arrival
// (inserts are idempotent by primary key).
func (w *Web) Step(env *sim.Env, in sim.Input) {
	if done, ok := w.cl.Handle(in); ok {
		for _, d := range done {
			switch tag := d.Tag.(type) {
			case int:
				if e := d.Err(); e != nil && e.Code != db.CodeUniqueViolation {
					env.After(time.Second, arrive{tag}) // unknown outcome or unreachable: try again
				}
			case readDone:
				w.readReturned(env, tag, d)
			}
		}
		return
	}
	switch in.Kind {
	case sim.Start:
		now := env.Mono()
		for i, a := range w.arrivals {
			d := clock.Time(a.At).Sub(now)
			if d < 0 {
				d = 0
			}
			env.After(d, arrive{i})
		}
		env.After(ReadEvery, readTick{})
	case sim.Timer:
		switch t := in.Tag.(type) {
		case arrive:
			a := w.arrivals[t.i]
			w.cl.Exec(env, t.i, db.Insert(arbiter.TSubmissions, db.Row{"id": a.ID, "user_id": a.User, "problem_id": a.Problem}))
		case readTick:
			w.read(env)
			env.After(ReadEvery, readTick{})
		}
	}
}

// read reads the status of the next submission in turn.
func (w *Web) read(env *sim.Env) {
	if len(w.arrivals) == 0 {
		return
	}
	a := w.arrivals[w.reads%len(w.arrivals)]
	w.reads++
	id := fmt.Sprintf("%s#read.%d", env.Self(), w.reads)
	if env.Recording() {
		env.Note(hist.KindCall, fmt.Sprintf("read %d", a.ID), hist.Call{ID: id, Client: string(env.Self()), Op: "read", Sub: a.ID})
	}
	w.cl.Exec(env, readDone{id, a.ID}, arbiter.ReadStatus(a.ID))
}

// readReturned records a read's answer: the status and generation, or 404
// for a submission not inserted yet. A read whose connection broke has an
// unknown outcome (no return).
func (w *Web) readReturned(env *sim.Env, r readDone, d db.Done) {
	if d.Unknown() || !env.Recording() {
		return
	}
	ret := hist.Return{ID: r.id, Code: 200, Sub: r.sub}
	switch {
	case d.Err() != nil:
		ret.Code = 503
	case len(d.Resp.Results[0].Rows) == 0:
		ret.Code = 404
	default:
		row := d.Resp.Results[0].Rows[0]
		ret.Status, _ = row["status"].(string)
		ret.Gen, _ = row["lease_gen"].(int64)
	}
	env.Note(hist.KindReturn, fmt.Sprintf("read %d -> %d %s gen %d", r.sub, ret.Code, ret.Status, ret.Gen), ret)
}
