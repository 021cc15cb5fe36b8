// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRefusedResult checks KindRefused, a result record saying the user refused its call
// (specification section 2): the call is rejected on that record, whatever the order of arrival,
// no synthetic record is due, and the conservation of section 7 holds with the refusal
// counted on the use side only.
func TestRefusedResult(t *testing.T) {
	refusal := func(id string, ms int64) Event {
		ev := result(id, ms)
		ev.Kind = KindRefused
		ev.Source = 1
		return ev
	}
	other := func(ev Event) Event { ev.Source = 2; return ev }
	companion := func(id string, ms int64) Event {
		ev := result(id, ms)
		ev.Kind = KindCompanion
		ev.Source = 3
		return ev
	}
	type want struct {
		outcome   Outcome
		resultRef int32
		same      bool
	}
	tests := []struct {
		name     string
		batches  [][]Event
		want     []want
		verdicts []Verdict // of the last batch
		stats    Stats     // the counters compared (the others are zero)
	}{
		{
			name:    "use, then the refusal",
			batches: [][]Event{{use("a", 1)}, {refusal("a", 5)}},
			want:    []want{{outcome: OutcomeRejected, resultRef: 5}},
			stats:   Stats{UsesSeen: 1, Rejected: 1},
		},
		{
			name:     "the refusal, then its use: a repeat",
			batches:  [][]Event{{refusal("a", 5)}, {use("a", 1)}},
			want:     []want{{outcome: OutcomeRejected, resultRef: 5}},
			verdicts: []Verdict{VerdictRepeated},
			stats:    Stats{UsesSeen: 1, UsesRepeated: 1, Rejected: 1},
		},
		{
			name:    "a result of another source held, then the refusal: a kept duplicate",
			batches: [][]Event{{other(result("a", 4))}, {refusal("a", 5)}},
			want:    []want{{outcome: OutcomeRejected, resultRef: 5}, {outcome: OutcomeDuplicate, resultRef: -1}},
			stats:   Stats{UsesSeen: 1, Rejected: 1, ResultsSeen: 1, Duplicate: 1},
		},
		{
			name:    "refused, then a result of another source: kept; a copy of the refusal: a retry",
			batches: [][]Event{{use("a", 1)}, {refusal("a", 5)}, {other(result("a", 6))}, {refusal("a", 7)}},
			want: []want{
				{outcome: OutcomeRejected, resultRef: 5},
				{outcome: OutcomeDuplicate, resultRef: 6},
				{outcome: OutcomeDuplicate, resultRef: 7, same: true},
			},
			stats: Stats{UsesSeen: 1, Rejected: 1, ResultsSeen: 2, Duplicate: 2},
		},
		{
			name:    "already paired: the refusal is a duplicate",
			batches: [][]Event{{use("a", 1)}, {other(result("a", 4))}, {refusal("a", 5)}},
			want:    []want{{outcome: OutcomePaired, resultRef: 4}, {outcome: OutcomeDuplicate, resultRef: 5}},
			stats:   Stats{UsesSeen: 1, Paired: 1, ResultsSeen: 2, Duplicate: 1},
		},
		{
			name:    "a companion first: it pairs, and the refusal is a duplicate",
			batches: [][]Event{{use("a", 1)}, {companion("a", 4)}, {refusal("a", 5)}},
			want:    []want{{outcome: OutcomePaired, resultRef: 4}, {outcome: OutcomeDuplicate, resultRef: 5}},
			stats:   Stats{UsesSeen: 1, Paired: 1, ResultsSeen: 2, Duplicate: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newTestEngine(t, 100)
			var out []Resolution
			var last []Event
			for _, b := range tt.batches {
				last = append([]Event(nil), b...)
				out = append(out, e.Process(last, holdRef, nil)...)
				require.NoError(t, e.Stats().CheckConservation())
			}
			require.Len(t, out, len(tt.want))
			for i, w := range tt.want {
				assert.Equal(t, w.outcome, out[i].Outcome, "resolution %d", i)
				assert.Equal(t, w.resultRef, out[i].ResultRef, "resolution %d", i)
				assert.Equal(t, w.same, out[i].SameSource, "resolution %d", i)
				assert.False(t, out[i].Synthesize(), "no synthetic record")
				if w.outcome == OutcomeRejected {
					assert.Equal(t, int32(-1), out[i].UseRef, "the record that carries the outcome is the result")
				}
			}
			for i, v := range tt.verdicts {
				assert.Equal(t, v, last[i].Verdict)
			}
			assert.Empty(t, e.Shutdown(nil), "nothing left pending")
			s := e.Stats()
			assert.Equal(t, tt.stats, Stats{
				UsesSeen: s.UsesSeen, UsesRepeated: s.UsesRepeated, ResultsSeen: s.ResultsSeen,
				Paired: s.Paired, Rejected: s.Rejected, Duplicate: s.Duplicate,
			})
			assert.Zero(t, s.InterruptedTotal())
		})
	}
}
