package live

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/internal/pgexec"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
	"github.com/fencesim/fencesim/traces"
)

// NodeConfig is what a live node process is started with (the file given to
// `fencesim node`): which node of which world it is, where it listens, how
// it reaches the others, and the run's shared instant 0.
type NodeConfig struct {
	System   string            `json:"system"`
	Name     string            `json:"name"`
	Dir      string            `json:"dir"`    // the node's directory: its disk, its notes
	Listen   string            `json:"listen"` // host:port of its HTTP server
	Peers    map[string]string `json:"peers"`  // node -> host:port to dial (the proxy of the link)
	DBs      map[string]DBConf `json:"dbs"`    // database node -> how to reach it (through the link's proxy)
	Epoch    int64             `json:"epoch"`  // Unix ns of the run's time 0
	Index    int               `json:"index"`  // the node's number in the run (message ids: unique across the run's processes)
	Seed     uint64            `json:"seed"`
	Design   json.RawMessage   `json:"design"`
	Workload json.RawMessage   `json:"workload,omitempty"`
	// CrashAt are crash points at which the process kills itself with
	// SIGKILL the first time it passes them (a live crash-at fault).
	CrashAt []string `json:"crash_at,omitempty"`
}

// DBConf is how a node reaches one database: the server's URL through the
// link's proxy, the search_path of the database's schema, and the
// session defaults the model's database gives its sessions.
type DBConf struct {
	URL         string        `json:"url"`
	Schema      string        `json:"schema"`
	LockTimeout time.Duration `json:"lock_timeout,omitempty"`
}

// Wiring is what a system gives the live world: the factory of each of its
// nodes and the types its nodes send and keep on disk.
type Wiring struct {
	Factory   sim.Factory
	Codec     *Codec
	DiskTypes []any // gob-registered: the values nodes Put on their disks
}

// notesFile is the name of a node's notes in its directory (JSON Lines of
// traces.Event, appended across restarts).
const notesFile = "notes.jsonl"

// wire paths of a node's HTTP server
const (
	pathMsg     = "/msg/"   // + type: a request on a connection; the answer is the reply
	pathDgram   = "/dgram/" // + type: a datagram; no answer
	pathCommand = "/command"
	pathHealth  = "/health"
	headerFrom  = "X-Fencesim-From"
	headerMsg   = "X-Fencesim-Msg" // the message's id, as its send event names it
	headerType  = "X-Fencesim-Type"
)

// event is one input for the node's loop.
type event struct {
	in  sim.Input
	req *inbound // a request on an inbound connection: registered before the input is stepped
}

// inbound is an HTTP request the node serves: its answer, when the node
// sends one on the request's connection.
type inbound struct {
	reply chan any // nil value: the node closed the connection
}

// outConn is a connection the node dialed: an HTTP client to another node,
// or a database session.
type outConn struct {
	id     network.ConnID
	to     network.Addr
	ctx    context.Context
	cancel context.CancelFunc
	broken atomic.Bool
	// HTTP
	client *http.Client
	url    string
	// written keeps the connection's requests in the order sent, as the
	// simulator's FIFO connection does: a request starts once the one
	// before it is written (the answers may come in any order). It is
	// closed when the last request sent was written (or failed); only the
	// node's loop reads and replaces it, so the loop never waits.
	written chan struct{}
	// database
	pg chan db.Request
}

// driver runs one node in this OS process.
type driver struct {
	cfg    NodeConfig
	w      Wiring
	out    sim.Outside
	node   sim.Node
	disk   *sim.Disk
	rnd    sim.Rand
	epoch  time.Time
	base   time.Time     // with its monotonic reading
	offset time.Duration // base's wall time since the epoch
	events chan event
	timers map[sim.TimerID]*time.Timer
	conns  map[network.ConnID]*outConn
	reqs   map[network.ConnID]*inbound
	nextID atomic.Uint64
	msgs   atomic.Uint64 // messages this process sent, for their ids
	notes  *os.File
	diskV  uint64
	crash  map[string]bool
	srv    *http.Server
	mu     sync.Mutex // guards notes writes from the kill path
	// inflight counts sends on their way out (HTTP requests being written,
	// database requests being run): a crash point waits for them.
	inflight sync.WaitGroup
}

// RunNode runs the node described by cfg until ctx ends or the node dies.
// It returns an error for a configuration it cannot run.
func RunNode(ctx context.Context, cfg NodeConfig, w Wiring) error {
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return err
	}
	for _, t := range w.DiskTypes {
		registerGob(t)
	}
	d := &driver{cfg: cfg, w: w, events: make(chan event, 1024), timers: map[sim.TimerID]*time.Timer{},
		conns: map[network.ConnID]*outConn{}, reqs: map[network.ConnID]*inbound{}, crash: map[string]bool{}}
	for _, p := range cfg.CrashAt {
		// A crash-at fires once: a restarted node passes the point freely.
		if _, err := os.Stat(filepath.Join(cfg.Dir, crashMark(p))); err != nil {
			d.crash[p] = true
		}
	}
	d.epoch = time.Unix(0, cfg.Epoch)
	db.Epoch = d.epoch.UTC()
	d.base = time.Now()
	d.offset = d.base.Round(0).Sub(d.epoch)
	disk, inc, err := loadDisk(cfg.Dir)
	if err != nil {
		return err
	}
	d.disk, d.diskV = disk, disk.Version()
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", cfg.Name, inc)
	d.rnd = sim.NewPCG(cfg.Seed ^ h.Sum64()).Stream(cfg.Name)
	d.notes, err = os.OpenFile(filepath.Join(cfg.Dir, notesFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer d.notes.Close()
	if inc == 1 {
		d.note("start", "", nil)
	} else {
		d.note("restart", fmt.Sprintf("incarnation %d", inc), nil)
	}
	d.out = sim.Outside{Self: network.Addr(cfg.Name), Dial: d.dial, Die: d.die}
	if len(d.crash) > 0 {
		d.out.Point = d.point
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("node %s: listen on %s: %w", cfg.Name, cfg.Listen, err)
	}
	d.srv = &http.Server{Handler: http.HandlerFunc(d.serveHTTP)}
	go d.srv.Serve(ln)
	defer d.srv.Close()

	d.node = w.Factory(cfg.Name, d.disk)
	d.step(sim.Input{Kind: sim.Start})
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-d.events:
			if ev.req != nil {
				d.reqs[ev.in.Msg.Conn] = ev.req
			}
			switch ev.in.Kind {
			case sim.ConnBroken:
				delete(d.reqs, ev.in.Conn)
			case sim.Timer:
				delete(d.timers, ev.in.TimerID)
			}
			if !d.step(ev.in) {
				return nil
			}
		}
	}
}

// now returns the node's wall and monotonic readings: time since the run's
// instant 0 (one machine: every node's clock is the same).
func (d *driver) now() clock.Time { return clock.Time(d.offset + time.Since(d.base)) }

// step steps the node with one input and carries out what it asked for. It
// reports false once the node crashed.
func (d *driver) step(in sim.Input) bool {
	t := d.now()
	env := d.out.Env(t, t, d.rnd, d.disk)
	d.node.Step(env, in)
	d.apply(env.Effects())
	return !env.Crashed()
}

// apply carries out a step's effects: the disk first (what the node wrote
// is durable before anything it sent can be seen), then the rest in order.
func (d *driver) apply(effs []sim.Effect) {
	if v := d.disk.Version(); v != d.diskV {
		if err := saveDisk(d.cfg.Dir, d.disk); err != nil {
			fmt.Fprintf(os.Stderr, "node %s: writing its disk: %v\n", d.cfg.Name, err)
			os.Exit(1)
		}
		d.diskV = v
	}
	for _, e := range effs {
		switch e.Kind {
		case sim.EffSend:
			d.send(e)
		case sim.EffDial:
			d.open(e.Conn, e.To)
		case sim.EffClose:
			d.close(e.Conn)
		case sim.EffTimer:
			id, tag := e.TimerID, e.Tag
			d.timers[id] = time.AfterFunc(e.After, func() {
				d.push(event{in: sim.Input{Kind: sim.Timer, TimerID: id, Tag: tag}})
			})
		case sim.EffCancel:
			if tm, ok := d.timers[e.TimerID]; ok {
				tm.Stop()
				delete(d.timers, e.TimerID)
			}
		case sim.EffNote:
			d.note(e.Note, e.Text, e.Data)
		}
	}
}

func (d *driver) push(ev event) { d.events <- ev }

// note appends one event to the node's notes.
func (d *driver) note(kind, text string, data any) { d.noteAs(d.cfg.Name, kind, text, data) }

// noteAs appends one event of a node (this one, or a database it talks
// to) to the node's notes.
func (d *driver) noteAs(node, kind, text string, data any) {
	ev := traces.Event{T: int64(d.now()), Node: node, Kind: kind, Text: text}
	if kind == "" {
		ev.Kind = "note"
	}
	if data != nil {
		b, err := json.Marshal(data)
		if err == nil {
			ev.Data = b
		}
	}
	b, _ := json.Marshal(ev)
	d.mu.Lock()
	_, err := d.notes.Write(append(b, '\n'))
	d.mu.Unlock()
	if err != nil {
		// The history is the run's record: a node that cannot write it
		// stops rather than go on unrecorded.
		fmt.Fprintf(os.Stderr, "node %s: writing its notes: %v\n", d.cfg.Name, err)
		os.Exit(1)
	}
}

// dial numbers a new connection.
func (d *driver) dial(network.Addr) network.ConnID { return network.ConnID(d.nextID.Add(1)) }

// open opens a dialed connection: a database session when the peer is a
// database, an HTTP client otherwise.
func (d *driver) open(id network.ConnID, to network.Addr) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &outConn{id: id, to: to, ctx: ctx, cancel: cancel}
	d.conns[id] = c
	if conf, ok := d.cfg.DBs[string(to)]; ok {
		c.pg = make(chan db.Request, 64)
		go d.session(c, conf)
		return
	}
	addr, ok := d.cfg.Peers[string(to)]
	if !ok {
		d.broken(c) // no route: refused
		return
	}
	c.url = "http://" + addr
	c.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute,
		DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext}}
}

// broken tells the node, once, that a connection it dialed broke: from
// the loop (which must not wait on its own queue) in a goroutine, from any
// other goroutine at once, so that an answer it queued before the break
// is taken before it.
func (d *driver) broken(c *outConn) {
	if c.broken.CompareAndSwap(false, true) {
		c.cancel()
		go d.push(event{in: sim.Input{Kind: sim.ConnBroken, Conn: c.id, Peer: c.to}})
	}
}

func (d *driver) brokenNow(c *outConn) {
	if c.broken.CompareAndSwap(false, true) {
		c.cancel()
		d.push(event{in: sim.Input{Kind: sim.ConnBroken, Conn: c.id, Peer: c.to}})
	}
}

// session runs a database connection's requests in order on one session.
func (d *driver) session(c *outConn, conf DBConf) {
	var s *pgexec.Session
	defer func() {
		if s != nil {
			s.Close()
		}
		// Requests left in the queue never leave: a crash point need not
		// wait for them.
		for {
			select {
			case <-c.pg:
				d.inflight.Done()
			default:
				return
			}
		}
	}()
	for {
		var req db.Request
		select {
		case <-c.ctx.Done():
			return
		case req = <-c.pg:
		}
		if s == nil {
			var err error
			s, err = pgexec.Dial(c.ctx, conf.URL, pgexec.Options{App: d.cfg.Name, Schema: conf.Schema,
				LockTimeout: conf.LockTimeout, RecordGID: true})
			if err != nil {
				d.inflight.Done()
				d.brokenNow(c)
				return
			}
		}
		resp := s.Run(c.ctx, req)
		d.inflight.Done()
		d.noteServer(c.to, req, resp)
		if s.Dead() {
			d.brokenNow(c)
			return
		}
		d.push(event{in: sim.Input{Kind: sim.Deliver, Msg: network.Message{From: c.to, To: d.out.Self, Conn: c.id, Body: resp}}})
	}
}

// noteSend notes a message this node sends to another (the report draws
// it as an arrow, as the simulator's send and deliver events) and returns
// its id, which travels with it.
func (d *driver) noteSend(to string, conn network.ConnID, body any) string {
	id := strconv.FormatUint(uint64(d.cfg.Index+1)<<40|d.msgs.Add(1), 10)
	d.note("send", msgText(id, d.cfg.Name, to, conn, body), nil)
	return id
}

// noteDeliver notes the arrival of a message another node sent.
func (d *driver) noteDeliver(id, from string, conn network.ConnID, body any) {
	if id == "" {
		return
	}
	d.note("deliver", msgText(id, from, d.cfg.Name, conn, body), nil)
}

func msgText(id, from, to string, conn network.ConnID, body any) string {
	if conn != 0 {
		return fmt.Sprintf("#%s %s->%s conn=%d %v", id, from, to, conn, body)
	}
	return fmt.Sprintf("#%s %s->%s %v", id, from, to, body)
}

// noteServer writes, on the database's behalf, the events the model's
// database node writes that a PostgreSQL server cannot: a prepared
// transaction prepared, committed or rolled back ("prepared", at the
// answer), and a statement's error ("db", the lock timeouts the metrics
// count). The server's commits are read from its capture after the run.
func (d *driver) noteServer(dbName network.Addr, req db.Request, resp db.Response) {
	for i, r := range resp.Results {
		if i >= len(req.Stmts) {
			break
		}
		st := req.Stmts[i]
		if r.Err != nil {
			if r.Err.Code != db.CodeConnectionFailure {
				d.noteAs(string(dbName), "db", st.String()+" -> "+r.Err.Code, map[string]any{"sql": st.String(), "err": r.Err.Code})
			}
			continue
		}
		event := ""
		switch st.Kind {
		case db.SPrepare:
			if !r.RolledBack {
				event = "prepare"
			}
		case db.SCommitPrepared:
			event = "commit"
		case db.SRollbackPrepared:
			event = "rollback"
		}
		if event != "" {
			at := d.now()
			d.noteAs(string(dbName), "prepared", fmt.Sprintf("%s '%s' (the server's answer)", event, st.GID),
				db.PreparedNote{GID: st.GID, Event: event, At: at})
		}
	}
}

// send carries out one send: a reply to an inbound request, a message on a
// dialed connection, or a datagram.
func (d *driver) send(e sim.Effect) {
	if e.Conn == 0 {
		d.datagram(e.To, e.Body)
		return
	}
	if r, ok := d.reqs[e.Conn]; ok {
		delete(d.reqs, e.Conn)
		r.reply <- e.Body
		return
	}
	c, ok := d.conns[e.Conn]
	if !ok || c.broken.Load() {
		return
	}
	if c.pg != nil {
		req, ok := db.RequestOf(e.Body)
		if !ok {
			return
		}
		d.inflight.Add(1)
		select {
		case c.pg <- req:
		default:
			d.inflight.Done()
			d.broken(c) // a session far behind: as a connection that gave up
		}
		return
	}
	name, body, err := d.w.Codec.Encode(e.Body)
	if err != nil {
		fmt.Fprintf(os.Stderr, "node %s: %v\n", d.cfg.Name, err)
		d.broken(c)
		return
	}
	d.inflight.Add(1)
	msg := d.noteSend(string(c.to), c.id, e.Body)
	prev, mine := c.written, make(chan struct{})
	c.written = mine
	go func() {
		var once sync.Once
		wrote := func() { once.Do(func() { close(mine); d.inflight.Done() }) }
		defer wrote()
		if prev != nil {
			select {
			case <-prev:
			case <-c.ctx.Done():
				return
			}
		}
		ctx := httptrace.WithClientTrace(c.ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote() }})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+pathMsg+name, bytes.NewReader(body))
		if err != nil {
			d.brokenNow(c)
			return
		}
		req.Header.Set(headerFrom, d.cfg.Name)
		req.Header.Set(headerMsg, msg)
		resp, err := c.client.Do(req)
		if err != nil {
			d.brokenNow(c)
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			d.brokenNow(c)
			return
		}
		v, err := d.w.Codec.Decode(resp.Header.Get(headerType), b)
		if err != nil {
			d.brokenNow(c)
			return
		}
		d.noteDeliver(resp.Header.Get(headerMsg), string(c.to), c.id, v)
		d.push(event{in: sim.Input{Kind: sim.Deliver, Msg: network.Message{From: c.to, To: d.out.Self, Conn: c.id, Body: v}}})
	}()
}

// datagramClient carries datagrams (no keep-alive state worth keeping).
var datagramClient = &http.Client{Timeout: 5 * time.Second}

func (d *driver) datagram(to network.Addr, v any) {
	addr, ok := d.cfg.Peers[string(to)]
	if !ok {
		return
	}
	name, body, err := d.w.Codec.Encode(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "node %s: %v\n", d.cfg.Name, err)
		return
	}
	msg := d.noteSend(string(to), 0, v)
	d.inflight.Add(1)
	go func() {
		var once sync.Once
		wrote := func() { once.Do(d.inflight.Done) }
		defer wrote()
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote() }})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+pathDgram+name, bytes.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set(headerFrom, d.cfg.Name)
		req.Header.Set(headerMsg, msg)
		if resp, err := datagramClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
}

// close closes a connection: a dialed one (its requests in flight are
// abandoned), or an inbound request's (the client sees it broken).
func (d *driver) close(id network.ConnID) {
	if r, ok := d.reqs[id]; ok {
		delete(d.reqs, id)
		r.reply <- nil
		return
	}
	if c, ok := d.conns[id]; ok {
		delete(d.conns, id)
		c.broken.Store(true)
		c.cancel()
		if c.client != nil {
			c.client.CloseIdleConnections()
		}
	}
}

// serveHTTP is the node's server: requests and datagrams from other nodes,
// schedule commands from the run.
func (d *driver) serveHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == pathHealth:
		w.WriteHeader(http.StatusOK)
	case r.URL.Path == pathCommand:
		var c sim.Cmd
		if err := json.NewDecoder(r.Body).Decode(&c); err != nil || c.Name == "" {
			http.Error(w, "want a command as JSON {\"name\":...,\"arg\":...}", http.StatusBadRequest)
			return
		}
		d.push(event{in: sim.Input{Kind: sim.Command, Cmd: c}})
		w.WriteHeader(http.StatusOK)
	case strings.HasPrefix(r.URL.Path, pathDgram):
		v, err := d.body(r, pathDgram)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		d.noteDeliver(r.Header.Get(headerMsg), r.Header.Get(headerFrom), 0, v)
		d.push(event{in: sim.Input{Kind: sim.Deliver, Msg: network.Message{From: network.Addr(r.Header.Get(headerFrom)), To: d.out.Self, Body: v}}})
		w.WriteHeader(http.StatusAccepted)
	case strings.HasPrefix(r.URL.Path, pathMsg):
		v, err := d.body(r, pathMsg)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id := network.ConnID(d.nextID.Add(1))
		from := r.Header.Get(headerFrom)
		d.noteDeliver(r.Header.Get(headerMsg), from, id, v)
		in := &inbound{reply: make(chan any, 1)}
		d.push(event{in: sim.Input{Kind: sim.Deliver, Msg: network.Message{From: network.Addr(r.Header.Get(headerFrom)), To: d.out.Self, Conn: id, Body: v}}, req: in})
		select {
		case rep := <-in.reply:
			if rep == nil {
				panic(http.ErrAbortHandler) // the node closed the connection
			}
			name, b, err := d.w.Codec.Encode(rep)
			if err != nil {
				panic(http.ErrAbortHandler)
			}
			w.Header().Set(headerType, name)
			w.Header().Set(headerMsg, d.noteSend(from, id, rep))
			w.Header().Set("Content-Type", "application/json")
			w.Write(b)
		case <-r.Context().Done():
			// The client hung up: the request's connection broke.
			d.push(event{in: sim.Input{Kind: sim.ConnBroken, Conn: id, Peer: network.Addr(r.Header.Get(headerFrom))}})
		}
	default:
		http.NotFound(w, r)
	}
}

func (d *driver) body(r *http.Request, prefix string) (any, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	return d.w.Codec.Decode(strings.TrimPrefix(r.URL.Path, prefix), b)
}

// point is a crash point: a live crash-at fault kills the process here
// with SIGKILL, after what the step asked for so far is on its way.
func (d *driver) point(e *sim.Env, label string) {
	if !d.crash[label] {
		return
	}
	d.apply(e.Effects())
	os.WriteFile(filepath.Join(d.cfg.Dir, crashMark(label)), nil, 0o644)
	d.note("crash", crashPointNote(label), nil)
	d.notes.Sync()
	// What was sent must leave the process before it dies (a real crash
	// after a write(2) has the bytes in the kernel already): a second at
	// most.
	done := make(chan struct{})
	go func() { d.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // never reached
}

// crashPointNote is the text of a node's crash note at a crash-at point.
func crashPointNote(label string) string { return "crash point " + label + ": kill -9" }

// crashMark is the file that says a crash-at point fired.
func crashMark(label string) string {
	return "crashed-at-" + strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' {
			return '_'
		}
		return r
	}, label)
}

// die is the node dying of its own doing: its supervisor starts it again
// after restart (the process image is replaced: nothing of its memory
// survives, its disk does).
func (d *driver) die(label string, restart time.Duration) {
	d.note("crash", "died: "+label, nil)
	d.notes.Sync()
	if restart <= 0 {
		os.Exit(0)
	}
	// Dead at once, as Die is in the simulator: nothing is served, every
	// connection and database session is gone; the supervisor starts the
	// process again after restart.
	d.srv.Close()
	for _, c := range d.conns {
		c.cancel()
		if c.client != nil {
			c.client.CloseIdleConnections()
		}
	}
	time.Sleep(restart)
	exe, err := os.Executable()
	if err == nil {
		err = syscall.Exec(exe, os.Args, os.Environ())
	}
	fmt.Fprintf(os.Stderr, "node %s: restarting after it died: %v\n", d.cfg.Name, err)
	os.Exit(1)
}
