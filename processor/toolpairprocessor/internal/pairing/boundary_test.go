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
	return Event{Kind: KindBoundary, Key: Key{Tenant: "svc", Scope: "s1"}, Step: step, Time: t * 1e6}
}

func sessionEnd(t int64) Event {
	return Event{Kind: KindSessionEnd, Key: Key{Tenant: "svc", Scope: "s1"}, Time: t * 1e6}
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
	other.Key.Scope = "elsewhere"
	assert.Empty(t, run(t, e, other))
	got := run(t, e, boundary("s2", 10))
	assert.Equal(t, []closed{{"a", OutcomeInterrupted, ReasonNextStep, 10}}, summarize(got), "a use without a step is never closed by a boundary")
}
