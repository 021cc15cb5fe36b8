// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package statestore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/statefile"
)

// TestPointer: a pointer reads back as written; a truncated or altered one is corrupt.
func TestPointer(t *testing.T) {
	b := encodePointer(7, 1_900_000_000_000_000_000)
	gen, logStart, err := DecodePointer(b)
	require.NoError(t, err)
	assert.Equal(t, uint64(7), gen)
	assert.Equal(t, uint64(1_900_000_000_000_000_000), logStart)
	for n := range len(b) {
		_, _, err := DecodePointer(b[:n])
		assert.Equal(t, statefile.ReasonCorrupt, statefile.ReasonOf(err), "truncated to %d bytes", n)
	}
	for i := range b {
		flipped := append([]byte(nil), b...)
		flipped[i] ^= 0x40
		_, _, err := DecodePointer(flipped)
		assert.Equal(t, statefile.ReasonCorrupt, statefile.ReasonOf(err), "byte %d flipped", i)
	}
}

// TestKeys: the storage keys name the generation and the sequence number in decimal.
func TestKeys(t *testing.T) {
	assert.Equal(t, "toolpair.state.3", StateKey(3))
	assert.Equal(t, "toolpair.resolved.42", ResolvedKey(42))
	assert.Equal(t, "toolpair.pointer", PointerKey)
}
