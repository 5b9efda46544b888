package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPropertyLabel: two checks of one property read apart in compare's
// and diff's lines about flips (both read "PA1" before).
func TestPropertyLabel(t *testing.T) {
	assert.Equal(t, "PA1", propertyLabel("PA1 at-most-one-owner"))
	assert.Equal(t, "PA1 (porcupine, oracle view)", propertyLabel("PA1 at-most-one-owner (porcupine, oracle view)"))
	assert.Equal(t, "MA5", propertyLabel("MA5 outage-load"))
	assert.Equal(t, "PB1", propertyLabel("PB1"))
}
