package scenario

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestC8Participants: with 3 and 4 participants every crash position
// recovers to all-or-nothing, and the positions leave the same kind of
// prepared state as with two.
func TestC8Participants(t *testing.T) {
	for _, n := range []int{3, 4} {
		rows, err := C8Participants(n)
		require.NoError(t, err)
		for i, r := range rows {
			assert.True(t, r.Consistent, "%d participants, position %d: %+v", n, i, r.After)
			assert.Equal(t, "ok", r.Verdicts, "%d participants, position %d", n, i)
			assert.Len(t, r.After.Stock, n-1)
		}
		assert.Equal(t, 1, rows[4].After.Orders, "position 4 commits everywhere")
		assert.Equal(t, 0, rows[2].After.Orders, "position 2 rolls back everywhere")
	}
}

// TestC8Takeover: a second instance on the same log finishes a dead
// instance's decided commit, and a false takeover (the first only paused)
// stays consistent because the first decision record wins.
func TestC8Takeover(t *testing.T) {
	rows, err := C8Takeover()
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.Equal(t, State{Prepared: []int{0, 0}, Orders: 1, Stock: []int64{99}}, rows[0].After, "coordinator-2 commits what the log says")
	assert.Equal(t, "ok", rows[0].Verdicts)
	assert.Equal(t, State{Prepared: []int{0, 0}, Orders: 0, Stock: []int64{100}}, rows[1].After, "the paused instance follows coordinator-2's ABORT")
	assert.Contains(t, rows[1].First, "the decision log already held abort")
	assert.Equal(t, "ok", rows[1].Verdicts)
}

// TestC8Cooperative: agents that ask each other end the transaction without
// the coordinator when a peer committed (position 4) or never voted
// (position 1), and stay blocked when every peer is prepared (positions 2
// and 3) until the coordinator's log is read.
func TestC8Cooperative(t *testing.T) {
	rows, err := C8Cooperative()
	require.NoError(t, err)
	require.Len(t, rows, 4)
	for _, r := range rows {
		assert.True(t, r.Consistent, "position %d", r.Pos)
		assert.Equal(t, "ok", r.Verdicts, "position %d", r.Pos)
		assert.Greater(t, r.WaitBlocked, 55*time.Second, "without cooperation the prepared transaction waits for the coordinator (position %d)", r.Pos)
	}
	byPos := map[int]CoopRow{}
	for _, r := range rows {
		byPos[r.Pos] = r
	}
	assert.Less(t, byPos[1].Metrics.BlockedMax, 5*time.Second, "position 1: the unvoted peer refuses, orders rolls back at once")
	assert.Contains(t, byPos[1].Agents, "inventory refused x1")
	assert.Less(t, byPos[4].Metrics.BlockedMax, 5*time.Second, "position 4: orders committed, inventory commits at once")
	assert.Equal(t, 99, int(byPos[4].After.Stock[0]))
	for _, p := range []int{2, 3} {
		assert.Contains(t, byPos[p].Agents, "blocked", "position %d: every peer prepared: blocked", p)
		assert.Greater(t, byPos[p].Metrics.BlockedMax, 55*time.Second, "position %d stays blocked until the coordinator returns", p)
	}
}

// TestC8MaxPrepared: a full max_prepared_transactions makes new global
// transactions vote NO (53200) and abort; nothing is inconsistent, and
// after recovery frees the slot the next one commits.
func TestC8MaxPrepared(t *testing.T) {
	r, err := C8MaxPrepared()
	require.NoError(t, err)
	require.Len(t, r.Rows, 3)
	assert.Contains(t, r.Rows[1].Votes, "53200")
	assert.Contains(t, r.Rows[1].Outcome, "ABORT")
	assert.Contains(t, r.Rows[0].Outcome, "ABORT by coordinator's recovery")
	assert.Contains(t, r.Rows[2].Outcome, "COMMIT")
	assert.Equal(t, State{Prepared: []int{0, 0}, Orders: 1, Stock: []int64{99}}, r.After)
	assert.Equal(t, "ok", r.Verdicts)
}
