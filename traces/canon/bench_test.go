package canon_test

import (
	"testing"

	"github.com/fencesim/fencesim/traces/canon"
)

// BenchmarkText: a message's text, as the trace's lines carry it.
func BenchmarkText(b *testing.B) {
	s := "#27 home-1.2->arbiter-1 conn=4 POST /claim no=2 worker=home-1 proc=home-1.2 request_id=home-1.2-1-1 UPDATE submissions SET status = 'judging'"
	buf := make([]byte, 0, 512)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = canon.Text(buf[:0], s)
	}
}
