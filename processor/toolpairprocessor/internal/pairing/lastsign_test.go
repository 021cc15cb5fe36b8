// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInterruptionEndsAtScopeLastSign checks the end time of calls interrupted for want of
// their result (specification section 3): the latest record time seen in the call's scope at or
// after the use, else the use time; never the engine's clock, which here runs days ahead of
// the records (a replayed capture).
func TestInterruptionEndsAtScopeLastSign(t *testing.T) {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	other := func(ev Event) Event { ev.Key.Conversation = "s2"; return ev }
	boundary := func(at int64) Event {
		return Event{Kind: KindBoundary, Key: Key{Tenant: "svc", Conversation: "s1"}, Time: ms(at), Step: "later", Ref: -1}
	}
	tests := []struct {
		name    string
		events  []Event
		finish  string // "expire", "evict" or "shutdown"
		wantEnd int64
	}{
		{
			name:    "alone in its scope: the use time",
			events:  []Event{use("a", 100)},
			finish:  "expire",
			wantEnd: ms(100),
		},
		{
			name:    "another call's result later in the scope",
			events:  []Event{use("a", 100), use("b", 150), result("b", 900)},
			finish:  "expire",
			wantEnd: ms(900),
		},
		{
			name:    "records of another scope do not count",
			events:  []Event{use("a", 100), other(use("x", 5000)), other(result("x", 7000))},
			finish:  "shutdown",
			wantEnd: ms(100),
		},
		{
			name:    "an earlier record of the scope is not after the use",
			events:  []Event{use("b", 20), result("b", 40), use("a", 100)},
			finish:  "shutdown",
			wantEnd: ms(100),
		},
		{
			name:    "a step boundary of another group is a sign of life",
			events:  []Event{use("a", 100), boundary(2500)},
			finish:  "shutdown",
			wantEnd: ms(2500),
		},
		{
			name:    "an echo and a repeated use count too",
			events:  []Event{use("a", 100), use("a", 300), echo("z", 1200)},
			finish:  "expire",
			wantEnd: ms(1200),
		},
		{
			// The call is evicted as c arrives, before c is taken in.
			name:    "eviction",
			events:  []Event{use("a", 100), use("b", 400), use("c", 600)},
			finish:  "evict",
			wantEnd: ms(400),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			clk.Advance(72 * time.Hour)
			maxPending := 100
			if tt.finish == "evict" {
				maxPending = 2
			}
			e := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: maxPending, Clock: clk})
			var out []Resolution
			for _, ev := range tt.events {
				out = append(out, run(t, e, ev)...)
			}
			switch tt.finish {
			case "expire":
				clk.Advance(2 * testTimeout)
				out = append(out, e.Tick(nil)...)
			case "shutdown":
				out = append(out, e.Shutdown(nil)...)
			}
			var got *Resolution
			for i := range out {
				if out[i].Key.CallID == "a" && out[i].Outcome == OutcomeInterrupted {
					got = &out[i]
				}
			}
			require.NotNil(t, got, "call a interrupted in %v", out)
			assert.Equal(t, tt.wantEnd, got.EndTime)
			assert.Equal(t, ms(100), got.UseTime)
		})
	}
}

// TestLastSignSurvivesRestore: the scope's last sign of life is part of the snapshot, so a
// call expired after a restart (its deadline passed while the collector was down) still ends
// at it (specification sections 3 and 9).
func TestLastSignSurvivesRestore(t *testing.T) {
	e, clk := newTestEngine(t, 100)
	run(t, e, use("a", 100), use("b", 150), result("b", 900))
	snap := e.Snapshot(nil)
	restored := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 100, Clock: clk})
	_, err := restored.Restore(snap, nil)
	require.NoError(t, err)
	clk.Advance(2 * testTimeout)
	out := restored.Tick(nil)
	require.Len(t, out, 1)
	assert.Equal(t, ReasonExpired, out[0].Reason)
	assert.Equal(t, int64(900*time.Millisecond), out[0].EndTime)
}
