package netproxy

import (
	"math/rand/v2"

	"github.com/Shopify/toxiproxy/v2/toxics"
)

// dropType is the toxic Cut, Partition and Loss use, registered in
// toxiproxy's toxic registry (its documented extension point).
const dropType = "fencesim_drop"

func init() { toxics.Register(dropType, new(dropToxic)) }

// dropToxic loses the data of a connection: each chunk is lost with
// probability Rate per million, and once one is lost so is everything after
// it on that stream, since a TCP stream with a gap is no stream. The sender
// sees nothing (a request vanishes and its caller's timeout fires, as for a
// dropped datagram); the peer never sees a gap. When the toxic is removed,
// the connections that lost data are closed.
//
// It differs from toxiproxy's own timeout and reset_peer toxics in two ways
// that matter to a live run: removing it closes only the connections that
// lost something, and a connection it closes is drained until it ends, so
// the toxic before it in the chain never blocks on a dead stub and leaks (the
// leak our traffic test found with reset_peer).
type dropToxic struct {
	Rate int64 `json:"rate"` // per million, per chunk
}

type dropState struct{ lost bool }

func (t *dropToxic) NewState() any { return new(dropState) }

func (t *dropToxic) Pipe(stub *toxics.ToxicStub) {
	st := stub.State.(*dropState)
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			if !st.lost && t.Rate > 0 && (t.Rate >= 1_000_000 || rand.Int64N(1_000_000) < t.Rate) {
				st.lost = true
			}
			if st.lost {
				continue
			}
			stub.Output <- c
		}
	}
}

// Cleanup runs when the toxic is removed, after Pipe returned: a connection
// that lost data is closed, and its input drained until the connection ends
// (the stub stays in toxiproxy's chain, so nothing else would read it).
func (t *dropToxic) Cleanup(stub *toxics.ToxicStub) {
	if !stub.State.(*dropState).lost {
		return
	}
	stub.Close()
	go func() {
		for c := range stub.Input {
			if c == nil {
				return
			}
		}
	}()
}
