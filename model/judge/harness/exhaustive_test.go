package harness

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/model/judge"
	"github.com/fencesim/fencesim/sim"
)

// firstFailure runs faults one at a time (pairs when two are given per
// case) and returns the first failing case and its outcome.
func firstFailure(t *testing.T, s *Space, cases [][]sim.Action) ([]sim.Action, *Outcome) {
	for _, c := range cases {
		o, err := s.Run(c...)
		require.NoError(t, err, "run of %v", c)
		if len(o.Failed()) > 0 {
			return c, o
		}
	}
	return nil, nil
}

func singles(s *Space) [][]sim.Action {
	out := make([][]sim.Action, len(s.Faults))
	for i, f := range s.Faults {
		out[i] = []sim.Action{f}
	}
	return out
}

// TestExhaustiveDefaultPasses: the default design survives every single
// fault of the small world (every crash at every blocking call, restarted
// early or late; every worker <-> arbiter message dropped, duplicated or
// delayed past the timeouts) and a spread of 1000 of the pairs.
func TestExhaustiveDefaultPasses(t *testing.T) {
	s, err := SingleSpace(judge.Default())
	require.NoError(t, err)
	require.Empty(t, s.Ref.Failed(), "the fault-free run passes")
	require.Greater(t, len(s.Faults), 500, "the small world has many crash points and messages:\n%s", s.Describe())
	for _, c := range s.Calls {
		assert.Positive(t, c.N, "node %s has blocking calls", c.Name)
	}
	c, o := firstFailure(t, s, singles(s))
	if c != nil {
		t.Fatalf("the default design fails under %s: %s\n%s", sim.Schedule(c), o.Failed()[0], s.Describe())
	}
	ps, err := PairSpace(judge.Default())
	require.NoError(t, err)
	pairs, total := ps.Pairs(1000)
	require.Greater(t, total, len(pairs))
	var cases [][]sim.Action
	for _, p := range pairs {
		cases = append(cases, p[:])
	}
	if c, o := firstFailure(t, ps, cases); c != nil {
		t.Fatalf("the default design fails under the pair %s: %s", sim.Schedule(c), o.Failed()[0])
	}
	t.Logf("%s; %d singles and %d of %d pairs pass", s.Describe(), len(s.Faults), len(pairs), total)
}

// TestExhaustiveCatchesKnobs: harmful knobs that one crash or one message
// fault shows fail the single-fault enumeration, with the property the
// registry names.
func TestExhaustiveCatchesKnobs(t *testing.T) {
	for _, k := range []judge.Knob{judge.NoRequestID, judge.UnconditionalWrites, judge.DuplicateIsError} {
		t.Run(string(k), func(t *testing.T) {
			s, err := SingleSpace(judge.Default().MustWith(k))
			require.NoError(t, err)
			c, o := firstFailure(t, s, singles(s))
			require.NotNil(t, c, "%s must fail under some single fault", k)
			info, _ := judge.Info(k)
			assert.Contains(t, info.CaughtBy, propID(o.Failed()[0].Property), "caught by %s under %s", o.Failed()[0].Property, sim.Schedule(c))
			t.Logf("%s: %s under %s", k, o.Failed()[0].Property, sim.Schedule(c))
		})
	}
}

// propID is a property's identifier ("PA4" of "PA4 idempotent-claim").
func propID(name string) string {
	for i, r := range name {
		if r == ' ' {
			return name[:i]
		}
	}
	return name
}

// TestExhaustiveOldLeader: in the small world with two arbiters, the
// default design survives every freeze of the old leader at a claim's
// COMMIT, its lock session ended or not; claim-lookup-only, which needs
// two arbiters dispatching, fails it by PA4, and only when the lock
// session ended (a freeze alone leaves arbiter-1 the leader).
func TestExhaustiveOldLeader(t *testing.T) {
	s, err := LeaderSpace(judge.Default())
	require.NoError(t, err)
	require.Empty(t, s.Ref.Failed(), "the fault-free run passes")
	require.Equal(t, []Count{{"arbiter-1", 2}}, s.Freezes, "arbiter-1 commits both submissions' claims:\n%s", s.Describe())
	require.Len(t, s.Faults, 8, "2 claims x 2 thaws x lock session ended or not")
	if c, o := firstFailure(t, s, singles(s)); c != nil {
		t.Fatalf("the default design fails under %s: %s\n%s", sim.Schedule(c), o.Failed()[0], s.Describe())
	}
	s, err = LeaderSpace(judge.Default().MustWith(judge.ClaimLookupOnly))
	require.NoError(t, err)
	var failing []string
	for _, f := range s.Faults {
		o, err := s.Run(f)
		require.NoError(t, err)
		if bad := o.Failed(); len(bad) > 0 {
			assert.Equal(t, "PA4", propID(bad[0].Property), "under %s", f)
			assert.Equal(t, "db", f.Peer, "a freeze that keeps the lock cannot show it: %s", f)
			failing = append(failing, f.String())
		}
	}
	assert.NotEmpty(t, failing, "claim-lookup-only must fail some freeze of the old leader")
	t.Logf("claim-lookup-only fails under %v", failing)
}
