package judge

import (
	"sort"

	"github.com/fencesim/fencesim/checker"
)

// Who held which lease: every appearance of a lease token at a worker
// process (PA1: one token, one process). A process is a node name; it keeps
// its name across a crash and restart (it re-submits the results it saved
// before the crash), and a second sandbox process of a worker_id, or a
// replacement of a frozen one, is a process of its own, with its own
// tokens.

// use is the earliest appearance of a lease token at one process.
type use struct {
	process  string
	workerID string // the worker_id the process acts under
	what     string // how it had the token: "was answered a claim with", "judged", "heartbeated", "submitted", "saved a result of"
	event    uint64
}

// holding is every process a lease token appeared at: the first one found,
// and any other (a second owner), each at its earliest appearance.
type holding struct {
	first  use
	others []use
}

// processes returns the processes that had the token.
func (hd holding) processes() []use {
	return append([]use{hd.first}, hd.others...)
}

// actsAs returns the worker_id a process acts under: the one its event
// names, or its own name.
func actsAs(process, workerID string) string {
	if workerID != "" {
		return workerID
	}
	return process
}

// holdings returns, per (submission, token), the processes the token
// appeared at: in the answers to their claims, their heartbeats and
// submits, their judgings and their saved results. Legacy workers (no
// token) and the database's own transitions are not holders. Computed
// once per run.
func (r *Run) holdings() map[subToken]holding {
	if r.held != nil {
		return r.held
	}
	m := make(map[subToken]holding, len(r.Judgings))
	see := func(sub int64, token, process, workerID, what string, ev uint64) {
		if token == "" {
			return
		}
		k := subToken{sub, token}
		u := use{process, actsAs(process, workerID), what, ev}
		hd, ok := m[k]
		switch {
		case !ok:
			hd.first = u
		case hd.first.process == process:
			if u.event >= hd.first.event {
				return
			}
			hd.first = u // each process at its earliest appearance
		default:
			i := 0
			for i < len(hd.others) && hd.others[i].process != process {
				i++
			}
			switch {
			case i == len(hd.others):
				hd.others = append(hd.others, u)
			case u.event < hd.others[i].event:
				hd.others[i] = u
			default:
				return
			}
		}
		m[k] = hd
	}
	for i := range r.Ops {
		op := &r.Ops[i]
		c := &op.Call
		switch c.Op {
		case "claim":
			if op.Return != nil && op.Return.Code == 200 {
				for _, l := range leasesOf(op.Return) {
					see(l.Sub, l.Token, c.Client, c.WorkerID, "was answered a claim with", op.ReturnSeq)
				}
			}
		case "heartbeat":
			see(c.Sub, c.Token, c.Client, c.WorkerID, "heartbeated", op.CallSeq)
		case "submit":
			see(c.Sub, c.Token, c.Client, c.WorkerID, "submitted", op.CallSeq)
		}
	}
	for _, j := range r.Judgings {
		see(j.Sub, j.Token, j.Worker, j.WorkerID, "judged", j.StartEv)
	}
	for _, rl := range r.Results {
		see(rl.Sub, rl.Token, rl.Worker, rl.WorkerID, "saved a result of", rl.SavedEv)
	}
	r.held = m
	return m
}

// ownedByOne is PA1's ownership half: every lease token appeared at one
// worker process only (never two processes judging, heartbeating or
// submitting under one token, nor a claim answered with a token another
// process holds), and that process acts under the worker_id the database
// granted the lease to.
func (r *Run) ownedByOne() checker.Verdict {
	held := r.holdings()
	keys := make([]subToken, 0, len(held))
	for k, hd := range held {
		if len(hd.others) > 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		sort.Slice(keys, func(i, j int) bool {
			if keys[i].sub != keys[j].sub {
				return keys[i].sub < keys[j].sub
			}
			return keys[i].token < keys[j].token
		})
		k := keys[0]
		hd := held[k]
		a, b := hd.first, hd.others[0]
		if b.event < a.event {
			a, b = b, a
		}
		return checker.Fail(PA1, []uint64{a.event, b.event}, "submission %d: lease token %s is held by two processes: %s %s it, then %s %s it",
			k.sub, k.token, a.process, a.what, b.process, b.what)
	}
	for _, g := range r.grants() {
		hd, ok := held[subToken{g.sub, g.token}]
		if !ok || hd.first.workerID == g.worker {
			continue
		}
		u := hd.first
		return checker.Fail(PA1, []uint64{g.event, u.event}, "submission %d: the lease %s granted to worker_id %s was held by process %s, which acts under worker_id %s (it %s it)",
			g.sub, g.token, g.worker, u.process, u.workerID, u.what)
	}
	return checker.Pass(PA1)
}
