package outbox

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lop is one delivery of a key for the hand-made PB1 histories, times in
// ms; ret Never is a lost reply (unknown outcome).
func lop(key string, call, ret int64, code int, value string) porcupine.Operation {
	if ret != Never {
		ret *= 1e6
	}
	return porcupine.Operation{
		Input:  LinInput{Key: key, Op: OpCharge},
		Call:   call * 1e6,
		Output: LinOutput{Unknown: ret == Never, Code: code, Value: value},
		Return: ret,
	}
}

func k(call, ret int64, code int, value string) porcupine.Operation {
	return lop("k", call, ret, code, value)
}

func lost(call int64) porcupine.Operation { return k(call, Never, 0, "") }

// TestPB1HandMadeHistories: histories whose PB1 answer is known by hand,
// checked by porcupine through the path CheckPB1 takes.
func TestPB1HandMadeHistories(t *testing.T) {
	pass := []struct {
		name string
		ops  []porcupine.Operation
	}{
		{"empty", nil},
		{"two copies same answer, one lost", []porcupine.Operation{k(0, 10, 200, "a"), k(5, 20, 200, "a"), lost(1)}},
		{"a refusal, then the same refusal", []porcupine.Operation{k(0, 10, 404, "no charge"), k(20, 30, 404, "no charge")}},
		{"concurrent copies refused alike", []porcupine.Operation{k(0, 30, 409, "already refunded"), k(5, 20, 409, "already refunded"), lost(6)}},
		{"keys do not interfere", []porcupine.Operation{k(0, 10, 200, "a"), lop("k2", 0, 10, 200, "b")}},
		{"only lost replies", []porcupine.Operation{lost(0), lost(5), lost(100)}},
		{"lost, then the answer twice", []porcupine.Operation{lost(0), k(50, 60, 200, "a"), k(70, 80, 200, "a")}},
		{"lost, then a refusal twice: the lost one may not have taken effect", []porcupine.Operation{lost(0), k(50, 60, 404, "no charge"), k(70, 80, 404, "no charge")}},
		{"503 is an unknown outcome", []porcupine.Operation{k(0, 10, 503, "database connection lost"), k(20, 30, 200, "a"), k(40, 50, 503, ""), k(60, 70, 200, "a")}},
		{"503, then a refusal, then the same refusal", []porcupine.Operation{k(0, 10, 503, ""), k(20, 30, 404, "no charge"), k(40, 50, 404, "no charge")}},
	}
	fail := []struct {
		name string
		ops  []porcupine.Operation
	}{
		{"404 after an effect", []porcupine.Operation{k(0, 10, 200, "a"), k(20, 30, 404, "")}},
		{"two concurrent copies, two answers", []porcupine.Operation{k(0, 10, 200, "a"), k(0, 10, 200, "b")}},
		{"a lost reply does not excuse a second answer", []porcupine.Operation{k(0, 10, 200, "a"), lost(15), k(20, 30, 200, "b")}},
		{"a 503 does not excuse a second answer", []porcupine.Operation{k(0, 10, 200, "a"), k(12, 14, 503, ""), k(20, 30, 200, "b")}},
		{"lost, answer, then 404", []porcupine.Operation{lost(0), k(5, 10, 200, "a"), k(20, 30, 404, "")}},
		{"404 after two copies answered", []porcupine.Operation{k(0, 10, 200, "a"), k(1, 11, 200, "a"), lost(2), k(40, 50, 404, "")}},
		{"a 4xx other than 404 after an effect", []porcupine.Operation{k(0, 10, 200, "a"), k(20, 30, 409, "conflict")}},
		{"404 before an effect: a refusal is the key's answer", []porcupine.Operation{k(0, 10, 404, ""), k(20, 30, 200, "a")}},
		{"a concurrent 404 and 200: two answers", []porcupine.Operation{k(0, 30, 200, "a"), k(5, 20, 404, "")}},
		{"lost, then 404, then 200", []porcupine.Operation{lost(0), k(50, 60, 404, ""), k(70, 80, 200, "a")}},
		{"two refusals that differ", []porcupine.Operation{k(0, 10, 404, "no charge"), k(20, 30, 409, "already refunded")}},
	}
	for _, c := range pass {
		res := checkKeys(c.ops)
		assert.True(t, res.ok, "must pass: %s", c.name)
		assert.Empty(t, res.illegal, c.name)
	}
	for _, c := range fail {
		res := checkKeys(c.ops)
		assert.False(t, res.ok, "must fail: %s", c.name)
		assert.Len(t, res.illegal, 1, c.name)
	}
}

// TestPB1IllegalKeyIsNamed: of two keys only the illegal one is described,
// with its operations in call order and how far porcupine got.
func TestPB1IllegalKeyIsNamed(t *testing.T) {
	res := checkKeys([]porcupine.Operation{
		lop("k2", 20, 30, 404, ""), lop("k1", 0, 10, 200, "a"), lop("k2", 0, 10, 200, "b"), lop("k1", 5, 15, 200, "a"), lop("k2", 1, Never, 0, ""),
	})
	require.False(t, res.ok)
	require.Len(t, res.illegal, 1)
	assert.Equal(t, "[0.000s, 0.010s] charge k2 -> 200 b; [0.001s, never] charge k2 -> ?; [0.020s, 0.030s] charge k2 -> 404  (longest linearizable prefix: 2 of 3)", res.illegal[0])
}

// TestPB1Visualization: a failing hand-made run gives porcupine's info,
// which porcupine turns into an HTML page; a passing run reports no failure.
func TestPB1Visualization(t *testing.T) {
	x := good(t)
	x.call(400, "d3", OpCharge, "evt-1", "order-1", 1, 400e6)
	x.ret(401, "d3", 200, "received ch-h2.1.1")
	hs, err := Decode(x.events)
	require.NoError(t, err)
	v := CheckPB1(hs)
	require.False(t, v.OK)
	info, illegal := PB1Info(hs)
	require.True(t, illegal)
	path := filepath.Join(t.TempDir(), "pb1.html")
	require.NoError(t, porcupine.VisualizePath(KeyModel, info, path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotEmpty(t, b)
	page := strings.ToLower(string(b))
	assert.True(t, strings.HasPrefix(strings.TrimSpace(page), "<!doctype html") || strings.HasPrefix(strings.TrimSpace(page), "<html"), "an HTML page")
	assert.Contains(t, page, "</html>")
	assert.Contains(t, string(b), "received ch-h2.1.1", "the operations are described")
	assert.Contains(t, string(b), "d3 via handler-1", "the metadata names the call")
	assert.Contains(t, string(b), "stored: 200 received ch-h1.1.1", "the states are described")

	ok, err := Decode(good(t).events)
	require.NoError(t, err)
	info, illegal = PB1Info(ok)
	assert.False(t, illegal)
	var buf bytes.Buffer
	require.NoError(t, porcupine.Visualize(KeyModel, info, &buf), "a passing run can be shown too")
	assert.NotZero(t, buf.Len())
}

// pb1History is a synthetic run of n keys and five deliveries each: two
// concurrent first copies answered alike, a 503, a lost reply and a late
// retry answered alike. It is linearizable.
func pb1History(n int) *History {
	r := rand.New(rand.NewPCG(1, 2))
	h := &History{}
	ms := func(x int64) int64 { return x * 1e6 }
	for i := range n {
		key := fmt.Sprintf("evt-%d", i)
		answer := fmt.Sprintf("received ch-h%d.1.1", i)
		t0 := int64(r.IntN(10_000))
		add := func(call, ret int64, code int, value string) {
			c := Call{ID: fmt.Sprintf("d%d", len(h.Calls)), Client: "sender", Op: OpCharge, Key: key, Invoke: ms(call), Return: Never, Code: code, Value: value, Handler: "handler-1"}
			if ret != Never {
				c.Return = ms(ret)
			}
			h.Calls = append(h.Calls, c)
		}
		add(t0, t0+20+int64(r.IntN(50)), 200, answer)
		add(t0+1, t0+20+int64(r.IntN(50)), 200, answer)
		add(t0+5, t0+30, 503, "database connection lost")
		add(t0+10, Never, 0, "")
		add(t0+500+int64(r.IntN(500)), t0+1100, 200, answer)
	}
	return h
}

func TestPB1SyntheticHistoryPasses(t *testing.T) {
	h := pb1History(200)
	require.Len(t, h.Calls, 1000)
	assert.True(t, CheckPB1(h).OK)
	// One wrong answer late in one key is caught.
	h.Calls[len(h.Calls)-1].Value = "received ch-other"
	v := CheckPB1(h)
	assert.False(t, v.OK)
	assert.Len(t, v.Why, 1)
}

// BenchmarkPB1Porcupine: CheckPB1 on a history of 1000 deliveries (200
// keys).
func BenchmarkPB1Porcupine(b *testing.B) {
	h := pb1History(200)
	ops := len(h.Calls)
	for b.Loop() {
		if !CheckPB1(h).OK {
			b.Fatal("the synthetic history must pass")
		}
	}
	b.ReportMetric(float64(ops)*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}
