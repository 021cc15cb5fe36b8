// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMatchSurvivesSnapshot: a pending call's match hash is part of the snapshot, and a
// restored engine lists the call under it, so that a tool span arriving after a restart
// still finds its call.
func TestMatchSurvivesSnapshot(t *testing.T) {
	e, _ := newTestEngine(t, 100)
	run(t, e, matchUse("a", 100, 7), use("b", 110))
	snap := e.Snapshot(nil)
	var matchable int
	for _, c := range snap.Calls {
		if c.HasMatch() {
			matchable++
			assert.Equal(t, uint64(7), c.Match)
		} else {
			assert.Zero(t, c.Match)
		}
	}
	assert.Equal(t, 1, matchable)

	r, _ := newTestEngine(t, 100)
	_, err := r.Restore(snap, nil)
	require.NoError(t, err)
	evs := []Event{matched(300, 7)}
	out := r.Process(evs, holdRef, nil)
	require.Len(t, out, 1)
	assert.Equal(t, OutcomePaired, out[0].Outcome)
	assert.Equal(t, "a", evs[0].Key.CallID)
	checkMatchLists(t, r)
}

// TestMatchHeldSurvivesSnapshot: a held tool span without a call ID and the listing of a
// resolved call are part of the snapshot; after a restore the held span still pairs its
// use, and a retry of the resolved call's tool span is still a duplicate.
func TestMatchHeldSurvivesSnapshot(t *testing.T) {
	e, _ := newTestEngine(t, 100)
	run(t, e, matchUse("a", 100, 7), matched(200, 7), matched(300, 8))
	snap := e.Snapshot(nil)
	byState := map[CallState]int{}
	for _, c := range snap.Calls {
		require.True(t, c.HasMatch())
		byState[c.State]++
		if c.State == CallWaiting {
			assert.Empty(t, c.Key.CallID)
			assert.Equal(t, uint64(8), c.Match)
			assert.Equal(t, int32(300), c.Payload)
		}
	}
	assert.Equal(t, map[CallState]int{CallResolved: 1, CallWaiting: 1}, byState)

	r, _ := newTestEngine(t, 100)
	rs, err := r.Restore(snap, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, rs.Waiting)
	checkMatchLists(t, r)
	out := r.Process([]Event{matchUse("b", 250, 8), matched(200, 7)}, holdRef, nil)
	require.Len(t, out, 2)
	assert.Equal(t, OutcomePaired, out[0].Outcome)
	assert.Equal(t, "b", out[0].Key.CallID)
	assert.Equal(t, int32(300), out[0].ResultPayload)
	assert.Equal(t, OutcomeDuplicate, out[1].Outcome)
	assert.Equal(t, "a", out[1].Key.CallID)
	require.NoError(t, r.Stats().CheckConservation())
	checkMatchLists(t, r)
}

// TestMatchHeldReleasedAfterSnapshot: a held tool span released after the snapshot was
// taken, paired by its use or settled as an orphan, is not held again by a restore that is
// told of its release (the resolution record), and one not released still is.
func TestMatchHeldReleasedAfterSnapshot(t *testing.T) {
	e, clk := newTestEngine(t, 100)
	run(t, e, use("x", 50), matched(300, 7), matched(400, 8), matched(500, 9))
	snap := e.Snapshot(nil)
	out := run(t, e, matchUse("a", 100, 7))
	require.Len(t, out, 1)
	clk.Advance(testGrace + time.Second)
	out = append(out, e.Tick(nil)...)
	var released []HeldRef
	for _, r := range out {
		if r.HeldSeq != 0 {
			released = append(released, HeldRef{Scope: r.Key.ConversationKey(), Seq: r.HeldSeq})
		}
	}
	require.Len(t, released, 3) // a's, and the orphans of 8 and 9
	released = released[:2]     // the release of 9 was not recorded

	r, _ := newTestEngine(t, 100)
	rs, err := r.Restore(snap, []Key{key("a")}, released...)
	require.NoError(t, err)
	assert.Equal(t, 1, rs.Waiting)
	assert.Equal(t, 3, rs.Replayed)
	checkMatchLists(t, r)
	for _, l := range r.matches {
		if l.held.head != nil {
			assert.Equal(t, uint64(9), l.key.match)
		}
	}
}
