package live

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	ct "github.com/fencesim/fencesim/checker/twopc"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/model/twopc"
	"github.com/fencesim/fencesim/model/twopc/scenario"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// System C live: the coordinator (and the participants' agents, when the
// design has them) as processes; each participant a database on a
// PostgreSQL server of its own, as in the source's experiment (both
// participants prepare the same gid, which one server would refuse).

func init() {
	systems[twopc.System] = system{plan: twopcPlan, wiring: twopcWiring}
}

// twopcNodes lists system C's nodes as twopc.Build adds them, but the
// databases.
func twopcNodes(d twopc.Design) []sim.Spec {
	names := twopc.NamesOf(d)
	parts := make([]network.Addr, len(names.Participants))
	for i, p := range names.Participants {
		parts[i] = network.Addr(p)
	}
	var out []sim.Spec
	for _, c := range names.Started {
		out = append(out, sim.Spec{Name: c, Factory: twopc.NewCoordinator(d, parts)})
	}
	for i, a := range names.Agents {
		var peers []network.Addr
		for j, b := range names.Agents {
			if j != i {
				peers = append(peers, network.Addr(b))
			}
		}
		out = append(out, sim.Spec{Name: a, Factory: twopc.NewAgent(d, parts[i], peers)})
	}
	return out
}

func twopcPlan(o Options) (*plan, error) {
	d, err := twopc.ParseDesign(o.Design)
	if err != nil {
		return nil, usagef("the design: %v", err)
	}
	if err := d.Validate(); err != nil {
		return nil, usagef("%v", err)
	}
	names := twopc.NamesOf(d)
	if len(names.Coordinators()) != 1 {
		return nil, usagef("the live 2PC world has one coordinator (its decision log is one process's file): --set coordinators=1 --set standby=0")
	}
	if len(o.PG) > 0 {
		// One server per participant: they prepare the same gid, which
		// one server refuses (the second PREPARE fails, and the
		// transaction aborts).
		if len(o.PG) < len(names.Participants) {
			return nil, usagef("--pg: the participants prepare the same gid, which one server refuses: give one URL per participant (%d), or none", len(names.Participants))
		}
		seen := map[string]string{}
		for _, u := range o.PG[:len(names.Participants)] {
			host, err := hostOf(u)
			if err != nil {
				return nil, err
			}
			if other, ok := seen[host]; ok {
				return nil, usagef("--pg %s and %s: one server (%s); the participants prepare the same gid, which one server refuses: give one server per participant (%d), or none", redact(other), redact(u), host, len(names.Participants))
			}
			seen[host] = u
		}
	}
	p := &plan{nodes: twopcNodes(d), settle: 10 * time.Second,
		header: traces.Header{Format: traces.Format, System: twopc.System, Design: d.JSON(), Seed: o.Seed}}
	for i, name := range names.Participants {
		sc, dc := twopc.DBConfig(d, i)
		p.dbs = append(p.dbs, dbPlan{Name: name, Schema: sc, Seed: dc.Seed, Server: i, LockTimeout: dc.LockTimeout,
			Prepares: true, MaxPrepared: dc.MaxPreparedTransactions})
	}
	coord := names.Started[0]
	// Every transaction the design asks for is asked for within the run:
	// one due after --duration was never played, and the run went on to
	// say every property held of the transactions it had asked for.
	if plan := d.Plan(); len(plan) > 0 {
		last := plan[len(plan)-1]
		for _, t := range plan {
			if t.At > last.At {
				last = t
			}
		}
		if last.At >= o.Duration {
			return nil, usagef("--duration %v: the design asks for its last transaction (%s of %d) at %v: give --duration %v or more, or fewer transactions (--set txns=N)",
				o.Duration, last.GID, len(plan), last.At, (last.At + time.Second).Truncate(time.Second))
		}
	}
	var gids []string
	for _, t := range d.Plan() {
		c := t.Coordinator
		if c == "" {
			c = coord
		}
		p.commands = append(p.commands, sim.Action{At: clock.Time(t.At), Kind: sim.Do, Node: c, Point: twopc.CmdTxn, Arg: t.GID})
		gids = append(gids, t.GID)
	}
	p.settled = func(ctx context.Context, w *Inspect) (bool, error) {
		if !w.Up(coord) {
			return false, nil
		}
		for _, name := range names.Participants {
			n, err := prepared(ctx, w, name, gids)
			if err != nil || n > 0 {
				return false, err
			}
		}
		return true, nil
	}
	p.end = func(t int64, quiet bool) []traces.Event {
		// Quiesced as the simulator's harness says it: the run finished
		// its work (no prepared transaction left) with every node up.
		return []traces.Event{noteEvent(t, "", hist.KindTxn, "end", hist.Txn{What: hist.TxnEnd, Quiesced: quiet})}
	}
	p.server = func(ctx context.Context, w *Inspect, evs []traces.Event, t int64) ([]traces.Event, error) {
		return serverPrepared(ctx, w, names.Participants, gids, evs, t)
	}
	return p, nil
}

// serverPrepared adds the prepared-transaction events the nodes could not
// note: a node notes a prepare, commit or rollback from the server's
// answer, and an answer can be lost (a stall, a break, a crash) after the
// server acted. The simulator's database notes the act itself; here the
// servers tell: a transaction committed with its gid is in the commit
// capture, one still prepared is in pg_prepared_xacts (with its prepare
// time), and one noted prepared that is in neither was rolled back.
func serverPrepared(ctx context.Context, w *Inspect, participants, gids []string, evs []traces.Event, t int64) ([]traces.Event, error) {
	type life struct {
		prepared bool
		end      string
	}
	var out []traces.Event
	for _, p := range participants {
		noted := map[string]*life{}
		get := func(gid string) *life {
			if noted[gid] == nil {
				noted[gid] = &life{}
			}
			return noted[gid]
		}
		committed := map[string]int64{}
		for _, e := range evs {
			if e.Node != p {
				continue
			}
			switch e.Kind {
			case "prepared":
				var n db.PreparedNote
				if err := json.Unmarshal(e.Data, &n); err != nil {
					return nil, err
				}
				if n.Event == "prepare" {
					get(n.GID).prepared = true
				} else {
					get(n.GID).end = n.Event
				}
			case "commit":
				var c hist.CommitRecord
				if err := json.Unmarshal(e.Data, &c); err != nil {
					return nil, err
				}
				if c.GID != "" {
					committed[c.GID] = e.T
				}
			}
		}
		still := map[string]bool{}
		conn, err := w.DB(ctx, p)
		if err != nil {
			return nil, err
		}
		all := append([]string(nil), gids...)
		for g := range noted {
			all = append(all, g)
		}
		rows, err := conn.Query(ctx, "SELECT gid, prepared FROM pg_prepared_xacts WHERE gid = ANY($1) ORDER BY prepared, gid", all)
		if err == nil {
			for rows.Next() {
				var gid string
				var at time.Time
				if err = rows.Scan(&gid, &at); err != nil {
					break
				}
				still[gid] = true
				if !get(gid).prepared {
					ts := clock.Time(at.Sub(db.Epoch))
					out = append(out, serverEvent(int64(ts), p, db.PreparedNote{GID: gid, Event: "prepare", At: ts}))
				}
			}
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
		}
		conn.Close(context.Background())
		if err != nil {
			return nil, err
		}
		for gid, at := range committed {
			if l := get(gid); l.end == "" {
				out = append(out, serverEvent(at, p, db.PreparedNote{GID: gid, Event: "commit", At: clock.Time(at)}))
			}
		}
		for gid, l := range noted {
			if _, ok := committed[gid]; l.prepared && l.end == "" && !still[gid] && !ok {
				out = append(out, serverEvent(t, p, db.PreparedNote{GID: gid, Event: "rollback", At: clock.Time(t)}))
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].T < out[j].T || (out[i].T == out[j].T && out[i].Text < out[j].Text) })
	return out, nil
}

func serverEvent(t int64, node string, n db.PreparedNote) traces.Event {
	return noteEvent(t, node, "prepared", fmt.Sprintf("%s '%s' (read from the server after the run)", n.Event, n.GID), n)
}

// prepared counts a participant's prepared transactions of the given gids.
func prepared(ctx context.Context, w *Inspect, participant string, gids []string) (int, error) {
	conn, err := w.DB(ctx, participant)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	var n int
	err = conn.QueryRow(ctx, "SELECT count(*) FROM pg_prepared_xacts WHERE gid = ANY($1)", gids).Scan(&n)
	return n, err
}

func twopcWiring(cfg NodeConfig) (Wiring, error) {
	d, err := twopc.ParseDesign(cfg.Design)
	if err != nil {
		return Wiring{}, err
	}
	for _, n := range twopcNodes(d) {
		if n.Name == cfg.Name {
			return Wiring{Factory: n.Factory, Codec: NewCodec(twopc.Ask{}, twopc.Answer{})}, nil
		}
	}
	return Wiring{}, fmt.Errorf("the 2PC world has no node %q", cfg.Name)
}

// Times of a live crash-position run: the state is read once the crash
// is over, then the coordinator restarts and recovers.
const (
	tableRead    = 2 * time.Second
	tableRestart = 2500 * time.Millisecond
	tableEnd     = 4 * time.Second
)

// TwoPCTable runs C.1's five crash positions live: for each, a world whose
// coordinator kills itself with SIGKILL at the position's crash point; the
// databases and the decision log are read (C.1), then the coordinator
// restarts from its log and recovers (C.4). base gives the directory, the
// binary, the servers (none: two throw-away servers for all five runs)
// and the log.
func TwoPCTable(ctx context.Context, base Options) ([]scenario.CrashRow, error) {
	servers := base.PG
	if len(servers) == 0 {
		for i := 0; i < 2; i++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			state := filepath.Join(base.Dir, fmt.Sprintf("pg-%d", i))
			defer pgScript(state, "stop")
			out, err := pgScriptEnv(state, []string{"FENCESIM_PG_MAX_PREPARED=" + strconv.Itoa(twopc.Default().MaxPrepared)}, "start")
			if err != nil {
				return nil, fmt.Errorf("starting PostgreSQL (scripts/pg.sh start): %w", err)
			}
			_, v, ok := strings.Cut(strings.TrimSpace(out), "=")
			if !ok {
				return nil, fmt.Errorf("scripts/pg.sh start printed %q, not an export line", out)
			}
			servers = append(servers, strings.Trim(v, "'\""))
		}
	}
	var rows []scenario.CrashRow
	for i, point := range twopc.Positions {
		d := twopc.Default()
		gid := fmt.Sprintf("x%d", i)
		d.GIDs, d.Txns, d.Schedule = []string{gid}, 1, nil
		names := twopc.NamesOf(d)
		coord := names.Started[0]
		row := scenario.CrashRow{Pos: i, Where: scenario.Where[i]}
		var lookErr error
		state := func(ctx context.Context, w *Inspect) scenario.State {
			st, err := twopcState(ctx, w, names.Participants, gid)
			if err != nil && lookErr == nil {
				lookErr = err
			}
			return st
		}
		o := base
		o.System, o.Design, o.PG = twopc.System, d.JSON(), servers
		o.Dir = filepath.Join(base.Dir, fmt.Sprintf("pos-%d", i))
		o.Duration = tableEnd
		o.Schedule = sim.Schedule{
			{At: 0, Kind: sim.CrashAt, Node: coord, Point: point},
			{At: clock.Time(tableRestart), Kind: sim.Restart, Node: coord},
		}
		o.At = []Look{{At: tableRead, Do: func(ctx context.Context, w *Inspect) {
			if w.Up(coord) && lookErr == nil {
				lookErr = fmt.Errorf("position %d: crash point %s was never reached", i, point)
			}
			row.Crash = state(ctx, w)
			if disk, err := w.Disk(coord); err == nil {
				row.Log, _ = disk["decision/"+gid].(string)
			}
		}}}
		o.AtEnd = func(ctx context.Context, w *Inspect) { row.After = state(ctx, w) }
		res, err := Run(ctx, o)
		if err != nil {
			return nil, fmt.Errorf("position %d: %w", i, err)
		}
		if err := ctx.Err(); err != nil {
			// Interrupted: the position's world was cut short, its row
			// is not the position's; no later position starts.
			return nil, err
		}
		if lookErr != nil {
			return nil, lookErr
		}
		row.Action = scenario.RecoveryText(res.Events)
		row.Consistent = row.After.Consistent(d.Stock)
		rep, err := ct.Check(res.Events)
		if err != nil {
			return nil, fmt.Errorf("position %d: the record does not decode: %w", i, err)
		}
		row.Verdicts, row.Metrics = scenario.VerdictText(rep), rep.Metrics
		rows = append(rows, row)
	}
	return rows, nil
}

// twopcState reads what the databases hold, as the scenarios' State:
// prepared transactions of gid at each participant, rows in orders, sku-1
// at each inventory.
func twopcState(ctx context.Context, w *Inspect, participants []string, gid string) (scenario.State, error) {
	st := scenario.State{Prepared: make([]int, len(participants))}
	for i, p := range participants {
		n, err := prepared(ctx, w, p, []string{gid})
		if err != nil {
			return st, err
		}
		st.Prepared[i] = n
		conn, err := w.DB(ctx, p)
		if err != nil {
			return st, err
		}
		if i == 0 {
			err = conn.QueryRow(ctx, "SELECT count(*) FROM "+twopc.TOrders).Scan(&st.Orders)
		} else {
			var v int64
			err = conn.QueryRow(ctx, "SELECT n FROM "+twopc.TStock+" WHERE sku = 'sku-1'").Scan(&v)
			st.Stock = append(st.Stock, v)
		}
		conn.Close(context.Background())
		if err != nil {
			return st, err
		}
	}
	return st, nil
}
