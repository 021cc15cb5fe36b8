package pairing

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func matchUse(id string, ms int64, m uint64) Event {
	ev := use(id, ms)
	ev.Match = m
	return ev
}

func matched(ms int64, m uint64) Event {
	return Event{Kind: KindMatch, Key: key(""), Time: ms * int64(time.Millisecond), Ref: int32(ms), Match: m, ToolName: "run_shell"}
}

func TestMatchResult(t *testing.T) {
	tests := []struct {
		name string
		// events are processed one batch each.
		events  []Event
		outcome []Outcome // of the last batch, in order
		callID  string    // the call ID the last event learned ("" when none)
		pending int
	}{
		{
			name:    "the pending call with the same match pairs",
			events:  []Event{matchUse("a", 100, 7), matched(300, 7)},
			outcome: []Outcome{OutcomePaired},
			callID:  "a",
		},
		{
			name:    "the earliest use of two with the same match, whatever their order of arrival",
			events:  []Event{matchUse("late", 200, 7), matchUse("early", 100, 7), matched(300, 7)},
			outcome: []Outcome{OutcomePaired},
			callID:  "early",
			pending: 1,
		},
		{
			name:    "another match leaves the call pending: standalone",
			events:  []Event{matchUse("a", 100, 7), matched(300, 8)},
			outcome: []Outcome{OutcomeStandalone},
			pending: 1,
		},
		{
			name:    "a use without a match is never found by one",
			events:  []Event{use("a", 100), matched(300, 7)},
			outcome: []Outcome{OutcomeStandalone},
			pending: 1,
		},
		{
			name:    "a call resolved by its echo is no longer found",
			events:  []Event{matchUse("a", 100, 7), echo("a", 200), matched(300, 7)},
			outcome: []Outcome{OutcomeStandalone},
		},
		{
			name:    "a second tool span of one call finds nothing: standalone",
			events:  []Event{matchUse("a", 100, 7), matched(300, 7), matched(400, 7)},
			outcome: []Outcome{OutcomeStandalone},
		},
		{
			name:    "nothing in the scope",
			events:  []Event{matched(300, 7)},
			outcome: []Outcome{OutcomeStandalone},
		},
		{
			name:    "a match of 0 finds nothing",
			events:  []Event{matchUse("a", 100, 0), matched(300, 0)},
			outcome: []Outcome{OutcomeStandalone},
			pending: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newTestEngine(t, 100)
			var out []Resolution
			for i := range tt.events {
				out = run(t, e, tt.events[i])
			}
			var got []Outcome
			for _, r := range out {
				got = append(got, r.Outcome)
			}
			assert.Equal(t, tt.outcome, got)
			last := tt.events[len(tt.events)-1]
			if tt.callID != "" {
				assert.Equal(t, tt.callID, out[0].Key.CallID)
				assert.Equal(t, last.Ref, out[0].ResultRef)
			} else {
				assert.Empty(t, out[0].Key.CallID)
			}
			s := e.Stats()
			assert.Equal(t, tt.pending, s.Pending)
			assert.Len(t, e.matchOf, countMatchable(e))
		})
	}
}

// countMatchable counts the pending calls listed under a match: only calls still pending
// whose use had one.
func countMatchable(e *Engine) int {
	n := 0
	for p := e.pending.head; p != nil; p = p.next {
		if p.has(flagMatch) {
			n++
		}
	}
	return n
}

// TestMatchProcessSetsCallID checks that Process writes the resolved call's ID into the
// event, for the caller to write on the record, and counts the unmatched.
func TestMatchProcessSetsCallID(t *testing.T) {
	e, _ := newTestEngine(t, 100)
	run(t, e, matchUse("a", 100, 7))
	evs := []Event{matched(300, 7), matched(400, 9)}
	out := e.Process(evs, holdRef, nil)
	require.Len(t, out, 2)
	assert.Equal(t, "a", evs[0].Key.CallID)
	assert.True(t, evs[0].Owned)
	assert.Equal(t, int64(200), out[0].DurationMs())
	assert.Empty(t, evs[1].Key.CallID)
	s := e.Stats()
	assert.Equal(t, uint64(1), s.Unmatched)
	assert.Equal(t, uint64(1), s.Standalone)
	require.NoError(t, s.CheckConservation())
}

// TestMatchListingLivesWithThePendingCall checks that the match listing of a call goes when
// the call stops being pending, whatever ends it.
func TestMatchListingLivesWithThePendingCall(t *testing.T) {
	for name, end := range map[string]func(e *Engine, clk *fakeClock){
		"expired":  func(e *Engine, clk *fakeClock) { clk.Advance(testTimeout + time.Second); e.Tick(nil) },
		"shutdown": func(e *Engine, _ *fakeClock) { e.Shutdown(nil) },
		"result":   func(e *Engine, _ *fakeClock) { e.Process([]Event{result("a", 200)}, holdRef, nil) },
		"session end": func(e *Engine, clk *fakeClock) {
			e.Process([]Event{{Kind: KindSessionEnd, Key: key(""), Time: int64(time.Second)}}, holdRef, nil)
		},
		"evicted": func(e *Engine, _ *fakeClock) {
			for i := range 3 {
				e.Process([]Event{use(string(rune('b'+i)), int64(200+i))}, holdRef, nil)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			e, clk := newTestEngine(t, 2)
			run(t, e, matchUse("a", 100, 7))
			require.Len(t, e.matches, 1)
			end(e, clk)
			assert.Empty(t, e.matches)
			assert.Empty(t, e.matchOf)
			require.NoError(t, e.Stats().CheckConservation())
		})
	}
}

// TestMatchRandomSequences runs random sequences of uses with and without match hashes,
// matched results, results by ID, echoes, session ends, ticks and evictions through a small
// engine, and checks after every batch that conservation holds and that the match listings
// hold exactly the pending calls whose use had a match (state bounded by the pending calls).
func TestMatchRandomSequences(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for seq := 0; seq < 200; seq++ {
		e, clk := newTestEngine(t, 8)
		for step := 0; step < 60; step++ {
			id := string(rune('a' + rng.IntN(12)))
			ms := int64(step * 10)
			m := uint64(rng.IntN(4)) // 0: no match
			var ev Event
			switch rng.IntN(7) {
			case 0, 1:
				ev = matchUse(id, ms, m)
			case 2, 3:
				ev = matched(ms, m)
			case 4:
				ev = result(id, ms)
			case 5:
				ev = echo(id, ms)
			default:
				ev = Event{Kind: KindSessionEnd, Key: key(""), Time: ms}
			}
			e.Process([]Event{ev}, holdRef, nil)
			if rng.IntN(10) == 0 {
				clk.Advance(testGrace + time.Second)
				e.Tick(nil)
			}
			require.NoError(t, e.Stats().CheckConservation())
			listed := 0
			for _, l := range e.matches {
				for _, c := range l {
					require.Equal(t, statePending, c.state)
					listed++
				}
			}
			require.Equal(t, listed, len(e.matchOf))
			require.Equal(t, countMatchable(e), listed)
			require.LessOrEqual(t, listed, e.Stats().Pending)
		}
		e.Shutdown(nil)
		require.Empty(t, e.matches)
		require.Empty(t, e.matchOf)
	}
}

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
	assert.Empty(t, r.matches)
	assert.Empty(t, r.matchOf)
}
