package judge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// Porcupine names the porcupine check of the lease (both views: PA1's
// oracle view, PA3's client view) in Supports.
const Porcupine = "porcupine lease model"

// anyShape is a checker that reads every shape of world.
func anyShape(name string) hist.Support {
	return hist.Support{Name: name, ProcessesPerWorker: hist.Any, Zombies: hist.Any, LeasesPerClaim: hist.Any, SharedRequestIDs: true, Arbiters: hist.Any}
}

// Supports are the shapes of world each check reads correctly (the one
// place they are declared): every invariant of Invariants by its name, and
// the porcupine check as Porcupine. A run of another shape gets, from that
// check, a verdict that holds and says "unsupported: ..." (Unsupported),
// never a judgement it cannot make.
//
// What each reads: PA1-PA9 key everything by (submission, lease token) or
// by the process (a node name), so processes sharing a worker_id, zombies,
// batches, shared request ids and several arbiters are theirs to judge.
// MA2 and MA3 blame a lost lease or judging on its worker when the trace
// shows the worker fail: a zombie's freeze shows as a pause of its old
// process (a fault of the schedule), a poison submission as its worker's
// crash.
var Supports = map[string]hist.Support{
	PA1:       anyShape(PA1),
	PA2:       anyShape(PA2),
	PA4:       anyShape(PA4),
	PA5:       anyShape(PA5),
	PA6:       anyShape(PA6),
	PA7:       anyShape(PA7),
	PA8:       anyShape(PA8),
	PA9:       anyShape(PA9),
	MA2:       anyShape(MA2),
	MA3:       anyShape(MA3),
	MA4:       anyShape(MA4), // an alert's arbiter by name, its faults by node
	MA1:       anyShape(MA1), // reads grants by submission on the commit log
	Porcupine: anyShape(Porcupine),
}

// headerWorkload is the part of a trace header's workload the checkers read.
type headerWorkload struct {
	// Shape is the world's shape (absent: the smallest world).
	Shape hist.Shape `json:"shape"`
	// Poison are the submissions whose judging takes its worker down
	// (absent: none): PA8's bound gives each its attempts.
	Poison []int64 `json:"poison"`
}

// poisonOf decodes the poison submissions of a trace header's workload.
func poisonOf(h traces.Header) []int64 {
	var w headerWorkload
	if len(bytes.TrimSpace(h.Workload)) == 0 || json.Unmarshal(h.Workload, &w) != nil {
		return nil
	}
	return w.Poison
}

// ShapeOf decodes the world's shape from a trace header's workload (the
// model's judge.Workload JSON; its "shape" key, absent in the smallest
// world and in headers from before shapes).
func ShapeOf(h traces.Header) (hist.Shape, error) {
	var w headerWorkload
	if len(bytes.TrimSpace(h.Workload)) == 0 {
		return w.Shape, nil
	}
	if err := json.Unmarshal(h.Workload, &w); err != nil {
		return w.Shape, fmt.Errorf("the trace header's workload has no readable shape: %w", err)
	}
	return w.Shape, nil
}

// supported returns nil when the check named name reads the run's shape,
// or the verdict to give instead: it holds, and says why nothing was
// judged.
func (r *Run) supported(name, property string) *checker.Verdict {
	sup, ok := Supports[name]
	if !ok {
		panic(fmt.Sprintf("judge: check %q declares no supported shape in Supports", name))
	}
	err := sup.Check(r.Shape)
	if err == nil {
		return nil
	}
	v := checker.Pass(property)
	v.Message = err.Error()
	return &v
}

// Unsupported reports whether a verdict is a check's "unsupported: ..."
// answer (it holds; the run's shape was outside what the check reads), not
// a judgement.
func Unsupported(v checker.Verdict) bool {
	return v.OK && strings.HasPrefix(v.Message, "unsupported: ")
}

// gated returns the invariants, each answering "unsupported: ..." on a run
// whose shape it does not read (Supports).
func gated(invs []Invariant) []Invariant {
	for i := range invs {
		name, check := invs[i].Name, invs[i].Check
		if _, ok := Supports[name]; !ok {
			panic(fmt.Sprintf("judge: invariant %q declares no supported shape in Supports", name))
		}
		invs[i].Check = func(r *Run) checker.Verdict {
			if v := r.supported(name, name); v != nil {
				return *v
			}
			return check(r)
		}
	}
	return invs
}
