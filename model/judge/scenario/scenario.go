package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/model/judge"
)

const sec = time.Second

// Origin is when a scenario's source timeline starts: by then the arbiter
// holds the leader lock and has run its start-up grace.
const Origin = 2 * sec

func at(d time.Duration) clock.Time { return clock.Time(Origin + d) }

// Cost is what a scenario measured, against what the source promises.
type Cost struct {
	Worst   time.Duration // the measured worst cost (0: none)
	Text    string        // the measured cost in words
	Broken  []string      // expectations of the scenario that did not hold
	Verdict []checker.Verdict
}

// OK reports whether the scenario held: safety, and its own expectations.
func (c Cost) OK() bool { return len(c.Broken) == 0 && len(checker.Failed(c.Verdict)) == 0 }

// Case is one run of a scenario (A-S1 has one per crash moment).
type Case struct {
	Name    string
	Options func(knobs ...judge.Knob) judge.Options
}

// Scenario is one row of docs/systems.md A.5.
type Scenario struct {
	ID      string
	Title   string
	Guard   string // what keeps it correct
	Promise string // the promised worst cost
	Cases   []Case
	Measure func(os []*Outcome) Cost
}

// Measured plays every case of a scenario (with knobs) and measures them.
func (s Scenario) Measured(knobs ...judge.Knob) ([]*Outcome, Cost, error) {
	var os []*Outcome
	for _, c := range s.Cases {
		o, err := Play(c.Options(knobs...))
		if err != nil {
			return nil, Cost{}, fmt.Errorf("%s %s: %w", s.ID, c.Name, err)
		}
		os = append(os, o)
	}
	c := s.Measure(os)
	for _, o := range os {
		c.Verdict = append(c.Verdict, o.Result.Verdicts...)
	}
	return os, c, nil
}

// ByID returns the scenario with an id.
func ByID(id string) (Scenario, bool) {
	for _, s := range All() {
		if s.ID == id {
			return s, true
		}
	}
	return Scenario{}, false
}

// expect records a broken expectation.
func (c *Cost) expect(ok bool, format string, args ...any) {
	if !ok {
		c.Broken = append(c.Broken, fmt.Sprintf(format, args...))
	}
}

// design returns the default design with knobs and a fleet.
func design(home, prod int, knobs ...judge.Knob) judge.Design {
	d := judge.Default().MustWith(knobs...)
	d.HomeWorkers, d.ProdWorkers = home, prod
	return d
}

func arrivals(ids ...int64) []judge.Arrival {
	out := make([]judge.Arrival, len(ids))
	for i, id := range ids {
		out[i] = judge.Arrival{At: Origin, ID: id, User: 1 + int64(i)%3, Problem: 1 + int64(i)%2}
	}
	return out
}

// Table renders docs/systems.md A.5 with the measured worst cost of each row.
func Table(rows []Scenario, costs map[string]Cost) string {
	var b strings.Builder
	b.WriteString("| id | scenario | what keeps it correct | promised worst cost | measured worst cost |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, s := range rows {
		c, ok := costs[s.ID]
		m := "(not run)"
		if ok {
			m = c.Text
			if !c.OK() {
				m += " — BROKEN: " + strings.Join(append(c.Broken, verdictTexts(c.Verdict)...), "; ")
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", s.ID, s.Title, s.Guard, s.Promise, m)
	}
	return b.String()
}

func verdictTexts(vs []checker.Verdict) []string {
	var out []string
	for _, v := range checker.Failed(vs) {
		out = append(out, v.String())
	}
	return out
}

func round(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
