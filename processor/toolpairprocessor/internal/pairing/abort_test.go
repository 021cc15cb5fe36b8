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

func TestAbortWithoutUseIsOrphanOrStandalone(t *testing.T) {
	e, clk := newTestEngine(t, 100)
	run(t, e, abort("a", 1000))
	clk.Advance(testGrace)
	out := e.Tick(nil)
	require.Len(t, out, 1)
	assert.Equal(t, OutcomeStandalone, out[0].Outcome, "no use was ever seen in the scope")
	assert.Equal(t, int32(1000), out[0].ResultPayload)
	require.NoError(t, e.Stats().CheckConservation())
	assert.Zero(t, e.Stats().Aborted)
}
