package toolpairprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

func TestAnchorKind(t *testing.T) {
	for name, want := range map[string][2]bool{
		"claude_code.interaction": {true, false},
		"invoke_agent":            {true, false},
		"invoke_agent weather":    {true, false},
		"invoke_agentic":          {false, false},
		"claude_code.llm_request": {false, true},
		"codex.sampling":          {false, true},
		"chat gpt-4o":             {false, false},
		"claude_code.tool":        {false, false},
	} {
		s := ptrace.NewSpan()
		s.SetName(name)
		turn, model := anchorKind(s)
		assert.Equal(t, want, [2]bool{turn, model}, name)
	}
}

func TestAnchorIndexFind(t *testing.T) {
	k := pairing.ScopeKey{Tenant: "svc", Scope: "session"}
	span := func(id byte, start, end int64) anchor {
		return anchor{traceID: pcommon.TraceID{id}, spanID: pcommon.SpanID{id}, start: start, end: end}
	}
	x := newAnchorIndex()
	x.add(k, span(1, 0, 100), true)     // turn 1
	x.add(k, span(2, 10, 20), false)    // a model call of turn 1
	x.add(k, span(3, 200, 300), true)   // turn 2
	x.add(k, span(4, 400, 410), false)  // a model call of turn 3, whose turn span is missing
	x.add(k, span(5, 1000, 2000), true) // turn 4
	x.add(k, span(5, 1000, 2500), true) // turn 4 again: replaces the first copy

	for _, tc := range []struct {
		name string
		at   int64
		want byte // 0: none
	}{
		{"a turn covering the call is preferred to a model call", 15, 1},
		{"the covering turn", 250, 3},
		{"the model call that ended just before, when the turn span is missing", 412, 4},
		{"an earlier turn is never chosen", 150, 0},
		{"too long after the last model call", 500, 0},
		{"the replaced copy's end counts", 2400, 5},
	} {
		a, ok := x.find(k, tc.at, 50)
		if tc.want == 0 {
			assert.False(t, ok, tc.name)
			continue
		}
		assert.True(t, ok, tc.name)
		assert.Equal(t, pcommon.SpanID{tc.want}, a.spanID, tc.name)
	}
	_, ok := x.find(pairing.ScopeKey{Tenant: "svc", Scope: "other"}, 15, 50)
	assert.False(t, ok, "another scope")
}

func TestAnchorIndexIsBounded(t *testing.T) {
	x := newAnchorIndex()
	for i := range maxAnchorScopes + 10 {
		x.add(pairing.ScopeKey{Scope: string(rune(i))}, anchor{end: 1}, i%2 == 0)
	}
	assert.Len(t, x.scopes, maxAnchorScopes)
	_, ok := x.find(pairing.ScopeKey{Scope: string(rune(0))}, 1, 0)
	assert.False(t, ok, "the oldest scope is forgotten")
	k := pairing.ScopeKey{Scope: "many"}
	for i := range 100 {
		x.add(k, anchor{spanID: pcommon.SpanID{byte(i)}, start: int64(i), end: int64(i)}, true)
	}
	assert.Len(t, x.scopes[k].turns, maxTurnsInScope)
}
