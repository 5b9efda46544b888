package hist

import "github.com/fencesim/fencesim/traces/canon"

// The notes' JSON, appended by hand: byte for byte what encoding/json's
// Marshal writes for each type (field order, omitempty, escaping; the text
// only fields left out). A trace's lines and hash are made of these bytes
// (traces' encoder uses canon.Appender); json_test.go compares every
// method with json.Marshal on random values. A field added to a note type
// must be added here too (the test fails until it is).

var (
	_ canon.Appender = Call{}
	_ canon.Appender = Return{}
	_ canon.Appender = Lease{}
	_ canon.Appender = Judge{}
	_ canon.Appender = Result{}
	_ canon.Appender = Alert{}
	_ canon.Appender = State{}
	_ canon.Appender = BEvent{}
	_ canon.Appender = BDelivery{}
	_ canon.Appender = BSender{}
	_ canon.Appender = BHandle{}
	_ canon.Appender = BRelay{}
	_ canon.Appender = BMessage{}
	_ canon.Appender = BPublish{}
	_ canon.Appender = BPush{}
	_ canon.Appender = BApply{}
	_ canon.Appender = Txn{}
	_ canon.Appender = CommitRecord{}
	_ canon.Appender = Change{}
)

// str appends ,"name":"s"; strOpt the same unless s is empty.
func str(b []byte, name, s string) []byte {
	b = append(b, ',')
	b = canon.Key(b, name)
	return canon.String(b, s)
}

func strOpt(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return str(b, name, s)
}

// num appends ,"name":n; numOpt the same unless n is 0.
func num(b []byte, name string, n int64) []byte {
	b = append(b, ',')
	b = canon.Key(b, name)
	return canon.Int(b, n)
}

func numOpt(b []byte, name string, n int64) []byte {
	if n == 0 {
		return b
	}
	return num(b, name, n)
}

func unum(b []byte, name string, n uint64) []byte {
	b = append(b, ',')
	b = canon.Key(b, name)
	return canon.Uint(b, n)
}

// boolOpt appends ,"name":true when v is.
func boolOpt(b []byte, name string, v bool) []byte {
	if !v {
		return b
	}
	b = append(b, ',')
	b = canon.Key(b, name)
	return append(b, "true"...)
}

// AppendJSON appends the call's JSON (json.Marshal's bytes).
func (c Call) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = canon.String(b, c.ID)
	b = str(b, "client", c.Client)
	b = str(b, "op", c.Op)
	b = numOpt(b, "sub", c.Sub)
	b = strOpt(b, "token", c.Token)
	b = numOpt(b, "gen", c.Gen)
	b = strOpt(b, "request_id", c.RequestID)
	b = strOpt(b, "episode", c.Episode)
	b = strOpt(b, "verdict", c.Verdict)
	b = strOpt(b, "key", c.Key)
	b = strOpt(b, "worker_id", c.WorkerID)
	return append(b, '}')
}

// AppendJSON appends the return's JSON (json.Marshal's bytes).
func (r Return) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = canon.String(b, r.ID)
	b = num(b, "code", int64(r.Code))
	b = numOpt(b, "sub", r.Sub)
	b = strOpt(b, "token", r.Token)
	b = numOpt(b, "gen", r.Gen)
	b = numOpt(b, "user", r.User)
	b = numOpt(b, "problem", r.Problem)
	b = strOpt(b, "status", r.Status)
	b = strOpt(b, "value", r.Value)
	if len(r.Leases) > 0 {
		b = append(b, `,"leases":[`...)
		for i, l := range r.Leases {
			if i > 0 {
				b = append(b, ',')
			}
			b = l.AppendJSON(b)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// AppendJSON appends the lease's JSON (json.Marshal's bytes).
func (l Lease) AppendJSON(b []byte) []byte {
	b = append(b, `{"sub":`...)
	b = canon.Int(b, l.Sub)
	b = str(b, "token", l.Token)
	b = num(b, "gen", l.Gen)
	b = numOpt(b, "user", l.User)
	b = numOpt(b, "problem", l.Problem)
	return append(b, '}')
}

// AppendJSON appends the judging's JSON (json.Marshal's bytes).
func (j Judge) AppendJSON(b []byte) []byte {
	b = append(b, `{"worker":`...)
	b = canon.String(b, j.Worker)
	b = strOpt(b, "worker_id", j.WorkerID)
	b = num(b, "sub", j.Sub)
	b = str(b, "token", j.Token)
	b = num(b, "gen", j.Gen)
	b = str(b, "phase", j.Phase)
	b = strOpt(b, "verdict", j.Verdict)
	return append(b, '}')
}

// AppendJSON appends the result's JSON (json.Marshal's bytes).
func (r Result) AppendJSON(b []byte) []byte {
	b = append(b, `{"worker":`...)
	b = canon.String(b, r.Worker)
	b = strOpt(b, "worker_id", r.WorkerID)
	b = num(b, "sub", r.Sub)
	b = str(b, "token", r.Token)
	b = num(b, "gen", r.Gen)
	b = str(b, "verdict", r.Verdict)
	b = str(b, "phase", r.Phase)
	b = numOpt(b, "code", int64(r.Code))
	b = boolOpt(b, "durable", r.Durable)
	return append(b, '}')
}

// AppendJSON appends the alert's JSON (json.Marshal's bytes).
func (a Alert) AppendJSON(b []byte) []byte {
	b = append(b, `{"monitor":`...)
	b = canon.String(b, a.Monitor)
	b = str(b, "target", a.Target)
	b = str(b, "reason", a.Reason)
	return append(b, '}')
}

// AppendJSON appends the state change's JSON (json.Marshal's bytes).
func (s State) AppendJSON(b []byte) []byte {
	b = append(b, `{"what":`...)
	b = canon.String(b, s.What)
	b = numOpt(b, "count", int64(s.Count))
	return append(b, '}')
}

// AppendJSON appends the event's JSON (json.Marshal's bytes).
func (e BEvent) AppendJSON(b []byte) []byte {
	b = append(b, `{"event":`...)
	b = canon.String(b, e.Event)
	b = str(b, "payload", e.Payload)
	b = str(b, "op", e.Op)
	b = num(b, "copies", int64(e.Copies))
	b = num(b, "bound", int64(e.Bound))
	return append(b, '}')
}

// AppendJSON appends the delivery's JSON (json.Marshal's bytes).
func (d BDelivery) AppendJSON(b []byte) []byte {
	b = append(b, `{"call":`...)
	b = canon.String(b, d.Call)
	b = str(b, "event", d.Event)
	b = str(b, "payload", d.Payload)
	b = str(b, "handler", d.Handler)
	b = num(b, "attempt", int64(d.Attempt))
	b = num(b, "delivered_at", d.DeliveredAt)
	return append(b, '}')
}

// AppendJSON appends the sender's stop as JSON (json.Marshal's bytes).
func (s BSender) AppendJSON(b []byte) []byte {
	b = append(b, `{"event":`...)
	b = canon.String(b, s.Event)
	b = str(b, "payload", s.Payload)
	b = str(b, "what", s.What)
	b = numOpt(b, "code", int64(s.Code))
	b = num(b, "attempts", int64(s.Attempts))
	return append(b, '}')
}

// AppendJSON appends the handler's step as JSON (json.Marshal's bytes).
func (h BHandle) AppendJSON(b []byte) []byte {
	b = append(b, `{"handler":`...)
	b = canon.String(b, h.Handler)
	b = str(b, "event", h.Event)
	b = str(b, "key", h.Key)
	b = str(b, "phase", h.Phase)
	b = numOpt(b, "code", int64(h.Code))
	b = strOpt(b, "path", h.Path)
	return append(b, '}')
}

// AppendJSON appends the relay's step as JSON (json.Marshal's bytes).
func (r BRelay) AppendJSON(b []byte) []byte {
	b = append(b, `{"msg":`...)
	b = canon.String(b, r.Msg)
	b = str(b, "what", r.What)
	return append(b, '}')
}

// AppendJSON appends the message's JSON (json.Marshal's bytes).
func (m BMessage) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = canon.String(b, m.ID)
	b = str(b, "event", m.Event)
	b = str(b, "op", m.OpID)
	b = str(b, "kind", m.Kind)
	b = num(b, "amount", m.Amount)
	return append(b, '}')
}

// AppendJSON appends the publish's JSON (json.Marshal's bytes).
func (p BPublish) AppendJSON(b []byte) []byte {
	b = append(b, `{"msg":`...)
	b = p.Msg.AppendJSON(b)
	b = str(b, "from", p.From)
	b = unum(b, "seq", p.Seq)
	return append(b, '}')
}

// AppendJSON appends the redelivery's JSON (json.Marshal's bytes).
func (p BPush) AppendJSON(b []byte) []byte {
	b = append(b, `{"seq":`...)
	b = canon.Uint(b, p.Seq)
	b = str(b, "msg", p.Msg)
	b = num(b, "attempt", int64(p.Attempt))
	return append(b, '}')
}

// AppendJSON appends the consumer's answer as JSON (json.Marshal's bytes).
func (a BApply) AppendJSON(b []byte) []byte {
	b = append(b, `{"msg":`...)
	b = canon.String(b, a.Msg)
	b = unum(b, "seq", a.Seq)
	b = str(b, "what", a.What)
	return append(b, '}')
}

// AppendJSON appends the 2PC note's JSON (json.Marshal's bytes).
func (t Txn) AppendJSON(b []byte) []byte {
	b = append(b, `{"what":`...)
	b = canon.String(b, t.What)
	b = strOpt(b, "gid", t.GID)
	b = strOpt(b, "by", t.By)
	b = strOpt(b, "participant", t.Participant)
	if len(t.Participants) > 0 {
		b = append(b, `,"participants":`...)
		b = canon.Strings(b, t.Participants)
	}
	b = strOpt(b, "vote", t.Vote)
	b = strOpt(b, "outcome", t.Outcome)
	b = boolOpt(b, "synced", t.Synced)
	b = strOpt(b, "found", t.Found)
	b = strOpt(b, "reason", t.Reason)
	b = strOpt(b, "code", t.Code)
	b = numOpt(b, "rows", int64(t.Rows))
	b = boolOpt(b, "quiesced", t.Quiesced)
	return append(b, '}')
}

// AppendJSON appends the commit record's JSON (json.Marshal's bytes).
func (r CommitRecord) AppendJSON(b []byte) []byte {
	b = append(b, `{"seq":`...)
	b = canon.Uint(b, r.Seq)
	b = unum(b, "tx", r.Tx)
	b = num(b, "at", int64(r.At))
	b = strOpt(b, "gid", r.GID)
	b = append(b, `,"changes":`...)
	if r.Changes == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range r.Changes {
			if i > 0 {
				b = append(b, ',')
			}
			b = c.AppendJSON(b)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// AppendJSON appends the change's JSON (json.Marshal's bytes).
func (c Change) AppendJSON(b []byte) []byte {
	b = append(b, `{"table":`...)
	b = canon.String(b, c.Table)
	b = str(b, "op", c.Op)
	b = append(b, `,"key":`...)
	b = canon.Slice(b, c.Key)
	if len(c.Before) > 0 {
		b = append(b, `,"before":`...)
		b = canon.Map(b, c.Before)
	}
	if len(c.After) > 0 {
		b = append(b, `,"after":`...)
		b = canon.Map(b, c.After)
	}
	return append(b, '}')
}
