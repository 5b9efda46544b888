package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	art "github.com/fencesim/fencesim/internal/artifact"
	"github.com/fencesim/fencesim/internal/browsertest"
	"github.com/fencesim/fencesim/internal/systems"
)

// liveTrace writes a simulated arbiter run as a live run's record: its
// header marked live (entropy "live", as fencesim live writes it) and, so
// that a replay could not pass for a judgement, a schedule the simulator
// cannot replay (the checkers do not read the header's schedule).
func liveTrace(t *testing.T, path string, knobs []string, seed uint64) *systems.Result {
	t.Helper()
	sys := systems.Arbiter{}
	d, err := sys.NewDesign(knobs, nil, nil)
	require.NoError(t, err)
	r := systems.Run(sys, d, seed, systems.Moderate, systems.Options{Full: true})
	r.Header.Live, r.Header.Entropy = true, "live"
	r.Header.Schedule = json.RawMessage(`[{"at":0,"kind":"no-such-fault"}]`)
	_, err = art.Trace(path, r)
	require.NoError(t, err)
	return r
}

// TestLiveTrace: replay refuses a live run's record in one line naming
// report; report judges the recorded events without replaying them,
// renders the page, and exits 1 when a property failed, 0 when every one
// held.
func TestLiveTrace(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "arbiter-live-bad.jsonl")
	r := liveTrace(t, bad, []string{"fence-by-worker-id"}, 6)
	require.Contains(t, r.FailedIDs(), "PA1", "fence-by-worker-id fails PA1, the invariant and porcupine's view, on seed 6")

	code, stdout, stderr := run(t, "replay", bad)
	assert.Equal(t, exitUsage, code, "replay of a live trace; stderr: %s", stderr)
	assert.Empty(t, stdout)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
	assert.Contains(t, stderr, "the record of a live run")
	assert.Contains(t, stderr, "cannot be re-run bit for bit")
	assert.Contains(t, stderr, "fencesim report "+bad)

	// The same file unmarked does not replay at all: report below passes
	// only because it does not replay.
	plain := filepath.Join(dir, "plain.jsonl")
	b, err := os.ReadFile(bad)
	require.NoError(t, err)
	b = bytes.Replace(b, []byte(`"entropy":"live"`), []byte(`"entropy":"pcg"`), 1)
	b = bytes.Replace(b, []byte(`,"live":true`), nil, 1)
	require.NoError(t, os.WriteFile(plain, b, 0o644))
	code, _, stderr = run(t, "replay", plain)
	require.Equal(t, exitUsage, code, stderr)
	require.Contains(t, stderr, "the header does not replay")

	page := filepath.Join(dir, "bad.html")
	before := listing(t, dir)
	code, stdout, stderr = run(t, "report", "--out", page, bad)
	assert.Equal(t, exitFail, code, "report of a live trace that fails PA1; stderr: %s", stderr)
	assert.Empty(t, stderr)
	assert.Contains(t, stdout, "arbiter live run (design: knobs fence-by-worker-id): ")
	assert.Contains(t, stdout, "PA1 at-most-one-owner: FAILED: ")
	assert.Contains(t, stdout, "report: "+page+"\n")
	html := readFile(t, page)
	assert.Contains(t, html, "<h1>arbiter live run (design: knobs fence-by-worker-id): PA1")
	assert.Contains(t, html, "PA1 at-most-one-owner")
	assert.Contains(t, html, "a live run: it cannot be replayed (fencesim report "+bad)
	assert.NotContains(t, html, "fencesim replay "+bad)
	var added []string
	for _, p := range listing(t, dir) {
		if !contains(before, p) {
			added = append(added, filepath.Base(p))
		}
	}
	assert.Subset(t, []string{"bad.html", "bad-porcupine.html"}, added, "report writes its page (and porcupine's) only")

	// A run where every property held: exit 0, next to the trace by
	// default.
	good := filepath.Join(dir, "arbiter-live-good.jsonl")
	for seed := uint64(1); ; seed++ {
		require.Less(t, seed, uint64(20), "a seed of the default design where every property holds")
		if r := liveTrace(t, good, nil, seed); len(r.Failed()) == 0 {
			break
		}
	}
	code, stdout, stderr = run(t, "report", good)
	assert.Equal(t, exitOK, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, "every property held")
	assert.Contains(t, stdout, "report: "+filepath.Join(dir, "arbiter-live-good-report.html")+"\n")
	assert.FileExists(t, filepath.Join(dir, "arbiter-live-good-report.html"))
}

// TestLiveBadInput: input the live world cannot run is one line on stderr,
// exit 2, before anything starts: no node process, no PostgreSQL, no
// directory left behind. None of these needs a PostgreSQL server.
func TestLiveBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	jump := write("jump.json", `[{"at":1000000000,"kind":"jump","node":"home-1","amount":5000000000}]`)
	notJSON := write("schedule.json", "crash home-1 at 3s\n")
	crashAtDB := write("crash-at-db.json", `[{"at":0,"kind":"crash-at","node":"db","point":"db/commit","count":1}]`)
	// System B's: its consumer's database, a duplicate on the broker's
	// link, a node of system A, a crash of the service's database.
	crashAtConsumerDB := write("crash-at-consumer-db.json", `[{"at":0,"kind":"crash-at","node":"consumer-db","point":"db/commit","count":1}]`)
	pauseConsumerDB := write("pause-consumer-db.json", `[{"at":1000000000,"kind":"pause","node":"consumer-db"}]`)
	dupBroker := write("dup-broker.json", `[{"at":1000000000,"kind":"dup","node":"broker","peer":"consumer","rate":500,"for":2000000000}]`)
	crashHome := write("crash-home.json", `[{"at":1000000000,"kind":"crash","node":"home-1"}]`)
	crashDB := write("crash-db.json", `[{"at":1000000000,"kind":"crash","node":"db"}]`)
	// A port the arbiter's world would take: the sixth of six from first.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	inUse := ln.Addr().(*net.TCPAddr).Port
	first := max(inUse-5, 1024)
	firstOutbox := max(inUse-6, 1024) // system B's world has seven nodes

	cases := []struct {
		name string
		args []string
		want string // in the one line on stderr
	}{
		{"pg pointing at nothing", []string{"--pg", "postgres://postgres@127.0.0.1:1/x"}, "--pg postgres://postgres@127.0.0.1:1/x: cannot connect: failed to connect to `user=postgres database=x`: 127.0.0.1:1 (127.0.0.1): dial error: dial tcp 127.0.0.1:1: connect: connection refused\n"},
		// The range holds inUse; another of its ports may be taken by
		// another process meanwhile (the ephemeral range is shared), so the
		// port the error names is any of the range's.
		{"a port in use", []string{"--ports", strconv.Itoa(first)}, " is in use (the nodes need 6 ports from " + strconv.Itoa(first) + ")"},
		{"a clock jump", []string{"--schedule", jump}, "the live world cannot move a node's clock"},
		{"a crash-at of the database", []string{"--schedule", crashAtDB}, "the live world cannot stop PostgreSQL at a named point"},
		{"a drawn world", []string{"--world", "wide"}, "--world: a live run's world is the design's own fleet"},
		{"a system without a live world", []string{"--system", "toy"}, "--system toy: no live world (live runs: arbiter, outbox, twopc)"},
		{"outbox: a port in use", []string{"--system", "outbox", "--ports", strconv.Itoa(firstOutbox)}, " is in use (the nodes need 7 ports from " + strconv.Itoa(firstOutbox) + ")"},
		{"outbox: a crash-at of the consumer's database", []string{"--system", "outbox", "--schedule", crashAtConsumerDB}, "crash-at consumer-db point=db/commit: the live world cannot stop PostgreSQL at a named point"},
		{"outbox: a pause of the consumer's database", []string{"--system", "outbox", "--schedule", pauseConsumerDB}, "pause consumer-db: pausing the database is not supported live"},
		{"outbox: a duplicate on the broker's link", []string{"--system", "outbox", "--schedule", dupBroker}, "TCP does not duplicate a message"},
		{"outbox: a node of another world", []string{"--system", "outbox", "--schedule", crashHome}, `node "home-1" is not a node of this world`},
		{"outbox: a database crash on --pg", []string{"--system", "outbox", "--pg", "postgres://postgres@127.0.0.1:1/x", "--schedule", crashDB}, "crash db: crashing the database needs the run's own server: drop --pg"},
		{"outbox: no handler", []string{"--system", "outbox", "--set", "handlers=0"}, "parameter handlers = 0 is below its minimum 1"},
		{"outbox: submissions", []string{"--system", "outbox", "--submissions", "5"}, "--submissions is for --system arbiter only: the outbox world has no submissions"},
		{"outbox: a table", []string{"--system", "outbox", "--table"}, "--table is for --system twopc"},
		{"every system", []string{"--system", "arbiter,twopc"}, "live runs one system"},
		{"an empty system", []string{"--system", ""}, "--system is empty"},
		{"no submissions", []string{"--submissions", "0"}, "--submissions 0: give a positive count"},
		{"negative submissions", []string{"--submissions", "-3"}, "--submissions -3: give a positive count"},
		{"transactions after the run's end", []string{"--system", "twopc", "--set", "txns=8", "--duration", "3s"}, "--duration 3s: the design asks for its last transaction (x8 of 8) at 7.1s"},
		{"submissions of twopc", []string{"--system", "twopc", "--submissions", "5"}, "--submissions is for --system arbiter only"},
		{"a port below 1024", []string{"--ports", "80"}, "--ports 80: give a port between 1024 and 65000"},
		{"ports zero", []string{"--ports", "0"}, "--ports 0: give a port between 1024 and 65000"},
		{"a table of flags it ignores", []string{"--system", "twopc", "--table", "--duration", "5s", "--set", "stock=3"}, "--table plays C.1's five crash positions with the default design, each its own schedule and length: it does not use --duration, --set; drop them"},
		{"a table on one server", []string{"--system", "twopc", "--table", "--pg", "postgres://postgres@127.0.0.1:1/x"}, "--pg: the participants prepare the same gid"},
		{"a table on servers pointing at nothing", []string{"--system", "twopc", "--table", "--pg", "postgres://postgres@127.0.0.1:1/x,postgres://postgres@127.0.0.1:2/y"}, "--pg postgres://postgres@127.0.0.1:1/x: cannot connect"},
		{"a duration that is not one", []string{"--duration", "soon"}, `invalid value "soon" for flag -duration`},
		{"a negative duration", []string{"--duration", "-5s"}, "--duration -5s: give a positive duration"},
		{"a duration of a nanosecond", []string{"--duration", "1ns"}, "--duration 1ns: a live run lasts at least 1s"},
		{"a duration under a second", []string{"--duration", "999ms"}, "--duration 999ms: a live run lasts at least 1s"},
		{"a schedule that is not JSON", []string{"--schedule", notJSON}, "not a JSON list of fault actions"},
		{"a missing schedule", []string{"--schedule", filepath.Join(dir, "missing.json")}, "--schedule " + filepath.Join(dir, "missing.json") + ": no such file"},
		{"an argument", []string{"arbiter"}, `unexpected argument "arbiter"`},
	}
	before := listing(t, dir)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := run(t, append([]string{"live", "--out", out}, c.args...)...)
			assert.Equal(t, exitUsage, code, "exit code; stderr: %s", stderr)
			assert.Contains(t, stderr, c.want)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line on stderr, got %q", stderr)
			assert.Empty(t, stdout, "nothing on stdout")
			assert.Equal(t, before, listing(t, dir), "nothing written")
			assert.Empty(t, liveLeftovers(t, out), "no process left running")
		})
	}
}

// liveLeftovers lists what a live run under out left running: node
// processes (a command line `... node --config FILE` with FILE under out),
// and throw-away PostgreSQL servers whose state (scripts/pg.sh's env file
// under a run directory's pg-N) names a data directory with a live
// postmaster.
func liveLeftovers(t *testing.T, out string) []string {
	t.Helper()
	var left []string
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	require.NoError(t, err)
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		for i := 0; i+2 < len(args); i++ {
			if strings.Contains(args[0], "fencesim") && args[i+1] == "node" && args[i+2] == "--config" && i+3 < len(args) &&
				strings.HasPrefix(args[i+3], out+string(filepath.Separator)) {
				left = append(left, "node process "+filepath.Base(filepath.Dir(p))+": "+strings.Join(args, " "))
				break
			}
		}
	}
	envs, err := filepath.Glob(filepath.Join(out, "live-*", "pg-*", "env"))
	require.NoError(t, err)
	for _, env := range envs {
		data := pgData(t, env)
		pid := postmaster(filepath.Join(data, "postmaster.pid"))
		if pid > 0 && alive(pid) {
			left = append(left, "PostgreSQL of "+env+": postmaster "+strconv.Itoa(pid)+" runs on "+data)
		}
	}
	return left
}

// pgData reads FENCESIM_PG_DATA from a scripts/pg.sh state file.
func pgData(t *testing.T, env string) string {
	t.Helper()
	f, err := os.Open(env)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "FENCESIM_PG_DATA="); ok {
			return strings.Trim(v, `'"`)
		}
	}
	t.Fatalf("%s: no FENCESIM_PG_DATA line", env)
	return ""
}

// postmaster is the pid on postmaster.pid's first line (0: none).
func postmaster(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	return pid
}

// alive reports whether a process runs (a zombie does not count).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// requireServerInstalled skips a test that has fencesim live start its own
// PostgreSQL (scripts/pg.sh start) when no server is installed, that is
// when `bash scripts/pg.sh install` would be needed; with CI=true that is a
// failure, as for pgtest.Require. scripts/pg.sh looks for the server where
// this does: FENCESIM_PG_BIN, else /usr/lib/postgresql/*/bin.
func requireServerInstalled(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: a live run takes real seconds")
	}
	bin := os.Getenv("FENCESIM_PG_BIN")
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if bin != "" {
		_, err := os.Stat(filepath.Join(bin, "initdb"))
		found = nil
		if err == nil {
			found = []string{bin}
		}
	}
	if len(found) > 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no PostgreSQL server installed, and CI=true: CI must install it with `bash scripts/pg.sh install`")
	}
	t.Skip("no PostgreSQL server installed: `bash scripts/pg.sh install` installs one")
}

// TestLiveRun runs fencesim live for real, twice (about 55 s in all): the
// default schedule's kill, pause, stall and broken connection with every
// property holding; then the PA1 demonstration of docs/live.md, a link
// stalled past the lease under fence-by-worker-id, failing PA1. Each run
// starts its own PostgreSQL with scripts/pg.sh and leaves nothing running.
// The nodes are child processes of the binary (os.Executable), so the test
// builds one.
func TestLiveRun(t *testing.T) {
	requireServerInstalled(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "fencesim")
	build := exec.Command("go", "build", "-o", bin, "./cmd/fencesim")
	build.Dir = root
	b, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", b)

	live := func(t *testing.T, out string, args ...string) (int, string) {
		t.Helper()
		t.Cleanup(func() {
			if t.Failed() {
				logs, _ := filepath.Glob(filepath.Join(out, "live-*", "*.log"))
				for _, l := range logs {
					if b, err := os.ReadFile(l); err == nil && len(b) > 0 {
						t.Logf("%s:\n%s", l, b)
					}
				}
			}
		})
		cmd := exec.Command(bin, append([]string{"live", "--system", "arbiter", "--out", out}, args...)...)
		cmd.Dir = root // scripts/pg.sh, docs/live-stale.json
		var o bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &o
		start := time.Now()
		err := cmd.Run()
		t.Logf("fencesim live %s: %s", strings.Join(args, " "), time.Since(start).Round(time.Second))
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		assert.Empty(t, liveLeftovers(t, out), "nothing left running after the run")
		return code, o.String()
	}

	t.Run("default schedule", func(t *testing.T) {
		out := filepath.Join(tmp, "default")
		code, o := live(t, out, "--duration", "20s")
		require.Equal(t, exitOK, code, "every property holds:\n%s", o)
		assert.Regexp(t, `(?m)^faults injected \(7\):$`, o)
		for _, f := range []string{"crash home-1", "restart home-1", "pause prod-1", "resume prod-1", "stall home-2->arbiter-1 for=3s", "break arbiter-1->db", "heal-all"} {
			assert.Contains(t, o, f, "the faults injected name %s", f)
		}
		assert.Regexp(t, `(?m)^operations checked: [1-9]\d* calls, [1-9]\d* returns, [1-9]\d* commits; \d+ events in all$`, o)
		assert.Regexp(t, `(?m)^arbiter live 20s \(design: the live short parameters \(docs/live-arbiter.json\)\): every property held \(\d+\)$`, o)
		trace := regexp.MustCompile(`(?m)^trace: (.*)$`).FindStringSubmatch(o)
		require.NotNil(t, trace, o)
		code, stdout, stderr := run(t, "report", "--out", filepath.Join(tmp, "again.html"), trace[1])
		assert.Equal(t, exitOK, code, "report judges the live trace as live did: %s%s", stdout, stderr)
	})

	t.Run("PA1 demo", func(t *testing.T) {
		out := filepath.Join(tmp, "stale")
		// --ports: the flag's path (the default run takes the free ports
		// fencesim live picks below the kernel's ephemeral range).
		code, o := live(t, out, "--ports", strconv.Itoa(freePorts(t, 6)), "--duration", "30s", "--knob", "fence-by-worker-id", "--submissions", "1",
			"--set", "home_workers=1", "--set", "prod_workers=0", "--set", "judge_min=3s", "--set", "judge_max=3s",
			"--schedule", "docs/live-stale.json")
		require.Equal(t, exitFail, code, "a property fails:\n%s", o)
		assert.Contains(t, o, "stall home-1->arbiter-1 for=10.5s")
		assert.Regexp(t, `(?m)^  PA1 at-most-one-owner: FAILED: `, o)
		page := regexp.MustCompile(`(?m)^report: (.*)$`).FindStringSubmatch(o)
		require.NotNil(t, page, o)
		html := readFile(t, page[1])
		h1 := regexp.MustCompile(`<h1>[^<]*</h1>`).FindString(html)
		assert.Regexp(t, `^<h1>arbiter live 30s \(design: [^<]*knobs fence-by-worker-id[^<]*\): PA1[^<]* failed</h1>$`, h1, "the page's title")
		assert.True(t, strings.Contains(html, `<header class="top fail">`), "the page says FAIL")
		assert.True(t, strings.Contains(html, `<div class="prop">PA1 at-most-one-owner</div>`), "the page shows PA1's violation")
		// The report opens: headless Chromium draws it without a script
		// error, the violation and its story on it.
		chrome := browsertest.Chromium(t)
		dom, stderr, err := browsertest.Browse(chrome, page[1], "--dump-dom")
		require.NoError(t, err)
		assert.Empty(t, browsertest.ConsoleErrors(stderr), "no console errors")
		assert.Empty(t, browsertest.PageErrors(t, dom), "no page errors")
		drawn := browsertest.Rendered(t, dom)
		assert.Positive(t, drawn["violation"], "the violation is drawn: %v", drawn)
		assert.Positive(t, drawn["marks"], "the events are drawn: %v", drawn)
	})
}

// freePorts is the first of n consecutive ports in 10000-19999 that are
// free now.
func freePorts(t *testing.T, n int) int {
	t.Helper()
	for base := 10000 + int(time.Now().UnixNano()%9000); ; base += n {
		if base+n > 20000 {
			base = 10000
		}
		ok := true
		for p := base; p < base+n && ok; p++ {
			ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if ok = err == nil; ok {
				ln.Close()
			}
		}
		if ok {
			return base
		}
	}
}

// TestLiveInterrupted: SIGINT while a live run starts its servers, or
// while live --table runs its positions, stops it with exit 130 and one
// line, and leaves no server running. scripts/pg.sh start was killed with
// the run's context: a server pg_ctl had started before the script wrote
// its state file was left running (nothing knew to stop it), and the
// command exited 2 naming the killed script, or, for --table, naming a
// --pg the user never gave ("cannot connect: ... operation was canceled").
func TestLiveInterrupted(t *testing.T) {
	requireServerInstalled(t)
	for _, c := range []struct {
		name  string
		after time.Duration
		args  []string
	}{
		{"while the server starts", 300 * time.Millisecond, []string{"--system", "arbiter", "--duration", "5s"}},
		{"while the server is up", 900 * time.Millisecond, []string{"--system", "arbiter", "--duration", "5s"}},
		{"table while the servers start", time.Second, []string{"--system", "twopc", "--table"}},
		{"table between positions", 6 * time.Second, []string{"--system", "twopc", "--table"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cmd, stdout, stderr := fencesim(t, append([]string{"live", "--out", out}, c.args...)...)
			go io.Copy(io.Discard, stdout)
			time.Sleep(c.after)
			require.NoError(t, cmd.Process.Signal(os.Interrupt))
			code := exited(t, cmd, time.Minute)
			assert.Equal(t, exitInterrupted, code, "stderr: %s", stderr)
			assert.Contains(t, stderr.String(), "interrupted")
			assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "one line: %q", stderr)
			assert.Empty(t, liveLeftovers(t, out), "nothing left running")
			assert.Empty(t, serversOf(t, out), "no PostgreSQL server of the run left running")
		})
	}
}

// serversOf lists the PostgreSQL servers that scripts/pg.sh started for a
// run under out and that still run: a postmaster's environment holds the
// FENCESIM_PG_STATE the run gave the script, even when the script was
// stopped before it recorded the server.
func serversOf(t *testing.T, out string) []string {
	t.Helper()
	var left []string
	procs, err := filepath.Glob("/proc/[0-9]*/environ")
	require.NoError(t, err)
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone, or not ours to read
		}
		for _, kv := range strings.Split(string(b), "\x00") {
			if v, ok := strings.CutPrefix(kv, "FENCESIM_PG_STATE="); ok && strings.HasPrefix(v, out+string(filepath.Separator)) {
				cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
				if pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p))); alive(pid) {
					left = append(left, strings.ReplaceAll(string(cmdline), "\x00", " "))
				}
			}
		}
	}
	return left
}

// TestLiveTwoPCOnAServerThatCannotPrepare: a --pg server with
// max_prepared_transactions = 0 (PostgreSQL's default) refuses every
// PREPARE TRANSACTION: each transaction aborted, nothing committed, and
// the run said every property held (exit 0). It is bad input: one line,
// exit 2, nothing started.
func TestLiveTwoPCOnAServerThatCannotPrepare(t *testing.T) {
	requireServerInstalled(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	pg := func(state string, env []string, args ...string) string {
		cmd := exec.Command("bash", append([]string{filepath.Join(root, "scripts", "pg.sh")}, args...)...)
		cmd.Env = append(append(os.Environ(), "FENCESIM_PG_STATE="+state), env...)
		b, err := cmd.Output()
		require.NoError(t, err, "pg.sh %v", args)
		return string(b)
	}
	var urls []string
	for i := 0; i < 2; i++ {
		state := filepath.Join(t.TempDir(), "pg")
		out := pg(state, nil, "start")
		t.Cleanup(func() { pg(state, nil, "stop") })
		_, v, _ := strings.Cut(strings.TrimSpace(out), "=")
		urls = append(urls, strings.Trim(v, `'"`))
		if i == 1 {
			// The second as PostgreSQL's default has it.
			pg(state, nil, "psql", "-q", "-c", "ALTER SYSTEM SET max_prepared_transactions = 0")
			pg(state, nil, "restart")
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	// A process of its own (FENCESIM_TEST_MAIN): without the check, its
	// nodes run (this binary, as fencesim node) and the run is judged.
	cmd, stdout, stderr := fencesim(t, "live", "--system", "twopc", "--duration", "3s", "--out", out, "--pg", strings.Join(urls, ","))
	o, _ := io.ReadAll(stdout)
	code := exited(t, cmd, time.Minute)
	assert.Equal(t, exitUsage, code, "stdout: %s\nstderr: %s", o, stderr)
	assert.Contains(t, stderr.String(), "the server of inventory allows 0 prepared transactions (max_prepared_transactions), the design 10 (max_prepared)")
	assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "one line: %q", stderr)
	assert.Empty(t, string(o))
	assert.NoDirExists(t, out, "nothing written")
}
