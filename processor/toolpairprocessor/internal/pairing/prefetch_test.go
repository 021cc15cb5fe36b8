// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEventHashedByAnotherEngine: an Event that went through one engine's Process (which
// hashed its key with that engine's seed) is processed by another engine holding no resolved
// call: its use must still be found by its result.
func TestEventHashedByAnotherEngine(t *testing.T) {
	a, _ := newTestEngine(t, 100)
	b, _ := newTestEngine(t, 100)
	// Engine a holds a resolved call, so its Process hashes the batch (hashEvents).
	run(t, a, use("x", 1000), result("x", 2000))
	evs := []Event{use("a", 3000)}
	run(t, a, evs...)
	require.True(t, evs[0].hashed)
	// The same event, in an engine whose ring is empty: hashEvents hashes it again.
	evs[0].Verdict = 0
	run(t, b, evs...)
	out := run(t, b, result("a", 4000))
	require.Len(t, out, 1)
	assert.Equal(t, OutcomePaired, out[0].Outcome)
}

// TestHashEventsAfterAnEmptyScopeKey: a batch whose first event has no call ID and whose next
// has the empty tenant and conversation hashes that key as every other lookup does: the
// result, in a batch of its own, finds its use.
func TestHashEventsAfterAnEmptyScopeKey(t *testing.T) {
	e, _ := newTestEngine(t, 100)
	run(t, e, use("x", 1000), result("x", 2000)) // a resolved call: readAhead reads ahead
	empty := func(kind Kind, ms int64) Event {
		return Event{Kind: kind, Key: Key{CallID: "c"}, Time: ms * int64(time.Millisecond)}
	}
	noID := Event{Kind: KindUse, Key: Key{Tenant: "t", Conversation: "s"}}
	run(t, e, noID, empty(KindUse, 3))
	out := run(t, e, empty(KindResult, 4))
	require.Len(t, out, 1)
	assert.Equal(t, OutcomePaired, out[0].Outcome)
}
