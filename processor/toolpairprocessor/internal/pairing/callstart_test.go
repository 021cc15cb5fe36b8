// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCallStartsAtEarliestRecord checks that the UseTime of a result record's outcome is the
// earliest time shown by the call's uses (the use, a repeated use such as a decision) and by
// the record itself (the start of a result span), in any order of arrival (specification
// section 3), so that the paired duration is never shorter than the tool's own span, and
// never depends on another source's record.
func TestCallStartsAtEarliestRecord(t *testing.T) {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	span := func(id string, start, end int64) Event {
		ev := result(id, end)
		ev.Start = ms(start)
		return ev
	}
	companion := func(id string, start, end int64) Event {
		ev := span(id, start, end)
		ev.Kind = KindCompanion
		ev.Source = 1
		return ev
	}
	tests := []struct {
		name        string
		batches     [][]Event
		wantOutcome Outcome
		wantUse     int64
		wantMs      int64
	}{
		{
			name:        "the use is the earliest",
			batches:     [][]Event{{use("a", 100)}, {span("a", 150, 400)}},
			wantOutcome: OutcomePaired, wantUse: ms(100), wantMs: 300,
		},
		{
			name:        "a result span that started before the announcing record",
			batches:     [][]Event{{use("a", 100)}, {span("a", 40, 400)}},
			wantOutcome: OutcomePaired, wantUse: ms(40), wantMs: 360,
		},
		{
			name:        "the result span first, held, then its use",
			batches:     [][]Event{{span("a", 40, 400)}, {use("a", 100)}},
			wantOutcome: OutcomePaired, wantUse: ms(40), wantMs: 360,
		},
		{
			name:        "a repeated use with an earlier time (the model's tool_use after the decision)",
			batches:     [][]Event{{use("a", 100)}, {use("a", 20)}, {result("a", 400)}},
			wantOutcome: OutcomePaired, wantUse: ms(20), wantMs: 380,
		},
		{
			name:        "a later repeated use changes nothing",
			batches:     [][]Event{{use("a", 100)}, {use("a", 300)}, {result("a", 400)}},
			wantOutcome: OutcomePaired, wantUse: ms(100), wantMs: 300,
		},
		{
			name:        "a companion span's start counts for its own record",
			batches:     [][]Event{{use("a", 100)}, {companion("a", 60, 350)}, {span("a", 90, 400)}},
			wantOutcome: OutcomePaired, wantUse: ms(60), wantMs: 290,
		},
		{
			name:        "an aborted result span's start",
			batches:     [][]Event{{use("a", 100)}, {func() Event { ev := span("a", 30, 400); ev.Kind = KindAbort; return ev }()}},
			wantOutcome: OutcomeInterrupted, wantUse: ms(30),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newTestEngine(t, 100)
			var out []Resolution
			for _, b := range tt.batches {
				out = append(out, run(t, e, b...)...)
			}
			var got *Resolution
			for i := range out {
				if out[i].Outcome != OutcomeDuplicate && !out[i].Report {
					require.Nil(t, got, "one counted outcome of the call: %v", out)
					got = &out[i]
				}
			}
			require.NotNil(t, got)
			assert.Equal(t, tt.wantOutcome, got.Outcome)
			assert.Equal(t, tt.wantUse, got.UseTime)
			assert.Equal(t, tt.wantMs, got.ElapsedMs())
		})
	}
}

// TestSyntheticStartsAtEarliestRecord: an interrupted call's synthetic record starts at the
// earliest time any of its records showed, here a repeated use earlier than the first.
func TestSyntheticStartsAtEarliestRecord(t *testing.T) {
	e, _ := newTestEngine(t, 100)
	run(t, e, use("a", 100))
	run(t, e, use("a", 70))
	out := e.Shutdown(nil)
	require.Len(t, out, 1)
	assert.Equal(t, ReasonShutdown, out[0].Reason)
	assert.Equal(t, int64(70*time.Millisecond), out[0].UseTime)
	assert.Equal(t, int64(100*time.Millisecond), out[0].EndTime, "the scope's last sign of life")
}
