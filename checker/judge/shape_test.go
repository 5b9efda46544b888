package judge

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fencesim/fencesim/checker"
	"github.com/fencesim/fencesim/traces"
	"github.com/fencesim/fencesim/traces/hist"
)

// runShaped decodes the history with a header whose workload carries
// workload (JSON, as the model writes judge.Workload).
func (b *h) runShaped(t *testing.T, workload string) *Run {
	t.Helper()
	r, err := Decode(traces.Header{Format: traces.Format, System: "arbiter", Entropy: "pcg", Design: design, Workload: json.RawMessage(workload)}, b.evs)
	require.NoError(t, err)
	return r
}

// TestShapeFromTheHeader: the shape is the workload's "shape" key; a
// header without a workload, or a workload without the key, is the
// smallest world; an unreadable workload is an error, not a guess.
func TestShapeFromTheHeader(t *testing.T) {
	assert.Equal(t, hist.Shape{}, happy().run(t).Shape, "no workload")
	assert.Equal(t, hist.Shape{}, happy().runShaped(t, `{"submissions":12,"users":4}`).Shape, "no shape key")
	r := happy().runShaped(t, `{"submissions":12,"shape":{"processes_per_worker":2,"zombies":1,"leases_per_claim":3,"shared_request_ids":true,"arbiters":2}}`)
	assert.Equal(t, hist.Shape{ProcessesPerWorker: 2, Zombies: 1, LeasesPerClaim: 3, SharedRequestIDs: true, Arbiters: 2}, r.Shape)
	_, err := Decode(traces.Header{System: "arbiter", Design: design, Workload: json.RawMessage(`{"shape":[1]}`)}, nil)
	assert.ErrorContains(t, err, "no readable shape")
}

// TestEveryCheckDeclaresItsShapes: every invariant and the porcupine check
// has its entry in Supports, under its own name.
func TestEveryCheckDeclaresItsShapes(t *testing.T) {
	for _, inv := range Invariants {
		sup, ok := Supports[inv.Name]
		if assert.True(t, ok, "%s declares no shapes", inv.Name) {
			assert.Equal(t, inv.Name, sup.Name)
		}
	}
	assert.Equal(t, Porcupine, Supports[Porcupine].Name)
	assert.Panics(t, func() { gated([]Invariant{{Name: "PX nothing", Check: AtMostOneOwner}}) }, "an invariant without shapes is our bug")
	assert.Panics(t, func() { (&Run{}).supported("PX nothing", "PX nothing") })
}

// pa4Broken: one claim (request r2, retried) granted two leases: PA4 fails
// it in the smallest world.
func pa4Broken() *h {
	b := happy()
	b.commit(ins("submissions", sub(102, "pending", "", 0, "")))
	b.call("c2", "home-1", "claim", 0, "", 0, "r2")
	b.commit(upd("submissions", sub(102, "pending", "", 0, ""), sub(102, "judging", "C", 1, "home-1")), ins("claims", row{"worker_id": "home-1", "request_id": "r2", "submission_id": 102, "lease_token": "C"}))
	b.commit(ins("submissions", sub(103, "pending", "", 0, "")))
	b.commit(upd("submissions", sub(103, "pending", "", 0, ""), sub(103, "judging", "D", 1, "home-1")), ins("claims", row{"worker_id": "home-1", "request_id": "r2", "submission_id": 103, "lease_token": "D"}))
	return b
}

// TestUnsupportedShapeIsNoViolation: a run outside a check's shapes gets
// from that check a verdict that holds and says "unsupported: ...", even
// on a history it would fail in a shape it reads; the other checks judge
// it as usual.
func TestUnsupportedShapeIsNoViolation(t *testing.T) {
	require.False(t, verdictOf(t, pa4Broken().run(t), PA4).OK, "the smallest world: judged, and it fails")
	defer func(s hist.Support) { Supports[PA4] = s }(Supports[PA4])
	Supports[PA4] = hist.Support{Name: PA4}
	r := pa4Broken().runShaped(t, `{"shape":{"processes_per_worker":2,"shared_request_ids":true}}`)
	v := verdictOf(t, r, PA4)
	assert.True(t, v.OK, "not a violation: %s", v)
	assert.Equal(t, "unsupported: "+PA4+" checker reads 2 processes per worker_id (supports 1), request ids shared between worker_ids", v.Message)
	assert.True(t, Unsupported(v))
	assert.Empty(t, v.Events)
	res := Check(r)
	n := 0
	for _, v := range res.Verdicts {
		if Unsupported(v) {
			n++
			assert.Equal(t, PA4, v.Property)
		}
	}
	assert.Equal(t, 1, n, "only PA4 is unsupported")
	assert.Len(t, res.Verdicts, len(Invariants)+2, "every check still answers")

	// Within the shape PA4 reads, it judges again.
	Supports[PA4] = hist.Support{Name: PA4, ProcessesPerWorker: 2, SharedRequestIDs: true}
	assert.False(t, verdictOf(t, pa4Broken().runShaped(t, `{"shape":{"processes_per_worker":2,"shared_request_ids":true}}`), PA4).OK)
}

// TestUnsupportedShapeOfPorcupine: both views of the porcupine check
// answer "unsupported: ..." under their own names, with no visualisation,
// on a history that is not linearizable.
func TestUnsupportedShapeOfPorcupine(t *testing.T) {
	b := happy()
	b.call("c2", "home-2", "claim", 0, "", 0, "q1")
	b.ret("c2", "home-2", 200, 101, "B", 1) // a second token of generation 1
	v, _ := Linearizable(b.run(t), ClientView)
	require.False(t, v.OK)
	defer func(s hist.Support) { Supports[Porcupine] = s }(Supports[Porcupine])
	Supports[Porcupine] = hist.Support{Name: Porcupine, Arbiters: 1}
	r := b.runShaped(t, `{"shape":{"arbiters":3}}`)
	for view, name := range map[View]string{ClientView: PA3, OracleView: PA1 + " (porcupine, oracle view)"} {
		v, info := Linearizable(r, view)
		assert.True(t, Unsupported(v), "%s", v)
		assert.Equal(t, name, v.Property)
		assert.Equal(t, "unsupported: "+Porcupine+" checker reads 3 arbiters (supports 1)", v.Message)
		assert.Nil(t, info)
	}
}

// TestUnsupportedIsOnlyThatAnswer: a pass with another message, and a
// failure that mentions the word, are not "unsupported".
func TestUnsupportedIsOnlyThatAnswer(t *testing.T) {
	assert.False(t, Unsupported(checker.Pass(PA8)))
	assert.False(t, Unsupported(checker.Verdict{Property: PA8, OK: true, Message: "not checked: the run ended early"}))
	assert.False(t, Unsupported(checker.Fail(PA1, nil, "unsupported: but failed")))
}
