package live

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/fencesim/fencesim/traces"
)

// Codec names the message types a system's nodes exchange, so that a body
// (a Go value in the simulator) crosses a socket as JSON and arrives as the
// same type.
type Codec struct {
	byName map[string]reflect.Type
	byType map[reflect.Type]string
}

// NewCodec returns a codec for the types of the given values.
func NewCodec(vs ...any) *Codec {
	c := &Codec{byName: map[string]reflect.Type{}, byType: map[reflect.Type]string{}}
	for _, v := range vs {
		t := reflect.TypeOf(v)
		name := t.String() // "judge.Request"
		c.byName[name] = t
		c.byType[t] = name
	}
	return c
}

// Encode returns a body's type name and JSON.
func (c *Codec) Encode(v any) (string, []byte, error) {
	name, ok := c.byType[reflect.TypeOf(v)]
	if !ok {
		return "", nil, fmt.Errorf("live: no wire type for %T: register it with the system's codec", v)
	}
	b, err := json.Marshal(v)
	return name, b, err
}

// Decode returns the value a type name and JSON stand for.
func (c *Codec) Decode(name string, data []byte) (any, error) {
	t, ok := c.byName[name]
	if !ok {
		return nil, fmt.Errorf("live: unknown wire type %q", name)
	}
	p := reflect.New(t)
	if err := json.Unmarshal(data, p.Interface()); err != nil {
		return nil, fmt.Errorf("live: decoding %s: %w", name, err)
	}
	return p.Elem().Interface(), nil
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("live: %T does not encode: %v", v, err))
	}
	return b
}

// noteEvent is an event the runner writes as a node would note it (data
// nil: none).
func noteEvent(t int64, node, kind, text string, data any) traces.Event {
	ev := traces.Event{T: t, Node: node, Kind: kind, Text: text}
	if data != nil {
		ev.Data = mustJSON(data)
	}
	return ev
}
