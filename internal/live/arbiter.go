package live

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces/hist"
)

// System A live: the arbiters, workers, monitor and web front of
// judge.PlanOf, each a process; the database a real PostgreSQL.

func init() {
	systems[judge.System] = system{plan: arbiterPlan, wiring: arbiterWiring}
}

// ArbiterWorkload is a live run's workload: the default's 12 submissions,
// arriving within the first third of the run (at most a minute), so that
// the rest of the run sees them judged, their leases expire and the sweep
// run.
func ArbiterWorkload(d time.Duration, submissions int) judge.Workload {
	wl := judge.DefaultWorkload()
	wl.Window = min(d/3, time.Minute)
	if submissions > 0 {
		wl.Submissions = submissions
		wl.Users = min(wl.Users, submissions)
	}
	return wl
}

func arbiterPlan(o Options) (*plan, error) {
	d, err := judge.ParseDesign(o.Design)
	if err != nil {
		return nil, usagef("the design: %v", err)
	}
	wl := ArbiterWorkload(o.Duration, o.Submissions)
	pl, err := judge.PlanOf(d, wl, sim.NewPCG(o.Seed).Stream("workload"))
	if err != nil {
		return nil, usagef("%v", err)
	}
	w := &judge.World{Design: d, Workload: wl, Arrivals: pl.Arrivals, Names: pl.Names}
	jo := judge.Options{Design: d, Workload: wl, Seed: o.Seed, Until: o.Duration}
	return &plan{
		nodes:    pl.Nodes,
		dbs:      []dbPlan{{Name: pl.Names.DB, Schema: pl.Schema, Seed: pl.Seed}},
		header:   jo.Header(w),
		workload: w.WorkloadJSON(),
		settled: func(ctx context.Context, in *Inspect) (bool, error) {
			conn, err := in.DB(ctx, pl.Names.DB)
			if err != nil {
				return false, err
			}
			defer conn.Close(context.Background())
			var open, all int
			err = conn.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FILTER (WHERE status IN ('%s', '%s')), count(*) FROM %s",
				judge.StatusPending, judge.StatusJudging, judge.TSubmissions)).Scan(&open, &all)
			return err == nil && open == 0 && all >= len(pl.Arrivals), err
		},
		settle: 30 * time.Second,
	}, nil
}

func arbiterWiring(cfg NodeConfig) (Wiring, error) {
	d, err := judge.ParseDesign(cfg.Design)
	if err != nil {
		return Wiring{}, err
	}
	var wl judge.Workload
	if err := json.Unmarshal(cfg.Workload, &wl); err != nil {
		return Wiring{}, fmt.Errorf("the workload: %w", err)
	}
	wl.Shape = nil
	pl, err := judge.PlanOf(d, wl, sim.NewPCG(cfg.Seed).Stream("workload"))
	if err != nil {
		return Wiring{}, err
	}
	for _, n := range pl.Nodes {
		if n.Name == cfg.Name {
			return Wiring{Factory: n.Factory, Codec: NewCodec(judge.Request{}, judge.Reply{}),
				DiskTypes: []any{hist.Result{}}}, nil
		}
	}
	return Wiring{}, fmt.Errorf("the arbiter world has no node %q", cfg.Name)
}
