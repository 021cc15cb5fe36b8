// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

var testTrace = pcommon.TraceID{0x6e, 0x1f, 0xff}

func TestExtractSpan(t *testing.T) {
	group := pairing.GroupStep(testTrace.String(), "")
	tests := []struct {
		name      string
		span      string
		attrs     map[string]any
		noTrace   bool
		claimed   bool
		execution bool // claimed by ExtractExecutionSpan instead
		items     []dialect.Item
		malformed []string
	}{
		{
			name: "tool span: a result at its end",
			span: SpanTool,
			attrs: map[string]any{
				"tool_use_id": "toolu_1", "gen_ai.tool.call.id": "toolu_1", "tool_name": "Bash",
				"gen_ai.operation.name": "execute_tool", "duration_ms": int64(31),
			},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindResult, CallID: "toolu_1", ToolName: "Bash", Time: 20}},
		},
		{
			name:    "tool span with only the semconv copies",
			span:    SpanTool,
			attrs:   map[string]any{"gen_ai.tool.call.id": "toolu_2", "gen_ai.tool.name": "Read"},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindResult, CallID: "toolu_2", ToolName: "Read", Time: 20}},
		},
		{
			name:      "execution span: a companion result of the same call, read by ExtractExecutionSpan",
			span:      SpanToolExecution,
			attrs:     map[string]any{"tool_use_id": "toolu_1", "gen_ai.tool.call.id": "toolu_1", "success": true},
			execution: true,
			items:     []dialect.Item{{Kind: pairing.KindCompanion, CallID: "toolu_1", Time: 20}},
		},
		{
			name:      "tool span without an ID",
			span:      SpanTool,
			attrs:     map[string]any{"tool_name": "Bash"},
			claimed:   true,
			malformed: []string{dialect.ReasonMissingCallID},
		},
		{
			name:      "execution span with a numeric ID",
			span:      SpanToolExecution,
			attrs:     map[string]any{"tool_use_id": int64(7)},
			execution: true,
			malformed: []string{dialect.ReasonInvalidCallID},
		},
		{
			name:    "interaction: a session end of its trace",
			span:    SpanInteraction,
			attrs:   map[string]any{"gen_ai.operation.name": "invoke_agent", "interaction.sequence": int64(1)},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindSessionEnd, Time: 20, Step: group}},
		},
		{
			name:    "interaction without a trace ID: recognised, nothing to close",
			span:    SpanInteraction,
			noTrace: true,
			claimed: true,
		},
		{
			name:    "llm_request: recognised, not a boundary",
			span:    SpanLLMRequest,
			attrs:   map[string]any{"gen_ai.request.model": "claude"},
			claimed: true,
		},
		{
			name:  "blocked_on_user: not read",
			span:  "claude_code.tool.blocked_on_user",
			attrs: map[string]any{"decision": "accept"},
		},
		{
			name:  "another agent's execute_tool span is left to genai",
			span:  "execute_tool x",
			attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "c"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ptrace.NewSpan()
			s.SetName(tt.span)
			if !tt.noTrace {
				s.SetTraceID(testTrace)
			}
			s.SetStartTimestamp(10)
			s.SetEndTimestamp(20)
			assert.NoError(t, s.Attributes().FromRaw(tt.attrs))
			var f dialect.Found
			assert.Equal(t, tt.claimed, ExtractSpan(s, &f))
			assert.Equal(t, tt.execution, ExtractExecutionSpan(s, &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}

// A tool_decision is grouped with the interaction (trace) it was made in, so that only that
// interaction's end closes it.
func TestDecisionGroupedByTrace(t *testing.T) {
	lr := plog.NewLogRecord()
	lr.Body().SetStr("claude_code.tool_decision")
	lr.SetTimestamp(5)
	lr.SetTraceID(testTrace)
	lr.Attributes().PutStr("tool_use_id", "toolu_1")
	lr.Attributes().PutStr("decision", "accept")
	var f dialect.Found
	assert.True(t, ExtractLog(lr, &f))
	assert.Equal(t, []dialect.Item{{Kind: pairing.KindUse, CallID: "toolu_1", Time: 5, Step: pairing.GroupStep(testTrace.String(), "")}}, f.Items)
}

// TestToolSpanCancelled: a claude_code.tool span that says its call was cancelled
// (dialect.Cancelled) is an abort; a claude_code.tool.execution span stays a companion
// whatever it says (its tool span is the call's record).
func TestToolSpanCancelled(t *testing.T) {
	for _, m := range dialecttest.Markers() {
		t.Run(m.Name, func(t *testing.T) {
			attrs := map[string]any{"tool_use_id": "toolu_1", "tool_name": "Bash"}
			var f dialect.Found
			assert.True(t, ExtractSpan(dialecttest.MarkedSpan(t, SpanTool, attrs, false, m), &f))
			assert.Equal(t, []dialect.Item{{Kind: m.Kind, CallID: "toolu_1", ToolName: "Bash", Time: 20}}, f.Items)
			f.Reset()
			assert.True(t, ExtractExecutionSpan(dialecttest.MarkedSpan(t, SpanToolExecution, attrs, false, m), &f))
			assert.Equal(t, []dialect.Item{{Kind: pairing.KindCompanion, CallID: "toolu_1", ToolName: "Bash", Time: 20}}, f.Items)
		})
	}
}
