// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEngineKeepsOwnCopies checks that a pending call keeps none of the caller's strings: the
// processor's call IDs, tool names and steps point into the batch being processed, which must
// not stay reachable while the call waits for its result.
func TestEngineKeepsOwnCopies(t *testing.T) {
	e, clk := newTestEngine(t, 100)
	buf := []byte("svc|s1|call_1|run_shell|msg_1")
	// Strings that alias buf, as strings read from a decoded batch alias its buffers.
	str := func(from, to int) string { return unsafe.String(&buf[from], to-from) }
	ev := Event{
		Kind:     KindUse,
		Key:      Key{Tenant: str(0, 3), Conversation: str(4, 6), CallID: str(7, 13)},
		Time:     1,
		ToolName: str(14, 23),
		Step:     str(24, 29),
	}
	e.Process([]Event{ev}, nil, nil)
	// Overwrite what the event pointed to: the engine's copies must not change.
	for i := range buf {
		buf[i] = '#'
	}
	clk.Advance(2 * testTimeout)
	out := e.Tick(nil)
	require.Len(t, out, 1)
	assert.Equal(t, Key{Tenant: "svc", Conversation: "s1", CallID: "call_1"}, out[0].Key)
	assert.Equal(t, "run_shell", out[0].ToolName)
	assert.Equal(t, ReasonExpired, out[0].Reason)
}

// TestToolNamesInterned checks that calls of one tool share one copy of its name, and that
// the interning table stays bounded.
func TestToolNamesInterned(t *testing.T) {
	e := New(Config{PairingTimeout: time.Hour, OrphanGrace: time.Minute, MaxPending: 10 * maxNames, Clock: newFakeClock()})
	a, b := e.name(string([]byte("Bash"))), e.name(string([]byte("Bash")))
	assert.Same(t, a, b)
	assert.Nil(t, e.name(""))
	for i := range 2 * maxNames {
		e.name(string(rune('a'+i%26)) + string(rune(i)))
	}
	assert.Len(t, e.names, maxNames)
}

// TestCloneBoxed checks that the engine's step copies equal their originals, alias none of
// their bytes, and take one allocation up to 112 bytes.
func TestCloneBoxed(t *testing.T) {
	buf := []byte(strings.Repeat("0123456789abcdef", 10))
	for n := 1; n <= len(buf); n++ {
		s := unsafe.String(&buf[0], n)
		c := cloneBoxed(s)
		require.Equal(t, s, *c)
		assert.NotSame(t, unsafe.StringData(s), unsafe.StringData(*c), "length %d", n)
		want := 1.0
		if n > 112 {
			want = 2
		}
		assert.Equal(t, want, testing.AllocsPerRun(10, func() { cloneBoxed(s) }), "length %d", n)
	}
}

// TestTenantsInterned checks that the scopes of one tenant share one copy of it, and that
// the interning table stays bounded.
func TestTenantsInterned(t *testing.T) {
	e := New(Config{PairingTimeout: time.Hour, OrphanGrace: time.Minute, MaxPending: 10 * maxNames, Clock: newFakeClock()})
	a, b := e.conversationOf(ConversationKey{Tenant: string([]byte("svc")), Conversation: "s1"}, 0), e.conversationOf(ConversationKey{Tenant: string([]byte("svc")), Conversation: "s2"}, 0)
	assert.Same(t, unsafe.StringData(a.key.Tenant), unsafe.StringData(b.key.Tenant))
	for i := range 2 * maxNames {
		e.tenant(string(rune('a'+i%26)) + string(rune(i)))
	}
	assert.Len(t, e.tenants, maxNames)
}

// TestEngineHandsBackItsCopies checks that Process replaces the key of each event whose call
// or scope it keeps with its own copy, and leaves the others alone.
func TestEngineHandsBackItsCopies(t *testing.T) {
	e := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 100, CloseDelay: testGrace, Clock: newFakeClock()})
	buf := []byte("svc|s1|call_1|call_2")
	str := func(from, to int) string { return unsafe.String(&buf[from], to-from) }
	tenant, scope := str(0, 3), str(4, 6)
	evs := []Event{
		{Kind: KindBoundary, Key: Key{Tenant: tenant, Conversation: scope}, Time: 1, Step: "m1"},
		{Kind: KindUse, Key: Key{Tenant: tenant, Conversation: scope, CallID: str(7, 13)}, Time: 2, Step: "m1"},
		{Kind: KindUse, Key: Key{Tenant: tenant, Conversation: scope, CallID: str(7, 13)}, Time: 3, Step: "m1"},
		{Kind: KindResult, Key: Key{Tenant: tenant, Conversation: scope, CallID: str(7, 13)}, Time: 4},
		{Kind: KindEcho, Key: Key{Tenant: tenant, Conversation: scope, CallID: str(14, 20)}, Time: 5},
	}
	e.Process(evs, nil, nil)
	want := []Verdict{VerdictPending, VerdictPending, VerdictRepeated, VerdictResolved, VerdictIgnored}
	for i := range evs {
		assert.Equal(t, want[i], evs[i].Verdict, "event %d", i)
	}
	for i := range evs[:4] {
		assert.NotSame(t, unsafe.StringData(tenant), unsafe.StringData(evs[i].Key.Tenant), "event %d", i)
		assert.NotSame(t, unsafe.StringData(scope), unsafe.StringData(evs[i].Key.Conversation), "event %d", i)
	}
	for i := range evs[1:4] {
		assert.Same(t, unsafe.StringData(evs[1].Key.CallID), unsafe.StringData(evs[1+i].Key.CallID), "one copy of the call ID")
	}
	assert.Same(t, &buf[14], unsafe.StringData(evs[4].Key.CallID))
	for i := range buf {
		buf[i] = '#'
	}
	assert.Equal(t, Key{Tenant: "svc", Conversation: "s1", CallID: "call_1"}, evs[3].Key)
}
