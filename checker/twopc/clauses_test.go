package twopc

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/traces/hist"
)

// The clause table of system C (docs/clauses.md): for each clause of
// PC1-PC5 in docs/properties.md, a trace that breaks just that clause
// (fail) next to the same trace without the break (pass). fail must fail
// exactly the properties in want, and the verdict of prop must name the
// clause (why). A clause that permits something (a participant still
// prepared is left to PC4) has its pass trace show the permission and its
// fail trace show where it ends.

type clauseC struct {
	name       string
	prop       string   // the property whose message names the clause
	want       []string // every property fail must fail (ids)
	why        string   // in prop's message
	pass, fail func() *trace
}

// committed: x1 decided, logged and committed at orders; inventory still
// prepared.
func halfCommitted() *trace {
	return prepared().decide(104, "x1", hist.OutcomeCommit).log(104, "x1", hist.OutcomeCommit).prep(105, "orders", "x1", "commit")
}

// orderOnly: x1 begun over orders and inventory; only orders prepared and
// voted YES.
func orderOnly() *trace {
	return (&trace{}).begin(100, "x1").prep(101, "orders", "x1", "prepare").vote(102, "x1", "orders", hist.VoteYes)
}

// unvoted: orders prepared and voted YES; inventory prepared and its vote
// (hist.VoteNo, hist.VoteUnknown, or none: "") was what the coordinator got.
func unvoted(vote string) *trace {
	tr := orderOnly().prep(103, "inventory", "x1", "prepare")
	if vote != "" {
		tr.vote(103, "x1", "inventory", vote)
	}
	return tr
}

// recoverCommit: recovery tells both participants COMMIT and they commit.
func (tr *trace) recoverCommit(t int64) *trace {
	return tr.note(t, hist.Txn{What: hist.TxnRecover, GID: "x1", Participant: "orders", Outcome: hist.OutcomeCommit}).
		note(t, hist.Txn{What: hist.TxnRecover, GID: "x1", Participant: "inventory", Outcome: hist.OutcomeCommit}).
		prep(t+1, "orders", "x1", "commit").prep(t+1, "inventory", "x1", "commit")
}

func refuseNote(t int64, participant string) hist.Txn {
	return hist.Txn{What: hist.TxnRefuse, GID: "x1", By: participant + "-agent", Participant: participant}
}

var clausesC = []clauseC{
	// PC1 atomicity-after-recovery.
	{name: "PC1/committed-vs-rolled-back", prop: "PC1", want: []string{"PC1"}, why: `transaction "x1" committed at orders but not at inventory (orders=committed inventory=aborted)`,
		// C.6: the first COMMIT PREPARED before the log, a crash, recovery
		// finds no record and rolls inventory back; logged first, recovery
		// commits it.
		pass: func() *trace {
			return prepared().decide(104, "x1", hist.OutcomeCommit).log(104, "x1", hist.OutcomeCommit).prep(105, "orders", "x1", "commit").
				note(5000, hist.Txn{What: hist.TxnRecover, GID: "x1", Participant: "inventory", Outcome: hist.OutcomeCommit}).prep(5001, "inventory", "x1", "commit").end(9000, true)
		},
		fail: func() *trace {
			return prepared().decide(104, "x1", hist.OutcomeCommit).prep(105, "orders", "x1", "commit").
				log(5000, "x1", hist.OutcomeAbort).prep(5001, "inventory", "x1", "rollback").end(9000, true)
		}},
	{name: "PC1/committed-vs-never-prepared", prop: "PC1", want: []string{"PC1"}, why: `committed at orders but not at inventory (orders=committed inventory=none)`,
		pass: func() *trace {
			return prepared().decide(104, "x1", hist.OutcomeCommit).prep(105, "orders", "x1", "commit").prep(106, "inventory", "x1", "commit").end(200, false)
		},
		fail: func() *trace {
			return orderOnly().decide(104, "x1", hist.OutcomeCommit).prep(105, "orders", "x1", "commit").end(200, false)
		}},
	{name: "PC1/prepared-left-to-PC4", prop: "PC4", want: []string{"PC2", "PC4"}, why: "after quiescence 1 prepared transactions remain: inventory:x1",
		// Permission: inventory still prepared does not break PC1; at a
		// quiesced end PC4 (and PC2, the log said COMMIT) judge it, PC1
		// still does not.
		pass: func() *trace { return halfCommitted().end(200, false) },
		fail: func() *trace { return halfCommitted().end(200, true) }},

	// PC2 decision-durability.
	{name: "PC2/no-rollback-after-logged-commit", prop: "PC2", want: []string{"PC2"}, why: `the decision log held COMMIT for "x1", but orders ended aborted`,
		// A second coordinator that decided ABORT without reading the log;
		// the run has not quiesced, so only the rollback itself breaks PC2.
		pass: func() *trace {
			return prepared().decide(104, "x1", hist.OutcomeCommit).log(104, "x1", hist.OutcomeCommit).
				note(3000, hist.Txn{What: hist.TxnDecide, GID: "x1", By: "coordinator-2", Outcome: hist.OutcomeAbort}).
				prep(3001, "orders", "x1", "commit").prep(3002, "inventory", "x1", "commit").end(9000, false)
		},
		fail: func() *trace {
			return prepared().decide(104, "x1", hist.OutcomeCommit).log(104, "x1", hist.OutcomeCommit).
				note(3000, hist.Txn{What: hist.TxnDecide, GID: "x1", By: "coordinator-2", Outcome: hist.OutcomeAbort}).
				prep(3001, "orders", "x1", "rollback").prep(3002, "inventory", "x1", "rollback").end(9000, false)
		}},
	{name: "PC2/log-never-turns-to-abort", prop: "PC2", want: []string{"PC2"}, why: `the decision log held COMMIT for "x1", later coordinator logged ABORT`,
		pass: func() *trace {
			return halfCommitted().prep(106, "inventory", "x1", "commit").log(5000, "x1", hist.OutcomeCommit).end(9000, true)
		},
		fail: func() *trace {
			return halfCommitted().prep(106, "inventory", "x1", "commit").log(5000, "x1", hist.OutcomeAbort).end(9000, true)
		}},
	{name: "PC2/committed-after-quiescence", prop: "PC2", want: []string{"PC2", "PC4"}, why: `the decision log held COMMIT for "x1", but inventory ended prepared`,
		// A participant left prepared at a quiesced end is PC4's too.
		pass: func() *trace { return halfCommitted().end(200, false) },
		fail: func() *trace { return halfCommitted().end(200, true) }},
	{name: "PC2/never-prepared-under-logged-commit", prop: "PC2", want: []string{"PC2"}, why: `the decision log held COMMIT for "x1", but inventory ended none`,
		// The log holds COMMIT, a participant never prepared: broken
		// before quiescence (orders is still prepared, so not PC1).
		pass: func() *trace {
			return orderOnly().prep(103, "inventory", "x1", "prepare").vote(103, "x1", "inventory", hist.VoteYes).
				decide(104, "x1", hist.OutcomeCommit).log(104, "x1", hist.OutcomeCommit).end(200, false)
		},
		fail: func() *trace {
			return orderOnly().decide(104, "x1", hist.OutcomeCommit).log(104, "x1", hist.OutcomeCommit).end(200, false)
		}},

	// PC3 no-unilateral-decision.
	{name: "PC3/commit-after-a-decision", prop: "PC3", want: []string{"PC3"}, why: `orders ended the prepared "x1" with COMMIT, but no coordinator, decision log or refusing peer had said commit`,
		pass: func() *trace {
			return prepared().decide(104, "x1", hist.OutcomeCommit).prep(105, "orders", "x1", "commit").end(200, false)
		},
		fail: func() *trace { return prepared().prep(105, "orders", "x1", "commit").end(200, false) }},
	{name: "PC3/commit-after-the-log", prop: "PC3", want: []string{"PC3"}, why: `orders ended the prepared "x1" with COMMIT`,
		pass: func() *trace {
			return prepared().log(104, "x1", hist.OutcomeCommit).prep(105, "orders", "x1", "commit").end(200, false)
		},
		fail: func() *trace { return prepared().prep(105, "orders", "x1", "commit").end(200, false) }},
	{name: "PC3/commit-after-recovery", prop: "PC3", want: []string{"PC3"}, why: `orders ended the prepared "x1" with COMMIT`,
		pass: func() *trace {
			return prepared().note(104, hist.Txn{What: hist.TxnRecover, GID: "x1", Participant: "orders", Outcome: hist.OutcomeCommit}).
				prep(105, "orders", "x1", "commit").end(200, false)
		},
		fail: func() *trace { return prepared().prep(105, "orders", "x1", "commit").end(200, false) }},
	{name: "PC3/word-before-the-act", prop: "PC3", want: []string{"PC3"}, why: `orders ended the prepared "x1" with COMMIT`,
		pass: func() *trace {
			return prepared().decide(104, "x1", hist.OutcomeCommit).prep(105, "orders", "x1", "commit").end(200, false)
		},
		fail: func() *trace {
			return prepared().prep(105, "orders", "x1", "commit").decide(106, "x1", hist.OutcomeCommit).end(200, false)
		}},
	{name: "PC3/word-of-the-same-outcome", prop: "PC3", want: []string{"PC3"}, why: `orders ended the prepared "x1" with COMMIT`,
		pass: func() *trace {
			return prepared().decide(104, "x1", hist.OutcomeCommit).prep(105, "orders", "x1", "commit").end(200, false)
		},
		fail: func() *trace {
			return prepared().decide(104, "x1", hist.OutcomeAbort).prep(105, "orders", "x1", "commit").end(200, false)
		}},
	{name: "PC3/rollback-after-an-abort", prop: "PC3", want: []string{"PC3"}, why: `inventory ended the prepared "x1" with ROLLBACK, but no coordinator, decision log or refusing peer had said abort`,
		// C.3 approach A: inventory's agent rolls back on its own.
		pass: func() *trace {
			return prepared().decide(5000, "x1", hist.OutcomeAbort).prep(6000, "inventory", "x1", "rollback").end(9000, false)
		},
		fail: func() *trace {
			return prepared().note(6000, hist.Txn{What: hist.TxnUnilateral, GID: "x1", By: "inventory-agent", Outcome: hist.OutcomeAbort}).
				prep(6000, "inventory", "x1", "rollback").end(9000, false)
		}},
	{name: "PC3/rollback-after-a-refusal-note", prop: "PC3", want: []string{"PC3"}, why: `orders ended the prepared "x1" with ROLLBACK`,
		// C.8c: inventory never voted and refused the gid when asked.
		pass: func() *trace {
			return orderOnly().note(3000, refuseNote(3000, "inventory")).prep(3001, "orders", "x1", "rollback").end(9000, true)
		},
		fail: func() *trace { return orderOnly().prep(3001, "orders", "x1", "rollback").end(9000, true) }},
	{name: "PC3/rollback-after-a-tombstone", prop: "PC3", want: []string{"PC3"}, why: `orders ended the prepared "x1" with ROLLBACK`,
		// The refusing agent crashed after committing its tombstone,
		// before its note; a txlog row of the gid's own work is no
		// refusal (TestPC3RefusalByTombstone has more).
		pass: func() *trace {
			return orderOnly().commit(3000, "inventory", txlogRow("x1", StateRefused)).prep(3001, "orders", "x1", "rollback").end(9000, true)
		},
		fail: func() *trace {
			return orderOnly().commit(3000, "inventory", txlogRow("x1", "committed")).prep(3001, "orders", "x1", "rollback").end(9000, true)
		}},
	{name: "PC3/refuser-never-voted", prop: "PC3", want: []string{"PC3"}, why: "inventory refused it after voting YES",
		// The refusal of a participant whose YES a coordinator received
		// is no refusal: it did vote.
		pass: func() *trace {
			return orderOnly().note(3000, refuseNote(3000, "inventory")).prep(3001, "orders", "x1", "rollback").end(9000, false)
		},
		fail: func() *trace {
			return prepared().note(3000, refuseNote(3000, "inventory")).prep(3001, "orders", "x1", "rollback").end(9000, false)
		}},
	{name: "PC3/refuser-never-voted-tombstone", prop: "PC3", want: []string{"PC3"}, why: "inventory refused it after voting YES",
		pass: func() *trace {
			return orderOnly().commit(3000, "inventory", txlogRow("x1", StateRefused)).prep(3001, "orders", "x1", "rollback").end(9000, false)
		},
		fail: func() *trace {
			return prepared().commit(3000, "inventory", txlogRow("x1", StateRefused)).prep(3001, "orders", "x1", "rollback").end(9000, false)
		}},

	// PC4 recovery-completes.
	{name: "PC4/nothing-prepared-after-quiescence", prop: "PC4", want: []string{"PC4"}, why: "after quiescence 2 prepared transactions remain: orders:x1",
		pass: func() *trace { return halfCommitted().prep(106, "inventory", "x1", "commit").end(9000, true) },
		fail: func() *trace { return prepared().end(9000, true) }},
	{name: "PC4/only-when-quiesced", prop: "PC4", want: []string{"PC4"}, why: "after quiescence 2 prepared transactions remain",
		// Permission: a run that did not end quiesced is not judged.
		pass: func() *trace { return prepared().end(9000, false) },
		fail: func() *trace { return prepared().end(9000, true) }},

	// PC5 abort-before-yes-is-clean.
	{name: "PC5/no-commit-without-yes/died", prop: "PC5", want: []string{"PC5"}, why: `inventory never voted YES on "x1" (no vote received) but ended committed`,
		pass: func() *trace { return unvoted(hist.VoteYes).recoverCommit(5000).end(9000, true) },
		fail: func() *trace { return unvoted("").recoverCommit(5000).end(9000, true) }},
	{name: "PC5/no-commit-without-yes/refused", prop: "PC5", want: []string{"PC5"}, why: `inventory never voted YES on "x1" (no) but ended committed`,
		pass: func() *trace { return unvoted(hist.VoteYes).recoverCommit(5000).end(9000, true) },
		fail: func() *trace { return unvoted(hist.VoteNo).recoverCommit(5000).end(9000, true) }},
	{name: "PC5/no-commit-without-yes/lost", prop: "PC5", want: []string{"PC5"}, why: `inventory never voted YES on "x1" (unknown) but ended committed`,
		pass: func() *trace { return unvoted(hist.VoteYes).recoverCommit(5000).end(9000, true) },
		fail: func() *trace { return unvoted(hist.VoteUnknown).recoverCommit(5000).end(9000, true) }},
	{name: "PC5/nothing-prepared-after-quiescence", prop: "PC5", want: []string{"PC4", "PC5"}, why: `inventory never voted YES on "x1" (unknown) but ended prepared`,
		// C.7: the coordinator aborted and rolled orders back; inventory,
		// whose vote never came, is left prepared (PC4's too).
		pass: func() *trace {
			return unvoted(hist.VoteUnknown).decide(103, "x1", hist.OutcomeAbort).log(103, "x1", hist.OutcomeAbort).
				prep(104, "orders", "x1", "rollback").prep(105, "inventory", "x1", "rollback").end(9000, true)
		},
		fail: func() *trace {
			return unvoted(hist.VoteUnknown).decide(103, "x1", hist.OutcomeAbort).log(103, "x1", hist.OutcomeAbort).
				prep(104, "orders", "x1", "rollback").end(9000, true)
		}},
	{name: "PC5/prepared-judged-only-when-quiesced", prop: "PC5", want: []string{"PC4", "PC5"}, why: `ended prepared`,
		// Permission: before quiescence a participant may still be
		// prepared; its rollback may be on its way.
		pass: func() *trace {
			return unvoted(hist.VoteUnknown).decide(103, "x1", hist.OutcomeAbort).log(103, "x1", hist.OutcomeAbort).
				prep(104, "orders", "x1", "rollback").end(9000, false)
		},
		fail: func() *trace {
			return unvoted(hist.VoteUnknown).decide(103, "x1", hist.OutcomeAbort).log(103, "x1", hist.OutcomeAbort).
				prep(104, "orders", "x1", "rollback").end(9000, true)
		}},
}

// TestClausesC: every clause of PC1-PC5, its breaking trace and its
// passing neighbour.
func TestClausesC(t *testing.T) {
	names := map[string]bool{}
	for _, c := range clausesC {
		require.False(t, names[c.name], "one row per clause: %s twice", c.name)
		names[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			t.Run("pass", func(t *testing.T) {
				assert.Empty(t, failed(t, c.pass()), "the neighbour without the break must pass")
			})
			t.Run("fail", func(t *testing.T) {
				tr := c.fail()
				assert.Equal(t, c.want, failed(t, tr), "the checker must catch it with exactly these properties")
				v := verdict(t, tr, c.prop)
				assert.False(t, v.OK)
				assert.Contains(t, v.Message, c.why, "%s must name the clause", c.prop)
			})
		})
	}
}
