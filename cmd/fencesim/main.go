package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/fencesim/fencesim/internal/gcpolicy"
	"github.com/fencesim/fencesim/internal/systems"
)

// Exit codes.
const (
	exitOK    = 0 // every property held
	exitFail  = 1 // a property failed (or a run was not deterministic)
	exitUsage = 2 // bad usage or input
	// exitInterrupted (130): stopped by Ctrl-C or SIGTERM (interrupt.go)
)

func main() {
	gcpolicy.Apply() // GOGC=800 under a 768 MiB soft limit, unless set: see internal/gcpolicy
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}

// command is one subcommand.
type command struct {
	name    string
	args    string // the positional arguments, for the usage line
	summary string
	run     func(env *env, args []string) int
	// interruptible commands catch SIGINT and SIGTERM: they stop starting
	// runs, print what finished marked as interrupted, and exit 130.
	interruptible bool
}

func commands() []command {
	return []command{
		{"explore", "[flags]", "run many seeds in parallel and print a table per system", runExplore, true},
		{"run", "[flags]", "run one seed as explore does (--system S --seed N) and write its full trace and report, pass or fail", runRun, false},
		{"replay", "[flags] FILE", "re-run a trace from its header: \"identical\" or the first difference, and the properties that fail (a live run's trace cannot be re-run: fencesim report judges it)", runReplay, false},
		{"report", "[flags] TRACE", "render the HTML report of a trace file (the report explore writes) and print its path; a live run's trace is judged as recorded, not replayed", runReport, false},
		{"mutants", "[flags]", "the design-knob matrix: caught or not, by which property, after how many runs", runMutants, true},
		{"scenarios", "[flags]", "run the named scenarios (A-S1..A-S9, C.1..C.8) and print their tables", runScenarios, false},
		{"baseline", "[flags]", "the baseline matrix: every default design in every world and at every fault level (A also with claim_batch 2 and 4), --runs seeds a cell; exit 1 on any failed run", runBaseline, true},
		{"compare", "[flags]", "a baseline design and a changed one on the same seeds, metrics side by side", runCompare, true},
		{"diff", "[flags]", "the working tree against a git revision (--base) on the same seeds: runs altered, properties flipped, metrics side by side, and in how many runs each hunk of the change under model/ executed", runDiff, true},
		{"live", "[flags]", "run the system's node code for real: child processes, TCP through proxies, a real PostgreSQL, real kill -9, SIGSTOP and stalls; the same checkers", runLive, false},
		{"node", "--config FILE", "run one node of a live world (fencesim live starts these)", runNode, false},
		{"merge", "[flags] FILE...", "combine shard summaries (--summary-out) into one summary", runMerge, false},
		{"knobs", "[flags]", "list the design knobs (--knob): what each removes, harmful or not, the property expected to catch it", runKnobs, false},
		{"levers", "[flags]", "list each system's levers (--steer): the world's choice each forces, in the order of its steered seeds' bits", runLevers, false},
		{"params", "[flags]", "list the design parameters (--set): meaning, default, valid range, rules between them", runParams, false},
		{"version", "", "print the module version and the VCS revision the binary was built from (also --version)", runVersion, false},
	}
}

// env is what a command writes to, and its context: an interruptible
// command's ends at the first SIGINT or SIGTERM.
type env struct {
	stdout, stderr io.Writer
	ctx            context.Context
}

// usageError is bad usage or input: one line, exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// Main runs the command line with args (without the program name) and
// returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	e := &env{stdout: stdout, stderr: stderr, ctx: context.Background()}
	if len(args) == 0 {
		fmt.Fprintf(stderr, "fencesim: no command (commands: %s; fencesim help prints the usage)\n", strings.Join(commandNames(), ", "))
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 && args[0] == "help" {
			return Main([]string{args[1], "-h"}, stdout, stderr)
		}
		mainUsage(stdout)
		return exitOK
	case "-version", "--version":
		return Main(append([]string{"version"}, args[1:]...), stdout, stderr)
	case targetsCommand: // hidden: diff asks its coverage builds (changes.go)
		return runTargets(stdout)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			if c.interruptible {
				ctx, stop := interrupts()
				defer stop()
				e.ctx = ctx
			}
			return c.run(e, args[1:])
		}
	}
	fmt.Fprintf(stderr, "fencesim: unknown command %q (commands: %s; fencesim -h for help)\n", args[0], strings.Join(commandNames(), ", "))
	return exitUsage
}

// commandNames lists the commands' names, in order.
func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

func mainUsage(w io.Writer) {
	fmt.Fprintf(w, "fencesim: deterministic simulation of %s distributed designs (%s)\n\n", numberWord(len(systems.Names())), strings.Join(systems.Names(), ", "))
	fmt.Fprintf(w, "Usage: fencesim <command> [flags]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nExit status: %s.\n", exitStatus(true))
	fmt.Fprintf(w, "Run \"fencesim <command> -h\" for a command's flags; fencesim --version for the build.\n")
}

// fail reports an error of a command and returns its exit code: usage
// errors exit 2, anything else exits 2 too (the run could not be made).
func (e *env) fail(cmd string, err error) int {
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(e.stderr, "fencesim %s: %s\n", cmd, oneLine(ue.msg))
		return exitUsage
	}
	fmt.Fprintf(e.stderr, "fencesim %s: %s\n", cmd, oneLine(err.Error()))
	return exitUsage
}

// exitStatus describes the exit codes; interruptible adds 130.
func exitStatus(interruptible bool) string {
	s := "0 every property held, 1 a property failed, 2 bad usage or input"
	if interruptible {
		s += ", 130 interrupted (Ctrl-C or SIGTERM: the summary covers the runs that finished; explore, compare, mutants; merge when a shard was)"
	}
	return s
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.ReplaceAll(s, "\n", "; ")
}

// numberWord spells a small count ("three"), the help text's way.
func numberWord(n int) string {
	words := []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return strconv.Itoa(n)
}
