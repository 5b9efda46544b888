package detcheck

import (
	"go/token"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSimulatedWorldIsDeterministic is the rule of ARCHITECTURE.md, enforced
// on the source itself.
func TestSimulatedWorldIsDeterministic(t *testing.T) {
	vs, files, err := Dirs("../../clock", "../../network", "../../sim", "../../model")
	require.NoError(t, err)
	require.Greater(t, files, 5, "the checked directories must contain source")
	for _, v := range vs {
		t.Errorf("determinism: %s", v)
	}
}

func TestCatchesPlantedViolations(t *testing.T) {
	src := `package bad
import (
	"time"
	tm "time"
	"math/rand"
	r2 "math/rand/v2"
	crand "crypto/rand"
	"os"
)
var _ = crand.Reader
func f() {
	_ = time.Now()
	time.Sleep(1)
	_ = tm.Since(time.Time{})
	<-time.After(1)
	_ = time.NewTimer(1)
	_ = time.Tick(1)
	_ = rand.Intn(3)
	_ = r2.N(3)
	_ = rand.New(rand.NewSource(1)) // allowed: explicit seed
	_ = os.Getenv("X")
	go f()
	ch := make(chan int)
	select { case ch <- 1: default: }
	_ = time.Duration(3) // allowed
}
`
	vs, err := File(token.NewFileSet(), "bad.go", []byte(src))
	require.NoError(t, err)
	var got []string
	for _, v := range vs {
		got = append(got, v.What)
	}
	want := []string{
		"imports crypto/rand", "time.Now", "time.Sleep", "time.Since", "channel receive", "time.After",
		"time.NewTimer", "time.Tick", "math/rand.Intn (global generator)", "math/rand/v2.N (global generator)",
		"os.Getenv", "go statement", "channel type", "select statement", "channel send",
	}
	assert.ElementsMatch(t, want, got, "every planted violation is found, and nothing else:\n%s", strings.Join(got, "\n"))
}

// TestCoroutinesOnlyInTheKernel: iter.Pull is the kernel's (sim/) and
// nobody else's; inside sim/ goroutines and channels are still refused.
func TestCoroutinesOnlyInTheKernel(t *testing.T) {
	src := `package p
import "iter"
func f(seq iter.Seq[int]) {
	next, stop := iter.Pull(seq)
	defer stop()
	next()
	go f(seq)
	var c chan int
	_ = c
}
`
	what := func(name string) []string {
		vs, err := File(token.NewFileSet(), name, []byte(src))
		require.NoError(t, err)
		var got []string
		for _, v := range vs {
			got = append(got, v.What)
		}
		return got
	}
	assert.ElementsMatch(t, []string{"iter.Pull outside sim/ (coroutines belong to the kernel)", "go statement", "channel type"},
		what("model/judge/bad.go"), "a model may not make coroutines")
	assert.ElementsMatch(t, []string{"go statement", "channel type"}, what("../../sim/proc.go"),
		"the kernel may make coroutines, but not goroutines or channels")
}

func TestShadowedNameIsNotAViolation(t *testing.T) {
	src := `package ok
type clock struct{}
func (clock) Now() int { return 0 }
func f() int { time := clock{}; return time.Now() }
`
	vs, err := File(token.NewFileSet(), "ok.go", []byte(src))
	require.NoError(t, err)
	assert.Empty(t, vs, "a local named time without the import is not the wall clock")
}
