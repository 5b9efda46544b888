package report

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fencesim/fencesim/traces"
)

// TestWords: each kernel format in words, the kind said once.
func TestWords(t *testing.T) {
	for _, c := range []struct {
		kind, text, data, want string
	}{
		{"send", "#12 p0->p1 ping p0/4", "", "sends #12 to p1: ping p0/4"},
		{"send", "#543 db->arbiter-1 conn=76 resp 3: INSERT 0 0", "", "sends #543 to arbiter-1 (conn 76): resp 3: INSERT 0 0"},
		{"deliver", "#543 db->arbiter-1 conn=76 resp 3", "", "receives #543 from db (conn 76): resp 3"},
		{"drop", "#253 connection closed", "", "drops #253: connection closed"},
		{"dup", "#3 copied as #4", "", "duplicates #3: copied as #4"},
		{"start", "incarnation 0", "", "starts (incarnation 0)"},
		{"restart", "incarnation 1", "", "restarts (incarnation 1)"},
		{"crash", "crash point", "", "crashes (crash point)"},
		{"dial", "conn 1 to db", "", "dials conn 1 to db"},
		{"conn-broken", "conn 11 to home-2.2", "", "conn 11 to home-2.2 broken"},
		{"timer", "timer 1 dispatch-tick: dispatch tick", "", "timer 1 dispatch-tick: dispatch tick"},
		{"commit", "commit #50 tx 106 at 117.883s: insert x(1)", `{"seq":50}`, "commit #50 tx 106 at 117.883s: insert x(1)"},
		{"db", "c76 INSERT INTO t", "", "db: c76 INSERT INTO t"},
		{"verdict", "", "", "verdict"},
		{"fault", "@15.426s delay arbiter-1->db for=1m13.566s amount=10.781s", `{"at":15426000000,"kind":"delay","node":"arbiter-1","peer":"db","for":73566000000,"amount":10781000000}`, "fault: arbiter-1 -> db delayed up to 10.781 s for 73.566 s"},
		{"fault", "@2.000s pause arbiter-1", `{"kind":"pause","node":"arbiter-1"}`, "fault: arbiter-1 paused"},
		{"fault", "@2.000s stall home-1->arbiter-1 for=40s", `{"kind":"stall","node":"home-1","peer":"arbiter-1","for":40000000000}`, "fault: home-1 -> arbiter-1 stalled 40 s"},
		{"fault", "@1s loss a->b rate=250000 for=500ms", `{"kind":"loss","node":"a","peer":"b","rate":250000,"for":500000000}`, "fault: a -> b losing 25% of datagrams for 500 ms"},
		{"fault", "@1s crash-at a point=p count=2", `{"kind":"crash-at","node":"a","point":"claim-after-reply","count":2}`, "fault: a to crash the 2nd time it reaches claim-after-reply"},
		{"fault", "@1s crash-yield c count=26", `{"kind":"crash-yield","node":"c","count":26}`, "fault: c to crash at its 26th blocking call"},
		{"fault", "@1s message a->b count=3 arg=drop", `{"kind":"message","node":"a","peer":"b","count":3,"arg":"drop"}`, "fault: a -> b: the 3rd message dropped"},
		{"fault", "loss burst 1 ended", "", "fault: loss burst 1 ended"},
	} {
		e := traces.Event{Kind: c.kind, Text: c.text}
		if c.data != "" {
			e.Data = json.RawMessage(c.data)
		}
		assert.Equal(t, c.want, words(&e), "%s %q", c.kind, c.text)
	}
	assert.Equal(t, "11th", ordinal(11))
	assert.Equal(t, "22nd", ordinal(22))
	assert.Equal(t, "113th", ordinal(113))
	assert.Equal(t, "0.000 s", fmtTime(0))
	assert.Equal(t, "75.123 s", fmtTime(75_123_999_999))
	assert.Equal(t, "-1.500 s", fmtTime(-1_500_000_000))
}
