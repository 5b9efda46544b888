package db_test

// Statement sequences, one statement at a time over several sessions, run
// on the model and on PostgreSQL: the scripted conformance tests
// (conformance_test.go) and the randomized one (pgrandom_test.go).

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/clock"
	"github.com/fencesim/fencesim/internal/pgtest"
	"github.com/fencesim/fencesim/model/db"
	"github.com/fencesim/fencesim/network"
	"github.com/fencesim/fencesim/sim"
)

// sstmt is a statement of one of several sessions. With close, the session
// ends instead (its connection closes); the session's next statement opens
// a new connection, a new session.
type sstmt struct {
	session int
	stmt    db.Stmt
	close   bool
}

func (s sstmt) String() string {
	if s.close {
		return fmt.Sprintf("s%d: (close the connection)", s.session)
	}
	return fmt.Sprintf("s%d: %s", s.session, s.stmt.SQL())
}

// modelSeq runs the sequence on the model: statement i is sent at i*gap on
// its session's connection (gap must exceed every wait the statements can
// start, so that none overlaps the next). It returns each statement's
// outcome (a zero pgOut for a close).
func modelSeq(tables []db.Table, cfg db.Config, seq []sstmt, gap time.Duration) ([]pgOut, error) {
	sessions := 0
	for _, s := range seq {
		sessions = max(sessions, s.session+1)
	}
	steps := make([][]step, sessions)
	index := make([]int, len(seq)) // the statement's step number in its session
	for i, s := range seq {
		index[i] = len(steps[s.session])
		if s.close {
			steps[s.session] = append(steps[s.session], closeAt(time.Duration(i)*gap))
		} else {
			steps[s.session] = append(steps[s.session], send(time.Duration(i)*gap, s.stmt))
		}
	}
	w := sim.New(sim.Config{
		Entropy: sim.NewPCG(1),
		Network: network.Policy{DelayMin: hop, DelayMax: hop},
		Limits:  sim.Limits{MaxTime: at(time.Duration(len(seq)+2) * gap), MaxEvents: 5_000_000},
	})
	w.Add("db", db.New(db.Schema{Tables: tables}, cfg))
	clients := make([]*scripted, sessions)
	for i := range clients {
		c := &scripted{steps: steps[i], cl: db.Client{DB: "db"}, sentAt: map[uint64]clock.Time{}}
		clients[i] = c
		w.Add(fmt.Sprintf("s%d", i), func(string, *sim.Disk) sim.Node { return c })
	}
	if err := w.Run(); err != nil {
		return nil, err
	}
	out := make([]pgOut, len(seq))
	for i, s := range seq {
		if s.close {
			continue
		}
		found := false
		for _, a := range clients[s.session].answers {
			if a.step == index[i] {
				out[i] = modelOut(s.stmt, a.last())
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("statement %d (%s) got no answer", i, s)
		}
	}
	return out, nil
}

// pgPool is the sessions of a sequence on the server, opened as needed.
type pgPool struct {
	name        string
	schema      string
	lockTimeout time.Duration
	admin       *pgx.Conn // for waiting until a closed session is gone
	sess        []*pgSess
}

func (p *pgPool) get(ctx context.Context, i int) (*pgSess, error) {
	for len(p.sess) <= i {
		p.sess = append(p.sess, nil)
	}
	if p.sess[i] == nil {
		s, err := pgDial(ctx, fmt.Sprintf("%s/s%d", p.name, i), p.schema, p.lockTimeout, 0)
		if err != nil {
			return nil, err
		}
		p.sess[i] = s
	}
	return p.sess[i], nil
}

// drop closes session i and waits until its backend has exited (and so
// released its locks), as the model's session ends at once.
func (p *pgPool) drop(ctx context.Context, i int) error {
	if i >= len(p.sess) || p.sess[i] == nil {
		return nil
	}
	pid := p.sess[i].conn.PgConn().PID()
	p.sess[i].close()
	p.sess[i] = nil
	for {
		var n int
		if err := p.admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE pid = $1`, pid).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
}

func (p *pgPool) closeAll() {
	for _, s := range p.sess {
		if s != nil {
			s.close()
		}
	}
	p.sess = nil
}

// serverSeq runs the sequence on the server, one statement after another.
func serverSeq(ctx context.Context, p *pgPool, seq []sstmt) ([]pgOut, error) {
	out := make([]pgOut, len(seq))
	t0 := time.Now()
	for i, s := range seq {
		if s.close {
			if err := p.drop(ctx, s.session); err != nil {
				return nil, err
			}
			continue
		}
		sess, err := p.get(ctx, s.session)
		if err != nil {
			return nil, err
		}
		out[i] = sess.exec(ctx, s.stmt, 0, t0)
		if out[i].Lost {
			return nil, fmt.Errorf("statement %d (%s): connection lost: %s", i, s, out[i].Note)
		}
	}
	return out, nil
}

// compareSeq compares the outcomes; it returns the number of divergences
// and a transcript that marks them.
func compareSeq(seq []sstmt, server, model []pgOut, o cmpOpts) (int, string) {
	bad := 0
	var b strings.Builder
	for i, s := range seq {
		fmt.Fprintf(&b, "  %3d %s\n", i, s)
		if s.close {
			continue
		}
		d := diffOut(s.stmt, server[i], model[i], o)
		if d == "" {
			fmt.Fprintf(&b, "        both:   %s\n", server[i])
			continue
		}
		bad++
		fmt.Fprintf(&b, "        server: %s\n        model:  %s\n        DIVERGES: %s\n", server[i], model[i], d)
	}
	return bad, b.String()
}

// conform runs the statements one after another, each on its session, on
// the model and on the server, and compares their outcomes. Statements are
// 500 ms apart in the model (longer than any lock_timeout they set), so
// none overlaps another.
func conform(t *testing.T, tables []db.Table, seed map[string][]db.Row, seq []sstmt) {
	t.Helper()
	model, err := modelSeq(tables, db.Config{MaxPreparedTransactions: 4, Seed: seed}, seq, 500*ms)
	require.NoError(t, err)
	ctx := t.Context()
	admin := pgtest.Connect(t, ctx)
	schema := pgtest.Fresh(t, admin, setupSQL(tables, seed, 0)...)
	p := &pgPool{name: t.Name(), schema: schema, admin: admin}
	defer p.closeAll()
	server, err := serverSeq(ctx, p, seq)
	require.NoError(t, err)
	bad, transcript := compareSeq(seq, server, model, cmpOpts{timeTol: -1})
	scriptedScenarios.Add(1)
	scriptedRequests.Add(int64(len(seq)))
	scriptedStatements.Add(int64(len(seq)))
	if bad > 0 {
		t.Errorf("PostgreSQL and the model diverge on %d of %d statements:\n%s", bad, len(seq), transcript)
		return
	}
	t.Logf("postgres agrees: %d statements", len(seq))
}
