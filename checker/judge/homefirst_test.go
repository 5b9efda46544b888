package judge

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/traces/hist"
)

// TestHomeFirst (MA6): a lease granted to a production worker while a home
// worker's claim waits (invoked before, answered after, or unanswered and
// not yet given up on) is a miss; one granted while no home claim waits is
// not.
func TestHomeFirst(t *testing.T) {
	claim := func(client string, invoke, response int64) checker.Op {
		op := checker.Op{Call: hist.Call{Op: "claim", Client: client}, Invoke: invoke * s, Response: response * s}
		if response > 0 {
			op.Return = &hist.Return{}
		}
		return op
	}
	grant := func(ev uint64, at int64, worker, token string) []Version {
		return []Version{{Event: ev - 1, T: at*s - 1, Status: "pending"}, {Event: ev, T: at * s, Status: "judging", Worker: worker, Token: token}}
	}
	r := &Run{P: Params{ClaimHold: 25 * time.Second, RequestTimeout: 5 * time.Second}, Subs: map[int64][]Version{
		101: grant(10, 100, "prod-1", "a"), // home-1 waits from 50 to 150: a miss
		102: grant(20, 200, "prod-1", "b"), // nobody waits: fine
		103: grant(30, 300, "home-1", "c"), // a home grant is never a miss
		104: grant(40, 370, "prod-1", "d"), // home-2 waits from 350, never answered, until its timeout at 380: a miss
		105: grant(50, 390, "prod-1", "e"), // after home-2 gave up: fine
		106: grant(60, 610, "prod-1", "f"), // home-3's claim of 600 died with it at 605: fine
		107: grant(70, 710, "prod-1", "g"), // home-4's claim of 700 failed before its next, 702 to 705: fine
	}, Ops: []checker.Op{claim("home-1", 50, 150), claim("prod-1", 60, 100), claim("home-1", 250, 300), claim("home-2", 350, 0),
		claim("home-3", 600, 0), claim("home-4", 700, 0), claim("home-4", 702, 705)},
		Down: map[string][]Interval{"home-3": {{Start: 605 * s, End: 606 * s}}}}
	grants, misses := r.homeFirst()
	assert.Equal(t, 7, grants)
	assert.Equal(t, 2, misses)
}
