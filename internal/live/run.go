package live

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/internal/live/netproxy"
	"github.com/fencesim/fencesim/internal/pgexec"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
	"github.com/jackc/pgx/v5"
)

// Options describe one live run.
type Options struct {
	System   string
	Design   json.RawMessage // the system's design (as a trace header holds it)
	Seed     uint64          // the workload's draws and the nodes' entropy
	Duration time.Duration   // how long the run lasts after every node is up
	// Submissions is the arbiter's workload size (0: the default's 12).
	Submissions int
	Schedule    sim.Schedule // the faults, at times from the run's start
	// PG are the PostgreSQL servers' URLs; none starts throw-away servers
	// (scripts/pg.sh, found from the working directory up) for the run, as
	// many as the world has (two for twopc, as the source's experiment).
	// Given fewer URLs than the world has servers, the last one serves the
	// rest (each database in a schema of its own).
	PG []string
	// Ports, when positive, is the first of the ports the nodes listen on
	// (one per node, in order); 0 lets the system choose free ones.
	Ports int
	Dir   string // the run's directory: node directories, logs, the config files
	// At are looks at the world during the run (a scenario reads the
	// databases right after a crash); AtEnd looks once the nodes are
	// stopped, before the servers are.
	At    []Look
	AtEnd func(ctx context.Context, w *Inspect)
	// Binary is the fencesim executable that runs each node (`fencesim
	// node --config FILE`).
	Binary string
	Log    io.Writer // progress lines (faults as they are injected); nil: none
	// Started, when set, is called once every node is up: the input has
	// passed every check (a caller prints nothing before it, so that bad
	// input is one line on stderr).
	Started func()
}

// Look is a look at the world at a time of the run.
type Look struct {
	At time.Duration
	Do func(ctx context.Context, w *Inspect)
}

// Inspect reads a live world's state: its databases and its nodes' disks.
type Inspect struct{ r *runner }

// DB opens a connection to a database, in its schema; the caller closes it.
func (w *Inspect) DB(ctx context.Context, name string) (*pgx.Conn, error) {
	for i, d := range w.r.p.dbs {
		if d.Name == name {
			return w.r.connect(ctx, w.r.servers[d.Server], w.r.schemas[i])
		}
	}
	return nil, fmt.Errorf("live: no database %q", name)
}

// Disk reads a node's durable disk as its file holds it now.
func (w *Inspect) Disk(node string) (map[string]any, error) {
	d, _, err := readDisk(filepath.Join(w.r.o.Dir, node))
	if err != nil {
		return nil, err
	}
	return d.Snapshot(), nil
}

// Notes reads the notes a node has written so far (a line cut short by a
// kill -9, or being written, is skipped).
func (w *Inspect) Notes(node string) ([]traces.Event, error) {
	return readNotes(filepath.Join(w.r.o.Dir, node, notesFile))
}

// readNotes reads a node's notes file (none: no events).
func readNotes(path string) ([]traces.Event, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var evs []traces.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev traces.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			continue // a line cut short by kill -9
		}
		evs = append(evs, ev)
	}
	return evs, sc.Err()
}

// Up reports whether a node's process is running.
func (w *Inspect) Up(node string) bool {
	c := w.r.kids[node]
	if c == nil || c.cmd == nil {
		return false
	}
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// Result is what a live run recorded.
type Result struct {
	Header traces.Header
	Events []traces.Event
	Faults []string // the faults injected, as done
	// NotMade are the schedule's faults that never happened, each with
	// why: due after the run's end, cut off by an interrupt, or armed and
	// never reached (a crash-at whose point the node never passed).
	NotMade []string
	// Sent are the workload's commands (2PC's transactions) as sent, and
	// Unsent those never sent, with why: the workload, not faults.
	Sent   []string
	Unsent []string
	Nodes  []string
}

// UsageError is input the live world cannot run: one line, exit 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error {
	return &UsageError{fmt.Sprintf(format, args...)}
}

// dbPlan is one database of a live world.
type dbPlan struct {
	Name        string
	Schema      db.Schema
	Seed        map[string][]db.Row
	Server      int           // which server holds it (0, 1, ...)
	LockTimeout time.Duration // its sessions' default lock_timeout
	// MaxPrepared, when Prepares, is the design's
	// max_prepared_transactions: a throw-away server is started with it,
	// a given one must allow as many (a server that allows none, as
	// PostgreSQL by default, refuses every PREPARE TRANSACTION: every
	// transaction would abort, and every property hold).
	Prepares    bool
	MaxPrepared int
}

// server is one PostgreSQL server of a run.
type server struct {
	url   string
	state string // the throw-away server's state directory ("" for a given one)
	host  string
}

// plan is a system's live world: its nodes, databases and trace header.
type plan struct {
	nodes    []sim.Spec
	dbs      []dbPlan
	header   traces.Header
	workload json.RawMessage
	// settled reports whether the world has finished its work (read from
	// the database): after its duration a run goes on until it has, for
	// at most settle more, so that work cut off by the end is not taken
	// for work lost.
	settled func(ctx context.Context, w *Inspect) (bool, error)
	settle  time.Duration
	// commands are the workload's schedule commands (2PC's "txn"), played
	// with the faults but not part of the header's schedule.
	commands sim.Schedule
	// end are the events that close the record (2PC's "end" note); quiet
	// says the run finished its work with every node up.
	end func(t int64, quiet bool) []traces.Event
	// server adds to the record what the model's database notes and a
	// server cannot, read from the servers at the end (2PC: a prepared
	// transaction's fate whose answer the client never got).
	server func(ctx context.Context, w *Inspect, evs []traces.Event, t int64) ([]traces.Event, error)
}

// system is what a system gives the live world.
type system struct {
	plan   func(o Options) (*plan, error)
	wiring func(cfg NodeConfig) (Wiring, error)
}

var systems = map[string]system{}

// MinDuration is the shortest live run: its nodes' timers tick every few
// hundred milliseconds (dispatch, heartbeat, relay polls) and its faults fall
// at fractions of the run, so a shorter run plays its faults, its workload
// and its timers all at once (at --duration 1ns the default schedule killed
// and restarted a worker in the same millisecond and counted it injected).
const MinDuration = time.Second

// CheckDuration is the rule on --duration, said in one line.
func CheckDuration(d time.Duration) error {
	switch {
	case d <= 0:
		return usagef("--duration %v: give a positive duration, e.g. --duration 60s", d)
	case d < MinDuration:
		return usagef("--duration %v: a live run lasts at least %v (its timers tick every few hundred milliseconds and its faults fall at fractions of the run): give e.g. --duration 20s", d, MinDuration)
	}
	return nil
}

// Wire returns the wiring of a node process (`fencesim node`).
func Wire(cfg NodeConfig) (Wiring, error) {
	s, ok := systems[cfg.System]
	if !ok {
		return Wiring{}, fmt.Errorf("live: no live world for system %q", cfg.System)
	}
	return s.wiring(cfg)
}

// Systems lists the systems with a live world.
func Systems() []string {
	var out []string
	for k := range systems {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// child is one node process.
type child struct {
	name    string
	cfgPath string
	cfg     NodeConfig
	cmd     *exec.Cmd
	done    chan struct{}
	paused  bool
	log     *os.File
	killing atomic.Bool // the run is killing it (a crash fault, the end)
}

// runner is one live run in progress.
type runner struct {
	o       Options
	p       *plan
	start   time.Time // the run's instant 0
	net     *netproxy.Net
	servers []*server
	schemas []string // each database's schema, in p.dbs order
	quiet   bool     // the run finished its work, every node up (settle)
	mu      sync.Mutex
	kids    map[string]*child
	faults  []string
	faultAt []int64        // when each of faults was made
	notMade []string       // the schedule's faults not played, and why
	sent    []string       // the workload's commands sent, as done
	unsent  []string       // the workload's commands not sent, and why
	events  []traces.Event // crash and fault events the runner records
}

// Run runs a live world: the database, a proxy on every link, every node as
// a child process; the faults of the schedule as they fall due; then the
// notes of every node and the database's commits, merged into one record.
// Every child process is gone when it returns.
func Run(ctx context.Context, o Options) (res *Result, err error) {
	s, ok := systems[o.System]
	if !ok {
		return nil, usagef("no live world for system %q (live runs: %s)", o.System, strings.Join(Systems(), ", "))
	}
	if err := CheckDuration(o.Duration); err != nil {
		return nil, err
	}
	p, err := s.plan(o)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range p.nodes {
		names = append(names, n.Name)
	}
	all := append(append([]string(nil), names...), dbNames(p)...)
	if err := refuse(o.Schedule, all, dbNames(p)); err != nil {
		return nil, err
	}
	if len(o.PG) > 0 {
		for _, a := range o.Schedule {
			if (a.Kind == sim.Crash || a.Kind == sim.Restart) && isDB(p, a.Node) {
				return nil, usagef("fault %s: crashing the database needs the run's own server: drop --pg", a)
			}
		}
	}
	r := &runner{o: o, p: p, kids: map[string]*child{}}
	// The ports first: a port in use is bad input, found before anything
	// starts.
	listen, err := r.ports(len(p.nodes))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	defer r.stopServers()
	defer r.stopAll()
	if err := r.database(ctx); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err // interrupted while the servers started
	}
	// A proxy in front of every link: each node to every other node's
	// server, and to each database.
	var links []netproxy.Link
	for i, from := range p.nodes {
		for j, to := range p.nodes {
			if i != j {
				links = append(links, netproxy.Link{From: from.Name, To: to.Name, Upstream: listen[j]})
			}
		}
		for _, d := range p.dbs {
			links = append(links, netproxy.Link{From: from.Name, To: d.Name, Upstream: r.servers[d.Server].host})
		}
	}
	if r.net, err = netproxy.Start(links); err != nil {
		return nil, fmt.Errorf("starting the proxies: %w", err)
	}
	defer r.net.Close()
	r.start = time.Now()
	epoch := r.start.UnixNano()
	db.Epoch = time.Unix(0, epoch).UTC()
	for i, n := range p.nodes {
		cfg := NodeConfig{System: o.System, Name: n.Name, Dir: filepath.Join(o.Dir, n.Name), Listen: listen[i],
			Peers: map[string]string{}, DBs: map[string]DBConf{}, Epoch: epoch, Seed: o.Seed, Index: i,
			Design: o.Design, Workload: p.workload}
		for _, to := range p.nodes {
			if to.Name != n.Name {
				cfg.Peers[to.Name] = r.net.Addr(n.Name, to.Name)
			}
		}
		for i, d := range p.dbs {
			cfg.DBs[d.Name] = DBConf{URL: withHost(r.servers[d.Server].url, r.net.Addr(n.Name, d.Name)),
				Schema: r.schemas[i], LockTimeout: d.LockTimeout}
		}
		for _, a := range o.Schedule {
			if a.Kind == sim.CrashAt && a.Node == n.Name {
				cfg.CrashAt = append(cfg.CrashAt, a.Point)
			}
		}
		c := &child{name: n.Name, cfg: cfg, cfgPath: filepath.Join(o.Dir, n.Name+".json")}
		b, _ := json.MarshalIndent(cfg, "", "  ")
		if err := os.WriteFile(c.cfgPath, b, 0o644); err != nil {
			return nil, err
		}
		r.kids[n.Name] = c
	}
	for _, n := range p.nodes {
		if !n.Down {
			if err := r.startChild(r.kids[n.Name]); err != nil {
				return nil, err
			}
		}
	}
	for _, n := range p.nodes {
		if !n.Down {
			if err := r.waitUp(ctx, r.kids[n.Name]); err != nil {
				return nil, err
			}
		}
	}
	if o.Started != nil {
		o.Started()
	}
	r.logf("live: %d nodes up, %d links proxied; running %s", len(names), len(links), o.Duration)
	r.play(ctx)
	r.quiet = r.settle(ctx) && r.allUp()
	r.stopAll()
	// The record is collected even when the run was interrupted: what
	// happened until then is checked.
	end := context.WithoutCancel(ctx)
	if o.AtEnd != nil {
		o.AtEnd(end, &Inspect{r})
	}
	res, err = r.collect(end)
	r.release(end)
	if err != nil {
		return nil, err
	}
	res.Nodes = all
	return res, nil
}

func dbNames(p *plan) []string {
	var out []string
	for _, d := range p.dbs {
		out = append(out, d.Name)
	}
	return out
}

func isDB(p *plan, name string) bool {
	for _, d := range p.dbs {
		if d.Name == name {
			return true
		}
	}
	return false
}

// refuse checks a schedule against what the live world can make real.
func refuse(s sim.Schedule, nodes, dbs []string) error {
	if err := s.Validate(nodes); err != nil {
		return usagef("the schedule: %v", err)
	}
	for _, a := range s {
		switch a.Kind {
		case sim.Jump, sim.Drift:
			return usagef("fault %s: the live world cannot move a node's clock (every node reads this machine's clock): remove it from the schedule", a)
		case sim.CrashYield, sim.PauseYield:
			return usagef("fault %s: the live world cannot count a node's blocking calls: use crash-at with a named point, or a timed crash or pause", a)
		case sim.PauseAt:
			return usagef("fault %s: the live world cannot freeze a node at a named point: use a timed pause", a)
		case sim.Message:
			return usagef("fault %s: the live world cannot pick out one message: use break, stall or a partition on the link", a)
		case sim.Dup:
			return usagef("fault %s: TCP does not duplicate a message: remove it from the schedule", a)
		case sim.CrashAt:
			if a.Count > 1 || a.At != 0 {
				return usagef("fault %s: a live crash-at is armed at the start and fires at the point's first pass (at 0, count 1)", a)
			}
			for _, d := range dbs {
				if a.Node == d {
					return usagef("fault %s: the live world cannot stop PostgreSQL at a named point: use a timed crash of %s (a restart -m immediate)", a, d)
				}
			}
		case sim.Pause, sim.Resume:
			for _, d := range dbs {
				if a.Node == d {
					return usagef("fault %s: pausing the database is not supported live: crash it (a restart -m immediate) or partition it", a)
				}
			}
		}
	}
	return nil
}

// ports returns the nodes' listen addresses, refusing ports in use. A
// node binds its port when it starts, and again when it restarts after a
// kill -9: the free ports it is given lie below the kernel's ephemeral
// range, so that no outgoing connection on the machine takes one in the
// meantime (as one did, with ports the kernel had chosen, under make test).
func (r *runner) ports(n int) ([]string, error) {
	out := make([]string, 0, n)
	if r.o.Ports > 0 {
		for i := 0; i < n; i++ {
			addr := "127.0.0.1:" + strconv.Itoa(r.o.Ports+i)
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return nil, usagef("--ports %d: port %s is in use (the nodes need %d ports from %d): choose another range, or drop --ports", r.o.Ports, addr, n, r.o.Ports)
			}
			ln.Close()
			out = append(out, addr)
		}
		return out, nil
	}
	low, high := 20000, ephemeralLow()-1
	if high-low < 4*n {
		low = 1024
	}
	// Start at a place of the run's own, so that runs side by side do not
	// all try the same ports first.
	span := high - low + 1
	start := low + int(time.Now().UnixNano()/1000+int64(os.Getpid()))%span
	for i := 0; i < span && len(out) < n; i++ {
		addr := "127.0.0.1:" + strconv.Itoa(low+(start-low+i)%span)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		ln.Close()
		out = append(out, addr)
	}
	if len(out) < n {
		return nil, fmt.Errorf("no %d free ports between %d and %d for the nodes: give a range with --ports", n, low, high)
	}
	return out, nil
}

// ephemeralLow is the first port of the kernel's ephemeral range (the
// ports it picks for outgoing connections).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil && v > 1024 {
				return v
			}
		}
	}
	return 32768
}

// database starts the throw-away servers unless they were given, checks
// that they answer, and creates each database: a schema of the run's own
// on its server, its tables, their seed rows and the commit capture.
func (r *runner) database(ctx context.Context) error {
	n := 0
	for _, d := range r.p.dbs {
		n = max(n, d.Server+1)
	}
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return err // interrupted: no more servers
		}
		s := &server{}
		if len(r.o.PG) > 0 {
			s.url = r.o.PG[min(i, len(r.o.PG)-1)]
		} else {
			s.state = filepath.Join(r.o.Dir, fmt.Sprintf("pg-%d", i))
			// Registered before it starts: a start that fails half way
			// is stopped with the rest (stop on its state is safe).
			r.servers = append(r.servers, s)
			var env []string
			for _, d := range r.p.dbs {
				if d.Server == i && d.Prepares {
					env = append(env, "FENCESIM_PG_MAX_PREPARED="+strconv.Itoa(d.MaxPrepared))
				}
			}
			out, err := pgScriptEnv(s.state, env, "start")
			if err != nil {
				return fmt.Errorf("starting PostgreSQL (scripts/pg.sh start): %w", err)
			}
			_, v, ok := strings.Cut(strings.TrimSpace(out), "=")
			if !ok {
				return fmt.Errorf("scripts/pg.sh start printed %q, not an export line", out)
			}
			s.url = strings.Trim(v, "'\"")
		}
		host, err := hostOf(s.url)
		if err != nil {
			return err
		}
		s.host = host
		if s.state == "" {
			r.servers = append(r.servers, s)
		}
	}
	stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
	for _, d := range r.p.dbs {
		s := r.servers[d.Server]
		schema := "live_" + stamp + "_" + strings.NewReplacer("-", "_", ".", "_").Replace(d.Name)
		conn, err := r.connect(ctx, s, "")
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err() // interrupted, not a server that does not answer
			}
			if s.state == "" {
				return usagef("--pg %s: cannot connect: %v", redact(s.url), oneLine(err))
			}
			return err
		}
		err = func() error {
			defer conn.Close(context.Background())
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			if d.Prepares && s.state == "" {
				var v string
				if err := conn.QueryRow(cctx, "SHOW max_prepared_transactions").Scan(&v); err != nil {
					return fmt.Errorf("reading max_prepared_transactions of %s: %w", d.Name, err)
				}
				if n, _ := strconv.Atoi(v); n < d.MaxPrepared {
					or := ""
					if n > 0 {
						or = fmt.Sprintf(", or --set max_prepared=%d", n)
					}
					return usagef("--pg %s: the server of %s allows %s prepared transactions (max_prepared_transactions), the design %d (max_prepared): set max_prepared_transactions = %d on the server and restart it%s",
						redact(s.url), d.Name, v, d.MaxPrepared, d.MaxPrepared, or)
				}
			}
			if d.Prepares && s.state == "" {
				// The nodes read every prepared transaction on the server
				// (pg_prepared_xacts is the server's, not a schema's): one
				// left by an earlier run was recovered as this run's own,
				// its gid clashing with the run's first transaction.
				gids, err := preparedOn(cctx, conn, nil)
				if err != nil {
					return fmt.Errorf("reading the prepared transactions of %s: %w", d.Name, err)
				}
				if len(gids) > 0 {
					return usagef("--pg %s: the server of %s holds %d prepared transactions (%s), which the run's nodes would take for their own: end them (ROLLBACK PREPARED 'gid') or give another server",
						redact(s.url), d.Name, len(gids), strings.Join(gids, ", "))
				}
			}
			if _, err := conn.Exec(cctx, "CREATE SCHEMA "+schema); err != nil {
				return fmt.Errorf("creating schema %s: %w", schema, err)
			}
			if _, err := conn.Exec(cctx, "SET search_path = "+schema); err != nil {
				return err
			}
			if err := pgexec.CreateSchema(cctx, conn, d.Schema); err != nil {
				return fmt.Errorf("creating the tables of %s: %w", d.Name, err)
			}
			if err := pgexec.Seed(cctx, conn, d.Schema, d.Seed); err != nil {
				return fmt.Errorf("seeding %s: %w", d.Name, err)
			}
			if err := pgexec.InstallCapture(cctx, conn, d.Schema); err != nil {
				return fmt.Errorf("the commit capture of %s: %w", d.Name, err)
			}
			return nil
		}()
		if err != nil {
			return err
		}
		r.schemas = append(r.schemas, schema)
	}
	return nil
}

// preparedOn lists the prepared transactions on a server, all of them or,
// given gids, those of the connection's database with one of them.
func preparedOn(ctx context.Context, conn *pgx.Conn, gids []string) ([]string, error) {
	q, args := "SELECT gid FROM pg_prepared_xacts ORDER BY prepared, gid", []any(nil)
	if gids != nil {
		q, args = "SELECT gid FROM pg_prepared_xacts WHERE database = current_database() AND gid = ANY($1) ORDER BY prepared, gid", []any{gids}
	}
	rows, err := conn.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// release ends, on the servers of --pg, the prepared transactions the run
// left (its record has them): else the next run on the server would find
// them and be refused. A throw-away server goes with the run.
func (r *runner) release(ctx context.Context) {
	var gids []string
	for _, a := range r.p.commands {
		if a.Arg != "" && !slices.Contains(gids, a.Arg) {
			gids = append(gids, a.Arg)
		}
	}
	if len(gids) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for i, d := range r.p.dbs {
		s := r.servers[d.Server]
		if !d.Prepares || s.state != "" || i >= len(r.schemas) {
			continue
		}
		conn, err := r.connect(cctx, s, "")
		if err != nil {
			r.logf("live: the prepared transactions left on %s: %v", d.Name, err)
			continue
		}
		left, err := preparedOn(cctx, conn, gids)
		for _, g := range left {
			if err == nil {
				_, err = conn.Exec(cctx, "ROLLBACK PREPARED '"+strings.ReplaceAll(g, "'", "''")+"'")
			}
		}
		conn.Close(context.Background())
		switch {
		case err != nil:
			r.logf("live: rolling back the prepared transactions left on %s: %v", d.Name, err)
		case len(left) > 0:
			r.logf("live: rolled back the %d prepared transactions the run left on %s (%s; the record has them)", len(left), d.Name, strings.Join(left, ", "))
		}
	}
}

// connect opens a connection to a server, in a schema ("": the default).
func (r *runner) connect(ctx context.Context, s *server, schema string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(s.url)
	if err != nil {
		return nil, usagef("--pg %s: %v", redact(s.url), err)
	}
	cfg.ConnectTimeout = 10 * time.Second
	if schema != "" {
		cfg.RuntimeParams["search_path"] = schema
	}
	return pgx.ConnectConfig(ctx, cfg)
}

// pgScript runs scripts/pg.sh with a state directory of its own, to its
// end: it is never killed half way (an interrupt waits for it), and it runs
// in a process group of its own, out of reach of a terminal's ^C. A start
// killed after pg_ctl started the server, but before the script recorded it
// in its state file, left a server nothing would stop (and a start killed
// in initdb, its data directory); a run interrupted meanwhile stops the
// server it started once the script is done.
func pgScript(state string, args ...string) (string, error) {
	return pgScriptEnv(state, nil, args...)
}

// pgScriptEnv is pgScript with more of the script's environment.
func pgScriptEnv(state string, env []string, args ...string) (string, error) {
	script, err := findScript()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("bash", append([]string{script}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A live run crashes its server: it must be durable (fsync on).
	cmd.Env = append(append(os.Environ(), "FENCESIM_PG_STATE="+state, "FENCESIM_PG_DURABLE=1"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// findScript finds scripts/pg.sh from the working directory up.
func findScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "scripts", "pg.sh")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", usagef("no --pg URL, and no scripts/pg.sh in this directory or above to start a server: run from the fencesim checkout, or give --pg postgres://...")
		}
		dir = up
	}
}

func hostOf(u string) (string, error) {
	pu, err := url.Parse(u)
	if err != nil || pu.Host == "" {
		return "", usagef("--pg %s: not a postgres:// URL with a host", redact(u))
	}
	if pu.Port() == "" {
		return pu.Host + ":5432", nil
	}
	return pu.Host, nil
}

func withHost(u, host string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return u
	}
	pu.Host = host
	return pu.String()
}

func redact(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return u
	}
	return pu.Redacted()
}

// oneLine is an error's text on one line: pgx puts each attempt on a line
// of its own (the same line twice when it tried with TLS, then without),
// after a first line ending in a colon.
func oneLine(err error) string {
	var out []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" && (len(out) == 0 || out[len(out)-1] != l) {
			out = append(out, l)
		}
	}
	return strings.Join(out, " ")
}

func (r *runner) logf(format string, args ...any) {
	if r.o.Log != nil {
		fmt.Fprintf(r.o.Log, format+"\n", args...)
	}
}

// startChild starts a node's process.
func (r *runner) startChild(c *child) error {
	if c.cmd != nil {
		select {
		case <-c.done:
		default:
			return nil // running
		}
	}
	if c.log == nil {
		f, err := os.OpenFile(filepath.Join(r.o.Dir, c.name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		c.log = f
	}
	cmd := exec.Command(r.o.Binary, "node", "--config", c.cfgPath)
	cmd.Stdout, cmd.Stderr = c.log, c.log
	// Its own process group (a terminal's ^C reaches the run, which stops
	// it), and killed if the run dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting node %s: %w", c.name, err)
	}
	c.cmd, c.done, c.paused = cmd, make(chan struct{}), false
	done := c.done
	c.killing.Store(false)
	go func() {
		err := cmd.Wait()
		if !c.killing.Load() && err != nil {
			// Not the run's doing: a node that died by itself (a crash-at
			// point's kill -9 is its own, and noted by it).
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
				r.logf("live: %8.3fs node %s exited by itself: %v (see %s)", time.Duration(r.now()).Seconds(), c.name, err, filepath.Join(r.o.Dir, c.name+".log"))
				r.record(c.name, "crash", "exited by itself: "+err.Error(), nil)
			}
		}
		close(done)
	}()
	return nil
}

// waitUp waits until a node's server answers.
func (r *runner) waitUp(ctx context.Context, c *child) error {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-c.done:
			return fmt.Errorf("node %s exited at start (see %s)", c.name, filepath.Join(r.o.Dir, c.name+".log"))
		default:
		}
		resp, err := http.Get("http://" + c.cfg.Listen + pathHealth)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("node %s did not answer on %s within 15s (see its log)", c.name, c.cfg.Listen)
}

// kill kills a node's process with SIGKILL and waits for it to be gone.
func (r *runner) kill(c *child) {
	if c.cmd == nil {
		return
	}
	select {
	case <-c.done:
		return
	default:
	}
	c.killing.Store(true)
	if c.paused {
		c.cmd.Process.Signal(syscall.SIGCONT)
	}
	c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
}

// stopAll kills every node process; it may be called again.
func (r *runner) stopAll() {
	// Not under r.mu: a child that exits by itself records its crash
	// under it while kill waits for it to be gone.
	for _, c := range r.kids {
		r.kill(c)
		if c.log != nil {
			c.log.Close()
			c.log = nil
		}
	}
}

// stopServers stops the throw-away servers.
func (r *runner) stopServers() {
	for _, s := range r.servers {
		if s.state != "" {
			pgScript(s.state, "stop")
		}
	}
}

// play injects the schedule's faults (and the workload's commands) as they
// fall due, and takes the looks, until the run's end.
func (r *runner) play(ctx context.Context) {
	type due struct {
		at   time.Duration
		a    *sim.Action
		cmd  bool // one of the workload's commands, not a fault
		look *Look
	}
	var all []due
	for i, a := range append(append(sim.Schedule(nil), r.o.Schedule...), r.p.commands...) {
		if a.Kind == sim.CrashAt {
			continue // armed in the node's configuration
		}
		a := a
		all = append(all, due{at: time.Duration(a.At), a: &a, cmd: i >= len(r.o.Schedule)})
	}
	for i := range r.o.At {
		all = append(all, due{at: r.o.At[i].At, look: &r.o.At[i]})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].at < all[j].at })
	end := r.start.Add(r.o.Duration)
	// The faults never played are listed, with why: a schedule longer
	// than the run said nothing of its faults past the end.
	unplayed := func(rest []due, why string) {
		for _, x := range rest {
			switch {
			case x.a != nil && x.cmd:
				r.unsent = append(r.unsent, fmt.Sprintf("%s: %s", x.a, why))
			case x.a != nil:
				r.notMade = append(r.notMade, fmt.Sprintf("%s: %s", x.a, why))
			}
		}
	}
	for i, x := range all {
		at := r.start.Add(x.at)
		if at.After(end) {
			unplayed(all[i:], fmt.Sprintf("due after the run's end (--duration %v), not played", r.o.Duration))
			break
		}
		if !sleepUntil(ctx, at) {
			unplayed(all[i:], "the run was interrupted first")
			return
		}
		if x.a != nil {
			r.inject(ctx, *x.a, x.cmd)
		} else {
			x.look.Do(ctx, &Inspect{r})
		}
	}
	sleepUntil(ctx, end)
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}

// settle waits, after the run's duration, until the world has finished
// its work (or settle has passed); it reports whether it has.
func (r *runner) settle(ctx context.Context) bool {
	if r.p.settled == nil || ctx.Err() != nil {
		return false
	}
	cctx, cancel := context.WithTimeout(ctx, r.p.settle)
	defer cancel()
	w := &Inspect{r}
	for {
		if ok, err := r.p.settled(cctx, w); err == nil && ok {
			r.logf("live: %8.3fs the work is done", time.Duration(r.now()).Seconds())
			return true
		}
		select {
		case <-cctx.Done():
			if ctx.Err() != nil {
				r.logf("live: %8.3fs interrupted while waiting for the work to be done: stopping", time.Duration(r.now()).Seconds())
				return false
			}
			r.logf("live: %8.3fs the work is not done %s after the run's end: stopping anyway", time.Duration(r.now()).Seconds(), r.p.settle)
			return false
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// allUp reports whether every node that should run does (a node added
// down counts once started).
func (r *runner) allUp() bool {
	w := &Inspect{r}
	for _, n := range r.p.nodes {
		if c := r.kids[n.Name]; (!n.Down || c.cmd != nil) && !w.Up(n.Name) {
			return false
		}
	}
	return true
}

// now is the run's clock: time since its instant 0.
func (r *runner) now() int64 { return int64(time.Since(r.start)) }

// record records an event of the runner (a fault, a crash).
func (r *runner) record(node, kind, text string, data any) {
	ev := noteEvent(r.now(), node, kind, text, data)
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
}

// inject makes one fault real, or sends one of the workload's commands
// (cmd): recorded as the simulator records both, an action of the
// schedule, but said apart, since a transaction asked for is no fault.
func (r *runner) inject(ctx context.Context, a sim.Action, cmd bool) {
	done := a
	done.At = clock.Time(r.now())
	r.record(a.Node, "fault", a.String(), done)
	line := fmt.Sprintf("%8.3fs  %s", time.Duration(done.At).Seconds(), a)
	what := "fault "
	r.mu.Lock()
	if cmd {
		r.sent = append(r.sent, line)
		what = "" // the action reads "command <node> point=..."
	} else {
		r.faults = append(r.faults, line)
		r.faultAt = append(r.faultAt, int64(done.At))
	}
	r.mu.Unlock()
	r.logf("live: %8.3fs %s%s", time.Duration(done.At).Seconds(), what, a)
	c := r.kids[a.Node]
	switch a.Kind {
	case sim.Crash:
		if isDB(r.p, a.Node) {
			r.crashDB(a)
			return
		}
		if c != nil {
			r.kill(c)
			r.record(a.Node, "crash", "kill -9", nil)
		}
	case sim.Restart:
		if c != nil {
			if err := r.startChild(c); err != nil {
				r.failed(a, err)
			}
		}
	case sim.Pause:
		if c != nil && c.cmd != nil && !c.paused {
			c.cmd.Process.Signal(syscall.SIGSTOP)
			c.paused = true
		}
	case sim.Resume:
		if c != nil && c.cmd != nil && c.paused {
			c.cmd.Process.Signal(syscall.SIGCONT)
			c.paused = false
		}
	case sim.Partition:
		r.netErr(a, r.net.Partition(a.Groups))
	case sim.Cut:
		r.netErr(a, r.net.Cut(a.Node, a.Peer))
	case sim.Heal:
		r.netErr(a, r.net.Heal())
	case sim.Loss:
		r.netErr(a, r.net.Loss(a.Node, a.Peer, a.Rate, a.For))
	case sim.Delay:
		r.netErr(a, r.net.Delay(a.Node, a.Peer, a.Amount, a.For))
	case sim.Stall:
		r.netErr(a, r.net.Stall(a.Node, a.Peer, a.For+a.Amount))
	case sim.Break:
		r.netErr(a, r.net.Break(a.Node, a.Peer))
	case sim.Do:
		if c != nil {
			// Posted on its own: a paused node takes it when it is resumed
			// (its socket accepts the connection meanwhile), as the
			// simulator holds a paused node's inputs; the run goes on.
			b, _ := json.Marshal(sim.Cmd{Name: a.Point, Arg: a.Arg})
			go func() {
				cctx, cancel := context.WithTimeout(ctx, r.o.Duration+time.Minute)
				defer cancel()
				req, err := http.NewRequestWithContext(cctx, http.MethodPost, "http://"+c.cfg.Listen+pathCommand, bytes.NewReader(b))
				if err != nil {
					return
				}
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				} else {
					r.logf("live: command %s to %s: %v", a.Point, a.Node, err)
				}
			}()
		}
	case sim.HealAll:
		r.netErr(a, r.net.HealAll())
		for _, k := range r.kids {
			if k.paused {
				k.cmd.Process.Signal(syscall.SIGCONT)
				k.paused = false
			}
		}
		for _, n := range r.p.nodes {
			if k := r.kids[n.Name]; !n.Down || k.cmd != nil {
				r.startChild(k)
			}
		}
	}
}

// netErr logs a network fault the proxies could not make.
func (r *runner) netErr(a sim.Action, err error) {
	if err != nil {
		r.failed(a, err)
	}
}

// failed notes a fault the run could not make (a wedged link, a node
// that would not start, a server that would not restart): it stays among
// the faults injected (it was attempted, and is in the record), and is
// listed under the faults not made with the error.
func (r *runner) failed(a sim.Action, err error) {
	r.logf("live: fault %s: %v", a, err)
	r.mu.Lock()
	r.notMade = append(r.notMade, fmt.Sprintf("%s: failed: %s", a, oneLine(err)))
	r.mu.Unlock()
}

// crashDB crashes a database's server: an immediate shutdown (no
// checkpoint: recovery replays the WAL) and a start. Every database on the
// server crashes with it (system B's two share one server): each is
// recorded crashed and restarted.
func (r *runner) crashDB(a sim.Action) {
	for _, d := range r.p.dbs {
		if d.Name != a.Node {
			continue
		}
		s := r.servers[d.Server]
		var on []string
		for _, o := range r.p.dbs {
			if o.Server == d.Server {
				on = append(on, o.Name)
			}
		}
		for _, n := range on {
			text := "pg_ctl restart -m immediate"
			if n != a.Node {
				text += " (the server of " + a.Node + ", which it shares)"
			}
			r.record(n, "crash", text, nil)
		}
		if _, err := pgScript(s.state, "crash-restart"); err != nil {
			r.failed(a, fmt.Errorf("restarting PostgreSQL: %w", err))
			return
		}
		for _, n := range on {
			r.record(n, "restart", "the server is up again", nil)
		}
	}
}

// collect merges every node's notes, the runner's events and the database's
// commits into one record, in time order.
func (r *runner) collect(ctx context.Context) (*Result, error) {
	var evs []traces.Event
	for _, n := range r.p.nodes {
		more, err := readNotes(filepath.Join(r.o.Dir, n.Name, notesFile))
		if err != nil {
			return nil, fmt.Errorf("reading the notes of %s: %w", n.Name, err)
		}
		evs = append(evs, more...)
	}
	evs = append(evs, r.events...)
	if r.p.end != nil {
		evs = append(evs, r.p.end(r.now(), r.quiet)...)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for i, d := range r.p.dbs {
		conn, err := r.connect(cctx, r.servers[d.Server], r.schemas[i])
		if err != nil {
			return nil, fmt.Errorf("reading the commits of %s: %w", d.Name, err)
		}
		recs, err := pgexec.ReadCommits(cctx, conn, d.Schema)
		conn.Close(context.Background())
		if err != nil {
			return nil, fmt.Errorf("reading the commits of %s: %w", d.Name, err)
		}
		for _, c := range recs {
			b, _ := json.Marshal(c)
			t := int64(c.At)
			evs = append(evs, traces.Event{T: t, Node: d.Name, Kind: "commit", Text: db.CommitRecord(c).String(), Data: b})
		}
	}
	if r.p.server != nil {
		more, err := r.p.server(cctx, &Inspect{r}, evs, r.now())
		if err != nil {
			return nil, fmt.Errorf("reading the servers' prepared transactions: %w", err)
		}
		evs = append(evs, more...)
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].T < evs[j].T })
	for i := range evs {
		evs[i].Seq = uint64(i + 1)
	}
	faults, notMade := r.crashAts(evs)
	h := r.p.header
	h.Live = true
	h.Entropy = "live"
	h.Schedule = r.o.Schedule.JSON()
	return &Result{Header: h, Events: evs, Faults: faults, NotMade: notMade, Sent: r.sent, Unsent: r.unsent}, nil
}

// crashAts adds to the faults injected the schedule's crash-at faults: a
// node arms its own, and kills itself at the point's first pass, noting it
// (a "crash" note naming the point); one never reached is listed as such,
// not left out as if it had not been asked for.
func (r *runner) crashAts(evs []traces.Event) (made, notMade []string) {
	type line struct {
		t    int64
		text string
	}
	var all []line
	for i, f := range r.faults {
		all = append(all, line{r.faultAt[i], f})
	}
	notMade = append(notMade, r.notMade...)
	for _, a := range r.o.Schedule {
		if a.Kind != sim.CrashAt {
			continue
		}
		fired := false
		for _, e := range evs {
			if e.Node == a.Node && e.Kind == "crash" && e.Text == crashPointNote(a.Point) {
				all = append(all, line{e.T, fmt.Sprintf("%8.3fs  %s: the node killed itself there", time.Duration(e.T).Seconds(), a)})
				fired = true
				break
			}
		}
		if !fired {
			notMade = append(notMade, fmt.Sprintf("%s: the node never passed the point", a))
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].t < all[j].t })
	for _, l := range all {
		made = append(made, l.text)
	}
	return made, notMade
}
