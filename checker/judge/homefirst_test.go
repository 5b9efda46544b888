package judge

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/traces/hist"
)

// TestHomeFirst (MA6): a lease granted to a production worker while a home
// worker's claim waits (invoked before, answered after or never) is a
// miss; one granted while no home claim waits is not.
func TestHomeFirst(t *testing.T) {
	claim := func(client string, invoke, response int64) checker.Op {
		op := checker.Op{Call: hist.Call{Op: "claim", Client: client}, Invoke: invoke, Response: response}
		if response > 0 {
			op.Return = &hist.Return{}
		}
		return op
	}
	grant := func(ev uint64, at int64, worker, token string) []Version {
		return []Version{{Event: ev - 1, T: at - 1, Status: "pending"}, {Event: ev, T: at, Status: "judging", Worker: worker, Token: token}}
	}
	r := &Run{Subs: map[int64][]Version{
		101: grant(10, 100, "prod-1", "a"), // home-1 waits from 50 to 150: a miss
		102: grant(20, 200, "prod-1", "b"), // nobody waits: fine
		103: grant(30, 300, "home-1", "c"), // a home grant is never a miss
		104: grant(40, 400, "prod-1", "d"), // home-2 waits from 350, never answered: a miss
	}, Ops: []checker.Op{claim("home-1", 50, 150), claim("prod-1", 60, 100), claim("home-1", 250, 300), claim("home-2", 350, 0)}}
	grants, misses := r.homeFirst()
	assert.Equal(t, 4, grants)
	assert.Equal(t, 2, misses)
}
