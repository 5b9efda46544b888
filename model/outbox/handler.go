package outbox

import (
	"fmt"

	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
)

// Crash points of a handler.
const (
	PointAfterKey     = "handler/after-key"     // the key row is inserted, the business rows are not
	PointBeforeCommit = "handler/before-commit" // rows written (and, under send-before-commit, the message published), COMMIT not sent
	PointAfterCommit  = "handler/after-commit"  // committed, not answered
)

// HandlerPoints lists a handler's crash points.
var HandlerPoints = []string{PointAfterKey, PointBeforeCommit, PointAfterCommit}

// HandlerConfig configures a handler.
type HandlerConfig struct {
	Design Design
	DB     network.Addr
	Broker network.Addr // used only under send-before-commit
}

// stage of a request's transaction.
type stage uint8

const (
	stCheck  stage = iota + 1 // check-then-insert: the application's look-up
	stKey                     // BEGIN; INSERT key
	stDup                     // ROLLBACK; SELECT stored answer
	stWrite                   // business rows (+ outbox)
	stFind                    // refund: the charge's ledger entry
	stCommit                  // COMMIT
	stAbort                   // ROLLBACK, then answer code/value
)

type request struct {
	from   network.Addr
	dl     Delivery
	key    string
	op     string
	answer string
	stage  stage
	code   int // stAbort: the answer after the rollback
	value  string
}

type hconn struct {
	cl  timedClient
	req *request
}

// Handler is one instance of the receiving service (B.1-B.3, B.5, B.6). Each
// delivery runs as one interactive transaction on its own pooled
// connection: INSERT the key, write the business rows and the outbox row,
// COMMIT, answer. A unique violation on the key means another arrival did
// the work: roll back, read the stored answer, answer it.
type Handler struct {
	cfg   HandlerConfig
	name  string
	inc   int64
	n     int64
	conns []*hconn
}

var _ sim.Node = (*Handler)(nil)

// NewHandler returns a handler's factory.
func NewHandler(cfg HandlerConfig) sim.Factory {
	return func(name string, disk *sim.Disk) sim.Node {
		h := &Handler{cfg: cfg, name: name}
		if v, ok := disk.Get("incarnation"); ok {
			h.inc = v.(int64)
		}
		return h
	}
}

// Step implements sim.Node.
func (h *Handler) Step(env *sim.Env, in sim.Input) {
	switch in.Kind {
	case sim.Start:
		h.inc++
		env.Disk().Put("incarnation", h.inc)
		return
	case sim.Deliver:
		if dl, ok := in.Msg.Body.(Delivery); ok {
			h.receive(env, in.Msg.From, dl)
			return
		}
	}
	for _, c := range h.conns {
		done, ok := c.cl.Handle(in)
		if !ok {
			done, ok = c.cl.Expired(env, in)
		}
		if ok {
			for _, d := range done {
				if c.req != nil {
					h.advance(env, c, d)
				}
			}
			return
		}
	}
}

func (h *Handler) conn() *hconn {
	for _, c := range h.conns {
		if c.req == nil {
			return c
		}
	}
	c := &hconn{cl: timedClient{Client: db.Client{DB: h.cfg.DB}, owner: fmt.Sprintf("conn-%d", len(h.conns)+1), timeout: h.cfg.Design.DBTimeout}}
	h.conns = append(h.conns, c)
	return c
}

func (h *Handler) receive(env *sim.Env, from network.Addr, dl Delivery) {
	d := h.cfg.Design
	key := d.KeyOf(dl)
	env.Note(KindHandle, fmt.Sprintf("%s %s start", dl.Op, orNone(dl.Event)), HandleNote{Handler: h.name, Event: dl.Event, Key: key, Phase: HandleStart})
	if key == "" {
		// B.5: no key, no work. Nothing is read or written.
		h.reply(env, from, dl, Code400, "refused: the request has no Idempotency-Key; send the same key with every retry", "refused")
		return
	}
	h.n++
	op := fmt.Sprintf("%s.%d.%d", h.name, h.inc, h.n)
	r := &request{from: from, dl: dl, key: key, op: op, answer: Answer(dl.Op, op)}
	c := h.conn()
	c.req = r
	if d.Has(CheckThenInsert) {
		r.stage = stCheck
		c.cl.Exec(env, nil, FindKey(key))
		return
	}
	r.stage = stKey
	c.cl.Exec(env, nil, db.Begin(), StoreKey(key, dl.Event, op, r.answer))
}

func (h *Handler) advance(env *sim.Env, c *hconn, d db.Done) {
	r := c.req
	if d.Unknown() {
		// The session is gone (its transaction rolled back, unless the
		// COMMIT got through): the outcome is unknown. The sender will
		// deliver again; the key decides.
		h.finish(env, c, Code503, "database connection lost: outcome unknown, deliver again", "unknown")
		return
	}
	err := d.Err()
	last := db.Result{}
	if n := len(d.Resp.Results); n > 0 {
		last = d.Resp.Results[n-1]
	}
	dsn := h.cfg.Design
	switch r.stage {
	case stCheck:
		if err == nil && len(last.Rows) > 0 {
			code, v := dsn.DuplicateAnswer(last.Rows[0]["answer"].(string))
			h.finish(env, c, code, v, "duplicate")
			return
		}
		if err != nil {
			h.finish(env, c, Code503, "database error: "+err.Code, "error")
			return
		}
		r.stage = stKey
		c.cl.Exec(env, nil, db.Begin(), StoreKey(r.key, r.dl.Event, r.op, r.answer))
	case stKey:
		if err != nil && err.Code == db.CodeUniqueViolation {
			r.stage = stDup
			c.cl.Exec(env, nil, db.Rollback(), FindKey(r.key))
			return
		}
		if err != nil {
			h.abort(env, c, Code503, "database error: "+err.Code)
			return
		}
		if env.CrashPoint(PointAfterKey) {
			return
		}
		if r.dl.Op == OpRefund {
			r.stage = stFind
			c.cl.Exec(env, nil, FindCharge(r.dl.Ref))
			return
		}
		r.stage = stWrite
		m := Message{ID: MessageID(r.op), Event: r.dl.Event, OpID: r.op, Kind: OpCharge, Amount: r.dl.Amount}
		c.cl.Exec(env, nil, h.writeMessage(env, m, InsertCharge(r.op, r.dl.Event, r.dl.Payload, r.dl.Amount), LedgerCharge(r.op, r.dl.Event, r.dl.Amount))...)
	case stDup:
		if err == nil && len(last.Rows) > 0 {
			code, v := dsn.DuplicateAnswer(last.Rows[0]["answer"].(string))
			h.finish(env, c, code, v, "duplicate")
			return
		}
		h.finish(env, c, Code503, "key conflict but no stored answer", "error")
	case stFind:
		if err != nil {
			h.abort(env, c, Code503, "database error: "+err.Code)
			return
		}
		if len(last.Rows) == 0 {
			h.abort(env, c, Code404, "no charge for event "+r.dl.Ref)
			return
		}
		r.stage = stWrite
		amount, _ := last.Rows[0]["amount"].(int64)
		m := Message{ID: MessageID(r.op), Event: r.dl.Event, OpID: r.op, Kind: OpRefund, Amount: amount}
		c.cl.Exec(env, nil, h.writeMessage(env, m, dsn.Reverse(r.op, r.dl.Event, last.Rows[0]))...)
	case stWrite:
		if err != nil {
			h.abort(env, c, Code503, "database error: "+err.Code)
			return
		}
		if env.CrashPoint(PointBeforeCommit) {
			return
		}
		r.stage = stCommit
		c.cl.Exec(env, nil, db.Commit())
	case stCommit:
		if err != nil || last.RolledBack {
			h.finish(env, c, Code503, "commit failed", "error")
			return
		}
		if env.CrashPoint(PointAfterCommit) {
			return
		}
		h.finish(env, c, Code200, r.answer, "first")
	case stAbort:
		h.finish(env, c, r.code, r.value, "aborted")
	}
}

// writeMessage returns the business statements with the outgoing message
// (B.3): an outbox row in the same transaction. Under send-before-commit the
// handler publishes the message itself, now, before COMMIT.
func (h *Handler) writeMessage(env *sim.Env, m Message, business ...db.Stmt) []db.Stmt {
	if h.cfg.Design.Has(SendBeforeCommit) {
		env.Send(h.cfg.Broker, Publish{Msg: m})
		return business
	}
	return append(business, OutboxMessage(m))
}

func (h *Handler) abort(env *sim.Env, c *hconn, code int, value string) {
	c.req.stage, c.req.code, c.req.value = stAbort, code, value
	c.cl.Exec(env, nil, db.Rollback())
}

func (h *Handler) finish(env *sim.Env, c *hconn, code int, value, path string) {
	r := c.req
	c.req = nil
	h.reply(env, r.from, r.dl, code, value, path)
	if code == Code503 && c.cl.Connected() {
		// A failed session may still hold an open transaction: start afresh.
		c.cl.Close(env)
	}
}

func (h *Handler) reply(env *sim.Env, to network.Addr, dl Delivery, code int, value, path string) {
	env.Send(to, Reply{No: dl.No, Code: code, Value: value})
	env.Note(KindHandle, fmt.Sprintf("%s %s end %d %s", dl.Op, orNone(dl.Event), code, path),
		HandleNote{Handler: h.name, Event: dl.Event, Key: h.cfg.Design.KeyOf(dl), Phase: HandleEnd, Code: code, Path: path})
}

func orNone(s string) string {
	if s == "" {
		return "(no key)"
	}
	return s
}
