package twopc

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// These tests drive the coordinator's decision path (Commit) and its
// recovery (Recover) alone, as raft's tests drive a RawNode: a world of the
// participants' database nodes and one process that calls the coordinator's
// functions as the script says; no harness, no agents, no checker. They
// assert on what the databases hold and what the coordinator noted.

// rig is such a world.
type rig struct {
	t     *testing.T
	w     *sim.World
	mem   *traces.Memory
	log   *sim.Disk
	parts []string
	out   map[string]string // gid -> Commit's outcome
}

// newRig builds the world: each incarnation of the coordinator runs
// script(incarnation, c, p); seed adds rows to participant i's tables.
func newRig(t *testing.T, d Design, faults sim.Schedule, seed map[int]map[string][]db.Row, script func(inc int, c *Coordinator, p *sim.Proc)) *rig {
	t.Helper()
	r := &rig{t: t, mem: &traces.Memory{}, log: sim.NewDisk(), out: map[string]string{}}
	r.w = sim.New(sim.Config{
		Entropy: sim.NewPCG(1), Network: network.Policy{DelayMin: time.Millisecond, DelayMax: time.Millisecond},
		Schedule: faults, Recorder: r.mem, Limits: sim.Limits{MaxEvents: 100_000},
	})
	t.Cleanup(r.w.Close)
	var addrs []network.Addr
	for i := 0; i < d.Participants; i++ {
		name := ParticipantName(i)
		r.parts = append(r.parts, name)
		addrs = append(addrs, network.Addr(name))
		sc, dc := DBConfig(d, i)
		if len(seed[i]) > 0 && dc.Seed == nil {
			dc.Seed = map[string][]db.Row{}
		}
		for table, rows := range seed[i] {
			dc.Seed[table] = append(dc.Seed[table], rows...)
		}
		r.w.Add(name, db.New(sc, dc))
	}
	inc := 0
	r.w.Add("coordinator", func(name string, disk *sim.Disk) sim.Node {
		disk.AutoSync = false
		c := &Coordinator{d: d, name: name, parts: addrs, disk: disk}
		inc++
		n := inc
		return sim.Program(func(p *sim.Proc) { script(n, c, p) })
	}, sim.WithDisk(r.log))
	return r
}

// commit is the script that runs Commit for each gid in turn, from 100 ms
// (after the faults of time 0 are armed).
func (r *rig) commit(gids ...string) func(int, *Coordinator, *sim.Proc) {
	return func(_ int, c *Coordinator, p *sim.Proc) {
		p.Sleep(100*time.Millisecond, "first request")
		for _, g := range gids {
			r.out[g] = c.Commit(p, g)
		}
	}
}

func (r *rig) run(until time.Duration) {
	r.t.Helper()
	require.NoError(r.t, r.w.RunUntil(clock.Time(until)))
}

func (r *rig) db(name string) *db.Node {
	n, ok := r.w.Node(name).(*db.Node)
	require.Truef(r.t, ok, "database %s is down", name)
	return n
}

func (r *rig) orders() int { return len(r.db("orders").Rows(TOrders)) }

func (r *rig) stock() int64 {
	for _, row := range r.db("inventory").Rows(TStock) {
		if row["sku"] == "sku-1" {
			return row["n"].(int64)
		}
	}
	r.t.Fatal("inventory has no sku-1")
	return 0
}

func (r *rig) prepared() []int {
	var out []int
	for _, p := range r.parts {
		out = append(out, len(r.db(p).Prepared()))
	}
	return out
}

func (r *rig) decision(gid string) string {
	if v, ok := r.log.Get(logKey(gid)); ok {
		return v.(string)
	}
	return ""
}

// notes renders the coordinator's notes, one line each:
// "vote orders yes", "log commit synced".
func (r *rig) notes() []string {
	var out []string
	for _, e := range r.mem.Events {
		if e.Kind != hist.KindTxn {
			continue
		}
		var n hist.Txn
		require.NoError(r.t, json.Unmarshal(e.DataJSON(), &n))
		line := n.What
		for _, f := range []string{n.Participant, n.Vote, n.Code, n.Outcome} {
			if f != "" {
				line += " " + f
			}
		}
		if n.What == hist.TxnLog && n.Synced {
			line += " synced"
		}
		out = append(out, line)
	}
	return out
}

// seqOf returns the sequence number of the first event matching, 0 if none.
func (r *rig) seqOf(match func(e traces.Event) bool) uint64 {
	for _, e := range r.mem.Events {
		if match(e) {
			return e.Seq
		}
	}
	return 0
}

func (r *rig) loggedSeq() uint64 {
	return r.seqOf(func(e traces.Event) bool { return e.Kind == hist.KindTxn && hasField(e, "what", hist.TxnLog) })
}

func (r *rig) committedSeq(node string) uint64 {
	return r.seqOf(func(e traces.Event) bool {
		return e.Kind == "prepared" && e.Node == node && hasField(e, "event", "commit")
	})
}

func hasField(e traces.Event, key, value string) bool {
	var m map[string]any
	return json.Unmarshal(e.DataJSON(), &m) == nil && m[key] == value
}

// TestCommitDecisionPath: both participants vote YES; the decision is
// logged and fsync'd before the first COMMIT PREPARED; both commit.
func TestCommitDecisionPath(t *testing.T) {
	var r *rig
	r = newRig(t, Default(), nil, nil, func(inc int, c *Coordinator, p *sim.Proc) { r.commit("x1")(inc, c, p) })
	r.run(time.Second)

	assert.Equal(t, "commit", r.out["x1"], "Commit returns the outcome")
	assert.Equal(t, []string{
		"begin",
		"vote orders yes",
		"vote inventory yes",
		"decide commit",
		"log commit synced",
		"done commit",
	}, r.notes())
	assert.Equal(t, 1, r.orders(), "orders inserted the order")
	assert.Equal(t, int64(99), r.stock(), "inventory took one off")
	assert.Equal(t, []int{0, 0}, r.prepared(), "nothing is left prepared")
	assert.Equal(t, "commit", r.decision("x1"))
	require.NotZero(t, r.committedSeq("orders"))
	assert.Less(t, r.loggedSeq(), r.committedSeq("orders"), "the decision is logged before the first COMMIT PREPARED")
}

// TestCommitNoVoteAborts: the inventory refused the gid before (a
// tombstone in its txlog, as a cooperative agent leaves): its work fails
// with a unique violation, it votes NO, and the orders' prepared
// transaction is rolled back.
func TestCommitNoVoteAborts(t *testing.T) {
	var r *rig
	tomb := map[int]map[string][]db.Row{1: {TTxlog: {{"gid": "x1", "state": TxRefused}}}}
	r = newRig(t, Default(), nil, tomb, func(inc int, c *Coordinator, p *sim.Proc) { r.commit("x1")(inc, c, p) })
	r.run(time.Second)

	assert.Equal(t, "abort", r.out["x1"])
	assert.Equal(t, []string{
		"begin",
		"vote orders yes",
		"vote inventory no " + db.CodeUniqueViolation,
		"decide abort",
		"log abort synced",
		"done abort",
	}, r.notes())
	assert.Equal(t, 0, r.orders())
	assert.Equal(t, int64(100), r.stock())
	assert.Equal(t, []int{0, 0}, r.prepared(), "orders' prepared transaction was rolled back; inventory never prepared")
	assert.Equal(t, "abort", r.decision("x1"))
}

// TestCommitVoteTimeout: the inventory is stuck (paused) when its PREPARE
// arrives: after vote_timeout the vote is unknown and the decision ABORT.
// The inventory may have prepared, so it is told ROLLBACK PREPARED too,
// again after each backoff, until it answers once it resumes.
func TestCommitVoteTimeout(t *testing.T) {
	var r *rig
	d := Default()
	faults := sim.Schedule{
		{At: 0, Kind: sim.Pause, Node: "inventory"},
		{At: clock.Time(20 * time.Second), Kind: sim.Resume, Node: "inventory"},
	}
	r = newRig(t, d, faults, nil, func(inc int, c *Coordinator, p *sim.Proc) { r.commit("x1")(inc, c, p) })
	r.run(11 * time.Second)
	assert.Equal(t, []string{"begin", "vote orders yes", "vote inventory unknown " + db.CodeConnectionFailure, "decide abort", "log abort synced"}, r.notes(),
		"after vote_timeout (%v) the vote is unknown", d.VoteTimeout)
	assert.Equal(t, 0, len(r.db("orders").Prepared()), "orders rolled back at once")
	r.run(40 * time.Second)
	assert.Equal(t, "abort", r.out["x1"])
	assert.Equal(t, "done abort", r.notes()[len(r.notes())-1])
	prep := r.seqOf(func(e traces.Event) bool {
		return e.Kind == "prepared" && e.Node == "inventory" && hasField(e, "event", "prepare")
	})
	back := r.seqOf(func(e traces.Event) bool {
		return e.Kind == "prepared" && e.Node == "inventory" && hasField(e, "event", "rollback")
	})
	require.NotZero(t, prep, "the held PREPARE ran when the inventory resumed")
	assert.Greater(t, back, prep, "and the retried ROLLBACK PREPARED ended it")
	assert.Equal(t, []int{0, 0}, r.prepared())
	assert.Equal(t, int64(100), r.stock())
}

// TestCommitBeforeLogKnob: under commit-before-log the first COMMIT
// PREPARED goes out before the decision is logged; killed right after it,
// the coordinator leaves orders committed and an empty log (C.6's wrong
// order).
func TestCommitBeforeLogKnob(t *testing.T) {
	var r *rig
	faults := sim.Schedule{{At: 0, Kind: sim.CrashAt, Node: "coordinator", Point: PointCommitted + "orders"}}
	r = newRig(t, Default().MustWith(CommitBeforeLog), faults, nil, func(inc int, c *Coordinator, p *sim.Proc) { r.commit("x1")(inc, c, p) })
	r.run(time.Second)

	assert.False(t, r.w.Up("coordinator"), "killed at %s", PointCommitted+"orders")
	assert.Equal(t, []string{"begin", "vote orders yes", "vote inventory yes", "decide commit"}, r.notes(), "nothing logged")
	assert.Equal(t, "", r.decision("x1"))
	assert.Equal(t, 1, r.orders(), "orders committed")
	assert.Equal(t, []int{0, 1}, r.prepared(), "inventory waits, prepared")
}

// TestRecoverFinishesFromTheLog: killed at each position, then restarted
// into Recover alone: the log's COMMIT is finished everywhere, no record
// means ROLLBACK (logged ABORT first), as C.4.
func TestRecoverFinishesFromTheLog(t *testing.T) {
	for i, point := range Positions {
		t.Run(fmt.Sprintf("position %d", i), func(t *testing.T) {
			var r *rig
			faults := sim.Schedule{
				{At: 0, Kind: sim.CrashAt, Node: "coordinator", Point: point},
				{At: clock.Time(time.Second), Kind: sim.Restart, Node: "coordinator"},
			}
			r = newRig(t, Default(), faults, nil, func(inc int, c *Coordinator, p *sim.Proc) {
				if inc == 1 {
					r.commit("x1")(inc, c, p)
					return
				}
				c.Recover(p)
			})
			r.run(500 * time.Millisecond)
			atCrash := r.prepared()
			r.run(5 * time.Second)
			assert.Equal(t, []int{0, 0}, r.prepared(), "recovery leaves nothing prepared (at the crash: %v)", atCrash)
			committed := i >= 3 // the log said COMMIT
			if committed {
				assert.Equal(t, 1, r.orders())
				assert.Equal(t, int64(99), r.stock())
				assert.Equal(t, "commit", r.decision("x1"))
			} else {
				assert.Equal(t, 0, r.orders())
				assert.Equal(t, int64(100), r.stock())
				if atCrash[0]+atCrash[1] > 0 {
					assert.Equal(t, "abort", r.decision("x1"), "no record: ABORT is logged before the rollback")
				}
			}
			notes := r.notes()
			assert.Contains(t, notes[len(notes)-1], "recovered")
		})
	}
}
