// Package contracttest holds the tests every implementation of the system
// contract (model/contract.System) shares, for their packages' own tests
// to call. It imports testing and is never linked into fencesim.
package contracttest

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/contract"
	"github.com/fencesim/fencesim/traces"
)

// JudgeFromFileIsJudgeInMemory holds that a system's checkers judge a run
// the same from the notes' typed values (a fresh run in memory) and from
// their JSON (the run's trace written and read back, as replay and report
// read a file): the same verdicts, probes and metrics, for every design
// (its knobs) and seeds 1..seeds at fault intensity f. Some runs must fail,
// so that failing verdicts are compared too.
func JudgeFromFileIsJudgeInMemory(t *testing.T, s contract.System, designs [][]string, seeds uint64, f contract.Faults) {
	t.Helper()
	failed := 0
	for _, knobs := range designs {
		d, err := s.NewDesign(knobs, nil, nil)
		require.NoError(t, err)
		for seed := uint64(1); seed <= seeds; seed++ {
			o := contract.Options{Full: true}
			w, err := s.Draw(d, seed, f, o)
			require.NoError(t, err)
			out := s.Play(w, o)
			typed := s.Judge(out)

			var buf bytes.Buffer
			tw, err := traces.NewWriter(&buf, out.Header)
			require.NoError(t, err)
			for i := range out.Events {
				tw.Record(&out.Events[i])
			}
			require.NoError(t, tw.Close())
			_, evs, err := traces.ReadAll(&buf)
			require.NoError(t, err)
			for i := range evs {
				require.Nil(t, evs[i].Value, "an event read from a file has no typed value")
			}
			file := *out
			file.Events = evs
			read := s.Judge(&file)

			assert.Equal(t, typed.Verdicts, read.Verdicts, "%v seed %d: verdicts", knobs, seed)
			assert.Equal(t, typed.Probes, read.Probes, "%v seed %d: probes", knobs, seed)
			assert.Equal(t, typed.Metrics, read.Metrics, "%v seed %d: metrics", knobs, seed)
			if len(typed.Failed()) > 0 {
				failed++
			}
		}
	}
	assert.Positive(t, failed, "some runs fail: the failing verdicts are compared too")
	t.Logf("%d runs, %d failing", uint64(len(designs))*seeds, failed)
}

// sqlField is a statement note's "sql" member in its JSON.
var sqlField = regexp.MustCompile(`"sql":"(?:[^"\\]|\\.)*"`)

// keptOf returns what a fast record keeps of a full record's event e, the
// fast one being kept: e itself, except model/db's statement notes, which a
// record that is the checkers' alone (sim.Env.ForCheckers) keeps without
// their text and SQL. A fast "db" note with a text is kept whole.
func keptOf(e, kept traces.Event) traces.Event {
	if e.Kind != "db" || kept.Kind != "db" || kept.Text != "" || e.Text == "" {
		return e
	}
	e.Text = ""
	e.Data = sqlField.ReplaceAll(e.Data, []byte(`"sql":""`))
	return e
}

// FastIsFull holds that a run played without Options.Full (what explore
// plays: a system may record only the kinds its checkers read, numbering
// the others) is judged as the same run recorded in full: the same
// verdicts (the events they name are the full record's numbers), probes
// and metrics; and that each event it recorded is the full record's event
// of that number (a statement note without its text and SQL: keptOf). So is a run played with Options.Digest (what --per-seed
// plays), whose digest is the full record's hash and whose events, with a
// filtered fast path, are the fast path's. It plays the default design and each knob's, at
// moderate and heavy faults. filtered says the system's fast path records
// less (it must then keep fewer events in every run). The seeds are
// 1..seeds and the extra ones (a seed whose run shows what the first ones
// do not).
func FastIsFull(t *testing.T, s contract.System, seeds uint64, filtered bool, extra ...uint64) {
	t.Helper()
	designs := [][]string{nil}
	for _, k := range s.Knobs() {
		designs = append(designs, []string{k.Name})
	}
	for _, f := range []contract.Faults{contract.Moderate, contract.Heavy} {
		fastIsFull(t, s, designs, seeds, f, filtered, extra)
	}
}

func fastIsFull(t *testing.T, s contract.System, designs [][]string, seeds uint64, f contract.Faults, filtered bool, extra []uint64) {
	t.Helper()
	failed := 0
	for _, knobs := range designs {
		d, err := s.NewDesign(knobs, nil, nil)
		require.NoError(t, err)
		list := extra
		for seed := uint64(1); seed <= seeds; seed++ {
			list = append(list, seed)
		}
		for _, seed := range list {
			fast := contract.Run(s, d, seed, f, contract.Options{})
			full := contract.Run(s, d, seed, f, contract.Options{Full: true})
			digested := contract.Run(s, d, seed, f, contract.Options{Digest: traces.HashV2})
			v1 := contract.Run(s, d, seed, f, contract.Options{Digest: traces.HashV1})
			for _, r := range []*contract.Result{fast, digested} {
				assert.Equal(t, full.Verdicts, r.Verdicts, "%v seed %d: verdicts", knobs, seed)
				assert.Equal(t, full.Probes, r.Probes, "%v seed %d: probes", knobs, seed)
				assert.Equal(t, full.Metrics, r.Metrics, "%v seed %d: metrics", knobs, seed)
			}
			if filtered {
				assert.Less(t, len(fast.Events), len(full.Events), "%v seed %d: the fast path records fewer events", knobs, seed)
				// A digested run hashes every event as a full record's
				// hash has them, and keeps what the fast path keeps.
				assert.Equal(t, traces.HashOf(traces.Header{}, full.Events), v1.Digest, "%v seed %d: the version 1 digest is the full record's hash", knobs, seed)
				assert.Equal(t, traces.EventsHash(traces.HashV2, full.Events), digested.Digest, "%v seed %d: the digest is the full record's hash", knobs, seed)
				assert.Equal(t, len(full.Events), digested.Recorded, "%v seed %d: events digested", knobs, seed)
				require.Equal(t, len(fast.Events), len(digested.Events), "%v seed %d: a digested run keeps the fast path's events", knobs, seed)
				for i := range fast.Events {
					a, b := fast.Events[i], digested.Events[i]
					a.Fill()
					b.Fill()
					require.Equal(t, keptOf(b, a).String(), a.String(), "%v seed %d: event #%d of the digested record", knobs, seed, a.Seq)
				}
			}
			for _, e := range fast.Events {
				require.LessOrEqual(t, e.Seq, uint64(len(full.Events)), "%v seed %d: event #%d", knobs, seed, e.Seq)
				e.Fill()
				g := full.Events[e.Seq-1]
				g.Fill()
				require.Equal(t, keptOf(g, e).String(), e.String(), "%v seed %d: event #%d of the fast record is not #%d of the full one", knobs, seed, e.Seq, e.Seq)
			}
			if len(full.Failed()) > 0 {
				failed++
			}
		}
	}
	assert.Positive(t, failed, "some runs fail: the failing verdicts are compared too")
	t.Logf("%s faults: %d runs, %d failing", f, uint64(len(designs))*(seeds+uint64(len(extra))), failed)
}
