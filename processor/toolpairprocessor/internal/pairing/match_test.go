// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

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

// tickPast is a step of TestMatchResult: the clock moves past orphan_grace and the engine
// ticks.
var tickPast = Event{Kind: Kind(0xff)}

func TestMatchResult(t *testing.T) {
	tests := []struct {
		name string
		// events are processed one batch each; tickPast ticks past orphan_grace.
		events  []Event
		outcome []Outcome // of the last step, in order
		callID  string    // the call ID the last result learned ("" when none)
		same    bool      // SameSource of a duplicate
		pending int
		waiting int
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
			name:    "a repeated use showing an earlier start moves its call ahead",
			events:  []Event{matchUse("a", 100, 7), matchUse("b", 200, 7), matchUse("b", 50, 7), matched(300, 7)},
			outcome: []Outcome{OutcomePaired},
			callID:  "b",
			pending: 1,
		},
		{
			name:    "a use of unknown time, shown later by a repeated use, takes its place",
			events:  []Event{matchUse("a", 0, 7), matchUse("b", 200, 7), matchUse("a", 300, 7), matched(400, 7)},
			outcome: []Outcome{OutcomePaired},
			callID:  "b",
			pending: 1,
		},
		{
			name:    "another match leaves the call pending: held for its use",
			events:  []Event{matchUse("a", 100, 7), matched(300, 8)},
			pending: 1,
			waiting: 1,
		},
		{
			name:    "held without its use for orphan_grace in a scope that saw uses: orphan",
			events:  []Event{matchUse("a", 100, 7), matched(300, 8), tickPast},
			outcome: []Outcome{OutcomeOrphan},
			pending: 1,
		},
		{
			name:    "a use without a match is never found by one: orphan",
			events:  []Event{use("a", 100), matched(300, 7), tickPast},
			outcome: []Outcome{OutcomeOrphan},
			pending: 1,
		},
		{
			name:    "a call resolved by its echo: the tool span, its source's first record, is paired too",
			events:  []Event{matchUse("a", 100, 7), echoFrom("a", 200, 2), matched(300, 7)},
			outcome: []Outcome{OutcomePaired},
			callID:  "a",
		},
		{
			name:    "a second copy of the tool span of one call (an export retry): duplicate",
			events:  []Event{matchUse("a", 100, 7), matched(300, 7), matched(300, 7)},
			outcome: []Outcome{OutcomeDuplicate},
			callID:  "a",
			same:    true,
		},
		{
			name:    "a retry after the held tool span paired its late use: duplicate",
			events:  []Event{matched(300, 7), matchUse("a", 100, 7), matched(300, 7)},
			outcome: []Outcome{OutcomeDuplicate},
			callID:  "a",
			same:    true,
		},
		{
			name:    "a call paired by a result with its ID held before the use: duplicate",
			events:  []Event{result("a", 300), matchUse("a", 100, 7), matched(400, 7)},
			outcome: []Outcome{OutcomeDuplicate},
			callID:  "a",
			same:    true,
		},
		{
			name:    "a call interrupted before its tool span: duplicate",
			events:  []Event{matchUse("a", 100, 7), {Kind: KindSessionEnd, Key: key(""), Time: int64(time.Second)}, matched(1300, 7)},
			outcome: []Outcome{OutcomeDuplicate},
			callID:  "a",
			same:    true,
		},
		{
			name:    "the tool span before its use waits and pairs when the use arrives",
			events:  []Event{matched(300, 7), matchUse("a", 100, 7)},
			outcome: []Outcome{OutcomePaired},
			callID:  "a",
		},
		{
			name:    "held results pair later uses in their order of arrival",
			events:  []Event{matched(300, 7), matched(400, 7), matchUse("a", 100, 7)},
			outcome: []Outcome{OutcomePaired},
			callID:  "a",
			waiting: 1,
		},
		{
			name:    "a use of another match does not take a held result",
			events:  []Event{matched(300, 7), matchUse("a", 100, 8)},
			pending: 1,
			waiting: 1,
		},
		{
			name:    "nothing in the scope for orphan_grace: standalone",
			events:  []Event{matched(300, 7), tickPast},
			outcome: []Outcome{OutcomeStandalone},
		},
		{
			name:    "a match of 0 can never be matched: settled at once",
			events:  []Event{matchUse("a", 100, 0), matched(300, 0)},
			outcome: []Outcome{OutcomeOrphan},
			pending: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, clk := newTestEngine(t, 100)
			var out []Resolution
			var last Event
			for i := range tt.events {
				if tt.events[i].Kind == tickPast.Kind {
					clk.Advance(testGrace + time.Second)
					out = e.Tick(nil)
					require.NoError(t, e.Stats().CheckConservation())
					continue
				}
				evs := []Event{tt.events[i]}
				out = e.Process(evs, holdRef, nil)
				require.NoError(t, e.Stats().CheckConservation())
				last = evs[0]
			}
			var got []Outcome
			for _, r := range out {
				got = append(got, r.Outcome)
			}
			assert.Equal(t, tt.outcome, got)
			if len(out) > 0 {
				assert.Equal(t, tt.callID, out[0].Key.CallID)
				assert.True(t, out[0].Matched)
				assert.Equal(t, tt.same, out[0].SameSource)
				if last.Kind == KindMatch {
					assert.Equal(t, tt.callID, last.Key.CallID)
				}
			}
			s := e.Stats()
			assert.Equal(t, tt.pending, s.Pending)
			assert.Equal(t, tt.waiting, s.Waiting)
			checkMatchLists(t, e)
		})
	}
}

func echoFrom(id string, ms int64, source uint8) Event {
	ev := echo(id, ms)
	ev.Source = source
	return ev
}

// TestMatchHeldReleasedByUse: a tool span held before its use is released, paired, by the
// batch that brings the use: the resolution carries the held record, the use's Ref and
// payload, the call's ID and a duration from the use.
func TestMatchHeldReleasedByUse(t *testing.T) {
	e, _ := newTestEngine(t, 100)
	evs := []Event{matched(300, 7)}
	out := e.Process(evs, holdRef, nil)
	assert.Empty(t, out)
	assert.Equal(t, VerdictHeld, evs[0].Verdict)
	evs = []Event{matchUse("a", 100, 7)}
	out = e.Process(evs, holdRef, nil)
	require.Len(t, out, 1)
	r := out[0]
	assert.Equal(t, OutcomePaired, r.Outcome)
	assert.Equal(t, "a", r.Key.CallID)
	assert.Equal(t, int32(300), r.ResultPayload)
	assert.Equal(t, "use:a", r.UsePayload)
	assert.Equal(t, int32(100), r.UseRef)
	assert.Equal(t, int32(-1), r.ResultRef)
	assert.Equal(t, int64(200), r.ElapsedMs())
	assert.True(t, r.Matched)
	assert.Equal(t, VerdictResolved, evs[0].Verdict)
	s := e.Stats()
	assert.Equal(t, Stats{UsesSeen: 1, ResultsSeen: 1, Paired: 1}, s)
	// The call is remembered: its use again is a repeat.
	evs = []Event{matchUse("a", 100, 7)}
	e.Process(evs, holdRef, nil)
	assert.Equal(t, VerdictRepeated, evs[0].Verdict)
	checkMatchLists(t, e)
}

// TestMatchUnheldSettledAtOnce: without a hold callback, a tool span that finds no call is
// settled at once, orphan in a scope that saw uses (also one forgotten since), else
// standalone, and counted as unmatched; it is remembered as settled (a copy is a
// duplicate), but for a match of 0.
func TestMatchUnheldSettledAtOnce(t *testing.T) {
	e, clk := newTestEngine(t, 100)
	out := e.Process([]Event{matched(300, 7)}, nil, nil)
	require.Len(t, out, 1)
	assert.Equal(t, OutcomeStandalone, out[0].Outcome)
	run(t, e, use("x", 400), result("x", 500))
	out = e.Process([]Event{matched(600, 8), matched(600, 8), matched(600, 0), matched(600, 0)}, nil, nil)
	var got []Outcome
	for _, r := range out {
		got = append(got, r.Outcome)
	}
	assert.Equal(t, []Outcome{OutcomeOrphan, OutcomeDuplicate, OutcomeOrphan, OutcomeOrphan}, got)
	checkMatchLists(t, e)
	// The scope is forgotten once its calls are: it is still known to have seen a use.
	clk.Advance(testTimeout + time.Second)
	e.Tick(nil)
	require.Empty(t, e.conversations)
	out = e.Process([]Event{matched(700, 0)}, nil, nil)
	require.Len(t, out, 1)
	assert.Equal(t, OutcomeOrphan, out[0].Outcome)
	s := e.Stats()
	assert.Equal(t, uint64(1), s.Unmatched)
	assert.Equal(t, uint64(4), s.UnmatchedOrphan)
	assert.Equal(t, uint64(4), s.Orphan)
	require.NoError(t, s.CheckConservation())
}

// checkMatchLists checks that the match lists hold exactly the entries flagged as listed:
// pending calls in use-time order, resolved calls, held results without a call ID, each in
// the list of its state.
func checkMatchLists(t *testing.T, e *Engine) {
	t.Helper()
	listed := 0
	for k, l := range e.matches {
		require.False(t, l.empty(), "an empty list is dropped")
		require.Equal(t, k, l.key)
		for _, c := range []struct {
			nl    *nodeList
			state []state
		}{{&l.pending, []state{statePending, statePendingHeld}}, {&l.resolved, []state{stateResolved}}, {&l.held, []state{stateWaiting}}, {&l.settled, []state{stateResolved}}} {
			var prev *matchNode
			for n := c.nl.head; n != nil; n = n.next {
				require.Same(t, c.nl, n.in())
				require.Same(t, l, n.list)
				require.Same(t, prev, n.prev)
				require.Contains(t, c.state, n.ent.state)
				require.True(t, n.ent.has(flagMatch))
				require.Same(t, n, e.matchOf[n.ent])
				if c.nl == &l.pending && prev != nil {
					require.LessOrEqual(t, prev.ent.useTime, n.ent.useTime)
				}
				require.Equal(t, c.nl == &l.held || c.nl == &l.settled, n.ent.callID == "")
				prev = n
				listed++
			}
			require.Same(t, prev, c.nl.tail)
		}
	}
	require.Equal(t, listed, len(e.matchOf))
	flagged := 0
	for _, fl := range []*fifo{&e.pending, &e.waiting} {
		for p := fl.head; p != nil; p = p.next {
			if p.has(flagMatch) {
				flagged++
			}
		}
	}
	for _, rc := range e.resolvedCalls() {
		if rc.ext != nil && rc.ext.has(flagMatch) {
			flagged++
		}
	}
	require.Equal(t, flagged, listed)
}

// TestMatchListingLivesWithTheCall checks that the match listing of a call moves to the
// resolved calls when the call stops being pending, whatever ends it, and goes when the
// resolved call is forgotten.
func TestMatchListingLivesWithTheCall(t *testing.T) {
	for name, end := range map[string]func(e *Engine, clk *fakeClock){
		"expired": func(e *Engine, clk *fakeClock) { clk.Advance(testTimeout + time.Second); e.Tick(nil) },
		"result":  func(e *Engine, _ *fakeClock) { e.Process([]Event{result("a", 200)}, holdRef, nil) },
		"session end": func(e *Engine, clk *fakeClock) {
			e.Process([]Event{{Kind: KindSessionEnd, Key: key(""), Time: int64(time.Second)}}, holdRef, nil)
		},
		"evicted": func(e *Engine, _ *fakeClock) {
			for i := range 2 {
				e.Process([]Event{use(string(rune('b'+i)), int64(200+i))}, holdRef, nil)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			e, clk := newTestEngine(t, 2)
			run(t, e, matchUse("a", 100, 7))
			require.Len(t, e.matches, 1)
			end(e, clk)
			checkMatchLists(t, e)
			require.Len(t, e.matches, 1)
			for _, l := range e.matches {
				assert.Nil(t, l.pending.head)
				require.NotNil(t, l.resolved.head)
				assert.Equal(t, "a", l.resolved.head.ent.callID)
			}
			require.NoError(t, e.Stats().CheckConservation())
			// Forgotten with the resolved call, once its scope is idle for the retention.
			for range 3 {
				clk.Advance(testTimeout + time.Second)
				e.Tick(nil)
			}
			assert.Empty(t, e.matches)
			assert.Empty(t, e.matchOf)
		})
	}
	t.Run("trimmed with the resolved calls", func(t *testing.T) {
		e, _ := newTestEngine(t, 2) // MaxResolved is MaxPending
		run(t, e, matchUse("a", 100, 7), result("a", 150))
		for i := range 2 {
			run(t, e, use(string(rune('b'+i)), int64(200+i)), result(string(rune('b'+i)), int64(300+i)))
		}
		assert.Empty(t, e.matches)
		assert.Empty(t, e.matchOf)
	})
}

// TestMatchRandomSequences runs random sequences of uses with and without match hashes,
// matched results (with and without a hold callback, and repeated as export retries),
// results by ID, echoes, session ends, ticks and evictions through a small engine. After
// every batch conservation holds and the match lists hold exactly the listed entries, also
// in an engine restored from a snapshot now and then; at the end every result record has
// had exactly one outcome, and nothing is left listed.
func TestMatchRandomSequences(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for seq := 0; seq < 200; seq++ {
		e, clk := newTestEngine(t, 8)
		outcomes := map[int32]int{} // by the Ref of a result record
		results := map[int32]bool{} // the Refs of result records (true) and echoes (false)
		var lastMatched Event
		count := func(out []Resolution) {
			for _, r := range out {
				if r.ResultRef >= 0 {
					outcomes[r.ResultRef]++
				}
				if ref, ok := r.ResultPayload.(int32); ok {
					outcomes[ref]++
				}
			}
		}
		for step := 0; step < 60; step++ {
			id := string(rune('a' + rng.IntN(12)))
			ms := int64(step * 10)
			m := uint64(rng.IntN(4)) // 0: no match
			hold := holdRef
			var ev Event
			switch rng.IntN(8) {
			case 0, 1:
				ev = matchUse(id, ms, m)
			case 2, 3:
				ev = matched(ms, m)
				if rng.IntN(4) == 0 {
					hold = nil
				}
			case 4:
				if lastMatched.Kind != KindMatch {
					continue
				}
				ev = lastMatched // an export retry, a record of its own
				ev.Key.CallID, ev.Ref = "", int32(ms)
			case 5:
				ev = result(id, ms)
			case 6:
				ev = echo(id, ms)
			default:
				ev = Event{Kind: KindSessionEnd, Key: key(""), Time: ms}
			}
			switch ev.Kind {
			case KindMatch, KindResult:
				results[ev.Ref] = true
			case KindEcho:
				results[ev.Ref] = false
			}
			if ev.Kind == KindMatch {
				lastMatched = ev
			}
			count(e.Process([]Event{ev}, hold, nil))
			if rng.IntN(10) == 0 {
				clk.Advance(time.Duration(rng.IntN(2)+1) * testGrace)
				count(e.Tick(nil))
			}
			require.NoError(t, e.Stats().CheckConservation())
			checkMatchLists(t, e)
			if rng.IntN(15) == 0 {
				// A restart: the state goes on in another engine, with the same clock.
				snap := e.Snapshot(nil)
				r := New(e.cfg)
				_, err := r.Restore(snap, nil)
				require.NoError(t, err)
				require.Equal(t, e.Stats().Pending, r.Stats().Pending)
				require.Equal(t, e.Stats().Waiting, r.Stats().Waiting)
				require.Equal(t, len(e.matchOf), len(r.matchOf))
				checkMatchLists(t, r)
				e = r
			}
		}
		count(e.Shutdown(nil))
		require.Empty(t, e.matches)
		require.Empty(t, e.matchOf)
		for ref, result := range results {
			if result {
				require.Equal(t, 1, outcomes[ref], "result record %d", ref)
			} else {
				require.LessOrEqual(t, outcomes[ref], 1, "echo %d", ref)
			}
		}
	}
}

// TestMatchProcessSetsCallID checks that Process writes the resolved call's ID into the
// event, for the caller to write on the record, with the engine's copy of the key.
func TestMatchProcessSetsCallID(t *testing.T) {
	e, _ := newTestEngine(t, 100)
	run(t, e, matchUse("a", 100, 7))
	evs := []Event{matched(300, 7), matched(400, 9)}
	out := e.Process(evs, holdRef, nil)
	require.Len(t, out, 1)
	assert.Equal(t, "a", evs[0].Key.CallID)
	assert.Equal(t, int64(200), out[0].ElapsedMs())
	assert.Empty(t, evs[1].Key.CallID)
	assert.Equal(t, VerdictHeld, evs[1].Verdict)
	require.NoError(t, e.Stats().CheckConservation())
}

// TestMatchSettledResolvesItsCall: a tool span released as an orphan resolves its call, as a
// result with a call ID does: a copy of it is a duplicate, and a use of its match arriving
// later (no other span held) is a repeat that names the call, whose later results are
// duplicates. A span still held is paired before a settled one is taken.
func TestMatchSettledResolvesItsCall(t *testing.T) {
	e, clk := newTestEngine(t, 100)
	run(t, e, use("x", 50), matched(300, 7))
	clk.Advance(testGrace + time.Second)
	out := e.Tick(nil)
	require.Len(t, out, 1)
	assert.Equal(t, OutcomeOrphan, out[0].Outcome)
	checkMatchLists(t, e)

	out = run(t, e, matched(300, 7))
	require.Len(t, out, 1)
	assert.Equal(t, OutcomeDuplicate, out[0].Outcome)
	assert.True(t, out[0].SameSource)
	assert.Empty(t, out[0].Key.CallID)

	evs := []Event{matchUse("a", 100, 7)}
	out = e.Process(evs, holdRef, nil)
	assert.Empty(t, out)
	assert.Equal(t, VerdictRepeated, evs[0].Verdict)
	assert.Equal(t, "a", evs[0].Key.CallID)
	s := e.Stats()
	assert.Equal(t, 1, int(s.UsesSeen)) // x
	assert.Equal(t, 1, int(s.UsesRepeated))
	assert.Equal(t, 1, s.Pending)
	require.NoError(t, s.CheckConservation())
	checkMatchLists(t, e)

	out = run(t, e, result("a", 500))
	require.Len(t, out, 1)
	assert.Equal(t, OutcomeDuplicate, out[0].Outcome)
	out = run(t, e, matched(600, 7))
	require.Len(t, out, 1)
	assert.Equal(t, OutcomeDuplicate, out[0].Outcome)
	assert.Equal(t, "a", out[0].Key.CallID)

	// Two spans of another match, held one after the other; the first is settled, then a
	// use pairs the one still held.
	run(t, e, matched(700, 8))
	clk.Advance(testGrace / 2)
	run(t, e, matched(800, 8))
	clk.Advance(testGrace/2 + time.Second)
	out = e.Tick(nil)
	require.Len(t, out, 1)
	assert.Equal(t, int32(700), out[0].ResultPayload)
	out = run(t, e, matchUse("b", 650, 8))
	require.Len(t, out, 1)
	assert.Equal(t, OutcomePaired, out[0].Outcome)
	assert.Equal(t, int32(800), out[0].ResultPayload)
	checkMatchLists(t, e)
}
