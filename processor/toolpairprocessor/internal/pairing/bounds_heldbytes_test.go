// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sized is a held record of a test: its size in bytes.
type sized int64

func holdSized(size int64) func(*Event) any {
	return func(*Event) any { return sized(size) }
}

func newSizedEngine(t *testing.T, maxHeldBytes int64) (*Engine, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	e := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 100, Clock: clk,
		MaxHeldBytes: maxHeldBytes, HeldSize: func(p any) int64 { return int64(p.(sized)) }})
	return e, clk
}

// TestHeldBytesBound: past MaxHeldBytes the oldest waiting result leaves as it would at
// orphan_grace; the others keep waiting and pair when their use comes; the bytes held follow
// what is held.
func TestHeldBytesBound(t *testing.T) {
	e, _ := newSizedEngine(t, 1000)
	run(t, e, use("x", 10)) // the scope has seen a use: a released result is an orphan
	out := e.Process([]Event{result("x", 20)}, nil, nil)
	require.Len(t, out, 1)

	out = e.Process([]Event{result("a", 100), result("b", 200)}, holdSized(400), nil)
	assert.Empty(t, out, "800 bytes held, under the bound")
	assert.Equal(t, int64(800), e.Stats().HeldBytes)

	out = e.Process([]Event{result("c", 300)}, holdSized(400), nil)
	require.Len(t, out, 1, "1,200 bytes: the oldest leaves")
	assert.Equal(t, "a", out[0].Key.CallID)
	assert.Equal(t, OutcomeOrphan, out[0].Outcome)
	assert.Equal(t, sized(400), out[0].ResultPayload, "released with its record")
	st := e.Stats()
	assert.Equal(t, int64(800), st.HeldBytes)
	assert.Equal(t, uint64(1), st.HeldOverBytes)
	require.NoError(t, st.CheckConservation())

	out = run(t, e, use("b", 150), use("c", 250))
	require.Len(t, out, 2)
	for _, r := range out {
		assert.Equal(t, OutcomePaired, r.Outcome, r.Key.CallID)
	}
	assert.Equal(t, int64(0), e.Stats().HeldBytes)
}

// TestHeldBytesOneRecordOverTheBound: a record larger than the bound alone is released at
// once, as at orphan_grace, and nothing stays counted.
func TestHeldBytesOneRecordOverTheBound(t *testing.T) {
	e, _ := newSizedEngine(t, 1000)
	out := e.Process([]Event{result("big", 100)}, holdSized(4<<20), nil)
	require.Len(t, out, 1)
	assert.Equal(t, OutcomeStandalone, out[0].Outcome, "no use seen in its scope")
	assert.Equal(t, int64(0), e.Stats().HeldBytes)
	require.NoError(t, e.Stats().CheckConservation())
}

// TestHeldBytesFollowExpiryAndShutdown: records released by orphan_grace and by Shutdown are
// taken off the bytes held; a restored state counts the records it holds.
func TestHeldBytesFollowExpiryAndShutdown(t *testing.T) {
	e, clk := newSizedEngine(t, 0) // no bound: counted all the same
	e.Process([]Event{result("a", 100)}, holdSized(300), nil)
	clk.Advance(testGrace / 2)
	e.Process([]Event{result("b", 200)}, holdSized(500), nil)
	assert.Equal(t, int64(800), e.Stats().HeldBytes)

	snap := e.Snapshot(func(p any) any { return p })
	r, _ := newSizedEngine(t, 0)
	_, err := r.Restore(snap, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(800), r.Stats().HeldBytes, "a restored state counts what it holds")

	clk.Advance(testGrace/2 + 1)
	out := e.Tick(nil)
	require.Len(t, out, 1)
	assert.Equal(t, int64(500), e.Stats().HeldBytes)
	out = e.Shutdown(nil)
	require.Len(t, out, 1)
	assert.Equal(t, int64(0), e.Stats().HeldBytes)
}
