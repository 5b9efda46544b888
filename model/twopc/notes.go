package twopc

import (
	"encoding/json"

	ct "github.com/fencesim/fencesim/checker/twopc"
	"github.com/fencesim/fencesim/traces"
)

func decodeNote(e traces.Event) (ct.Note, error) {
	var n ct.Note
	err := json.Unmarshal(e.Data, &n)
	return n, err
}
