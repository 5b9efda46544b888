package main

import (
	"context"
	"strconv"
)

// A prefetch runs the base side's seeds while the working tree builds
// (the base's binary is often in the build cache, or builds first): a
// diff's plan in parts, one after the other, each part every system's
// seeds of a plan the diff will run. sideRunner.run takes a part's
// records instead of running its base seeds again, and gives the working
// side every worker when the base's seeds were all run ahead. A focused
// diff's parts are its warm-up and (under --focus=auto, whose warm-up
// usually finds nothing to focus on) the rest of its seeds in order,
// dropped when the search turns directed.
type prefetch struct {
	args   []string     // the base's hash flags the parts ran with
	recs   *recordCache // the base's kept records the parts used
	parts  []*prePart
	cancel context.CancelFunc
	done   chan struct{} // closed when the last part ended
}

type prePart struct {
	p       plan
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{} // closed when the part ended (ran, failed or was dropped)
	recs    []seedRecord
	err     error
	taken   bool // a run took its records (guarded by the runner's one caller)
	dropped bool
}

// prefetchParts are the plans a diff runs, in order, whose base seeds
// can run before the working tree is built: none for steered seeds (the
// base's levers are checked against the working tree's first).
func prefetchParts(p plan, focus string, n int) []plan {
	if p.steer != "" || p.hasSteered() || n == 0 || p.budget > 0 {
		return nil
	}
	if focus == "off" {
		return []plan{p}
	}
	runs := int(p.last - p.first + 1)
	w := min(focusWarmup, runs)
	warm := plan{first: p.first, last: p.first + uint64(w) - 1}
	out := []plan{warm}
	if focus == "auto" && runs > w {
		out = append(out, plan{first: warm.last + 1, last: p.last})
	}
	return out
}

// startPrefetch runs the parts on base (a copy of the runner with the
// base's binary, counting or not, and hash flags) with the base's share
// of the workers.
func startPrefetch(base sideRunner, parts []plan) *prefetch {
	ctx, cancel := context.WithCancel(base.ctx)
	pf := &prefetch{args: base.hashArgs[0], recs: base.baseRecs, cancel: cancel, done: make(chan struct{})}
	for _, p := range parts {
		pc, pcancel := context.WithCancel(ctx)
		pf.parts = append(pf.parts, &prePart{p: p, ctx: pc, cancel: pcancel, done: make(chan struct{})})
	}
	workers := max(base.workers/2, 1)
	go func() {
		defer close(pf.done)
		for k, pt := range pf.parts {
			if pt.ctx.Err() == nil {
				pt.recs, pt.err = base.side(pt.ctx, 0, pt.p, base.names, workers, "pre"+strconv.Itoa(k))
			}
			close(pt.done)
		}
	}()
	return pf
}

// missingPlan is the plan that runs the missing seeds of p (sorted, in
// p): a range when they are one; a list when p is one (a base that plays
// p plays lists); else p whole (whole: a base from before --seeds took
// lists plays only ranges), whose records then replace the ones served.
func missingPlan(p plan, missing []uint64) (todo plan, whole bool) {
	first, last := missing[0], missing[len(missing)-1]
	if p.list != nil {
		return plan{first: first, last: last, list: missing, shard: p.shard}, false
	}
	r := plan{first: first, last: last, shard: p.shard}
	n := 0
	r.each(func(uint64) bool { n++; return true })
	if n == len(missing) {
		return r, false
	}
	return p, true
}

// overlaps reports whether two bounded plans' ranges meet.
func overlaps(a, b plan) bool { return a.first <= b.last && b.first <= a.last }

// covers reports whether the parts not dropped hold every seed of p (of
// every system).
func (pf *prefetch) covers(p plan) bool {
	if pf == nil {
		return false
	}
	for _, pt := range pf.parts {
		if !pt.dropped && pt.p.list == nil && pt.p.shard == p.shard && pt.p.first <= p.first && p.last <= pt.p.last {
			return true
		}
	}
	return false
}

// take waits for the parts that overlap p and returns their records of
// p's seeds of the given systems, and the seeds of p that some system
// lacks (nil when none: an interrupted or failed part leaves some), whose
// served records are left out so that they run again whole.
func (pf *prefetch) take(p plan, names []string) (served []seedRecord, missing []uint64, err error) {
	have := map[recKey]seedRecord{}
	for _, pt := range pf.parts {
		if pt.dropped || !overlaps(pt.p, p) {
			continue
		}
		<-pt.done
		pt.taken = true
		if pt.err != nil {
			return nil, nil, pt.err
		}
		for _, r := range pt.recs {
			have[recKey{r.System, r.Seed}] = r
		}
	}
	served, missing = serve(p, names, have)
	return served, missing, nil
}

// dropRest stops and drops the parts no run took yet.
func (pf *prefetch) dropRest() {
	if pf == nil {
		return
	}
	for _, pt := range pf.parts {
		if !pt.taken {
			pt.dropped = true
			pt.cancel()
		}
	}
}

// stop drops every part and waits for the children to end.
func (pf *prefetch) stop() {
	if pf == nil {
		return
	}
	for _, pt := range pf.parts {
		pt.dropped = true
	}
	pf.cancel()
	<-pf.done
}
