package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/internal/summary"
	"github.com/fencesim/fencesim/internal/systems"
	"github.com/fencesim/fencesim/traces"
)

// run runs the command line in-process.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = Main(args, &o, &e)
	return code, o.String(), e.String()
}

// listing lists every file under dir, for "nothing was written" checks.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		out = append(out, p)
		return nil
	}))
	sort.Strings(out)
	return out
}

// TestBadInput: each bad usage or input gives one line on stderr naming the
// problem, nothing on stdout, exit 2, and writes nothing.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	file := filepath.Join(dir, "a-file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))

	// A good trace to break.
	good := filepath.Join(dir, "good.jsonl")
	code, _, stderr := run(t, "explore", "--system", "twopc", "--knob", "timeout-abort", "--seeds", "1", "--artifacts", "1", "--out", dir, "--json")
	require.Equal(t, exitFail, code, stderr)
	require.NoError(t, os.Rename(filepath.Join(dir, "twopc-seed-1.jsonl"), good))
	for _, f := range []string{"twopc-seed-1-minimized.jsonl", "twopc-seed-1-schedule.txt", "twopc-seed-1-report.html"} {
		require.NoError(t, os.Remove(filepath.Join(dir, f)))
	}
	code, stdout, stderr := run(t, "replay", good)
	require.Equal(t, exitFail, code, "the trace fails a property; %s", stderr)
	require.True(t, strings.HasPrefix(stdout, "identical\n"), stdout)
	lines := strings.SplitAfter(readFile(t, good), "\n")
	require.Greater(t, len(lines), 20)
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	corrupt := write("corrupt.jsonl", strings.Join(lines[:3], "")+"{not json\n"+strings.Join(lines[4:], ""))
	cut := write("cut.jsonl", strings.Join(lines[:10], "")+lines[10][:len(lines[10])/2])
	short := write("short.jsonl", strings.Join(lines[:10], ""))
	empty := write("empty.jsonl", "")
	notTrace := write("header.jsonl", `{"format":"something-else/1","system":"twopc","seed":1,"entropy":"pcg"}`+"\n")
	otherSystem := write("system.jsonl", strings.Replace(lines[0], `"system":"twopc"`, `"system":"nosuch"`, 1))
	var header struct{ Schedule json.RawMessage }
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &header))
	twopcSchedule := write("twopc-schedule.json", string(header.Schedule))
	summary := write("summary.json", `{"format":"fencesim-summary/1","command":"explore","faults":"moderate","seeds":"1-10","shard":"0/2"}`)
	summary2 := write("summary2.json", `{"format":"fencesim-summary/1","command":"explore","faults":"heavy","seeds":"1-10","shard":"1/2"}`)
	null := write("null.json", "null\n")
	third0 := write("third0.json", `{"format":"fencesim-summary/1","command":"explore","faults":"moderate","seeds":"1-10","shard":"0/3"}`)
	third2 := write("third2.json", `{"format":"fencesim-summary/1","command":"explore","faults":"moderate","seeds":"1-10","shard":"2/3"}`)

	cases := []struct {
		name string
		args []string
		want string // in the one line on stderr
	}{
		{"no command", nil, "fencesim: no command (commands: explore, run, "},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"unknown flag", []string{"explore", "--bogus"}, "flag provided but not defined: -bogus"},
		{"unknown system", []string{"explore", "--system", "nosuch"}, `unknown system "nosuch"`},
		{"unknown knob", []string{"explore", "--system", "arbiter", "--knob", "no-such-knob", "--out", out}, `unknown knob "no-such-knob"`},
		{"unknown knob, no system", []string{"explore", "--knob", "no-such-knob", "--out", out}, `unknown knob "no-such-knob" (the knobs of arbiter: `},
		{"knob of another system", []string{"explore", "--system", "outbox", "--knob", "fence-by-worker-id", "--out", out}, "fence-by-worker-id is a knob of arbiter"},
		{"unknown parameter", []string{"explore", "--system", "arbiter", "--set", "leese=90s", "--out", out}, `unknown parameter "leese"`},
		{"bad value", []string{"explore", "--system", "arbiter", "--set", "lease=ninety", "--out", out}, `"ninety" is not a duration`},
		{"malformed set", []string{"explore", "--system", "arbiter", "--set", "lease", "--out", out}, "want name=value"},
		{"set without system", []string{"explore", "--set", "lease=90s", "--out", out}, "need --system"},
		{"malformed shard", []string{"explore", "--shard", "4/4", "--out", out}, `--shard "4/4"`},
		{"malformed shard text", []string{"explore", "--shard", "x", "--out", out}, `--shard "x"`},
		{"zero shards", []string{"explore", "--shard", "0/0", "--out", out}, `--shard "0/0"`},
		{"bad seeds", []string{"explore", "--seeds", "9-3", "--out", out}, `--seeds "9-3"`},
		{"seeds and runs", []string{"explore", "--seeds", "1-3", "--runs", "5", "--out", out}, "--seeds is a range"},
		{"bad faults", []string{"explore", "--faults", "extreme", "--out", out}, `unknown fault intensity "extreme"`},
		{"unwritable out", []string{"explore", "--system", "twopc", "--out", filepath.Join(file, "out")}, "not a directory"},
		{"out is a file", []string{"explore", "--system", "twopc", "--out", file}, "is not a directory"},
		{"unwritable summary", []string{"explore", "--system", "twopc", "--out", out, "--summary-out", filepath.Join(dir, "missing", "s.json")}, "--summary-out"},
		{"missing design file", []string{"explore", "--system", "arbiter", "--design", filepath.Join(dir, "missing.json"), "--out", out}, "--design"},
		{"bad design file", []string{"explore", "--system", "arbiter", "--design", file, "--out", out}, "--design"},
		{"replay without file", []string{"replay"}, "want one trace FILE"},
		{"replay missing file", []string{"replay", filepath.Join(dir, "missing.jsonl")}, "no such file"},
		{"corrupt trace", []string{"replay", corrupt}, "trace line 4: expected a JSON event object"},
		{"truncated trace", []string{"replay", cut}, "trace line 11: expected a JSON event object"},
		{"trace cut at a line", []string{"replay", short}, "trace line 11: expected event #10"},
		{"empty trace", []string{"replay", empty}, "trace line 1: file is empty"},
		{"not a trace", []string{"replay", notTrace}, "trace line 1: format"},
		{"trace of no system", []string{"replay", otherSystem}, `trace line 1: unknown system "nosuch"`},
		{"cpuprofile in a missing directory", []string{"explore", "--system", "twopc", "--out", out, "--cpuprofile", filepath.Join(dir, "missing", "cpu.prof")}, "--cpuprofile"},
		{"memprofile is a directory", []string{"explore", "--system", "twopc", "--out", out, "--memprofile", dir}, "--memprofile " + dir + ": is a directory"},
		{"one file for both profiles", []string{"explore", "--system", "twopc", "--out", out, "--cpuprofile", filepath.Join(dir, "p"), "--memprofile", filepath.Join(dir, "p")}, "--cpuprofile and --memprofile name the same path"},
		{"per-seed where the artifacts go", []string{"explore", "--system", "twopc", "--out", out, "--per-seed", out}, "--out and --per-seed name the same path"},
		{"report over its trace", []string{"report", "--out", corrupt, corrupt}, "is the trace itself"},
		{"merge over an input", []string{"merge", "--summary-out", file, file}, "is one of the summaries to merge"},
		{"audit not a number", []string{"explore", "--audit", "NaN", "--out", out}, "--audit NaN"},
		{"keep-worst one metric twice", []string{"explore", "--system", "arbiter", "--runs", "2", "--keep-worst", "MA1=3", "--keep-worst", "extra_latency=2", "--out", out}, `--keep-worst "MA1=3" and "extra_latency=2" both keep runs by extra_latency (MA1): give each metric once`},
		{"fail-on one bound twice", []string{"compare", "--system", "arbiter", "--runs", "2", "--set", "confirm_aware_grace=true", "--fail-on", "MA2=+10%", "--fail-on", "MA2=+20%"}, `--fail-on "MA2=+10%" and "MA2=+20%" both bound the mean of wasted_judgings (MA2) on a rise: give each bound once`},
		{"negative artifacts", []string{"explore", "--artifacts", "-1", "--out", out}, "--artifacts -1"},
		{"zero minimize budget", []string{"explore", "--minimize-budget", "0", "--out", out}, "--minimize-budget 0"},
		{"runs past the last seed", []string{"explore", "--first", "18446744073709551615", "--runs", "2", "--out", out}, "--runs 2 from --first 18446744073709551615"},
		{"time and runs", []string{"explore", "--time", "10s", "--runs", "5", "--out", out}, "--time is a budget"},
		{"negative time", []string{"explore", "--time", "-1s", "--out", out}, "--time -1s"},
		{"mutants bad workers", []string{"mutants", "--workers", "0"}, "--workers 0"},
		{"explore too many workers", []string{"explore", "--workers", "99999999999999"}, "--workers 99999999999999: want 1 to 1024"},
		{"baseline seeds past 2^64", []string{"baseline", "--first", "18446744073709551615", "--runs", "2"}, "below 2^63"},
		{"baseline too many workers", []string{"baseline", "--workers", "1025", "--runs", "1"}, "--workers 1025: want 1 to 1024"},
		{"mutants budget past the last seed", []string{"mutants", "--first", "18446744073709551615", "--budget", "2"}, "--budget 2 from --first 18446744073709551615"},
		{"compare bad workers", []string{"compare", "--system", "arbiter", "--set", "confirm_aware_grace=true", "--workers", "-1"}, "--workers -1"},
		{"mutants bad budget", []string{"mutants", "--budget", "-3"}, "--budget -3"},
		{"mutants unknown knob", []string{"mutants", "--knob", "nope"}, `unknown knob "nope" (the knobs of arbiter: fence-by-worker-id, `},
		{"mutants unknown knob of a system", []string{"mutants", "--system", "twopc", "--knob", "nope"}, `unknown knob "nope" (twopc's knobs: commit-before-log, timeout-abort, log-not-durable, presume-commit-on-no-record; fencesim knobs describes them)`},
		{"mutants knob of another system", []string{"mutants", "--system", "twopc", "--knob", "fence-by-worker-id"}, "--knob fence-by-worker-id is a knob of arbiter, not of --system twopc (twopc's knobs: "},
		{"mutants set of another system", []string{"mutants", "--set", "claim_batch=2"}, `--set for outbox: unknown parameter "claim_batch"`},
		{"mutants bad set", []string{"mutants", "--system", "arbiter", "--set", "claim_batch=0"}, "claim_batch"},
		{"compare without change", []string{"compare", "--system", "arbiter"}, "nothing to compare"},
		{"scenarios unknown system", []string{"scenarios", "--system", "nosuch"}, `unknown system "nosuch"`},
		{"run without seed", []string{"run", "--system", "twopc", "--out", out}, "--seed N is missing"},
		{"run of every system", []string{"run", "--seed", "1", "--out", out}, "run plays one system"},
		{"run unknown knob", []string{"run", "--system", "arbiter", "--knob", "nope", "--seed", "1", "--out", out}, `unknown knob "nope"`},
		{"run out is a file", []string{"run", "--system", "twopc", "--seed", "1", "--out", file}, "is not a directory"},
		{"report without file", []string{"report"}, "want one trace FILE"},
		{"report missing file", []string{"report", filepath.Join(dir, "missing.jsonl")}, "no such file"},
		{"report of a non-trace", []string{"report", file}, "trace line 1: expected a JSON header object"},
		{"report of a corrupt trace", []string{"report", corrupt}, "trace line 4"},
		{"knobs unknown system", []string{"knobs", "--system", "nosuch"}, `unknown system "nosuch"`},
		{"params argument", []string{"params", "lease"}, `unexpected argument "lease"`},
		{"version argument", []string{"version", "x"}, `unexpected argument "x"`},
		{"merge nothing", []string{"merge"}, "want one or more summary FILEs"},
		{"merge not a summary", []string{"merge", file}, "not a fencesim summary"},
		{"merge mismatched", []string{"merge", summary, summary2}, "not shards of one run"},
		{"merge twice", []string{"merge", summary, summary}, "shard 0/2 is given twice"},
		{"empty system", []string{"explore", "--system", "", "--out", out}, "--system is empty: name a system"},
		{"blank system", []string{"explore", "--system", " ", "--out", out}, "--system is empty"},
		{"run of an empty system", []string{"run", "--system", "", "--seed", "1", "--out", out}, "--system is empty"},
		{"compare of an empty system", []string{"compare", "--system", "", "--set", "lease=90s"}, "--system is empty"},
		{"scenarios of an empty system", []string{"scenarios", "--system", ""}, "--system is empty"},
		{"world of twopc", []string{"explore", "--system", "twopc", "--world", "wide", "--out", out}, "--world wide: twopc draws no worlds (--world is for arbiter)"},
		{"world of outbox and twopc", []string{"explore", "--system", "outbox,twopc", "--world", "fixed", "--out", out}, "outbox and twopc draw no worlds"},
		{"unknown world of twopc", []string{"explore", "--system", "twopc", "--world", "nonsense", "--out", out}, "twopc draws no worlds"},
		{"run world of outbox", []string{"run", "--system", "outbox", "--world", "fixed", "--seed", "1", "--out", out}, "outbox draws no worlds"},
		{"world of a knob's system", []string{"run", "--knob", "timeout-abort", "--world", "fixed", "--seed", "1", "--out", out}, "twopc draws no worlds"},
		{"system twice", []string{"explore", "--system", "arbiter,twopc,arbiter", "--out", out}, "names arbiter twice"},
		{"set twice", []string{"explore", "--system", "arbiter", "--set", "lease=90s", "--set", "lease=80s", "--out", out}, "--set lease is given twice (lease=90s, lease=80s)"},
		{"same set twice", []string{"run", "--system", "arbiter", "--set", "lease=90s", "--set", " lease=90s", "--seed", "1", "--out", out}, "--set lease is given twice"},
		{"knob twice", []string{"explore", "--system", "arbiter", "--knob", "no-grace", "--knob", "no-grace", "--out", out}, "--knob no-grace is given twice"},
		{"mutants set twice", []string{"mutants", "--system", "arbiter", "--set", "claim_batch=2", "--set", "claim_batch=3"}, "--set claim_batch is given twice"},
		{"mutants knob twice", []string{"mutants", "--knob", "no-grace", "--knob", "no-grace"}, "--knob no-grace is given twice"},
		{"seed twice", []string{"explore", "--seeds", "1,1", "--out", out}, `--seeds "1,1": seed 1 is given twice`},
		{"seed ranges overlapping", []string{"explore", "--seeds", "1-3,2-4", "--out", out}, "seed 2 is given twice (in 1-3 and 2-4)"},
		{"exhaustive with seeds", []string{"explore", "--exhaustive", "--runs", "5", "--faults", "heavy"}, "--exhaustive does not use --faults, --runs: drop them"},
		{"exhaustive with a seed range", []string{"explore", "--exhaustive", "--seeds", "1-9"}, "--exhaustive does not use --seeds: drop it"},
		{"exhaustive with outputs", []string{"explore", "--exhaustive", "--system", "arbiter", "--json", "--out", out, "--summary-out", filepath.Join(dir, "s.json")}, "--exhaustive does not use --json, --out, --summary-out"},
		{"exhaustive with a world", []string{"explore", "--exhaustive", "--world", "fixed"}, "--exhaustive does not use --world"},
		{"pairs without exhaustive", []string{"explore", "--system", "twopc", "--pairs", "5", "--out", out}, "--pairs bounds the fault pairs of --exhaustive: add --exhaustive"},
		{"minimize budget without artifacts", []string{"explore", "--system", "twopc", "--artifacts", "0", "--minimize-budget", "5"}, "--minimize-budget bounds the minimization of the failures --artifacts writes"},
		{"run minimize budget without minimize", []string{"run", "--system", "twopc", "--seed", "1", "--minimize-budget", "5", "--out", out}, "--minimize-budget bounds --minimize: add --minimize ID"},
		{"mutants searches without search", []string{"mutants", "--searches", "3"}, "--searches is how many directed searches --search directed makes"},
		{"mutants minimize budget of searches", []string{"mutants", "--search", "directed", "--budget", "5", "--minimize-budget", "3"}, "--search directed minimizes nothing"},
		{"diff search seed unfocused", []string{"diff", "--focus=false", "--search-seed", "3"}, "--search-seed is the seed of --focus's directed search, and --focus=false turns it off"},
		{"diff search seed of a shard", []string{"diff", "--shard", "0/2", "--search-seed", "3"}, "does not go with --shard, --steer or a --seeds list"},
		{"run schedule of another system's trace", []string{"run", "--system", "outbox", "--seed", "1", "--schedule", good, "--out", out}, "--schedule " + good + ": a trace of twopc, not of outbox"},
		{"run schedule of another system", []string{"run", "--system", "outbox", "--seed", "1", "--schedule", twopcSchedule, "--out", out}, "is not a node of this world"},
		{"run schedule of another world", []string{"run", "--system", "arbiter", "--seed", "1", "--schedule", twopcSchedule, "--out", out}, "not a schedule of arbiter seed 1's world"},
		{"merge a shard missing", []string{"merge", third0, third2}, "shard 1/3 missing: the summaries given cover only part of the run's seeds; pass every shard's summary (or --partial"},
		{"merge shards missing", []string{"merge", "--summary-out", filepath.Join(dir, "merged.json"), third2}, "shards 0/3, 1/3 missing"},
		{"design not JSON", []string{"explore", "--system", "arbiter", "--design", file, "--out", out}, "--design " + file + ": not a JSON object (line 1: invalid character 'x' looking for beginning of value): want the arbiter design's parameters as a JSON object, as a trace header's \"design\" holds them"},
		{"design null", []string{"run", "--system", "twopc", "--seed", "1", "--design", null, "--out", out}, "--design " + null + ": not a JSON object (null): want the twopc design's parameters"},
		{"design a summary", []string{"explore", "--system", "arbiter", "--design", summary, "--out", out}, `json: unknown field "format": want the arbiter design's parameters as a JSON object`},
		{"design a trace", []string{"explore", "--system", "twopc", "--design", good, "--out", out}, "--design " + good + ": not a JSON object (line 2: invalid character"},
		{"baseline not JSON", []string{"compare", "--system", "arbiter", "--set", "lease=90s", "--baseline", file}, "--baseline " + file + ": not a JSON object (line 1: invalid character 'x'"},
		{"baseline a summary", []string{"compare", "--system", "arbiter", "--set", "lease=90s", "--baseline", summary}, `json: unknown field "format": want the arbiter design's parameters`},
		{"node config not JSON", []string{"node", "--config", file}, "--config " + file + ": not a node's configuration (line 1: invalid character 'x' looking for beginning of value): want the JSON file fencesim live writes for each node"},
		{"node config a summary", []string{"node", "--config", summary}, `not a node's configuration (json: unknown field "format")`},
		{"node config null", []string{"node", "--config", null}, "not a node's configuration (no system or node name)"},
		{"node without config", []string{"node"}, "--config FILE is missing"},
		{"replay a summary", []string{"replay", summary}, summary + ": a summary (fencesim-summary/1, what --summary-out writes; fencesim merge reads it), not a trace: want a trace, the JSON Lines file (.jsonl)"},
		{"report a summary", []string{"report", summary}, summary + ": a summary (fencesim-summary/1"},
		{"replay not JSON", []string{"replay", file}, "trace line 1: expected a JSON header object: invalid character 'x' looking for beginning of value: want a trace"},
		{"seed in a range", []string{"compare", "--system", "arbiter", "--set", "lease=90s", "--seeds", "9,2-10"}, "seed 9 is given twice (in 2-10 and 9)"},
	}
	before := listing(t, dir)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := run(t, c.args...)
			assert.Equal(t, exitUsage, code, "exit code; stderr: %s", stderr)
			assert.Contains(t, stderr, c.want)
			assert.Empty(t, stdout, "nothing on stdout")
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line on stderr, got %q", stderr)
			assert.Equal(t, before, listing(t, dir), "nothing written")
		})
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// TestHelp: -h and --help on every command print its usage and exit 0.
func TestHelp(t *testing.T) {
	for _, c := range commands() {
		for _, h := range []string{"-h", "--help"} {
			code, stdout, _ := run(t, c.name, h)
			assert.Equal(t, exitOK, code)
			assert.Contains(t, stdout, "Usage: fencesim "+c.name)
		}
	}
	for _, h := range []string{"--help", "-h", "help"} {
		code, stdout, _ := run(t, h)
		assert.Equal(t, exitOK, code)
		assert.Contains(t, stdout, "Usage: fencesim <command> [flags]")
		for _, c := range commands() {
			assert.Contains(t, stdout, c.name)
		}
	}
	code, stdout, _ := run(t, "help", "explore")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "-shard i/n")
	for _, c := range []string{"explore", "compare", "mutants"} {
		_, stdout, _ = run(t, c, "-h")
		assert.Contains(t, stdout, "130 interrupted (Ctrl-C or SIGTERM", "%s -h names exit status 130", c)
	}
	_, stdout, _ = run(t, "merge", "-h")
	assert.Contains(t, stdout, "130 a shard's summary says it was interrupted")
	_, stdout, _ = run(t, "replay", "-h")
	assert.NotContains(t, stdout, "130")
}

// TestExploreKnobArtifacts: fence-by-worker-id (A-S5's damage) fails,
// explore exits 1 and leaves a trace that replays identical, a minimized
// schedule as Go, porcupine's visualization and a self-contained report.
func TestExploreKnobArtifacts(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := run(t, "explore", "--system", "arbiter", "--knob", "fence-by-worker-id", "--seeds", "3-100", "--artifacts", "1", "--out", out)
	require.Equal(t, exitFail, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Regexp(t, `PA1 at-most-one-owner\s+\d+  <-- FAILED`, stdout)
	// The first failing seed and its minimization, as explore reports them.
	m := regexp.MustCompile(`artifacts: seed (\d+) \(PA1\): (\d+) -> (\d+) fault actions, each one needed`).FindStringSubmatch(stdout)
	require.NotNil(t, m, "explore must report the minimized artifacts:\n%s", stdout)
	seed, kept := m[1], m[3]
	assert.Contains(t, stdout, "failing seeds: "+seed)
	base := filepath.Join(out, "arbiter-seed-"+seed)
	for _, suffix := range []string{".jsonl", "-minimized.jsonl", "-schedule.txt", "-porcupine.html", "-report.html"} {
		assert.FileExists(t, base+suffix)
	}
	for _, trace := range []string{base + ".jsonl", base + "-minimized.jsonl"} {
		code, stdout, stderr = run(t, "replay", trace)
		assert.Equal(t, exitFail, code, "the replayed run fails PA1; %s", stderr)
		assert.True(t, strings.HasPrefix(stdout, "identical\nPA1 at-most-one-owner: FAILED: "), stdout)
	}
	sched := readFile(t, base+"-schedule.txt")
	assert.Contains(t, sched, "schedule := sim.Schedule{\n")
	assert.Equal(t, kept, strconv.Itoa(strings.Count(sched, "//   needed ")), "every kept action is marked needed:\n%s", sched)
	assert.Regexp(t, `\{At: clock\.Time\(\d+ \* time\.Millisecond\), Kind: sim\.\w+`, sched, "the schedule is a Go literal")
	page := readFile(t, base+"-report.html")
	assert.Contains(t, page, "PA1 at-most-one-owner")
	assert.Contains(t, page, "fencesim replay "+base+"-minimized.jsonl", "the report draws the minimized run")
	assert.NotRegexp(t, regexp.MustCompile(`(src|href)\s*=\s*["']?(https?:)?//`), page, "the report must not load anything from elsewhere")

	// A changed event: replay prints the first difference and exits 1.
	lines := strings.SplitAfter(readFile(t, base+".jsonl"), "\n")
	lines[5] = strings.Replace(lines[5], `"t":`, `"t":1`, 1)
	changed := filepath.Join(out, "changed.jsonl")
	require.NoError(t, os.WriteFile(changed, []byte(strings.Join(lines, "")), 0o644))
	code, stdout, _ = run(t, "replay", changed)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stdout, "first difference at event 5:")
	assert.Contains(t, stdout, "recorded: #5 ")
	assert.Contains(t, stdout, "replayed: #5 ")
}

var timingLine = regexp.MustCompile(`(?m)^(timing|artifacts): .*\n`)

// TestShardMerge: four shards merged print the same summary as one run
// over every seed (timings aside), as text and as JSON.
func TestShardMerge(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--runs", "24"},
		{"--system", "outbox", "--knob", "conflict-is-500", "--seeds", "30-70", "--artifacts", "0"},
		// The runs kept are the highest of every shard's, not the first
		// shard's alone.
		{"--system", "arbiter", "--runs", "16", "--keep-worst", "MA1=3", "--artifacts", "0"},
	} {
		base := append([]string{"explore", "--out", dir, "--workers", "2", "--audit", "0.2"}, args...)
		whole := filepath.Join(dir, "whole.json")
		code, want, stderr := run(t, append(base, "--summary-out", whole)...)
		require.Contains(t, []int{exitOK, exitFail}, code, stderr)
		var files []string
		for i := 0; i < 4; i++ {
			f := filepath.Join(dir, "shard-"+string(rune('0'+i))+".json")
			c, _, stderr := run(t, append(base, "--shard", string(rune('0'+i))+"/4", "--summary-out", f)...)
			require.Contains(t, []int{exitOK, exitFail}, c, stderr)
			files = append(files, f)
		}
		c, got, stderr := run(t, append([]string{"merge"}, files...)...)
		assert.Equal(t, code, c, "merge exits as the whole run did; %s", stderr)
		assert.Equal(t, timingLine.ReplaceAllString(want, ""), timingLine.ReplaceAllString(got, ""))
		merged := filepath.Join(dir, "merged.json")
		_, _, _ = run(t, append([]string{"merge", "--summary-out", merged}, files...)...)
		assert.Equal(t, comparable(t, whole), comparable(t, merged))
		// Shards missing: refused, unless --partial asks for the others.
		c, got, stderr = run(t, "merge", files[0], files[2])
		assert.Equal(t, exitUsage, c)
		assert.Empty(t, got)
		assert.Equal(t, "fencesim merge: shards 1/4, 3/4 missing: the summaries given cover only part of the run's seeds; pass every shard's summary (or --partial to merge these alone)\n", stderr)
		c, got, stderr = run(t, "merge", "--partial", files[0], files[2])
		assert.Contains(t, []int{exitOK, exitFail}, c, stderr)
		assert.Contains(t, got, "runs: ")
		assert.Equal(t, "fencesim merge: shards missing: 1/4, 3/4 (the summary covers only the others)\n", stderr)
	}
	// Shards that kept other runs: refused.
	other := filepath.Join(dir, "other.json")
	c, _, stderr := run(t, "explore", "--out", dir, "--system", "arbiter", "--runs", "16", "--keep-worst", "MA1=2", "--artifacts", "0", "--shard", "1/4", "--summary-out", other)
	require.Contains(t, []int{exitOK, exitFail}, c, stderr)
	c, got, stderr := run(t, "merge", filepath.Join(dir, "shard-0.json"), other, filepath.Join(dir, "shard-2.json"), filepath.Join(dir, "shard-3.json"))
	assert.Equal(t, exitUsage, c)
	assert.Empty(t, got)
	assert.Contains(t, stderr, "--keep-worst extra_latency (MA1)=2) than summary 1 (--keep-worst extra_latency (MA1)=3)")
}

// TestShardMergeMutants: the knob matrix's shards merge to the JSON one
// machine prints (the times of the runs aside): a knob one shard caught
// by seed 2 while the other, missing it, played it in a scenario is
// caught by that seed alone, and the runs are the seeds up to the catch
// (the whole budget when none caught it), however many each shard's
// workers ran past it.
func TestShardMergeMutants(t *testing.T) {
	dir := t.TempDir()
	base := []string{"mutants", "--system", "arbiter", "--knob", "fence-by-worker-id", "--knob", "memory-facts", "--knob", "no-grace", "--budget", "12", "--workers", "2", "--json"}
	whole := filepath.Join(dir, "whole.json")
	code, _, stderr := run(t, append(base, "--summary-out", whole)...)
	require.Equal(t, exitOK, code, stderr)
	files := []string{filepath.Join(dir, "shard-0.json"), filepath.Join(dir, "shard-1.json")}
	for i, f := range files {
		c, _, stderr := run(t, append(base, "--shard", fmt.Sprintf("%d/2", i), "--summary-out", f)...)
		require.Equal(t, exitOK, c, stderr)
	}
	one, err := summary.Read(files[1])
	require.NoError(t, err)
	require.NotEmpty(t, one.Mutants[0].Scenario, "shard 1/2 missed fence-by-worker-id and played it in a scenario")
	merged := filepath.Join(dir, "merged.json")
	c, _, stderr := run(t, "merge", "--json", "--summary-out", merged, files[0], files[1])
	assert.Equal(t, code, c, stderr)
	matrix := func(path string) summary.Summary {
		s, err := summary.Read(path)
		require.NoError(t, err)
		for i := range s.Mutants {
			s.Mutants[i].RunNS = 0
		}
		return *s
	}
	want, got := matrix(whole), matrix(merged)
	assert.Equal(t, want, got)
	assert.Equal(t, uint64(2), got.Mutants[0].Seed)
	assert.Empty(t, got.Mutants[0].Scenario)
	assert.Equal(t, 2, got.Mutants[0].Runs, "seeds 1 and 2")
}

// TestMergeRefusesOtherRuns: shards of command lines that differ in what
// they ran are refused (one line naming the difference and what to do,
// exit 2, nothing written), as the docs promise.
func TestMergeRefusesOtherRuns(t *testing.T) {
	dir := t.TempDir()
	shard := func(name, sh string, args ...string) string {
		t.Helper()
		f := filepath.Join(dir, name+".json")
		code, _, stderr := run(t, append(append([]string{}, args...), "--shard", sh, "--summary-out", f, "--workers", "2", "--json")...)
		require.Contains(t, []int{exitOK, exitFail}, code, stderr)
		return f
	}
	arbiter := []string{"explore", "--system", "arbiter", "--runs", "12", "--artifacts", "0", "--audit", "0"}
	for _, c := range []struct {
		name   string
		shards []string
		want   string
	}{
		{"worlds", []string{shard("drawn", "0/2", arbiter...), shard("fixed", "1/2", append(arbiter, "--world", "fixed")...)},
			"fencesim merge: summary 2 ran arbiter in world fixed, summary 1 in world drawn: not shards of one run; run every shard with the same --world\n"},
		{"failfast", []string{shard("drawn", "0/2", arbiter...), shard("failfast", "1/2", append(arbiter, "--failfast")...)},
			"fencesim merge: summary 2 ran with --failfast, summary 1 without: not shards of one run (a --failfast shard stops at its first failing run and leaves its other seeds out); run every shard with --failfast, or none\n"},
		{"systems", []string{shard("twopc", "0/2", "explore", "--system", "twopc", "--runs", "12", "--artifacts", "0"), shard("twopc-outbox", "1/2", "explore", "--system", "twopc,outbox", "--runs", "12", "--artifacts", "0")},
			"fencesim merge: summary 2 ran the system outbox, which summary 1 did not: not shards of one run (the merged summary would cover some systems with only part of the seeds); run every shard with the same --system\n"},
		{"knobs", []string{shard("one-knob", "0/2", "mutants", "--system", "twopc", "--knob", "commit-before-log"), shard("every-knob", "1/2", "mutants", "--system", "twopc")},
			"fencesim merge: summary 2 ran the knobs timeout-abort, log-not-durable, presume-commit-on-no-record, which summary 1 did not: not shards of one run (the merged summary would cover some knobs with only part of the seeds); run every shard with the same --system and --knob\n"},
		{"matrix designs", []string{shard("sets", "0/2", "mutants", "--system", "twopc", "--knob", "commit-before-log", "--set", "participants=3"), shard("no-sets", "1/2", "mutants", "--system", "twopc", "--knob", "commit-before-log")},
			"fencesim merge: summary 2 switched the knobs of twopc on in another design (default) than summary 1 (set participants=3): not shards of one run; run every shard with the same --set\n"},
		{"matrix minimization", []string{shard("minimized", "0/2", "mutants", "--system", "twopc", "--knob", "commit-before-log", "--minimize-budget", "20"), shard("no-sets", "1/2", "mutants", "--system", "twopc", "--knob", "commit-before-log")},
			"fencesim merge: summary 2 minimized its catches with --minimize-budget 300, summary 1 with 20: not shards of one run; run every shard with the same --minimize-budget\n"},
		{"matrix of an older fencesim", []string{older(t, shard("older", "0/2", "mutants", "--system", "twopc", "--knob", "commit-before-log")), shard("no-sets", "1/2", "mutants", "--system", "twopc", "--knob", "commit-before-log")},
			"fencesim merge: summary 1 records no design for its knobs (an older fencesim wrote it): merge cannot tell whether its shards ran one matrix; run every shard again with this fencesim\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			merged := filepath.Join(dir, "merged.json")
			code, stdout, stderr := run(t, append([]string{"merge", "--summary-out", merged}, c.shards...)...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, stdout)
			assert.Equal(t, c.want, stderr)
			assert.NoFileExists(t, merged)
		})
	}
}

// TestMergeFailFast: --failfast shards merge to a --failfast summary that
// says the runs are those the shards made (each stopped at its own first
// failure), and prints the minimized schedules as one machine's does.
func TestMergeFailFast(t *testing.T) {
	dir := t.TempDir()
	base := []string{"explore", "--system", "arbiter", "--knob", "fence-by-worker-id", "--runs", "200", "--failfast", "--workers", "2", "--out", dir}
	var files []string
	for i := 0; i < 2; i++ {
		f := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		code, _, stderr := run(t, append(base, "--shard", fmt.Sprintf("%d/2", i), "--summary-out", f)...)
		require.Equal(t, exitFail, code, stderr)
		files = append(files, f)
	}
	merged := filepath.Join(dir, "merged.json")
	code, stdout, stderr := run(t, append([]string{"merge", "--summary-out", merged}, files...)...)
	assert.Equal(t, exitFail, code, stderr)
	assert.Equal(t, "fencesim merge: the shards ran --failfast: each stopped at its own first failing run, so the merged summary counts the runs they made, not every seed\n", stderr)
	assert.NotContains(t, stdout, "runs: 200,")
	assert.Contains(t, stdout, "FAILFAST: stopped at the first failing run (--failfast): the counts cover the runs made until then, not every seed\n")
	assert.Contains(t, stdout, "minimized schedule of seed ")
	s, err := summary.Read(merged)
	require.NoError(t, err)
	assert.True(t, s.FailFast)
}

// older rewrites a mutants summary as a fencesim that recorded no
// designs wrote it, and returns its path.
func older(t *testing.T, path string) string {
	s, err := summary.Read(path)
	require.NoError(t, err)
	s.Designs, s.MinimizeBudget = nil, 0
	require.NoError(t, s.Save(path))
	return path
}

// comparable reads a summary without its timings and artifacts.
func comparable(t *testing.T, path string) summary.Summary {
	var s summary.Summary
	require.NoError(t, json.Unmarshal([]byte(readFile(t, path)), &s))
	for i := range s.Systems {
		s.Systems[i].Timing = summary.Timing{}
		s.Systems[i].Artifacts = nil
	}
	return s
}

// TestMutantsAndScenarios: the knob matrix of system C and its scenario
// tables.
func TestMutantsAndScenarios(t *testing.T) {
	code, stdout, stderr := run(t, "mutants", "--system", "twopc", "--knob", "timeout-abort", "--knob", "presume-commit-on-no-record", "--budget", "100")
	assert.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `(?m)^twopc\s+timeout-abort\s+harmful \(PC1,PC3\)\s+yes\s+\d+\s+[\d.]+\s+\d+ -> \d+ faults, \d+ needed\s+ok\s+PC[1-5](,PC[1-5])* \(seed \d+\)$`, stdout)
	assert.Contains(t, stdout, "2 knobs, 2 as expected")

	code, stdout, stderr = run(t, "scenarios", "--system", "twopc")
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "C.1")
	assert.Contains(t, stdout, "C.8")

	// A-S1's orphaned lease costs over the source's promise by design (a
	// finding): the headline said "every scenario kept its promise".
	code, stdout, stderr = run(t, "scenarios", "--system", "arbiter")
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "== arbiter: every scenario held (no property failed; each measured what it expects")
	assert.NotContains(t, stdout, "kept its promise")
	assert.Regexp(t, `orphaned lease: [\dms.]+, over the promise`, stdout)
}

// TestCompare: a design change on the same seeds, metrics side by side.
func TestCompare(t *testing.T) {
	code, stdout, stderr := run(t, "compare", "--system", "arbiter", "--set", "confirm_aware_grace=true", "--runs", "6")
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "baseline default vs changed set confirm_aware_grace=true")
	assert.Contains(t, stdout, "extra_latency (MA1)")
	assert.Contains(t, stdout, "seed by seed (each run's total, changed minus baseline")
}

// TestAuditMismatch: two runs of a seed that differ are reported with the
// first differing event of each.
func TestAuditMismatch(t *testing.T) {
	sys := systems.TwoPC{}
	a := systems.Run(sys, sys.Default(), 7, systems.Moderate, systems.Options{Hash: true})
	b := systems.Run(sys, sys.Default(), 7, systems.Moderate, systems.Options{Hash: true})
	_, same := compareRuns(7, a, b, true)
	require.True(t, same)
	b.Events = append([]traces.Event(nil), b.Events...)
	b.Events[3].Text += " (changed)"
	b.Hash = traces.HashOf(b.Header, b.Events)
	m, same := compareRuns(7, a, b, true)
	require.False(t, same)
	assert.Equal(t, 4, m.Index)
	assert.Equal(t, a.Events[3].String(), m.First)
	assert.Contains(t, m.Second, "(changed)")
	s := summary.Summary{Faults: "moderate", Seeds: "7", Systems: []summary.System{{System: "twopc", Runs: 1, Audit: summary.Audit{Runs: 1, Mismatches: []summary.Mismatch{m}}}}}
	var out bytes.Buffer
	writeText(&out, &s)
	assert.Contains(t, out.String(), "determinism audit: 1 seeds run twice, 1 NOT IDENTICAL")
	assert.Contains(t, out.String(), "seed 7: first difference at event 4:")
	assert.Equal(t, exitFail, exitCode(&s))
}

// TestTimeBudget: --time runs seeds until the budget is spent.
func TestTimeBudget(t *testing.T) {
	budget := 300 * time.Millisecond * slowdown
	start := time.Now()
	code, stdout, stderr := run(t, "explore", "--system", "twopc", "--time", budget.String(), "--json")
	took := time.Since(start)
	require.Equal(t, exitOK, code, stderr)
	var s summary.Summary
	require.NoError(t, json.Unmarshal([]byte(stdout), &s))
	require.Len(t, s.Systems, 1)
	assert.Positive(t, s.Systems[0].Runs, "runs within the budget")
	assert.Less(t, took, budget+grace+time.Second, "ends within --time plus the grace")
	assert.Equal(t, "1- for "+budget.String(), s.Seeds)
}

// TestTimeBudgetTooShort: a budget spent before the first run still plays
// one run per system (as go test -benchtime runs a benchmark once): the
// verdict is never one over no run.
func TestTimeBudgetTooShort(t *testing.T) {
	code, stdout, stderr := run(t, "explore", "--time", "1ns", "--artifacts", "0", "--json")
	require.Equal(t, exitOK, code, stderr)
	var s summary.Summary
	require.NoError(t, json.Unmarshal([]byte(stdout), &s))
	require.Len(t, s.Systems, len(systems.All()))
	for _, x := range s.Systems {
		assert.Equal(t, 1, x.Runs, "%s plays one run", x.System)
	}
	assert.Empty(t, s.Interrupted)
}

// TestUnsafe: a design its timing rules refuse is refused (exit 2, the
// rule named); with --unsafe it runs, after one warning line naming the
// rule waived; --unsafe where there is nothing to waive is bad usage.
func TestUnsafe(t *testing.T) {
	code, _, stderr := run(t, "explore", "--system", "arbiter", "--set", "heartbeat=20s", "--set", "lease=20s", "--runs", "2", "--artifacts", "0")
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "fencesim explore: parameter heartbeat = 20s must be shorter than lease = 20s\n", stderr)

	code, stdout, stderr := run(t, "explore", "--system", "arbiter", "--set", "heartbeat=20s", "--set", "lease=20s", "--unsafe", "--runs", "2", "--artifacts", "0", "--json")
	assert.Contains(t, []int{exitOK, exitFail}, code, stderr)
	assert.Contains(t, stderr, "fencesim explore: warning: --unsafe: running the arbiter design although its rules refuse it: parameter heartbeat = 20s must be shorter than lease = 20s\n")
	var s summary.Summary
	require.NoError(t, json.Unmarshal([]byte(stdout), &s))
	assert.Equal(t, 2, s.Systems[0].Runs)
	assert.Regexp(t, `"allow_unsafe": *true`, string(s.Systems[0].DesignJSON), "the trace header keeps the waiver, so a replay runs too")

	code, _, stderr = run(t, "explore", "--system", "outbox", "--unsafe", "--runs", "2")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--unsafe: the outbox design has no rules to waive")
}

// TestCompareWorld: --world is the comparison's: the baseline plays the
// same worlds as the changed design (it played the drawn world while the
// changed side played the wide one, every run "altered" by a change that
// changes nothing).
func TestCompareWorld(t *testing.T) {
	code, stdout, stderr := run(t, "compare", "--system", "arbiter", "--world", "wide", "--set", "confirm_aware_grace=false", "--runs", "3")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "the change altered 0 of 3 runs")
}
