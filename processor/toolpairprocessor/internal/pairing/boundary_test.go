// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func stepUse(id, step string, t int64) Event {
	ev := use(id, t)
	ev.Step = step
	return ev
}

func boundary(step string, t int64) Event {
	return Event{Kind: KindBoundary, Key: Key{Tenant: "svc", Conversation: "s1"}, Step: step, Time: t * 1e6}
}

func sessionEnd(t int64) Event {
	return Event{Kind: KindSessionEnd, Key: Key{Tenant: "svc", Conversation: "s1"}, Time: t * 1e6}
}

type closed struct {
	id     string
	o      Outcome
	r      Reason
	endsMs int64
}

func summarize(res []Resolution) []closed {
	var out []closed
	for _, r := range res {
		out = append(out, closed{r.Key.CallID, r.Outcome, r.Reason, r.EndTime / 1e6})
	}
	return out
}

func TestStepBoundaryClosesEarlierStepsInPlace(t *testing.T) {
	e, _ := newTestEngine(t, 100)
	var got []Resolution
	got = append(got, run(t, e, stepUse("a", "s1", 1), stepUse("b", "s1", 1), result("a", 5))...)
	got = append(got, run(t, e, boundary("s1", 6))...) // the same step: nothing to close
	got = append(got, run(t, e, boundary("s2", 10))...)
	got = append(got, run(t, e, stepUse("c", "s2", 11), boundary("s3", 20))...)
	got = append(got, run(t, e, stepUse("d", "s3", 21), stepUse("late", "s3", 40), sessionEnd(30))...)
	got = append(got, run(t, e, result("b", 50))...)
	assert.Equal(t, []closed{
		{"a", OutcomePaired, ReasonNone, 0},
		{"b", OutcomeInterrupted, ReasonNextStep, 10},
		{"c", OutcomeInterrupted, ReasonNextStep, 20},
		{"d", OutcomeInterrupted, ReasonSessionEnd, 30},
		{"b", OutcomeDuplicate, ReasonNone, 0},
	}, summarize(got), "partial resolution, consecutive steps each closed at their own boundary, a late result is a duplicate")
	s := e.Stats()
	assert.Equal(t, 1, s.Pending, "the use announced after the session end's time stays pending")
}

func TestBoundaryOnHealthyHistoryIsNoOp(t *testing.T) {
	e, _ := newTestEngine(t, 100)
	var got []Resolution
	for step, id := range []string{"a", "b", "c"} {
		s := string(rune('1' + step))
		got = append(got, run(t, e, boundary(s, int64(step*10)), stepUse(id, s, int64(step*10+1)), result(id, int64(step*10+5)))...)
	}
	got = append(got, run(t, e, sessionEnd(100))...)
	for _, r := range got {
		assert.Equal(t, OutcomePaired, r.Outcome, r.Key.CallID)
	}
	require.Len(t, got, 3)
}

func TestBoundaryOfAnotherScopeOrWithoutStepDoesNotClose(t *testing.T) {
	e, _ := newTestEngine(t, 100)
	run(t, e, use("nostep", 1), stepUse("a", "s1", 1))
	other := boundary("s2", 10)
	other.Key.Conversation = "elsewhere"
	assert.Empty(t, run(t, e, other))
	got := run(t, e, boundary("s2", 10))
	assert.Equal(t, []closed{{"a", OutcomeInterrupted, ReasonNextStep, 10}}, summarize(got), "a use without a step is never closed by a boundary")
}

func newDelayedEngine(t *testing.T) (*Engine, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	e := New(Config{PairingTimeout: testTimeout, OrphanGrace: testGrace, MaxPending: 100, CloseDelay: testGrace, Clock: clk})
	return e, clk
}

// With a close delay, the outcome does not depend on whether a boundary or session end
// arrives before or after the records it follows in time.
func TestCloseDelayMakesArrivalOrderIrrelevant(t *testing.T) {
	history := []Event{
		stepUse("a", "s1", 1), stepUse("b", "s1", 1), result("a", 5),
		boundary("s2", 10),
		stepUse("c", "s2", 11), result("c", 15),
		sessionEnd(30),
	}
	want := map[string]closed{
		"a": {"a", OutcomePaired, ReasonNone, 0},
		"b": {"b", OutcomeInterrupted, ReasonNextStep, 10},
		"c": {"c", OutcomePaired, ReasonNone, 0},
	}
	orders := map[string][]int{
		"in order":                 {0, 1, 2, 3, 4, 5, 6},
		"boundaries first":         {3, 6, 0, 1, 2, 4, 5},
		"reversed":                 {6, 5, 4, 3, 2, 1, 0},
		"session end before tools": {6, 4, 3, 5, 0, 2, 1},
	}
	for name, order := range orders {
		t.Run(name, func(t *testing.T) {
			e, clk := newDelayedEngine(t)
			got := map[string]closed{}
			collect := func(res []Resolution) {
				for _, c := range summarize(res) {
					_, dup := got[c.id]
					require.False(t, dup, "two outcomes for %s", c.id)
					got[c.id] = c
				}
			}
			for _, i := range order {
				collect(run(t, e, history[i]))
				clk.Advance(testGrace / 10) // all within the delay
			}
			collect(e.Tick(nil))
			assert.Empty(t, got["b"], "nothing is closed before the delay")
			clk.Advance(testGrace)
			collect(e.Tick(nil))
			assert.Equal(t, want, got)
			require.NoError(t, e.Stats().CheckConservation())
			assert.Zero(t, e.Stats().Pending)
		})
	}
}

func TestCloseDelayAppliedAtShutdownBeforeShutdownReason(t *testing.T) {
	e, _ := newDelayedEngine(t)
	run(t, e, stepUse("a", "s1", 1), stepUse("late", "s1", 50), sessionEnd(30))
	assert.Equal(t, []closed{
		{"a", OutcomeInterrupted, ReasonSessionEnd, 30},
		{"late", OutcomeInterrupted, ReasonShutdown, 0},
	}, func() []closed {
		cs := summarize(e.Shutdown(nil))
		cs[1].endsMs = 0 // the shutdown time is the clock's
		return cs
	}())
}

func TestCloseDelayBoundIsRespected(t *testing.T) {
	e, _ := newDelayedEngine(t) // MaxPending 100
	run(t, e, stepUse("a", "s0", 0))
	var got []Resolution
	for i := range 150 {
		got = append(got, run(t, e, boundary(string(rune('A'+i%2))+"x", int64(i+1)))...)
	}
	assert.LessOrEqual(t, e.closingsQueued, 100)
	assert.Equal(t, []closed{{"a", OutcomeInterrupted, ReasonNextStep, 1}}, summarize(got), "the oldest closing is applied early when the bound is reached")
}
