package db

import (
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
)

// Client is the database client helper that other nodes embed: one
// connection (one session) to a database node, with its requests in flight.
// It is a plain value inside a node's state machine; it keeps no Env.
//
//	c := db.Client{DB: "db"}
//	id := c.Exec(env, tag, db.Begin(), db.Update(...))      // dials if needed
//	// in Step:
//	if done, ok := c.Handle(in); ok { for _, d := range done { ... d.Tag, d.Resp ... } }
//
// The contract: every request gets exactly one Done, from Handle: the
// database's Response, or, when the connection breaks first, a single result
// with CodeConnectionFailure (08006): the outcome is unknown, the statements
// may or may not have run and committed. After a break the session is gone
// (its open transaction rolled back, its advisory locks released); the next
// Exec dials a new connection, which is a new session.
type Client struct {
	DB      network.Addr   // the database node
	Conn    network.ConnID // the current connection; 0 when not connected
	next    uint64
	pending []pendingReq
}

type pendingReq struct {
	id  uint64
	tag any
}

// Done is one finished request.
type Done struct {
	ID   uint64
	Tag  any // the caller's tag given to Exec
	Resp Response
}

// Err returns the error of the request's last statement, or nil.
func (d Done) Err() *Error { return d.Resp.Err() }

// Unknown reports whether the request's outcome is unknown (the connection
// broke before the answer).
func (d Done) Unknown() bool {
	e := d.Err()
	return e != nil && e.Code == CodeConnectionFailure
}

// Connect dials a new connection to db. A current connection is closed
// first; its pending requests are returned, failed with 08006.
func (c *Client) Connect(env *sim.Env, db network.Addr) []Done {
	done := c.Close(env)
	c.DB = db
	c.Conn = env.Dial(db)
	return done
}

// Connected reports whether the client has a connection.
func (c *Client) Connected() bool { return c.Conn != 0 }

// Pending returns how many requests await an answer.
func (c *Client) Pending() int { return len(c.pending) }

// Exec sends statements to run in order on the session (see Request) and
// returns the request's ID. It dials first when not connected.
func (c *Client) Exec(env *sim.Env, tag any, stmts ...Stmt) uint64 {
	return c.send(env, tag, false, stmts)
}

// ExecAtomic sends statements to run as one transaction in one round trip.
func (c *Client) ExecAtomic(env *sim.Env, tag any, stmts ...Stmt) uint64 {
	return c.send(env, tag, true, stmts)
}

func (c *Client) send(env *sim.Env, tag any, atomic bool, stmts []Stmt) uint64 {
	if c.Conn == 0 {
		c.Conn = env.Dial(c.DB)
	}
	c.next++
	c.pending = append(c.pending, pendingReq{id: c.next, tag: tag})
	env.SendConn(c.Conn, Request{ID: c.next, Stmts: stmts, Atomic: atomic})
	return c.next
}

// Close closes the connection; the database ends the session. Pending
// requests are failed with 08006 at once (returned here, as Handle would).
func (c *Client) Close(env *sim.Env) []Done {
	if c.Conn == 0 {
		return nil
	}
	env.Close(c.Conn)
	c.Conn = 0
	return c.failAll()
}

// Handle takes an input that may concern the client: a Response on its
// connection, or the break of its connection. handled is false for every
// other input.
func (c *Client) Handle(in sim.Input) (done []Done, handled bool) {
	switch in.Kind {
	case sim.Deliver:
		resp, ok := ResponseOf(in.Msg.Body)
		if !ok || c.Conn == 0 || in.Msg.Conn != c.Conn {
			return nil, false
		}
		for i, p := range c.pending {
			if p.id == resp.ID {
				c.pending = append(c.pending[:i], c.pending[i+1:]...)
				return []Done{{ID: p.id, Tag: p.tag, Resp: resp}}, true
			}
		}
		return nil, true // an answer to nothing pending: ignore
	case sim.ConnBroken:
		if c.Conn == 0 || in.Conn != c.Conn {
			return nil, false
		}
		c.Conn = 0
		return c.failAll(), true
	}
	return nil, false
}

func (c *Client) failAll() []Done {
	out := make([]Done, len(c.pending))
	for i, p := range c.pending {
		out[i] = Done{ID: p.id, Tag: p.tag, Resp: Response{ID: p.id, Results: []Result{{
			Err: &Error{Code: CodeConnectionFailure, Msg: "connection to the database broke: the outcome is unknown"},
		}}}}
	}
	c.pending = nil
	return out
}
