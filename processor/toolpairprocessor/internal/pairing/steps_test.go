// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGroupStep(t *testing.T) {
	s := GroupStep("trace1", "span9")
	assert.Equal(t, "trace1\x00span9", s)
	g, ok := stepGroup(s)
	assert.True(t, ok)
	assert.Equal(t, "trace1", g)
	g, ok = stepGroup(GroupStep("", ""))
	assert.True(t, ok, "an empty group is still a group")
	assert.Empty(t, g)
	_, ok = stepGroup("msg_1")
	assert.False(t, ok)
}

func TestClosesStep(t *testing.T) {
	outer, inner := "agentA", "agentB"
	tests := []struct {
		name     string
		boundary bool
		closing  string
		use      string
		want     bool
	}{
		{"ungrouped boundary, other step", true, "s2", "s1", true},
		{"ungrouped boundary, same step", true, "s1", "s1", false},
		{"ungrouped boundary, use without step", true, "s2", "", false},
		{"ungrouped boundary, grouped use of another step", true, "s2", GroupStep(outer, "s1"), true},
		{"ungrouped session end closes every call", false, "", GroupStep(inner, "s1"), true},
		{"ungrouped session end, use without step", false, "", "", true},
		{"grouped boundary, same group, other step", true, GroupStep(outer, "s2"), GroupStep(outer, "s1"), true},
		{"grouped boundary, same group, same step", true, GroupStep(outer, "s1"), GroupStep(outer, "s1"), false},
		{"grouped boundary, other group", true, GroupStep(inner, "s2"), GroupStep(outer, "s1"), false},
		{"grouped boundary, ungrouped use", true, GroupStep(outer, "s2"), "s1", false},
		{"grouped boundary, use without step", true, GroupStep(outer, "s2"), "", false},
		{"grouped session end, same group", false, GroupStep(outer, ""), GroupStep(outer, "s1"), true},
		{"grouped session end, other group", false, GroupStep(inner, ""), GroupStep(outer, "s1"), false},
		{"grouped session end, ungrouped use", false, GroupStep(inner, ""), "s1", false},
		{"group names are compared whole", true, GroupStep("agent", "s2"), GroupStep("agentA", "s1"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, closesStep(tt.boundary, tt.closing, tt.use))
		})
	}
}

func groupedBoundary(group, step string, t int64) Event {
	return boundary(GroupStep(group, step), t)
}

func groupedSessionEnd(group string, t int64) Event {
	ev := sessionEnd(t)
	ev.Step = GroupStep(group, "")
	return ev
}

// An agent called as a tool (or a sub-agent sharing its parent's session ID) makes model
// requests and ends while the outer agent's call that started it is still pending: its
// boundaries and its session end must not interrupt that call.
func TestGroupedClosingsOnlyCloseTheirGroup(t *testing.T) {
	e, _ := newTestEngine(t, 100)
	var got []Resolution
	got = append(got, run(t, e,
		groupedBoundary("outer", "chat1", 1),
		stepUse("delegate", GroupStep("outer", "chat1"), 2),
		stepUse("slow", GroupStep("outer", "chat1"), 2),
		// The nested agent runs inside the delegate call.
		groupedBoundary("inner", "chat1", 3),
		stepUse("grep", GroupStep("inner", "chat1"), 4),
		groupedBoundary("inner", "chat2", 6),
		groupedSessionEnd("inner", 7),
		result("delegate", 8),
		groupedBoundary("outer", "chat2", 9),
		groupedSessionEnd("outer", 12),
	)...)
	assert.Equal(t, []closed{
		{"grep", OutcomeInterrupted, ReasonNextStep, 6},
		{"delegate", OutcomePaired, ReasonNone, 0},
		{"slow", OutcomeInterrupted, ReasonNextStep, 9},
	}, summarize(got))
	require.NoError(t, e.Stats().CheckConservation())
	assert.Zero(t, e.Stats().Pending)
}

func TestGroupedSessionEndLeavesOtherGroupsPending(t *testing.T) {
	e, _ := newTestEngine(t, 100)
	got := run(t, e,
		stepUse("outer", GroupStep("g1", "a"), 1),
		stepUse("plain", "a", 1),
		stepUse("inner", GroupStep("g2", "b"), 2),
		groupedSessionEnd("g2", 5),
	)
	assert.Equal(t, []closed{{"inner", OutcomeInterrupted, ReasonSessionEnd, 5}}, summarize(got))
	assert.Equal(t, 2, e.Stats().Pending)
	got = run(t, e, sessionEnd(6))
	assert.ElementsMatch(t, []closed{
		{"outer", OutcomeInterrupted, ReasonSessionEnd, 6},
		{"plain", OutcomeInterrupted, ReasonSessionEnd, 6},
	}, summarize(got), "an ungrouped session end still closes every call of its scope")
}

// With CloseDelay, grouped closings of one scope at the same time but of different groups
// are all kept (none is taken for a repeat of another).
func TestGroupedClosingsQueuedSeparately(t *testing.T) {
	e, clk := newDelayedEngine(t)
	run(t, e,
		stepUse("a", GroupStep("g1", "x"), 1),
		stepUse("b", GroupStep("g2", "x"), 1),
		groupedSessionEnd("g1", 5),
		groupedSessionEnd("g2", 5),
	)
	clk.Advance(2 * testGrace)
	assert.ElementsMatch(t, []closed{
		{"a", OutcomeInterrupted, ReasonSessionEnd, 5},
		{"b", OutcomeInterrupted, ReasonSessionEnd, 5},
	}, summarize(e.Tick(nil)))
}
