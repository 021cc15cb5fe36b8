// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func abort(id string, ms int64) Event {
	ev := result(id, ms)
	ev.Kind = KindAbort
	return ev
}

func TestAbort(t *testing.T) {
	for _, tc := range []struct {
		name    string
		batches [][]Event
		want    []Outcome // outcomes of every resolution, in order
		reasons []Reason
	}{
		{
			name:    "abort after use",
			batches: [][]Event{{use("a", 1000)}, {abort("a", 4000)}},
			want:    []Outcome{OutcomeInterrupted},
			reasons: []Reason{ReasonAborted},
		},
		{
			name:    "abort before use is held, then resolves as aborted",
			batches: [][]Event{{abort("a", 4000)}, {use("a", 1000)}},
			want:    []Outcome{OutcomeInterrupted},
			reasons: []Reason{ReasonAborted},
		},
		{
			name:    "a second abort is a duplicate",
			batches: [][]Event{{use("a", 1000), abort("a", 4000)}, {abort("a", 4000)}},
			want:    []Outcome{OutcomeInterrupted, OutcomeDuplicate},
			reasons: []Reason{ReasonAborted, ReasonNone},
		},
		{
			name:    "a result after an abort is a duplicate",
			batches: [][]Event{{use("a", 1000), abort("a", 4000)}, {result("a", 5000)}},
			want:    []Outcome{OutcomeInterrupted, OutcomeDuplicate},
			reasons: []Reason{ReasonAborted, ReasonNone},
		},
		{
			name:    "an abort after a pairing is a duplicate",
			batches: [][]Event{{use("a", 1000), result("a", 2000)}, {abort("a", 5000)}},
			want:    []Outcome{OutcomePaired, OutcomeDuplicate},
			reasons: []Reason{ReasonNone, ReasonNone},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := newTestEngine(t, 100)
			var out []Resolution
			for _, b := range tc.batches {
				out = append(out, run(t, e, b...)...)
			}
			require.Len(t, out, len(tc.want))
			for i := range out {
				assert.Equal(t, tc.want[i], out[i].Outcome, "resolution %d", i)
				assert.Equal(t, tc.reasons[i], out[i].Reason, "resolution %d", i)
				assert.False(t, out[i].Synthesize(), "an aborted call has its own record: nothing to synthesize")
			}
			if out[0].Outcome == OutcomeInterrupted {
				assert.Equal(t, int64(4000*time.Millisecond), out[0].EndTime, "ends at the abort record's time")
				assert.Equal(t, int64(0), out[0].ElapsedMs(), "no duration for an interrupted call")
			}
			s := e.Stats()
			assert.Equal(t, uint64(1), s.Interrupted[ReasonAborted]+s.Paired)
			assert.Equal(t, s.Interrupted[ReasonAborted], s.Aborted)
		})
	}
}

// TestAbortWithoutUseIsInterrupted: a result that reports its call's abort gets
// interrupted/aborted whether or not its use is seen (specification section 2): after
// orphan_grace, in a scope that never saw a use or one that did, and at once when it cannot
// wait; the call is counted as seen through it, and its use arriving later is a repeat.
func TestAbortWithoutUseIsInterrupted(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before []Event // what the scope saw first
		noHold bool
	}{
		{name: "no use ever seen in the scope"},
		{name: "in a scope that saw another call's use", before: []Event{use("other", 500)}},
		{name: "a record that cannot wait", noHold: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, clk := newTestEngine(t, 100)
			if len(tc.before) > 0 {
				run(t, e, tc.before...)
			}
			var out []Resolution
			if tc.noHold {
				out = e.Process([]Event{abort("a", 1000)}, nil, nil)
			} else {
				run(t, e, abort("a", 1000))
				clk.Advance(testGrace)
				out = e.Tick(nil)
			}
			var r *Resolution
			for i := range out {
				if out[i].Key.CallID == "a" {
					r = &out[i]
				}
			}
			require.NotNil(t, r)
			assert.Equal(t, OutcomeInterrupted, r.Outcome)
			assert.Equal(t, ReasonAborted, r.Reason)
			assert.False(t, r.Synthesize(), "the record itself says so: no synthetic record")
			if !tc.noHold {
				assert.Equal(t, int32(1000), r.ResultPayload)
			}
			s := e.Stats()
			require.NoError(t, s.CheckConservation())
			assert.Equal(t, uint64(1), s.Aborted)
			assert.Equal(t, uint64(1), s.Interrupted[ReasonAborted])
			late := e.Process([]Event{use("a", 900)}, holdRef, nil)
			assert.Empty(t, late, "the later use resolves nothing")
			assert.Equal(t, s.UsesRepeated+1, e.Stats().UsesRepeated, "the later use is a repeat")
			require.NoError(t, e.Stats().CheckConservation())
		})
	}
}

// TestMatchedAbort: a result without a call ID that reports its call's abort (KindMatch with
// Abort) resolves the call it matches as interrupted/aborted, whichever arrives first, and
// settles so without one.
func TestMatchedAbort(t *testing.T) {
	abortMatched := func(ms int64, m uint64) Event {
		ev := matched(ms, m)
		ev.Abort = true
		return ev
	}
	for _, tc := range []struct {
		name    string
		batches [][]Event
		tick    bool
	}{
		{name: "use first", batches: [][]Event{{matchUse("a", 1000, 7)}, {abortMatched(4000, 7)}}},
		{name: "result first", batches: [][]Event{{abortMatched(4000, 7)}, {matchUse("a", 1000, 7)}}},
		{name: "no use", batches: [][]Event{{abortMatched(4000, 7)}}, tick: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, clk := newTestEngine(t, 100)
			var out []Resolution
			for _, b := range tc.batches {
				out = append(out, e.Process(b, holdRef, nil)...)
			}
			if tc.tick {
				clk.Advance(testGrace)
				out = append(out, e.Tick(nil)...)
			}
			require.Len(t, out, 1)
			assert.Equal(t, OutcomeInterrupted, out[0].Outcome)
			assert.Equal(t, ReasonAborted, out[0].Reason)
			assert.True(t, out[0].Matched)
			s := e.Stats()
			require.NoError(t, s.CheckConservation())
			assert.Equal(t, uint64(1), s.Aborted)
			assert.Zero(t, s.Paired+s.Standalone+s.Orphan)
		})
	}
}
