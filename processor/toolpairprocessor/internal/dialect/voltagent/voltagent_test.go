// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package voltagent

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

func TestExtractSpan(t *testing.T) {
	parent := pcommon.SpanID{1}
	tests := []struct {
		name      string
		span      string
		root      bool
		attrs     map[string]any
		status    ptrace.StatusCode
		message   string
		claimed   bool
		items     []dialect.Item
		malformed []string
	}{
		{
			name: "tool span", span: "tool.execution:run_shell", status: ptrace.StatusCodeOk,
			attrs:   map[string]any{"tool.call.id": "call_1", "tool.name": "run_shell", "span.type": "tool"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindResult, CallID: "call_1", ToolName: "run_shell", Time: 20}},
		},
		{
			name: "tool name from the span name", span: "tool.execution:read_file",
			attrs:   map[string]any{"tool.call.id": "call_2"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindResult, CallID: "call_2", ToolName: "read_file", Time: 20}},
		},
		{
			name: "aborted tool: status message", span: "tool.execution:run_shell", status: ptrace.StatusCodeError,
			message: "Command aborted: echo start; sleep 20; echo done",
			attrs:   map[string]any{"tool.call.id": "call_3", "tool.name": "run_shell", "error.type": "VoltAgentError"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindAbort, CallID: "call_3", ToolName: "run_shell", Time: 20}},
		},
		{
			name: "failed tool: a result", span: "tool.execution:run_shell", status: ptrace.StatusCodeError,
			message: "Command failed: exit 1",
			attrs:   map[string]any{"tool.call.id": "call_4", "tool.name": "run_shell", "error.type": "VoltAgentError"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindResult, CallID: "call_4", ToolName: "run_shell", Time: 20}},
		},
		{
			name: "timed-out tool: a result", span: "tool.execution:run_shell", status: ptrace.StatusCodeError,
			message: "Command timed out after 2000 ms; aborted",
			attrs:   map[string]any{"tool.call.id": "call_5"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindResult, CallID: "call_5", ToolName: "run_shell", Time: 20}},
		},
		{name: "tool span without a call ID", span: "tool.execution:run_shell", claimed: true, malformed: []string{dialect.ReasonMissingCallID}},
		{name: "empty call ID", span: "tool.execution:run_shell", attrs: map[string]any{"tool.call.id": ""}, claimed: true, malformed: []string{dialect.ReasonMissingCallID}},
		{name: "numeric call ID", span: "tool.execution:run_shell", attrs: map[string]any{"tool.call.id": 7}, claimed: true, malformed: []string{dialect.ReasonInvalidCallID}},
		{
			name: "root agent span: a session end", span: "capture-agent", root: true,
			attrs:   map[string]any{"voltagent.operation_id": "op", "operation.id": "op", "entity.type": "agent"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindSessionEnd, Time: 20}},
		},
		{name: "sub-agent span: not read", span: "helper", attrs: map[string]any{"voltagent.operation_id": "op", "entity.type": "agent"}},
		{name: "root span of another entity", span: "flow", root: true, attrs: map[string]any{"voltagent.operation_id": "op", "entity.type": "workflow"}},
		{name: "root span without an operation ID", span: "capture-agent", root: true, attrs: map[string]any{"entity.type": "agent"}},
		{name: "llm span: not read", span: "llm:generateText", attrs: map[string]any{"operation.id": "op", "entity.type": "agent", "span.type": "llm"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ptrace.NewSpan()
			s.SetName(tt.span)
			s.SetSpanID(pcommon.SpanID{2})
			if !tt.root {
				s.SetParentSpanID(parent)
			}
			s.SetStartTimestamp(10)
			s.SetEndTimestamp(20)
			s.Status().SetCode(tt.status)
			s.Status().SetMessage(tt.message)
			require.NoError(t, s.Attributes().FromRaw(tt.attrs))
			var f dialect.Found
			assert.Equal(t, tt.claimed, ExtractSpan(s, &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}

func TestExtractLog(t *testing.T) {
	abortResult := map[string]any{"error": true, "name": "Error", "message": "Command aborted: sleep 20", "stack": "Error: Command aborted: sleep 20\n    at ..."}
	tests := []struct {
		name      string
		attrs     map[string]any
		claimed   bool
		items     []dialect.Item
		malformed []string
	}{
		{
			name:    "step tool call: a use",
			attrs:   map[string]any{"event": "agent.step.tool_call", "toolCallId": "call_1", "toolName": "run_shell", "arguments": map[string]any{"command": "echo hello"}},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindUse, CallID: "call_1", ToolName: "run_shell", Time: 42}},
		},
		{
			name:    "execution started: the use again",
			attrs:   map[string]any{"event": "tool.execution.started", "toolCallId": "call_1", "toolName": "run_shell"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindUse, CallID: "call_1", ToolName: "run_shell", Time: 42}},
		},
		{
			name:    "step tool result",
			attrs:   map[string]any{"event": "agent.step.tool_result", "toolCallId": "call_1", "toolName": "run_shell", "result": "hello\n", "hasError": false},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindResult, CallID: "call_1", ToolName: "run_shell", Time: 42}},
		},
		{
			name:    "failed result saying aborted: an abort",
			attrs:   map[string]any{"event": "agent.step.tool_result", "toolCallId": "call_2", "toolName": "run_shell", "result": abortResult, "hasError": true},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindAbort, CallID: "call_2", ToolName: "run_shell", Time: 42}},
		},
		{
			name:    "aborted message without hasError: a result",
			attrs:   map[string]any{"event": "agent.step.tool_result", "toolCallId": "call_2", "result": abortResult},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindResult, CallID: "call_2", Time: 42}},
		},
		{
			name:    "hasError as a string: a result",
			attrs:   map[string]any{"event": "agent.step.tool_result", "toolCallId": "call_2", "result": abortResult, "hasError": "true"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindResult, CallID: "call_2", Time: 42}},
		},
		{
			name: "failed result: a result",
			attrs: map[string]any{"event": "agent.step.tool_result", "toolCallId": "call_3", "hasError": true,
				"result": map[string]any{"error": true, "message": "Command failed: exit 2"}},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindResult, CallID: "call_3", Time: 42}},
		},
		{
			name: "timed-out result: a result", attrs: map[string]any{"event": "agent.step.tool_result", "toolCallId": "call_4", "hasError": true,
				"result": map[string]any{"error": true, "message": "Command timed out after 2000 ms; aborted"}},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindResult, CallID: "call_4", Time: 42}},
		},
		{
			name:    "tool error part, error a map",
			attrs:   map[string]any{"event": "agent.step.tool_result", "toolCallId": "call_5", "hasError": true, "error": map[string]any{"name": "AbortError", "message": "This operation was aborted"}},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindAbort, CallID: "call_5", Time: 42}},
		},
		{
			name:    "tool error part, error a string",
			attrs:   map[string]any{"event": "agent.step.tool_result", "toolCallId": "call_6", "hasError": true, "error": "Operation cancelled"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindAbort, CallID: "call_6", Time: 42}},
		},
		{
			name:    "failed with a cancellation marker attribute",
			attrs:   map[string]any{"event": "agent.step.tool_result", "toolCallId": "call_7", "hasError": true, "error.type": "AbortError"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindAbort, CallID: "call_7", Time: 42}},
		},
		{name: "result without a call ID", attrs: map[string]any{"event": "agent.step.tool_result", "toolName": "run_shell"}, claimed: true, malformed: []string{dialect.ReasonMissingCallID}},
		{name: "use with a numeric call ID", attrs: map[string]any{"event": "agent.step.tool_call", "toolCallId": 12}, claimed: true, malformed: []string{dialect.ReasonInvalidCallID}},
		{name: "use with an empty call ID", attrs: map[string]any{"event": "agent.step.tool_call", "toolCallId": ""}, claimed: true, malformed: []string{dialect.ReasonMissingCallID}},
		{name: "other event", attrs: map[string]any{"event": "agent.step.text", "toolCallId": "call_1"}},
		{name: "event not a string", attrs: map[string]any{"event": 3, "toolCallId": "call_1"}},
		{name: "no event", attrs: map[string]any{"toolCallId": "call_1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := plog.NewLogRecord()
			lr.SetTimestamp(42)
			require.NoError(t, lr.Attributes().FromRaw(tt.attrs))
			var f dialect.Found
			assert.Equal(t, tt.claimed, ExtractLog(lr, &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}

// TestCaptures: what the dialect finds in the real captures. In normal, the tool span and the
// step records of call_mock_normal_01, which share the run's trace; in interrupt_sigterm the
// span and the step result both report the abort ("Command aborted: ..."), and the root agent
// span, ended at the signal, is the session end.
func TestCaptures(t *testing.T) {
	for scenario, want := range map[string]struct {
		span, log pairing.Kind
	}{
		"normal":            {pairing.KindResult, pairing.KindResult},
		"interrupt_sigterm": {pairing.KindAbort, pairing.KindAbort},
	} {
		t.Run(scenario, func(t *testing.T) {
			id := map[string]string{"normal": "call_mock_normal_01", "interrupt_sigterm": "call_mock_interrupt_01"}[scenario]
			var spanKinds []pairing.Kind
			var trace pcommon.TraceID
			for _, s := range dialecttest.CaptureSpans(t, "voltagent/"+scenario+"/traces.json") {
				var f dialect.Found
				if !ExtractSpan(s, &f) {
					continue
				}
				assert.Empty(t, f.Malformed)
				for _, it := range f.Items {
					spanKinds = append(spanKinds, it.Kind)
					if it.Kind != pairing.KindSessionEnd {
						assert.Equal(t, id, it.CallID)
						assert.Equal(t, "run_shell", it.ToolName)
						trace = s.TraceID()
					}
				}
			}
			assert.ElementsMatch(t, []pairing.Kind{want.span, pairing.KindSessionEnd}, spanKinds)
			var logKinds []pairing.Kind
			for _, lr := range dialecttest.CaptureLogRecords(t, "voltagent/"+scenario+"/logs.json") {
				var f dialect.Found
				if !ExtractLog(lr, &f) {
					continue
				}
				assert.Empty(t, f.Malformed)
				for _, it := range f.Items {
					logKinds = append(logKinds, it.Kind)
					assert.Equal(t, id, it.CallID)
					assert.Equal(t, trace, lr.TraceID(), "logs and spans share the run's trace")
				}
			}
			assert.Equal(t, []pairing.Kind{pairing.KindUse, pairing.KindUse, want.log}, logKinds)
		})
	}
}
