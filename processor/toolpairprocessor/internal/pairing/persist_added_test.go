// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// batch processes evs and observes acts as the processor does with one batch, and returns
// what Added copies of it.
func batch(t *testing.T, e *Engine, acts []Activity, evs ...Event) *Snapshot {
	t.Helper()
	e.Observe(acts)
	e.Process(evs, holdRef, nil)
	require.NoError(t, e.Stats().CheckConservation())
	return e.Added(evs, acts)
}

// TestAddedCopiesWhatTheBatchLeftPending: Added copies the calls a batch left pending (not
// one resolved in the same batch, not one already pending), the closings it queued with their
// scope, and its anchor spans; nothing for a batch that added none.
func TestAddedCopiesWhatTheBatchLeftPending(t *testing.T) {
	clk := newFakeClock()
	e := newCloseDelayEngine(t, clk)
	run(t, e, use("old", 1))
	turn := Activity{Kind: ActivityTurn, Key: scopeS1, Start: 900 * msNs, End: 5000 * msNs, ID: [24]byte{7}, Anchor: "turn"}
	bd := Event{Kind: KindSessionEnd, Key: Key{Tenant: "svc", Conversation: "s1"}, Time: 4000 * msNs}
	a := batch(t, e, []Activity{turn, ivl(ActivityModel, 1000, 2000)},
		use("a", 1000), use("old", 1001), use("b", 1100), result("b", 1200), bd)
	require.NotNil(t, a)
	require.Len(t, a.Calls, 1)
	c := a.Calls[0]
	assert.Equal(t, CallPending, c.State)
	assert.Equal(t, key("a"), c.Key)
	assert.Equal(t, "use:a", c.Payload)
	assert.Equal(t, "run_shell", c.ToolName)
	assert.Equal(t, int64(1000*msNs), c.UseTime)
	assert.Equal(t, clk.Now().Add(testTimeout).UnixNano(), c.Deadline)
	require.Len(t, a.Conversations, 1)
	assert.Equal(t, scopeS1, a.Conversations[0].Key)
	assert.True(t, a.Conversations[0].UsesSeen)
	assert.Equal(t, []ClosingSnapshot{{Kind: KindSessionEnd, Time: 4000 * msNs}}, a.Conversations[0].Closings)
	assert.Equal(t, []QueuedClosing{{Scope: 0, Time: 4000 * msNs, Deadline: clk.Now().Add(testGrace).UnixNano()}}, a.Queue)
	require.Len(t, a.Activity, 1, "anchors only: intervals are not copied")
	assert.Equal(t, ActivitySnapshot{Key: scopeS1, Kind: ActivityTurn, Start: turn.Start, End: turn.End, Seen: clk.Now().UnixNano(), ID: turn.ID, Anchor: "turn"}, a.Activity[0])

	assert.Nil(t, batch(t, e, nil, result("a", 3000), use("b", 1100)), "a batch that leaves nothing pending adds nothing")
}

// TestRestoreFromAdditions: an engine restored from a snapshot and the additions of the
// batches after it holds the calls those batches left pending (they pair, or their session
// end interrupts them), their closings, and their anchors; a call a later record resolved
// stays resolved whatever order the records came in.
func TestRestoreFromAdditions(t *testing.T) {
	clk := newFakeClock()
	e := newCloseDelayEngine(t, clk)
	run(t, e, use("ck", 1))
	snap := e.Snapshot(nil)
	turn := Activity{Kind: ActivityTurn, Key: scopeS1, Start: 900 * msNs, End: 5000 * msNs, ID: [24]byte{7}, Anchor: "turn"}
	a1 := batch(t, e, []Activity{turn}, use("a", 1000), use("b", 1100), use("r", 1150))
	// r is resolved by a batch whose record was written before a1's.
	a0 := batch(t, e, nil, result("r", 1160))
	end := Event{Kind: KindSessionEnd, Key: Key{Tenant: "svc", Conversation: "s1"}, Time: 4000 * msNs}
	a2 := batch(t, e, nil, end)
	// a2 again, as a record numbered after a checkpoint that already holds it.
	snap2 := e.Snapshot(nil)
	assert.Nil(t, a0, "a batch that only resolves adds nothing")

	for name, tc := range map[string]struct {
		snap *Snapshot
		adds []*Snapshot
	}{
		"after a snapshot":             {snap, []*Snapshot{a1, a2}},
		"no snapshot":                  {nil, []*Snapshot{a1, a2}},
		"records also in the snapshot": {snap2, []*Snapshot{a1, a2, a2}},
	} {
		t.Run(name, func(t *testing.T) {
			clkB := newFakeClock()
			clkB.now = clk.Now()
			b := newCloseDelayEngine(t, clkB)
			var base *Snapshot
			if tc.snap != nil {
				base = &Snapshot{}
				*base = *tc.snap
				base.Calls = append([]CallSnapshot(nil), tc.snap.Calls...)
				base.Conversations = append([]ConversationSnapshot(nil), tc.snap.Conversations...)
			}
			merged := Merge(base, tc.adds...)
			_, err := b.Restore(merged, []Key{key("r")})
			require.NoError(t, err)
			require.NoError(t, b.Stats().CheckConservation())
			got, ok := b.Anchor(scopeS1, 1000*msNs, 0)
			require.True(t, ok, "the anchor of the record is restored")
			assert.Equal(t, "turn", got)

			out := run(t, b, result("a", 2000), result("r", 2100))
			require.Len(t, out, 2)
			assert.Equal(t, OutcomePaired, out[0].Outcome)
			assert.Equal(t, int64(1000), out[0].ElapsedMs())
			assert.Equal(t, "use:a", out[0].UsePayload)
			assert.Equal(t, OutcomeDuplicate, out[1].Outcome, "r stays resolved")

			clkB.Advance(testGrace + time.Second)
			out = b.Tick(nil)
			var keys []string
			for _, r := range out {
				keys = append(keys, r.Key.CallID+"/"+r.Reason.String())
			}
			want := []string{"b/session_end"}
			if tc.snap != nil {
				want = []string{"ck/session_end", "b/session_end"}
			}
			assert.ElementsMatch(t, want, keys, "the queued session end closes the calls once")
		})
	}
}

// TestMergeKeepsClosingsOnce: a closing an addition repeats is merged once, with one Queue
// entry; a new scope is appended with its own.
func TestMergeKeepsClosingsOnce(t *testing.T) {
	s1, s2 := ConversationKey{Tenant: "t", Conversation: "1"}, ConversationKey{Tenant: "t", Conversation: "2"}
	c := ClosingSnapshot{Kind: KindSessionEnd, Time: 10}
	snap := &Snapshot{Conversations: []ConversationSnapshot{{Key: s1, LastSeen: 5, Closings: []ClosingSnapshot{c}}}, Queue: []QueuedClosing{{Scope: 0, Time: 10, Deadline: 20}}}
	add := &Snapshot{
		Conversations: []ConversationSnapshot{{Key: s2, LastSeen: 7, Closings: []ClosingSnapshot{c}}, {Key: s1, LastSeen: 9, UsesSeen: true, Closings: []ClosingSnapshot{c}}},
		Queue:         []QueuedClosing{{Scope: 0, Time: 10, Deadline: 30}, {Scope: 1, Time: 10, Deadline: 30}},
	}
	got := Merge(snap, add, add)
	assert.Equal(t, []ConversationSnapshot{
		{Key: s1, LastSeen: 9, UsesSeen: true, Closings: []ClosingSnapshot{c}},
		{Key: s2, LastSeen: 7, Closings: []ClosingSnapshot{c}},
	}, got.Conversations)
	assert.Equal(t, []QueuedClosing{{Scope: 0, Time: 10, Deadline: 20}, {Scope: 1, Time: 10, Deadline: 30}}, got.Queue)
}

// TestSnapshotKeepsAnchors: anchor spans are part of a snapshot and restored with the value
// the caller gives them; one without a value is not restored.
func TestSnapshotKeepsAnchors(t *testing.T) {
	e, clk := newTestEngine(t, 100)
	e.Observe([]Activity{
		{Kind: ActivityTurn, Key: scopeS1, Start: 500 * msNs, End: 5000 * msNs, ID: [24]byte{1}, Anchor: "turn"},
		{Kind: ActivityModelSpan, Key: scopeS1, Start: 6000 * msNs, End: 7000 * msNs, ID: [24]byte{2}, Anchor: "model"},
		{Kind: ActivityModelSpan, Key: ConversationKey{Tenant: "svc", Conversation: "s9"}, Start: 1, End: 2, ID: [24]byte{3}, Anchor: "other"},
	})
	snap := e.Snapshot(nil)
	var anchors []ActivitySnapshot
	for _, a := range snap.Activity {
		if a.Kind == ActivityTurn || a.Kind == ActivityModelSpan {
			anchors = append(anchors, a)
		}
	}
	require.Len(t, anchors, 3)
	for i := range snap.Activity {
		if snap.Activity[i].Anchor == "other" {
			snap.Activity[i].Anchor = nil
		}
	}
	r := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 100, Clock: clk})
	_, err := r.Restore(snap, nil)
	require.NoError(t, err)
	got, ok := r.Anchor(scopeS1, 1000*msNs, 0)
	require.True(t, ok)
	assert.Equal(t, "turn", got)
	got, ok = r.Anchor(scopeS1, 7100*msNs, int64(time.Second))
	require.True(t, ok)
	assert.Equal(t, "model", got)
	_, ok = r.Anchor(ConversationKey{Tenant: "svc", Conversation: "s9"}, 2, 0)
	assert.False(t, ok, "an anchor without a value is not restored")
}
