package pairing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReviewOrphanWhenMemoryMovesOnWhileHeld: a result held in a scope that the memory of
// forgotten scopes remembers as having seen a use is released as orphan, even when the memory
// forgets that scope (other scopes forgotten after it) while the result waits. The scope was
// remade by the held result; before the lazy sawUse it read the memory when it was made.
func TestReviewOrphanWhenMemoryMovesOnWhileHeld(t *testing.T) {
	clk := newFakeClock()
	e, err := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 100, MaxResolved: 1, Clock: clk})
	require.NoError(t, err)
	in := func(scope, id string, kind Kind, ms int64) Event {
		return Event{Kind: kind, Key: Key{Tenant: "svc", Conversation: scope, CallID: id}, Time: ms * int64(time.Millisecond), Ref: int32(ms)}
	}
	run(t, e, in("s1", "a", KindUse, 1), in("s1", "a", KindResult, 2))
	run(t, e, in("s2", "a", KindUse, 1), in("s2", "a", KindResult, 2)) // forgets s1: remembered
	require.NotContains(t, e.conversations, ConversationKey{Tenant: "svc", Conversation: "s1"})
	run(t, e, in("s1", "held", KindResult, 3)) // s1 made again, by a held result
	// s2 is forgotten in turn; the memory (bound 1) now forgets s1.
	run(t, e, in("s3", "a", KindUse, 1), in("s3", "a", KindResult, 2))
	clk.Advance(testGrace)
	out := e.Tick(nil)
	require.Len(t, out, 1)
	assert.Equal(t, OutcomeOrphan, out[0].Outcome, "s1 saw a use before its result was held")
}

// TestReviewEventHashedByAnotherEngine: an Event that went through one engine's Process (which
// hashed its key with that engine's seed) is processed by another engine holding no resolved
// call: its use must still be found by its result.
func TestReviewEventHashedByAnotherEngine(t *testing.T) {
	a, _ := newTestEngine(t, 100)
	b, _ := newTestEngine(t, 100)
	// Engine a holds a resolved call, so its Process hashes the batch (prefetch).
	run(t, a, use("x", 1000), result("x", 2000))
	evs := []Event{use("a", 3000)}
	run(t, a, evs...)
	require.True(t, evs[0].hashed)
	// The same event, in an engine whose ring is empty: prefetch leaves the event as it is.
	evs[0].Verdict = 0
	run(t, b, evs...)
	out := run(t, b, result("a", 4000))
	require.Len(t, out, 1)
	assert.Equal(t, OutcomePaired, out[0].Outcome)
}
