// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAnchorOutlivesTheTickThatInterruptsItsCall: a tick that comes after both the call's
// pairing_timeout and the activity's retention (a ticker stalled behind a slow exporter)
// returns the interrupted call while its scope still has the anchor its synthetic span goes
// under; the activity goes once the scope holds no call for a retention.
func TestAnchorOutlivesTheTickThatInterruptsItsCall(t *testing.T) {
	e, clk := newFlightEngine(t)
	e.Observe([]Activity{{Kind: ActivityTurn, Key: scopeS1, Start: 500 * msNs, End: 5000 * msNs, ID: [24]byte{1}, Anchor: "turn"}})
	e.Process([]Event{use("c1", 1000)}, holdRef, nil)
	clk.Advance(testTimeout + testGrace + time.Minute)
	res := e.Tick(nil)
	require.Len(t, res, 1)
	assert.Equal(t, ReasonExpired, res[0].Reason)
	got, ok := e.Anchor(scopeS1, res[0].UseTime, int64(testGrace))
	assert.True(t, ok, "the anchor of the interrupted call's turn")
	assert.Equal(t, "turn", got)
	require.NoError(t, e.checkScopes())

	// The resolved call is forgotten, then the activity a retention later.
	for range 3 {
		clk.Advance(testTimeout + testGrace + time.Second)
		e.Tick(nil)
	}
	_, ok = e.Anchor(scopeS1, res[0].UseTime, int64(testGrace))
	assert.False(t, ok)
	assert.Zero(t, e.acts.items)
	assert.Empty(t, e.conversations)
	require.NoError(t, e.checkScopes())
}

// TestActivityIntervalEdges: an interval is in flight from its start, not before; one that
// arrives out of order and overlaps the latest of its kind extends it backwards; an interval
// with no start, or a start after its end, is the instant of its end.
func TestActivityIntervalEdges(t *testing.T) {
	e, _ := newFlightEngine(t)
	e.Observe([]Activity{ivl(ActivityModel, 3000, 4000)})
	assert.False(t, e.InFlightAt(scopeS1, 2999*msNs).Model, "before its start")
	e.Observe([]Activity{ivl(ActivityModel, 2500, 3100)})
	assert.Equal(t, 1, e.acts.items, "merged")
	assert.True(t, e.InFlightAt(scopeS1, 2600*msNs).Model, "extended backwards")
	assert.True(t, e.InFlightAt(scopeS1, 3900*msNs).Model, "the end kept")
	e.Observe([]Activity{ivl(ActivityCompaction, 0, 10_000), ivl(ActivityCompaction, 30_000, 20_000)})
	assert.False(t, e.InFlightAt(scopeS1, 9999*msNs).Compaction)
	assert.True(t, e.InFlightAt(scopeS1, 10_000*msNs).Compaction, "no start: the instant of its end")
	assert.False(t, e.InFlightAt(scopeS1, 19_999*msNs).Compaction)
	assert.True(t, e.InFlightAt(scopeS1, 20_000*msNs).Compaction, "a start after its end: the instant of its end")
	require.NoError(t, e.checkScopes())
}

// TestActivitySnapshotScopes: a scope held by its activity alone is not among the snapshot's
// scopes (its intervals and anchors carry their key); one that saw a use is, so that a later result
// without its use is still an orphan after a restart.
func TestActivitySnapshotScopes(t *testing.T) {
	e, _ := newFlightEngine(t)
	for i := range 100 {
		k := ConversationKey{Tenant: "svc", Conversation: fmt.Sprint("trace-", i)}
		e.Observe([]Activity{{Kind: ActivityTurn, Key: k, Start: 1, End: 2, ID: [24]byte{byte(i)}, Anchor: "a"}})
	}
	e.Observe([]Activity{ivl(ActivityModel, 1000, 2000)})
	e.Process([]Event{use("c1", 1000), result("c1", 1500)}, holdRef, nil)
	s := e.Snapshot(nil)
	require.Len(t, s.Conversations, 1)
	assert.Equal(t, scopeS1, s.Conversations[0].Key)
	assert.Len(t, s.Activity, 101)
}

// TestActivityRestoreKeepsNewest: a state holding more intervals of a scope than it keeps
// (an older state), or listing its scopes out of order, restores the most recent ones, and
// the scope observed least recently first.
func TestActivityRestoreKeepsNewest(t *testing.T) {
	e, clk := newFlightEngine(t)
	now := clk.Now().UnixNano()
	snap := &Snapshot{Activity: []ActivitySnapshot{{Key: ConversationKey{Tenant: "svc", Conversation: "later"}, Kind: ActivityModel, Start: 1, End: 2, Seen: now}}}
	for i := range int64(40) {
		snap.Activity = append(snap.Activity, ActivitySnapshot{Key: scopeS1, Kind: ActivityModel, Start: (i*10 + 1) * 1000 * msNs, End: (i*10 + 2) * 1000 * msNs, Seen: now - int64(time.Minute)})
	}
	_, err := e.Restore(snap, nil)
	require.NoError(t, err)
	assert.True(t, e.InFlightAt(scopeS1, 392*1000*msNs).Model, "the newest interval")
	assert.False(t, e.InFlightAt(scopeS1, 2*1000*msNs).Model, "the oldest beyond the bound")
	assert.Equal(t, scopeS1, e.acts.head.scope.key, "observed least recently first")
	require.NoError(t, e.checkScopes())
}

// TestRestoreRepeatedScope: a state listing one scope twice restores one scope, whose calls
// and closings all hang off it.
func TestRestoreRepeatedScope(t *testing.T) {
	clk := newFakeClock()
	e := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 10, CloseDelay: testGrace, Clock: clk})
	snap := &Snapshot{
		Conversations: []ConversationSnapshot{
			{Key: scopeS1, Closings: []ClosingSnapshot{{Kind: KindBoundary, Time: 5}}},
			{Key: scopeS1},
		},
		Queue: []QueuedClosing{{Scope: 0, Time: 5, Deadline: 1}},
		Calls: []CallSnapshot{{State: CallPending, Key: Key{Tenant: "svc", Conversation: "s1", CallID: "c1"}, UseTime: 1000 * msNs, Deadline: clk.Now().UnixNano() + int64(time.Hour)}},
	}
	_, err := e.Restore(snap, nil)
	require.NoError(t, err)
	require.NoError(t, e.checkScopes())
	e.Tick(nil)
	require.NoError(t, e.checkScopes())
	assert.Equal(t, 1, e.InFlightAt(scopeS1, 2000*msNs).Tools)
}
