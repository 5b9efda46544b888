package hist

import (
	"fmt"
	"strings"
)

// Shape is the shape of a world of system A: what the model built and what
// a checker must be able to read. The model writes it into the trace
// header's workload (judge.Workload.Shape); each checker declares the
// shapes it supports (Support), and a run outside them is reported as
// "unsupported: ..." instead of being judged.
type Shape struct {
	// ProcessesPerWorker is the number of worker processes that act under
	// one worker_id (sandboxes of one machine); 0 means 1.
	ProcessesPerWorker int `json:"processes_per_worker,omitempty"`
	// Zombies counts worker processes that outlive their replacement: an
	// old process, frozen, comes back after a new one started under the
	// same worker_id.
	Zombies int `json:"zombies,omitempty"`
	// LeasesPerClaim is the most leases one claim may carry (claim_batch);
	// 0 means 1.
	LeasesPerClaim int `json:"leases_per_claim,omitempty"`
	// SharedRequestIDs: request ids are counters local to a process, so two
	// worker_ids can send the same request_id (they never collide within
	// one worker_id).
	SharedRequestIDs bool `json:"shared_request_ids,omitempty"`
	// Arbiters is the number of arbiter processes (started and standby); 0
	// means 1.
	Arbiters int `json:"arbiters,omitempty"`
}

// Processes returns ProcessesPerWorker, at least 1.
func (s Shape) Processes() int { return max(s.ProcessesPerWorker, 1) }

// Leases returns LeasesPerClaim, at least 1.
func (s Shape) Leases() int { return max(s.LeasesPerClaim, 1) }

// Support is what a checker declares it can judge: the largest shape it
// reads correctly. A zero limit means "only the smallest world" (1), and
// a negative one means "any".
type Support struct {
	Name               string
	ProcessesPerWorker int
	Zombies            int
	LeasesPerClaim     int
	SharedRequestIDs   bool
	Arbiters           int
}

// Any is a limit without bound.
const Any = -1

// Check returns nil when the checker supports the shape, or an error
// starting "unsupported: " that names every dimension outside it.
func (c Support) Check(s Shape) error {
	var out []string
	over := func(what string, have, limit int) {
		if limit == Any {
			return
		}
		if have > max(limit, 1) {
			out = append(out, fmt.Sprintf("%d %s (supports %d)", have, what, max(limit, 1)))
		}
	}
	over("processes per worker_id", s.Processes(), c.ProcessesPerWorker)
	if c.Zombies != Any && s.Zombies > c.Zombies {
		out = append(out, fmt.Sprintf("%d zombie processes (supports %d)", s.Zombies, c.Zombies))
	}
	over("leases per claim", s.Leases(), c.LeasesPerClaim)
	over("arbiters", max(s.Arbiters, 1), c.Arbiters)
	if s.SharedRequestIDs && !c.SharedRequestIDs {
		out = append(out, "request ids shared between worker_ids")
	}
	if len(out) == 0 {
		return nil
	}
	return fmt.Errorf("unsupported: %s checker reads %s", c.Name, strings.Join(out, ", "))
}
