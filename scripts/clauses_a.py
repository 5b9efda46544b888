#!/usr/bin/env python3
"""The removals of docs/clauses.md, system A: for each row, neutralise the
check that implements its clause (one exact string replacement in
checker/judge), run the row's test, record whether it failed, and restore
the file. Every row's test must fail ("test failed"); "TEST STILL PASSED"
means the row's test does not pin its clause.

    python3 scripts/clauses_a.py            # every row
    python3 scripts/clauses_a.py PA2.6b     # one row (and its variants)

Needs a clean worktree (it restores each file from its own copy, even on
Ctrl-C) and costs a compile of checker/judge per edit.
"""
import subprocess, sys, json, os
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
J = 'checker/judge/'
M = []  # (row, file, old, new, run)
def m(row, f, old, new, run):
    M.append((row, J + f, old, new, run))
TC = lambda ids: '^TestClauses$/^(' + '|'.join(i.replace('.', '\\.') for i in ids) + ')$'

# PA1
m('PA1.1a', 'props.go', 'b.Status != "judging" || b.Token != a.Token', 'b.Token != a.Token', TC(['PA1.1a']))
m('PA1.1b', 'props.go', '|| b.Token != a.Token ||', '||', TC(['PA1.1b']))
m('PA1.1c', 'props.go', ' || b.Gen != a.Gen {', ' {', TC(['PA1.1c']))
m('PA1.1d', 'props.go', 'if b == nil {\n\t\t\treturn checker.Fail(PA1', 'if b == nil {\n\t\t\tcontinue\n\t\t\treturn checker.Fail(PA1', TC(['PA1.1d']))
m('PA1.2', 'props.go', 'if first, dup := perGen[k]; dup {', 'if first, dup := perGen[k]; dup && false {', TC(['PA1.2']))
m('PA1.3', 'props.go', '&& !recorded[[2]int64{id, int64(v.Event)}]', '&& !recorded[[2]int64{id, int64(v.Event)}] && false', TC(['PA1.3']))
m('PA1.3b', 'props.go', 'v != nil && v.Status != a.Verdict {', 'v != nil && v.Status != a.Verdict && false {', TC(['PA1.3b']))
m('PA1.4a', 'owners.go', 'see(l.Sub, l.Token, c.Client, c.WorkerID, "was answered a claim with", op.ReturnSeq)', '_ = l', TC(['PA1.4a']))
m('PA1.4b', 'owners.go', 'see(c.Sub, c.Token, c.Client, c.WorkerID, "heartbeated", op.CallSeq)', '', TC(['PA1.4b']))
m('PA1.4c', 'owners.go', 'see(c.Sub, c.Token, c.Client, c.WorkerID, "submitted", op.CallSeq)', '', TC(['PA1.4c']))
m('PA1.4d', 'owners.go', 'see(j.Sub, j.Token, j.Worker, j.WorkerID, "judged", j.StartEv)', '_ = j', TC(['PA1.4d']))
m('PA1.4e', 'owners.go', 'see(rl.Sub, rl.Token, rl.Worker, rl.WorkerID, "saved a result of", rl.SavedEv)', '_ = rl', TC(['PA1.4e']))
m('PA1.5', 'owners.go', 'if !ok || hd.first.workerID == g.worker {', 'if !ok || hd.first.workerID == g.worker || true {', TC(['PA1.5']))
m('PA1.6a', 'lease.go', 'case "heartbeat":\n\t\treturn s.valid(in.Token)', 'case "heartbeat":\n\t\treturn true', TC(['PA1.6a']))
m('PA1.6b', 'lease.go', 'case c.Op == "submit" && appliedWithin(sub, c.Token, op.Invoke, ret):', 'case c.Op == "submit" && appliedWithin(sub, c.Token, op.Invoke, ret) && false:', '^TestOracleSettlesAtTheAttemptsEdges$')
m('PA1.6c', 'lease.go', 'in = LeaseIn{Op: "claim", Client: "db", Token: v.Token, Gen: v.Gen}', 'continue', TC(['PA1.6c']))
m('PA1.6d', 'lease.go', 'in = LeaseIn{Op: "expire", Client: "db", Token: p.Token}', 'continue', TC(['PA1.6d']))
# PA2
m('PA2.1', 'props.go', 'if v.Gen < p.Gen {', 'if v.Gen < p.Gen && false {', TC(['PA2.1']))
m('PA2.2a', 'props.go', 'if v.Gen <= p.Gen {\n\t\t\t\t\treturn bad("claimed', 'if false {\n\t\t\t\t\treturn bad("claimed', TC(['PA2.2a']))
m('PA2.2b', 'props.go', 'if v.Gen != p.Gen {\n\t\t\t\t\treturn bad("decided', 'if false {\n\t\t\t\t\treturn bad("decided', TC(['PA2.2b']))
m('PA2.2c', 'props.go', 'return bad("moved from %s to %s", p.Status, v.Status)', '', TC(['PA2.2c']))
m('PA2.2c(sweep arrow)', 'props.go', 'case p.Status == "judging" && v.Status == "pending":\n\t\t\t\t// the sweep re-queued an expired lease\n', '', TC(['PA2.2c']))
m('PA2.2d', 'props.go', 'if v.Gen <= p.Gen {\n\t\t\t\t\treturn bad("left terminal', 'if false {\n\t\t\t\t\treturn bad("left terminal', TC(['PA2.2d']))
m('PA2.3', 'props.go', '\t\t\t\treturn bad("lease changed hands from token %s to %s without going back to pending", p.Token, v.Token)\n', '', TC(['PA2.3']))
m('PA2.4', 'props.go', '\t\t\t\treturn bad("verdict %s overwritten by %s in the same generation %d", p.Status, v.Status, v.Gen)\n', '', TC(['PA2.4']))
m('PA2.5', 'props.go', 'if a.Seq <= lastSeq[a.Sub] {', 'if a.Seq <= lastSeq[a.Sub] && false {', '^TestGenerationsMustRisePA2$')
m('PA2.6', 'props.go', 'if op.Invoke > p.ret && (rt.Gen < p.gen || ', 'if op.Invoke > p.ret && (false || ', TC(['PA2.6']))
m('PA2.6b', 'props.go', 'for _, p := range read[k] {', 'for _, p := range read[k][max(len(read[k])-1, 0):] {', TC(['PA2.6b']))
# PA3
m('PA3.1a', 'lease.go', '\t\t\t\tadd(l.Sub, c.Client, in, LeaseOut{Code: code}, op.Invoke, ret, [2]uint64{op.CallSeq, op.ReturnSeq})\n', '\t\t\t\t_ = l\n', TC(['PA3.1a']))
m('PA3.1b', 'lease.go', 'case "heartbeat":\n\t\treturn s.valid(in.Token)', 'case "heartbeat":\n\t\treturn true', TC(['PA3.1b']))
m('PA3.1c', 'lease.go', '\t\tif !s.valid(in.Token) {\n\t\t\treturn false\n\t\t}\n\t\ts.Status = in.Verdict', '\t\ts.Status = in.Verdict', TC(['PA3.1c']))
m('PA3.1d', 'lease.go', 'case "rejudge":\n\t\treturn !Terminal(s.Status)', 'case "rejudge":\n\t\treturn true', TC(['PA3.1d']))
m('PA3.2a', 'lease.go', 'if n.apply(&in) && n != s {\n\t\t\t\treturn []any{kept, n}\n\t\t\t}', 'if n.apply(&in) && n != s {\n\t\t\t\treturn []any{kept}\n\t\t\t}', TC(['PA3.2a']))
m('PA3.2b', 'lease.go', 'if n.apply(&in) && n != s {\n\t\t\t\treturn []any{kept, n}\n\t\t\t}\n\t\t\treturn []any{kept}', 'if !n.apply(&in) {\n\t\t\t\treturn nil\n\t\t\t}\n\t\t\treturn []any{n}', TC(['PA3.2b']))
m('PA3.2c', 'lease.go', 'case 0, 503: // unknown outcome', 'case 0: // unknown outcome', TC(['PA3.2c']))
m('PA3.3', 'lease.go', 'case "heartbeat":\n\t\ts.Void = add(s.Void, in.Token)\n\t\treturn true', 'case "heartbeat":\n\t\tok := !s.valid(in.Token)\n\t\ts.Void = add(s.Void, in.Token)\n\t\treturn ok', TC(['PA3.3']))
m('PA3.4', 'lease.go', 'case "heartbeat":\n\t\ts.Void = add(s.Void, in.Token)\n\t\treturn true', 'case "heartbeat":\n\t\treturn true', TC(['PA3.4']))
m('PA3.5', 'lease.go', '\t\tif *over {\n\t\t\t// The search gave up', '\t\tif *over && false {\n\t\t\t// The search gave up', '^TestSearchLimitEndsWithUnknown$')
# PA4
m('PA4.1', 'props.go', 'ok && prev.leases != got {', 'ok && prev.leases != got && false {', '^TestClaimAnswersPA4$')
m('PA4.2a', 'props.go', 'if n := len(leases); n > r.P.Batch() {', 'if n := len(leases); n > r.P.Batch()+100 {', TC(['PA4.2a']))
m('PA4.2b', 'props.go', 'if len(gs) > r.P.Batch() {', 'if len(gs) > r.P.Batch()+100 {', TC(['PA4.2b']))
m('PA4.3a', 'props.go', 'if first := gs[0]; g.event != first.event {', 'if first := gs[0]; g.event != first.event && false {', TC(['PA4.3a']))
m('PA4.3b', 'props.go', 'if req, ok := recorded[eventToken{g.event, g.token}]; ok {', 'if req, ok := recorded[eventToken{g.event, g.token}]; ok && false {', TC(['PA4.3b']))
m('PA4.3c', 'props.go', 'if e, ok := announced[subToken{g.sub, g.token}]; ok {', 'if e, ok := announced[subToken{g.sub, g.token}]; ok && false {', TC(['PA4.3c']))
m('PA4.3d', 'props.go', '\t\treturn activeAt(g.worker, g.t)\n', '\t\t_ = activeAt\n\t\treturn "", false\n', TC(['PA4.3d']))
# PA5
m('PA5.1a', 'props.go', 'if decided && op.Return.Code != 200 && op.Return.Code != 503 {', 'if decided && false {', TC(['PA5.1a']))
m('PA5.1b', 'props.go', 'op.Return.Code != 200 && op.Return.Code != 503 {', 'op.Return.Code != 200 {', TC(['PA5.1b']))
m('PA5.2', 'props.go', 'if first, dup := rows[k]; dup {', 'if first, dup := rows[k]; dup && false {', TC(['PA5.2']))
# PA6
m('PA6.1', 'props.go', 'if firsts[[2]int64{u, p}] > 1 {', 'if firsts[[2]int64{u, p}] > 100 {', TC(['PA6.1']))
m('PA6.2', 'props.go', 'if firsts[o] == 0 {', 'if firsts[o] == 0 && false {', TC(['PA6.2']))
m('PA6.3', 'props.go', 'r.XP[u] != want {', 'r.XP[u] != want && false {', TC(['PA6.3']))
# PA7
m('PA7.1a', 'props.go', 'if rl.Answered != 0 || rl.Saved > r.End-r.settle() {', 'if true {', TC(['PA7.1a']))
m('PA7.1b', 'props.go', 'if rl.Answered != 0 || rl.Saved > r.End-r.settle() {', 'if rl.Answered != 0 || !rl.Durable || rl.Saved > r.End-r.settle() {', TC(['PA7.1b']))
m('PA7.3', 'props.go', 'return int64(2*r.P.BackoffCap + 2*r.P.RequestTimeout + r.P.ClaimHold)', 'return int64(2*r.P.BackoffCap + 2*r.P.RequestTimeout)', '^TestSettleTimePA7$')
# PA8
m('PA8.1', 'props.go', 'if at == 0 || at > deadline {', 'if at == 0 {', '^TestLivenessAtTheBoundPA8$')
m('PA8.2(base)', 'props.go', '+ p.ClaimHold + p.RequestTimeout + time.Duration(perWorker+1)*job', '+ p.RequestTimeout + time.Duration(perWorker+1)*job', '^TestBoundOf$')
m('PA8.2(job)', 'props.go', 'job := p.JudgeMax + p.DispatchEvery + 2*p.RequestTimeout + p.BackoffCap', 'job := p.JudgeMax + 2*p.RequestTimeout + p.BackoffCap', '^TestBoundOf$')
m('PA8.2(per worker)', 'props.go', 'time.Duration(perWorker+1)*job', 'time.Duration(perWorker)*job', '^TestBoundOf$')
m('PA8.3', 'props.go', 'BoundOf(r.P, len(r.Arrived)) + time.Duration(len(r.Poison))*PoisonBound(r.P)', 'BoundOf(r.P, len(r.Arrived))', '^TestPoisonBound$')
m('PA8.4', 'props.go', 'if r.HealAt == 0 {', 'if false {', TC(['PA8.4']))
m('PA8.5', 'props.go', '\t\t\tif r.DecidedAt(id) == 0 {\n\t\t\t\tv := checker.Pass(PA8)', '\t\t\tif true {\n\t\t\t\tv := checker.Pass(PA8)', '^TestLivenessOfQuietRuns$')
m('PA8.6', 'props.go', 'if r.End < deadline {', 'if false {', '^TestLivenessOfQuietRuns$')
m('PA8.7', 'props.go', 'f.Status == "judging" && f.Token == "" {', 'f.Status == "judging" && f.Token == "" && false {', '^TestLivenessAtTheBoundPA8$')
# PA9
m('PA9.1', 'props.go', 'if attempts > limit {', 'if false {', TC(['PA9.1']))
m('PA9.2', 'props.go', 'counts = !atGrant', 'counts = false', '^TestAttemptCapMustFailPA9$')
m('PA9.3', 'props.go', 'counts = v.Token == "" || atGrant || v.Confirmed', 'counts = true', '^TestAttemptCapCountsConfirmedLeases$')
m('PA9.4', 'props.go', 'counts = v.Token == "" || atGrant || v.Confirmed', 'counts = atGrant || v.Confirmed', '^TestAttemptCapMustFailPA9$')
m('PA9.5', 'props.go', 'atGrant := r.P.has("attempts-at-grant")', 'atGrant := false', '^TestAttemptCapCountsConfirmedLeases$')
m('PA9.6', 'props.go', 'case newLease(p, v) && attempts >= limit:', 'case false:', '^(TestAttemptCapMustFailPA9|TestAttemptCapFromTheFirstGrant)$')
m('PA9.7', 'props.go', 'case p.Status == "judging" && v.Status == "pending" && attempts >= limit:', 'case false:', '^TestAttemptCapMustFailPA9$')
m('PA9.8', 'props.go', 'attempts = 0 // a rejudge', '// a rejudge', '^TestAttemptCapMustPassPA9$')
# MA1
m('MA1.1', 'fresh.go', 'if v.Expires-dbAt > limit {', 'if v.Expires-dbAt > limit && false {', '^TestUnconfirmedFirst$')
m('MA1.2', 'fresh.go', 'limit := int64(r.P.UnconfirmedLease + freshSlack)', 'limit := int64(r.P.UnconfirmedLease)', TC(['MA1.2']))
m('MA1.3', 'fresh.go', 'if v.Expires-dbAt > limit {', 'if v.Expires-g.t > limit {', '^TestUnconfirmedFirst$')
m('MA1.4', 'fresh.go', 'if noExpiry+clockBack > 0 {', 'if false {', '^TestUnjudgedLeasesSaySoMA1$')
# MA2
m('MA2.1(both)', 'waste.go', ['case f.Kind == "crash" || f.Kind == "restart" || f.Kind == "jump":', 'if isArbiter(node) && overlaps(ivs, a, b, r.End) {'], ['case f.Kind == "jump":', 'if isArbiter(node) && overlaps(ivs, a, b, r.End) && false {'], '^TestPromisedWasteMustFailMA2$')
m('MA2.1(down)', 'waste.go', 'if isArbiter(node) && overlaps(ivs, a, b, r.End) {', 'if isArbiter(node) && overlaps(ivs, a, b, r.End) && false {', '^TestPromisedWasteMustFailMA2$')
m('MA2.2(jump)', 'waste.go', 'case f.Kind == "crash" || f.Kind == "restart" || f.Kind == "jump":', 'case f.Kind == "crash" || f.Kind == "restart":', '^TestPromisedWasteMustFailMA2$')
m('MA2.2(drift)', 'waste.go', 'case f.Kind == "drift" && f.Rate != 0:\n\t\t\tuntil = r.nextDrift(f)\n\t\tdefault:\n\t\t\tcontinue\n\t\t}\n\t\tif f.T <= b && until >= a {\n\t\t\treturn true', 'case false:\n\t\t\tuntil = r.nextDrift(f)\n\t\tdefault:\n\t\t\tcontinue\n\t\t}\n\t\tif f.T <= b && until >= a {\n\t\t\treturn true', '^TestPromisedWasteMustFailMA2$')
m('MA2.3', 'metrics.go', 'if accepted[subToken{j.Sub, j.Token}] || ', 'if ', '^(TestClauses/^MA2\\.3$|TestWastedJudgingsMA2)$')
m('MA2.4', 'metrics.go', ' || r.FailedDuring(j.Worker, j.Start, end) || r.netFaulted(j.Worker, j.Start, end) {', ' || (false && (r.FailedDuring(j.Worker, j.Start, end) || r.netFaulted(j.Worker, j.Start, end))) {', '^(TestWastedJudgingsMA2|TestUnpromisedWasteMustPassMA2)$')
m('MA2.5', 'waste.go', 'if !r.arbiterTrouble(from, to) || !r.onlyArbiterRestarts(j.Worker, from-int64(r.P.Lease), to) {', 'if !r.arbiterTrouble(from, to) {', '^TestUnpromisedWasteMustPassMA2$')
m('MA2.6', 'waste.go', 'n := max(p.Arbiters, 1) + p.StandbyArbiters; n > 1 {', 'n := max(p.Arbiters, 1) + p.StandbyArbiters; n > 100 {', '^TestWastePromisedByTheDesignMA2$')
m('MA2.7', 'waste.go', 'if p.ConfirmAwareGrace {', 'if false {', '^TestWastePromisedByTheDesignMA2$')
m('MA2.8', 'waste.go', 'p.Lease <= need {', 'p.Lease <= need && false {', '^(TestWastePromisedByTheDesignMA2|TestClauses)$')
m('MA2.9', 'waste.go', 'p.Grace < need {', 'p.Grace < need && false {', '^TestWastePromisedByTheDesignMA2$')
# MA3 (temporary only: its logic is the lead's)
m('MA3.1', 'syserr.go', '\t\t\tdefault:\n\t\t\t\tbad = append(bad, e)\n', '\t\t\tdefault:\n', '^TestFalseSystemErrorsMustFailMA3$')
m('MA3.2', 'syserr.go', 'from = k\n\t\t\t\tcontinue', 'continue', '^TestSystemErrorsCountFromTheRejudgeMA3$')
m('MA3.3', 'run.go', 'range []map[string][]Interval{r.Down, r.Paused} {', 'range []map[string][]Interval{r.Paused} {', '^TestTrueSystemErrorsMustPassMA3$')
m('MA3.4', 'run.go', 'range []map[string][]Interval{r.Down, r.Paused} {', 'range []map[string][]Interval{r.Down} {', '^TestTrueSystemErrorsMustPassMA3$')
m('MA3.5', 'syserr.go', 'return r.FailedDuring(node, from, l.end) || r.netFaulted(node, from, l.end)', 'return r.FailedDuring(node, from, l.end)', '^TestTrueSystemErrorsMustPassMA3$')
m('MA3.6', 'syserr.go', 'grant: vs[i].T, end: vs[j].T,', 'grant: vs[i].T, end: vs[j].T + 3600e9,', '^TestFalseSystemErrorsMustFailMA3$')
m('MA3.7', 'syserr.go', 'inFlight := op.Invoke <= l.grant && (op.Return == nil || op.Response >= l.grant)', 'inFlight := true', '^TestClaimsInFlightMA3$')
m('MA3.8', 'syserr.go', 'case len(e.grants) > 0 && r.dbClockAhead(first, v.T):', 'case false && first > 0:', '^TestDatabaseClockAheadMA3$')
m('MA3.9', 'syserr.go', '\t_, bad, excused := r.systemErrorVerdicts()\n', '\tif ok, _ := r.keepsLeases(); !ok {\n\t\treturn checker.Pass(MA3)\n\t}\n\t_, bad, excused := r.systemErrorVerdicts()\n', '^TestFalseSystemErrorsPromisedByTheDesignMA3$')
# MA5
m('MA5.1', 'metrics.go', '(op.Call.Op == "claim" || op.Call.Op == "submit")', 'op.Call.Op != ""', '^TestOutageLoadMA5$')
m('MA5.2', 'metrics.go', 'per[op.Call.Client] = append(per[op.Call.Client], op.Invoke)', 'per[""] = append(per[""], op.Invoke)', TC(['MA5.2']))
m('MA5.3', 'metrics.go', 'ts[j] < ts[i]+int64(time.Minute)', 'ts[j] < ts[i]+int64(2*time.Minute)', '^TestOutageLoadMA5$')
m('MA5.4', 'metrics.go', 'warm := int64(2 * r.P.BackoffCap)', 'warm := int64(0)', '^TestOutageLoadMA5$')
m('MA5.5(db)', 'metrics.go', 'out := append([]Interval(nil), r.Down["db"]...)', 'out := []Interval(nil)', '^TestOutageLoadMA5$')
m('MA5.5(arbiters)', 'metrics.go', '\tout = append(out, r.arbitersDown()...)\n', '', '^TestOutageEndsAtTakeover$')
m('MA5.5(partition)', 'metrics.go', 'if f.Kind == "partition" || (f.Kind == "cut"', 'if (f.Kind == "cut"', '^TestOutageLoadMA5$')
m('MA5.6', 'bounds.go', 'if m.OutageLoad > b.OutageLoad {', 'if false {', '^TestBoundsAtTheirEdges$')

only = sys.argv[1:]
res = []
for row, f, old, new, run in M:
    if only and row.split('(')[0] not in only and row not in only:
        continue
    path = os.path.join(ROOT, f)
    orig = open(path).read()
    olds, news = (old, new) if isinstance(old, list) else ([old], [new])
    mutated, bad = orig, [o for o in olds if orig.count(o) != 1]
    if bad:
        res.append((row, 'BAD-MUTATION (%r not found once)' % bad[0], f, run)); print(res[-1], flush=True); continue
    for o, n in zip(olds, news):
        mutated = mutated.replace(o, n)
    open(path, 'w').write(mutated)
    try:
        p = subprocess.run(['nice', '-n', '10', 'go', 'test', '-vet=off', './checker/judge', '-run', run, '-count=1'], cwd=ROOT, capture_output=True, text=True)
    finally:
        open(path, 'w').write(orig)
    out = p.stdout + p.stderr
    if 'build failed' in out or 'setup failed' in out or 'vet' in out and 'FAIL' in out and '--- FAIL' not in out:
        verdict = 'BUILD-ERROR'
    elif p.returncode != 0 and '--- FAIL' in out:
        verdict = 'test failed'
    elif p.returncode == 0:
        verdict = 'TEST STILL PASSED'
    else:
        verdict = 'other rc=%d' % p.returncode
    fails = [l.strip() for l in out.splitlines() if l.strip().startswith('--- FAIL')]
    res.append((row, verdict, f, run, fails[:4]))
    print(json.dumps(res[-1]), flush=True)
    if verdict == 'BUILD-ERROR':
        print(out[:1500], flush=True)
