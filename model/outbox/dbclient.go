package outbox

import (
	"fmt"
	"time"

	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/sim"
)

// dbTimer fires when a database request has waited too long.
type dbTimer struct {
	owner string // which client of the node
	id    uint64
}

func (t dbTimer) String() string { return fmt.Sprintf("db-timeout %s req %d", t.owner, t.id) }

// timedClient is a db.Client with a client-side timeout: a request not
// answered within the timeout closes the connection, and the request (with
// every other pending one) ends with 08006, outcome unknown. Without it a
// request sent on a connection whose server went away silently could wait
// forever.
type timedClient struct {
	db.Client
	owner   string
	timeout time.Duration
	last    uint64 // the newest request
}

func (c *timedClient) Exec(env *sim.Env, tag any, stmts ...db.Stmt) uint64 {
	c.last = c.Client.Exec(env, tag, stmts...)
	env.After(c.timeout, dbTimer{owner: c.owner, id: c.last})
	return c.last
}

func (c *timedClient) ExecAtomic(env *sim.Env, tag any, stmts ...db.Stmt) uint64 {
	c.last = c.Client.ExecAtomic(env, tag, stmts...)
	env.After(c.timeout, dbTimer{owner: c.owner, id: c.last})
	return c.last
}

// Expired handles a timer input: when it is this client's timer and the
// request is still pending, the connection is closed and the failed
// requests returned.
func (c *timedClient) Expired(env *sim.Env, in sim.Input) (done []db.Done, handled bool) {
	t, ok := in.Tag.(dbTimer)
	if in.Kind != sim.Timer || !ok || t.owner != c.owner {
		return nil, false
	}
	if c.Pending() == 0 || !c.Connected() || t.id < c.last-uint64(c.Pending())+1 {
		return nil, true // answered already
	}
	return c.Close(env), true
}
