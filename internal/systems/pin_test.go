package systems

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/contract"
	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/model/judge/harness"
	"github.com/fencesim/fencesim/model/outbox"
	outboxharness "github.com/fencesim/fencesim/model/outbox/harness"
	"github.com/fencesim/fencesim/model/twopc"
	twopcharness "github.com/fencesim/fencesim/model/twopc/harness"
	"github.com/fencesim/fencesim/sim"
)

// pinSeeds is how many worlds each pinned parameter is drawn in.
const pinSeeds = 200

// pinValues is, per system, a value for every parameter --set takes: one
// the system's design accepts alone and its drawn world would not draw in
// every one of pinSeeds worlds, so that a parameter drawn without its pin
// loses it somewhere. A parameter added to a design needs a value here
// (TestSetIsPinned fails until it has one).
var pinValues = map[string]map[string]string{
	judge.System: {
		"unconfirmed_lease": "7s", "lease": "75s", "heartbeat": "17s", "backoff_base": "1500ms", "backoff_cap": "25s",
		"grace": "70s", "max_attempts": "6", "sweep_every": "3300ms", "leader_retry": "7s", "probe_threshold": "40s",
		"probe_every": "6s", "dispatch_every": "2s", "claim_hold": "20s", "request_timeout": "4s", "judge_min": "2500ms",
		"judge_max": "170s", "pool": "5", "claim_batch": "4", "home_workers": "6", "prod_workers": "3",
		"legacy_workers": "1", "arbiters": "3", "standby_arbiters": "2", "legacy_rules": "true", "sandboxes": "4",
		"zombies": "2", "local_request_ids": "true", "confirm_aware_grace": "true", "allow_unsafe": "true",
	},
	outboxharness.Name: {
		"handlers": "5", "senders": "4", "relays": "3", "request_timeout": "1500ms", "retry_base": "700ms",
		"retry_cap": "9s", "max_attempts": "40", "poll_every": "300ms", "batch": "3", "publish_timeout": "700ms",
		"redeliver_after": "1500ms", "lock_timeout": "6s", "db_timeout": "12s",
	},
	twopc.System: {
		"participants": "5", "coordinators": "3", "standby": "2", "txns": "5", "first_txn": "50ms", "txn_every": "700ms",
		"lock_timeout": "4s", "max_prepared": "3", "vote_timeout": "7s", "request_timeout": "1500ms", "retry_base": "300ms",
		"retry_cap": "7s", "cooperative": "false", "ask_after": "3s", "abort_after": "7s", "agent_poll": "700ms",
		"stock": "50", "churn_rows": "10",
	},
}

// drawnParams are the parameters each system's drawn worlds draw (system
// A: in the wide world; the drawn world draws the fleet's): the ones a
// world loses when they are not pinned. The test checks that each of
// them is lost without its pin, so that the values above test the pin.
var drawnParams = map[string][]string{
	judge.System: {"home_workers", "prod_workers", "sandboxes", "zombies", "local_request_ids", "arbiters", "standby_arbiters",
		"heartbeat", "lease", "unconfirmed_lease", "backoff_base", "backoff_cap", "grace", "sweep_every", "judge_min", "judge_max",
		"max_attempts", "claim_batch", "pool"},
	outboxharness.Name: {"handlers", "senders", "relays", "request_timeout", "retry_base", "retry_cap", "max_attempts", "poll_every",
		"batch", "publish_timeout", "redeliver_after", "lock_timeout", "db_timeout"},
	twopc.System: {"participants", "coordinators", "standby", "txns", "first_txn", "txn_every", "lock_timeout", "max_prepared",
		"vote_timeout", "request_timeout", "retry_base", "retry_cap", "cooperative", "ask_after", "abort_after", "agent_poll"},
}

// drawnWorlds draws the worlds a design is played in, each as its JSON
// (system A: the drawn and the wide world of each seed), and reports a
// drawn design its own rules refuse.
func drawnWorlds(t *testing.T, d Design) []map[string]any {
	t.Helper()
	var out []map[string]any
	add := func(seed uint64, mode string, js json.RawMessage, err error) {
		require.NoError(t, err, "seed %d %s: the drawn design breaks its own rules", seed, mode)
		m := map[string]any{}
		require.NoError(t, json.Unmarshal(js, &m))
		out = append(out, m)
	}
	for seed := uint64(1); seed <= pinSeeds; seed++ {
		r := func() sim.Rand { return sim.NewPCG(seed).Stream("world") }
		switch v := d.Value().(type) {
		case judge.Design:
			for _, mode := range []harness.WorldMode{harness.WorldDrawn, harness.WorldWide} {
				w := harness.DrawWorld(r(), v, mode, harness.Moderate())
				add(seed, string(mode), w.Design.JSON(), w.Design.Validate())
			}
		case outbox.Design:
			w, _ := outboxharness.DrawWorld(r(), v)
			add(seed, "", w.JSON(), w.Validate())
		case twopc.Design:
			w := twopcharness.DrawWorld(r(), v)
			// A drawn world writes its transactions out: txns, first_txn
			// and txn_every are what its plan does.
			m := map[string]any{}
			require.NoError(t, json.Unmarshal(w.JSON(), &m))
			plan := w.Plan()
			js := w.JSON()
			if len(plan) > 0 {
				m["txns"] = len(plan)
				m["first_txn"] = plan[0].At
				for i := 1; i < len(plan); i++ {
					if gap := plan[i].At - plan[i-1].At; gap != w.TxnEvery {
						m["txn_every"] = gap // a gap that is not txn_every
					}
				}
				js, _ = json.Marshal(m)
			}
			add(seed, "", js, w.Validate())
		}
	}
	return out
}

// TestSetIsPinned: for every parameter of every system, a value set as
// --set, simtest.NewDesign and mutants set it (System.NewDesign) is the
// value of every world drawn from the design, and the drawn world keeps
// the design's rules. Without its pin, every parameter the world draws
// loses the value in some world: a parameter added to a world's draws
// without its pin fails here.
func TestSetIsPinned(t *testing.T) {
	for _, sys := range All() {
		t.Run(sys.Name(), func(t *testing.T) {
			values := pinValues[sys.Name()]
			names := slices.Clone(sys.Params())
			slices.Sort(names)
			var table []string
			for n := range values {
				table = append(table, n)
			}
			slices.Sort(table)
			require.Equal(t, names, table, "pinValues must give every parameter of %s a value", sys.Name())
			for _, name := range names {
				set := name + "=" + values[name]
				d, err := sys.NewDesign(nil, []string{set}, nil)
				require.NoError(t, err, set)
				var want map[string]any
				require.NoError(t, json.Unmarshal(d.JSON, &want))
				if name != "allow_unsafe" { // a waiver, not a parameter of the world
					require.Equal(t, []any{name}, want["pinned"], "%s pins %s", set, name)
				}
				for i, w := range drawnWorlds(t, d) {
					require.Equal(t, want[name], w[name], "%s: world %d of the drawn worlds does not keep it", set, i)
				}
				// Without the pin, a parameter the world draws is lost.
				if slices.Contains(drawnParams[sys.Name()], name) {
					free := d
					free = contract.Wrap(d.System, d.Knobs, d.JSON, unpinned(d.Value()))
					free.World = d.World
					lost := false
					for _, w := range drawnWorlds(t, free) {
						lost = lost || !assert.ObjectsAreEqual(want[name], w[name])
					}
					assert.True(t, lost, "%s: the worlds keep %s even without its pin: the test value does not test the pin", set, name)
				}
			}
		})
	}
}

// unpinned returns a model design with its pins dropped.
func unpinned(v any) any {
	switch d := v.(type) {
	case judge.Design:
		d.Pinned = nil
		return d
	case outbox.Design:
		d.Pinned = nil
		return d
	case twopc.Design:
		d.Pinned = nil
		return d
	}
	panic("unknown design")
}

// TestPinnedWorldsKeepTheRules: a pinned value that a drawn value would
// break a rule against holds the drawn one back (a fleet grows to hold the
// zombies, a drawn heartbeat stays below a pinned lease less a request's
// timeout, a drawn backoff base below a pinned cap), so that every world
// is a design its rules accept, and the wide world still claims the
// source's promises (the checkers' keepsLeases) where the pin allows it.
func TestPinnedWorldsKeepTheRules(t *testing.T) {
	cases := []struct {
		system string
		sets   []string
		file   string
	}{
		{judge.System, []string{"zombies=3"}, ""},
		{judge.System, []string{"home_workers=0"}, ""},
		{judge.System, []string{"home_workers=1", "prod_workers=0", "zombies=1"}, ""},
		{judge.System, []string{"lease=25s"}, ""},
		{judge.System, []string{"grace=26s"}, ""},
		{judge.System, []string{"backoff_cap=1200ms"}, ""},
		{judge.System, []string{"judge_max=4s"}, ""},
		{judge.System, []string{"unconfirmed_lease=45s"}, ""},
		{judge.System, []string{"judge_max=500s", "judge_min=400s"}, ""},
		{judge.System, nil, `{"judge_min": 400000000000, "judge_max": 500000000000, "pinned": ["judge_min"]}`},
		{outboxharness.Name, []string{"retry_cap=700ms"}, ""},
		{twopc.System, []string{"retry_cap=700ms"}, ""},
	}
	for _, c := range cases {
		sys, err := ByName(c.system)
		require.NoError(t, err)
		var file []byte
		if c.file != "" {
			file = []byte(c.file)
		}
		what := strings.Join(c.sets, " ") + c.file
		d, err := sys.NewDesign(nil, c.sets, file)
		require.NoError(t, err, what)
		worlds := drawnWorlds(t, d) // fails on a world its rules refuse
		var set map[string]any
		require.NoError(t, json.Unmarshal(d.JSON, &set))
		for _, name := range set["pinned"].([]any) {
			name := name.(string)
			for i, w := range worlds {
				require.Equal(t, set[name], w[name], "%s: world %d", what, i)
			}
		}
		if c.system != judge.System {
			continue
		}
		for i, w := range worlds {
			dur := func(k string) time.Duration { return time.Duration(w[k].(float64)) }
			for _, k := range []string{"heartbeat", "lease", "unconfirmed_lease", "backoff_base", "backoff_cap", "grace", "sweep_every", "judge_min", "judge_max"} {
				// The draws' ranges end within minutes (judge_max at 300s,
				// a grace at twice a lease and a silence).
				assert.LessOrEqual(t, dur(k), max(10*time.Minute, time.Duration(set[k].(float64))), "%s: world %d: %s", what, i, k)
			}
			if i%2 == 1 { // the wide world
				assert.Greater(t, dur("lease"), dur("heartbeat")+dur("request_timeout"), "%s: world %d: the lease outlasts a slow heartbeat", what, i)
				assert.GreaterOrEqual(t, dur("grace"), max(dur("heartbeat"), dur("backoff_cap"))+dur("request_timeout"),
					"%s: world %d: the grace outlasts a worker's longest silence", what, i)
			}
		}
	}
	// A pinned arbiters=3 still meets the stalled old leader of A-S6.
	d, err := Arbiter{}.NewDesign(nil, []string{"arbiters=3"}, nil)
	require.NoError(t, err)
	stalled := 0
	for seed := uint64(1); seed <= pinSeeds; seed++ {
		w := harness.DrawWorld(sim.NewPCG(seed).Stream("world"), d.Value().(judge.Design), harness.WorldDrawn, harness.Moderate())
		for _, a := range w.Actions {
			if a.Kind == sim.PauseAt && a.Node == "arbiter-1" {
				stalled++
			}
		}
	}
	assert.Greater(t, stalled, pinSeeds/8, "worlds with a stalled old leader among three arbiters")
}

// TestPinKeepsTheOtherDraws: a pinned world is the unpinned world of the
// same seed but for the pinned values: the same workload, the same world
// actions where the fleet allows them, the same other draws.
func TestPinKeepsTheOtherDraws(t *testing.T) {
	pinned, err := Arbiter{}.NewDesign(nil, []string{"home_workers=6", "lease=75s"}, nil)
	require.NoError(t, err)
	for seed := uint64(1); seed <= pinSeeds; seed++ {
		for _, mode := range []harness.WorldMode{harness.WorldDrawn, harness.WorldWide} {
			p := harness.DrawWorld(sim.NewPCG(seed).Stream("world"), pinned.Value().(judge.Design), mode, harness.Moderate())
			f := harness.DrawWorld(sim.NewPCG(seed).Stream("world"), judge.Default(), mode, harness.Moderate())
			require.Equal(t, 6, p.Design.HomeWorkers)
			require.Equal(t, f.Workload, p.Workload, "seed %d %s", seed, mode)
			require.Equal(t, f.Actions, p.Actions, "seed %d %s", seed, mode)
			pd, fd := p.Design, f.Design
			require.Equal(t, []int{fd.ProdWorkers, fd.Sandboxes, fd.Zombies, fd.Arbiters, fd.StandbyArbiters, fd.MaxAttempts, fd.ClaimBatch, fd.Pool},
				[]int{pd.ProdWorkers, pd.Sandboxes, pd.Zombies, pd.Arbiters, pd.StandbyArbiters, pd.MaxAttempts, pd.ClaimBatch, pd.Pool}, "seed %d %s", seed, mode)
			require.Equal(t, []time.Duration{fd.Heartbeat, fd.BackoffBase, fd.BackoffCap, fd.SweepEvery, fd.JudgeMin, fd.JudgeMax},
				[]time.Duration{pd.Heartbeat, pd.BackoffBase, pd.BackoffCap, pd.SweepEvery, pd.JudgeMin, pd.JudgeMax}, "seed %d %s", seed, mode)
		}
	}
}

// TestRunKeepsTheSet: the path explore, run, compare and mutants play
// (NewDesign with the settings, then Run per seed): the trace header's
// design has the value set and names the pin, the world has the nodes it
// says, and the header replays the run identically.
func TestRunKeepsTheSet(t *testing.T) {
	cases := []struct {
		system, set, node string // node: a node only the set value makes
	}{
		{judge.System, "home_workers=6", "home-6"},
		{outboxharness.Name, "handlers=5", "handler-5"},
		{twopc.System, "participants=5", twopc.ParticipantName(4)},
	}
	for _, c := range cases {
		sys, err := ByName(c.system)
		require.NoError(t, err)
		d, err := sys.NewDesign(nil, []string{c.set}, nil)
		require.NoError(t, err)
		name, value, _ := strings.Cut(c.set, "=")
		for seed := uint64(1); seed <= 3; seed++ {
			r := Run(sys, d, seed, Moderate, Options{Full: true, Hash: true})
			var h map[string]any
			require.NoError(t, json.Unmarshal(r.Header.Design, &h))
			assert.Equal(t, value, fmt.Sprint(h[name]), "%s seed %d: the header's design", c.set, seed)
			assert.Equal(t, []any{name}, h["pinned"], "%s seed %d: the header names the pin", c.set, seed)
			assert.Contains(t, r.Nodes, c.node, "%s seed %d", c.set, seed)
			again, err := sys.Replay(r.Header)
			require.NoError(t, err)
			assert.Equal(t, r.Hash, again.Hash, "%s seed %d: the header replays the run", c.set, seed)
		}
		free := Run(sys, sys.Default(), 1, Moderate, Options{})
		assert.NotContains(t, string(free.Header.Design), `"pinned"`, "a design that pins nothing has no pinned list in its header")
	}
}

// TestSettingsTogether: a rule between two parameters holds of the
// settings of one command together, whichever comes first. --set
// lease=10s --set heartbeat=3s was refused at the lease, checked
// against the default heartbeat (20s) before the second setting.
func TestSettingsTogether(t *testing.T) {
	for _, c := range []struct {
		sys   contract.System
		pairs [2]string // accepted together in either order
		alone string    // what the first alone breaks
	}{
		{harness.System{}, [2]string{"lease=10s", "heartbeat=3s"}, "heartbeat = 20s must be shorter than lease = 10s"},
		{harness.System{}, [2]string{"backoff_base=40s", "backoff_cap=50s"}, "backoff_cap = 30s is below backoff_base = 40s"},
		{outboxharness.System{}, [2]string{"retry_base=90s", "retry_cap=100s"}, "retry_cap = "},
		{twopcharness.System{}, [2]string{"retry_base=90s", "retry_cap=100s"}, "retry_cap = "},
	} {
		_, err := c.sys.NewDesign(nil, c.pairs[:1], nil)
		require.ErrorContains(t, err, c.alone, "%s: %s alone breaks a rule", c.sys.Name(), c.pairs[0])
		for _, sets := range [][]string{{c.pairs[0], c.pairs[1]}, {c.pairs[1], c.pairs[0]}} {
			d, err := c.sys.NewDesign(nil, sets, nil)
			require.NoError(t, err, "%s: %v together", c.sys.Name(), sets)
			for _, kv := range sets {
				name, value, _ := strings.Cut(kv, "=")
				assert.Contains(t, compact(t, d.JSON), fmt.Sprintf("%q:%d", name, mustDuration(t, value)), "%s: %v", c.sys.Name(), sets)
			}
		}
	}
	// The rules still hold of the settings together.
	_, err := harness.System{}.NewDesign(nil, []string{"lease=10s", "heartbeat=10s"}, nil)
	assert.ErrorContains(t, err, "heartbeat = 10s must be shorter than lease = 10s")
}

func mustDuration(t *testing.T, s string) int64 {
	d, err := time.ParseDuration(s)
	require.NoError(t, err)
	return int64(d)
}

func compact(t *testing.T, raw json.RawMessage) string {
	var v any
	require.NoError(t, json.Unmarshal(raw, &v))
	out, err := json.Marshal(v)
	require.NoError(t, err)
	return string(out)
}
