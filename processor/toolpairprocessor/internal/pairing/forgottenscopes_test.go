// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"hash/fnv"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scopeEvent is an event of call id in scope of tenant svc at ms milliseconds (its Ref too).
func scopeEvent(scope, id string, kind Kind, ms int64) Event {
	return Event{Kind: kind, Key: Key{Tenant: "svc", Conversation: scope, CallID: id}, Time: ms * int64(time.Millisecond), Ref: int32(ms)}
}

// TestOrphanAfterResolvedTrim: once MaxResolved has forgotten every resolved call of a scope
// (and so the scope's state), a result without its use in that scope is still an orphan
// (specification section 2: a scope where at least one use has been seen), held or not; a scope
// that never saw a use stays standalone; and the memory of such scopes is bounded, oldest
// forgotten first.
func TestOrphanAfterResolvedTrim(t *testing.T) {
	clk := newFakeClock()
	e := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 100, MaxResolved: 2, Clock: clk})
	// Scope s1 sees a call, paired; then two pairs in s2 and s3 trim s1's call (and s1) away.
	for _, sc := range []string{"s1", "s2", "s3"} {
		run(t, e, scopeEvent(sc, "a", KindUse, 1), scopeEvent(sc, "a", KindResult, 2))
	}
	require.NotContains(t, e.conversations, ConversationKey{Tenant: "svc", Conversation: "s1"}, "s1's state is forgotten")
	// Settled at once (hold nil), and held then released after orphan_grace.
	out := e.Process([]Event{scopeEvent("s1", "late", KindResult, 3)}, nil, nil)
	require.Len(t, out, 1)
	assert.Equal(t, OutcomeOrphan, out[0].Outcome)
	run(t, e, scopeEvent("s1", "held", KindResult, 4))
	clk.Advance(testGrace)
	out = e.Tick(nil)
	require.Len(t, out, 1)
	assert.Equal(t, OutcomeOrphan, out[0].Outcome)
	// A scope that never saw a use.
	out = e.Process([]Event{scopeEvent("s9", "x", KindResult, 5)}, nil, nil)
	require.Len(t, out, 1)
	assert.Equal(t, OutcomeStandalone, out[0].Outcome)
	require.NoError(t, e.Stats().CheckConservation())

	// The memory holds at most MaxResolved scopes: after s4 and s5 are forgotten too, s1
	// (the oldest remembered) is not.
	for _, sc := range []string{"s4", "s5", "s6", "s7"} {
		run(t, e, scopeEvent(sc, "a", KindUse, 1), scopeEvent(sc, "a", KindResult, 2))
	}
	assert.LessOrEqual(t, e.usedConversations.len(), 2)
	out = e.Process([]Event{scopeEvent("s1", "later", KindResult, 6)}, nil, nil)
	require.Len(t, out, 1)
	assert.Equal(t, OutcomeStandalone, out[0].Outcome, "forgotten past the bound")
}

// TestStableConversationHashIsFNV1a: the memory's hash of a scope key is FNV-1a over the
// tenant, a zero byte and the scope, as stored states of earlier versions hold it.
func TestStableConversationHashIsFNV1a(t *testing.T) {
	for _, k := range []ConversationKey{{}, {Tenant: "claude-code", Conversation: "72b63dad-969f-401e-a1e1-6208a465a3c6"}, {Tenant: "a\x00b", Conversation: "é"}} {
		h := fnv.New64a()
		_, _ = h.Write([]byte(k.Tenant))
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(k.Conversation))
		assert.Equal(t, h.Sum64(), stableConversationHash(k), "%+v", k)
	}
}

// TestConversationMemoryAgainstAMap: random additions to a memory of at most 50 hashes, many
// of them colliding in the table (hashes from a small range) or repeated, keep what a map
// and a FIFO of the same bound keep, including the hash 0 (which the memory keeps as 1: the
// model does the same).
func TestConversationMemoryAgainstAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := conversationMemory{max: 50}
	want := map[uint64]bool{}
	var fifo []uint64
	for range 20_000 {
		h := max(rng.Uint64N(200)<<(rng.Uint64N(2)*40), 1) // small values share home slots
		if rng.Uint64N(50) == 0 {
			h = 0
		}
		if !want[max(h, 1)] {
			if len(fifo) == 50 {
				delete(want, max(fifo[0], 1))
				fifo = fifo[1:]
			}
			want[max(h, 1)] = true
			fifo = append(fifo, h)
		}
		m.add(h)
		require.Equal(t, len(fifo), m.len())
		for _, q := range []uint64{h, rng.Uint64N(200), 0} {
			require.Equal(t, want[max(q, 1)], m.has(q), "hash %d", q)
		}
	}
	assert.Equal(t, fifo, m.appendOldestFirst(nil))
}

// TestOrphanWhenMemoryMovesOnWhileHeld: a result held in a scope that the memory of
// forgotten scopes remembers as having seen a use is released as orphan, even when the memory
// forgets that scope (other scopes forgotten after it) while the result waits. The scope was
// remade by the held result; before the lazy sawUse it read the memory when it was made.
func TestOrphanWhenMemoryMovesOnWhileHeld(t *testing.T) {
	clk := newFakeClock()
	e := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 100, MaxResolved: 1, Clock: clk})
	run(t, e, scopeEvent("s1", "a", KindUse, 1), scopeEvent("s1", "a", KindResult, 2))
	run(t, e, scopeEvent("s2", "a", KindUse, 1), scopeEvent("s2", "a", KindResult, 2)) // forgets s1: remembered
	require.NotContains(t, e.conversations, ConversationKey{Tenant: "svc", Conversation: "s1"})
	run(t, e, scopeEvent("s1", "held", KindResult, 3)) // s1 made again, by a held result
	// s2 is forgotten in turn; the memory (bound 1) now forgets s1.
	run(t, e, scopeEvent("s3", "a", KindUse, 1), scopeEvent("s3", "a", KindResult, 2))
	clk.Advance(testGrace)
	out := e.Tick(nil)
	require.Len(t, out, 1)
	assert.Equal(t, OutcomeOrphan, out[0].Outcome, "s1 saw a use before its result was held")
}
