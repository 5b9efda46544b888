package scenario

import (
	"fmt"
	"time"

	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/sim"
)

// S9: the staged migration (A-S9), each step a run with its fleet, and the
// rollback by configuration: (1) the lease columns exist and old workers
// ignore them (every case); (2) the arbiter serves home-1 while home-2 and
// prod-1 still claim directly, and the arbiter follows the old rules (the
// global lock, the shared round row); (3) all home workers on the arbiter;
// (4) the production worker too, the global lock and the round row gone;
// and step 2 rolled back: home-1 switched back to direct at 30 s.
func S9() Scenario {
	// rollback: 0 none; 1 home-1 switched back to direct at 30 s; 2 home-1
	// switched back at 1 s and arbiter-1 restarted at 45 s while home-1
	// judges (100 s each) the rows it claimed directly: the grace must
	// leave them alone (000 line 95: any step can be rolled back).
	step := func(legacy int, rules bool, rollback int) func(knobs ...judge.Knob) judge.Options {
		return func(knobs ...judge.Knob) judge.Options {
			d := design(2, 1, knobs...)
			d.LegacyWorkers, d.LegacyRules = legacy, rules
			d.JudgeMin, d.JudgeMax = 5*sec, 30*sec
			n := int64(12)
			if rollback == 2 {
				d.JudgeMin, d.JudgeMax = 100*sec, 100*sec
				n = 6
			}
			var arr []judge.Arrival
			for i := int64(0); i < n; i++ {
				arr = append(arr, judge.Arrival{At: Origin + time.Duration(i)*5*sec, ID: 101 + i, User: 1 + i%4, Problem: 1 + i%3})
			}
			var s sim.Schedule
			switch rollback {
			case 1:
				s = sim.Schedule{{At: at(30 * sec), Kind: sim.Do, Node: "home-1", Point: "mode", Arg: "direct"}}
			case 2:
				s = sim.Schedule{
					{At: at(1 * sec), Kind: sim.Do, Node: "home-1", Point: "mode", Arg: "direct"},
					{At: at(40 * sec), Kind: sim.Crash, Node: "arbiter-1"},
					{At: at(45 * sec), Kind: sim.Restart, Node: "arbiter-1"},
				}
			}
			return judge.Options{Design: d, Workload: judge.Workload{Arrivals: arr}, Schedule: s, Until: 900 * sec}
		}
	}
	return Scenario{
		ID: "A-S9", Title: "staged migration to the arbiter goes wrong",
		Guard:   "old direct-to-database workers and arbiter workers coexist (both claim with SKIP LOCKED); rollback by configuration",
		Promise: "none",
		Cases: []Case{
			{"step 2: arbiter serves home-1, home-2 and prod-1 direct", step(2, true, 0)},
			{"step 3: home workers on the arbiter, prod-1 direct", step(1, true, 0)},
			{"step 4: everyone on the arbiter, global lock and round row gone", step(0, false, 0)},
			{"rollback: step 2, home-1 switched back to direct at 30 s", step(2, true, 1)},
			{"rollback: step 3, home-1 back to direct, the arbiter restarted while it judges", step(1, true, 2)},
			{"rollback: step 4, home-1 back to direct, the arbiter restarted while it judges", step(0, false, 2)},
		},
		Measure: func(os []*Outcome) Cost {
			var c Cost
			direct, viaArbiter, orphans := 0, 0, 0
			for i, o := range os {
				d := o.Options.Design
				for _, id := range o.Run.SubIDs() {
					c.expect(Terminal(o.Run.Final(id).Status), "case %d: %d never got a verdict", i, id)
					grants := o.Transitions(id, "pending", "judging")
					if i == 3 && len(grants) == 2 {
						// Switching a worker back while the arbiter runs its
						// claim transaction: the lease is granted, its reply
						// finds the connection closed, and the unconfirmed
						// lease expires, as A-S1's orphan does.
						re := o.Transitions(id, "judging", "pending")
						c.expect(len(re) == 1 && re[0].T-grants[0].T <= int64(d.UnconfirmedLease+d.SweepEvery+d.DispatchEvery),
							"case %d: %d's orphaned lease must expire after the unconfirmed lease", i, id)
						orphans++
						grants = grants[1:]
					}
					for _, g := range grants {
						for _, re := range o.Transitions(id, "judging", "pending") {
							c.expect(g.Token != "" || re.T < g.T, "case %d: %d was taken back from %s, which claimed it directly and judged it (the old scheme reclaims nothing)", i, id, g.Worker)
						}
					}
					c.expect(len(grants) == 1, "case %d: %d was claimed %d times", i, id, len(grants))
					for _, g := range grants {
						if g.Token == "" {
							direct++
						} else {
							viaArbiter++
						}
					}
				}
				c.expect(o.Result.Metrics.Wasted == 0, "case %d: %d judgings thrown away", i, o.Result.Metrics.Wasted)
			}
			c.expect(direct > 0 && viaArbiter > 0, "both schemes must have claimed work (direct %d, via the arbiter %d)", direct, viaArbiter)
			c.Text = fmt.Sprintf("none: %d claims direct and %d via the arbiter across the %d runs, every submission claimed once, 0 judgings wasted", direct, viaArbiter, len(os))
			if orphans > 0 {
				c.Text += fmt.Sprintf("; the rollback left %d unconfirmed lease(s) orphaned (a claim in flight when the worker switched), reclaimed after the unconfirmed lease", orphans)
			}
			return c
		},
	}
}
