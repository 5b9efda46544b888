package toy

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/traces"
)

// The properties.
const (
	TL1 = "TL1 lease-safety"
	TL2 = "TL2 act-after-heal"
)

// decode reads a note's value: the typed one a fresh run kept, or its JSON.
func decode[T any](e *traces.Event) (T, error) {
	if v, ok := e.Value.(T); ok {
		return v, nil
	}
	var v T
	err := json.Unmarshal(e.Data, &v)
	return v, err
}

// Check judges a run's events. healAt is when the faults healed, ping is
// the design's ping interval (TL2's bound is 2 ping + 1 s). It returns the
// verdicts and the acts made.
func Check(events []traces.Event, heal int64, ping time.Duration) ([]checker.Verdict, int, error) {
	var grants []struct {
		at, end int64
		seq     uint64
	}
	safe := checker.Verdict{Property: TL1, OK: true}
	live := checker.Verdict{Property: TL2, OK: true}
	acts, after := 0, false
	bound := heal + int64(2*ping+time.Second)
	for i := range events {
		e := &events[i]
		switch e.Kind {
		case KindGrant:
			g, err := decode[Grant](e)
			if err != nil {
				return nil, 0, fmt.Errorf("event %d: %w", e.Seq, err)
			}
			grants = append(grants, struct {
				at, end int64
				seq     uint64
			}{e.T, e.T + int64(g.Lease), e.Seq})
		case KindAct:
			acts++
			after = after || (e.T > heal && e.T <= bound)
			covered := false
			for _, g := range grants {
				covered = covered || (g.at <= e.T && e.T < g.end)
			}
			if !covered && safe.OK {
				safe.OK = false
				safe.Message = fmt.Sprintf("the client acted at %s outside every lease the lessor granted", time.Duration(e.T))
				safe.Events = []uint64{e.Seq}
				if n := len(grants); n > 0 {
					safe.Message += fmt.Sprintf(" (the last one, granted at %s, ended at %s)", time.Duration(grants[n-1].at), time.Duration(grants[n-1].end))
					safe.Events = []uint64{grants[n-1].seq, e.Seq}
				}
			}
		}
	}
	if !after {
		live.OK = false
		live.Message = fmt.Sprintf("the faults healed at %s and the client did not act again by %s", time.Duration(heal), time.Duration(bound))
	}
	return []checker.Verdict{safe, live}, acts, nil
}
