package outbox

import (
	"fmt"

	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
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

// Handler is one instance of the receiving service (B.1-B.3, B.5, B.6).
// Each delivery is served in a process of its own (handle), as one
// interactive transaction on a connection of its own: INSERT the key, write
// the business rows and the outbox row, COMMIT, answer. A unique violation
// on the key means another arrival did the work: roll back, read the
// stored answer, answer it. A definitive refusal (a refund of nothing, or
// of a charge already refunded) is an answer too: it commits with its key,
// and nothing else, and every later delivery of the key gets it.
type Handler struct {
	cfg   HandlerConfig
	name  string
	inc   int64 // the incarnation, from the disk: operation ids stay unique across restarts
	n     int64 // deliveries with a key this incarnation
	conns []*hconn
}

// hconn is a connection of the handler's pool (it grows as deliveries
// overlap; a free one is reused, the oldest first).
type hconn struct {
	c    *db.Conn
	busy bool
}

// NewHandler returns a handler's factory.
func NewHandler(cfg HandlerConfig) sim.Factory {
	return func(name string, disk *sim.Disk) sim.Node {
		h := &Handler{cfg: cfg, name: name}
		if v, ok := disk.Get("incarnation"); ok {
			h.inc = v.(int64)
		}
		return sim.Program(h.main)
	}
}

func (h *Handler) main(p *sim.Proc) {
	h.inc++
	p.Disk().Put("incarnation", h.inc)
	p.Handle(h.serve)
}

// serve answers one inbound message: a Delivery (anything else, such as
// the broker's PUBACK under send-before-commit, is ignored).
func (h *Handler) serve(p *sim.Proc, m network.Message) {
	dl, ok := m.Body.(Delivery)
	if !ok {
		return
	}
	key := h.cfg.Design.KeyOf(dl)
	p.Note(hist.BHandle{Handler: h.name, Event: dl.Event, Key: key, Phase: hist.HandleStart, Op: dl.Op})
	if key == "" {
		// B.5: no key, no work. Nothing is read or written.
		h.reply(p, m.From, dl, Code400, "refused: the request has no Idempotency-Key; send the same key with every retry", "refused")
		return
	}
	hc := h.conn()
	code, value, path := h.handle(p, hc.c, dl, key)
	h.reply(p, m.From, dl, code, value, path)
	if code == Code503 {
		// A failed session may still hold an open transaction: start afresh.
		hc.c.Close(p)
	}
	hc.busy = false
}

func (h *Handler) conn() *hconn {
	for _, hc := range h.conns {
		if !hc.busy {
			hc.busy = true
			return hc
		}
	}
	hc := &hconn{c: &db.Conn{DB: h.cfg.DB, Timeout: h.cfg.Design.DBTimeout}, busy: true}
	h.conns = append(h.conns, hc)
	return hc
}

// handle does the work of one delivery with a key and returns the answer
// (and, for the notes, the path it took). The key, the business rows and
// the outgoing message commit together or not at all (B.1, B.3); the
// answer is given only after COMMIT succeeded.
func (h *Handler) handle(p *sim.Proc, c *db.Conn, dl Delivery, key string) (code int, value, path string) {
	d := h.cfg.Design
	h.n++
	op := fmt.Sprintf("%s.%d.%d", h.name, h.inc, h.n)
	answer := Answer(dl.Op, op)

	if d.Has(CheckThenInsert) {
		// The application looks the key up before inserting it: two
		// arrivals that look at once both find nothing (B.2).
		res, err := c.Exec(p, FindKey(key).Named("check-key"))
		switch {
		case db.Unknown(err):
			return unknown()
		case err != nil:
			return Code503, "database error: " + db.Code(err), "error"
		case len(res.Rows) > 0:
			code, value := d.DuplicateAnswer(res.Rows[0].Int("code"), res.Rows[0].Text("answer"))
			return code, value, "duplicate"
		}
	}

	// 1. The key, in the transaction that does the work (BEGIN rides with it).
	tx, err := c.Begin(p)
	if err != nil {
		return unknown()
	}
	_, err = tx.Exec(StoreKey(key, dl.Event, op, answer).Named("store-key"))
	switch {
	case db.Unknown(err):
		return unknown()
	case db.Code(err) == db.CodeUniqueViolation:
		// B.2, B.6: another arrival did the work. Roll back, read the
		// answer it stored, give the same answer (one round trip).
		rs, err := c.Batch(p, db.Rollback(), FindKey(key).Named("stored-answer"))
		switch {
		case db.Unknown(err):
			return unknown()
		case err == nil && len(rs) == 2 && len(rs[1].Rows) > 0:
			code, value := d.DuplicateAnswer(rs[1].Rows[0].Int("code"), rs[1].Rows[0].Text("answer"))
			return code, value, "duplicate"
		}
		return Code503, "key conflict but no stored answer", "error"
	case err != nil:
		return abort(tx, Code503, "database error: "+db.Code(err))
	}
	p.Point(PointAfterKey)

	// 2. The business rows and the outgoing message.
	var m Message
	var business []db.Stmt
	if dl.Op == OpRefund {
		// B.4: a refund reverses the charge's ledger entry with a new one.
		// A refund of nothing, or of a charge already refunded under
		// another key, is a definitive refusal, kept with the key.
		orig, err := tx.QueryRow(FindCharge(dl.Ref).Named("find-charge"))
		switch {
		case db.Unknown(err):
			return unknown()
		case err != nil:
			return abort(tx, Code503, "database error: "+db.Code(err))
		case orig == nil:
			return h.refuse(p, tx, key, op, Code404, "no charge for event "+dl.Ref)
		}
		res, err := tx.Exec(d.Reverse(op, dl.Event, orig).Named("reverse"))
		switch {
		case db.Unknown(err):
			return unknown()
		case err != nil:
			return abort(tx, Code503, "database error: "+db.Code(err))
		case res.Affected == 0:
			return h.refuse(p, tx, key, op, Code409, "charge for event "+dl.Ref+" already refunded")
		}
		m = Message{ID: MessageID(op), Event: dl.Event, OpID: op, Kind: OpRefund, Amount: orig.Int("amount")}
	} else {
		m = Message{ID: MessageID(op), Event: dl.Event, OpID: op, Kind: OpCharge, Amount: dl.Amount}
		business = []db.Stmt{InsertCharge(op, dl.Event, dl.Payload, dl.Amount).Named("insert-charge"), LedgerCharge(op, dl.Event, dl.Amount).Named("ledger-charge")}
	}
	if stmts := h.writeMessage(p, m, business...); len(stmts) > 0 {
		_, err = tx.Batch(stmts...)
		switch {
		case db.Unknown(err):
			return unknown()
		case err != nil:
			return abort(tx, Code503, "database error: "+db.Code(err))
		}
	}
	// 3. COMMIT, then answer.
	return commitThen(p, tx, Code200, answer, "first")
}

// commitThen commits the delivery's transaction and returns its answer,
// given only after COMMIT succeeded (a handler's crash points on either
// side of it).
func commitThen(p *sim.Proc, tx *db.Tx, code int, value, path string) (int, string, string) {
	p.Point(PointBeforeCommit)
	err := tx.Commit()
	switch {
	case db.Unknown(err):
		return unknown()
	case err != nil:
		return Code503, "commit failed", "error"
	}
	p.Point(PointAfterCommit)
	return code, value, path
}

// refuse ends a delivery with a definitive refusal (a 4xx) in the
// transaction that stored its key: the refusal is recorded with the key
// (RecordRefusal) and committed without business rows or message, then
// answered; every later delivery of the key gets the same answer. Under
// refusal-not-stored it is rolled back and answered.
func (h *Handler) refuse(p *sim.Proc, tx *db.Tx, key, op string, code int, value string) (int, string, string) {
	st, ok := h.cfg.Design.RecordRefusal(key, op, code, value)
	if !ok {
		return abort(tx, code, value)
	}
	_, err := tx.Exec(st.Named("record-refusal"))
	switch {
	case db.Unknown(err):
		return unknown()
	case err != nil:
		return abort(tx, Code503, "database error: "+db.Code(err))
	}
	return commitThen(p, tx, code, value, "refused")
}

// writeMessage returns the business statements with the outgoing message
// (B.3): an outbox row in the same transaction. Under send-before-commit the
// handler publishes the message itself, now, before COMMIT.
func (h *Handler) writeMessage(p *sim.Proc, m Message, business ...db.Stmt) []db.Stmt {
	if h.cfg.Design.Has(SendBeforeCommit) {
		p.Send(h.cfg.Broker, Publish{Msg: m})
		return business
	}
	return append(business, OutboxMessage(m).Named("outbox"))
}

// unknown is the answer when the connection failed: the session is gone
// (its transaction rolled back, unless the COMMIT got through), the outcome
// is unknown. The sender will deliver again; the key decides.
func unknown() (int, string, string) {
	return Code503, "database connection lost: outcome unknown, deliver again", "unknown"
}

// abort rolls the transaction back and answers code (503 unknown when the
// rollback's connection failed).
func abort(tx *db.Tx, code int, value string) (int, string, string) {
	if err := tx.Rollback(); db.Unknown(err) {
		return unknown()
	}
	return code, value, "aborted"
}

func (h *Handler) reply(p *sim.Proc, to network.Addr, dl Delivery, code int, value, path string) {
	p.Send(to, Reply{No: dl.No, Code: code, Value: value})
	p.Note(hist.BHandle{Handler: h.name, Event: dl.Event, Key: h.cfg.Design.KeyOf(dl), Phase: hist.HandleEnd, Code: code, Path: path, Op: dl.Op})
}
