package judge

import (
	"fmt"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// Arrival is one submission arriving.
type Arrival struct {
	At      time.Duration `json:"at"`
	ID      int64         `json:"id"`
	User    int64         `json:"user"`
	Problem int64         `json:"problem"`
}

// Web inserts submissions as they arrive (the online judge's front end),
// retrying an insert whose outcome is unknown; a unique violation on retry
// means the first attempt committed. It also shows statuses: every
// ReadEvery a user looks at a submission's result page.
type Web struct {
	db       network.Addr
	arrivals []Arrival
	reads    int
}

// ReadEvery is how often the web front reads a submission's status.
const ReadEvery = 7 * time.Second

// NewWeb returns the web front's factory.
func NewWeb(dbAddr network.Addr, arrivals []Arrival) sim.Factory {
	return func(string, *sim.Disk) sim.Node {
		w := &Web{db: dbAddr, arrivals: arrivals}
		return sim.ProgramOf(w, w.main)
	}
}

// main starts the arrivals and the reads. A restarted web front re-sends
// every arrival (inserts are idempotent by primary key). The front's
// requests share one database session, as a single connection would.
func (w *Web) main(p *sim.Proc) {
	c := &db.Conn{DB: w.db}
	start := p.Mono()
	for _, a := range w.arrivals {
		wait := max(clock.Time(a.At).Sub(start), 0)
		p.Go("arrival", func(p *sim.Proc) {
			p.Sleep(wait, "arrival")
			w.insert(p, c, a)
		})
	}
	p.Go("reads", func(p *sim.Proc) {
		for {
			p.Sleep(ReadEvery, "read interval")
			p.Go("read", func(p *sim.Proc) { w.read(p, c) })
		}
	})
}

// insert inserts one submission, again every second while the outcome is
// unknown or the database unreachable.
func (w *Web) insert(p *sim.Proc, c *db.Conn, a Arrival) {
	for {
		_, err := c.Exec(p, db.Insert(TSubmissions, db.Row{"id": a.ID, "user_id": a.User, "problem_id": a.Problem}).Named("insert-submission"))
		if err == nil || db.Code(err) == db.CodeUniqueViolation {
			return
		}
		p.Sleep(time.Second, "insert retry")
	}
}

// read reads the status of the next submission in turn and records the
// answer: the status and generation, or 404 for a submission not inserted
// yet. A read whose connection broke has an unknown outcome (no return).
func (w *Web) read(p *sim.Proc, c *db.Conn) {
	if len(w.arrivals) == 0 {
		return
	}
	a := w.arrivals[w.reads%len(w.arrivals)]
	w.reads++
	id := fmt.Sprintf("%s#read.%d", p.Self(), w.reads)
	p.Note(hist.Call{ID: id, Client: string(p.Self()), Op: "read", Sub: a.ID})
	res, err := c.Exec(p, ReadStatus(a.ID).Named("read-status"))
	if db.Unknown(err) {
		return
	}
	ret := hist.Return{ID: id, Code: 200, Sub: a.ID, Op: "read"}
	switch {
	case err != nil:
		ret.Code = 503
	case len(res.Rows) == 0:
		ret.Code = 404
	default:
		ret.Status, _ = res.Rows[0]["status"].(string)
		ret.Gen, _ = res.Rows[0]["lease_gen"].(int64)
	}
	p.Note(ret)
}
