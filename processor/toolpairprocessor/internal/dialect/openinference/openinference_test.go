// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package openinference

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

var (
	testTrace  = dialecttest.Trace
	testSpan   = dialecttest.Span
	testParent = dialecttest.Parent
)

func TestExtractSpan(t *testing.T) {
	step := pairing.GroupStep(testTrace.String(), testSpan.String())
	tests := []struct {
		name      string
		span      string
		attrs     map[string]any
		root      bool
		claimed   bool
		items     []dialect.Item
		malformed []string
	}{
		{
			name: "LLM span: boundary at its start, parallel calls at its end with their arguments, echoes at its start",
			span: "response",
			attrs: map[string]any{
				"openinference.span.kind":                                                 "LLM",
				"llm.output_messages.0.message.role":                                      "assistant",
				"llm.output_messages.0.message.tool_calls.0.tool_call.id":                 "c1",
				"llm.output_messages.0.message.tool_calls.0.tool_call.function.name":      "run_shell",
				"llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": `{"command": "echo hello"}`,
				"llm.output_messages.1.message.tool_calls.0.tool_call.id":                 "c2",
				"llm.output_messages.1.message.tool_calls.0.tool_call.function.name":      "read_file",
				"llm.input_messages.1.message.tool_calls.0.tool_call.id":                  "c0",
				"llm.input_messages.2.message.role":                                       "tool",
				"llm.input_messages.2.message.tool_call_id":                               "c0",
			},
			claimed: true,
			items: []dialect.Item{
				{Kind: pairing.KindBoundary, Time: 10, Step: step},
				{Kind: pairing.KindUse, CallID: "c1", ToolName: "run_shell", Time: 20, Step: step, Match: dialecttest.Match(t, "run_shell", `{"command":"echo hello"}`)},
				{Kind: pairing.KindUse, CallID: "c2", ToolName: "read_file", Time: 20, Step: step, Match: dialecttest.Match(t, "read_file", `{}`)},
				{Kind: pairing.KindEcho, CallID: "c0", Time: 10},
			},
		},
		{
			name: "LLM span: call without an ID, non-string ID, unparsable index",
			span: "response",
			attrs: map[string]any{
				"openinference.span.kind": "LLM",
				"llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "x",
				"llm.output_messages.0.message.tool_calls.1.tool_call.id":            7,
				"llm.output_messages.a.message.tool_calls.0.tool_call.id":            "ignored",
			},
			claimed:   true,
			items:     []dialect.Item{{Kind: pairing.KindBoundary, Time: 10, Step: step}},
			malformed: []string{dialect.ReasonMissingCallID, dialect.ReasonInvalidCallID},
		},
		{
			name:    "TOOL span without an ID: matched by name and input.value",
			span:    "run_shell",
			attrs:   map[string]any{"openinference.span.kind": "TOOL", "tool.name": "run_shell", "input.value": `{"command":"echo hello"}`},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindMatch, ToolName: "run_shell", Time: 20, Match: dialecttest.Match(t, "run_shell", `{"command": "echo hello"}`)}},
		},
		{
			name:    "TOOL span named by its span name, input not JSON: a match that finds nothing",
			span:    "lookup",
			attrs:   map[string]any{"openinference.span.kind": "TOOL", "input.value": "plain text"},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindMatch, ToolName: "lookup", Time: 20}},
		},
		{
			name:    "TOOL span with tool_call.id",
			span:    "run_shell",
			attrs:   map[string]any{"openinference.span.kind": "TOOL", "tool.name": "run_shell", "tool_call.id": "c1", "tool.id": "other"},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindResult, CallID: "c1", ToolName: "run_shell", Time: 20}},
		},
		{
			name:    "TOOL span with tool.id",
			span:    "run_shell",
			attrs:   map[string]any{"openinference.span.kind": "TOOL", "tool.id": "c3"},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindResult, CallID: "c3", ToolName: "run_shell", Time: 20}},
		},
		{
			name:      "TOOL span with a non-string ID",
			span:      "run_shell",
			attrs:     map[string]any{"openinference.span.kind": "TOOL", "tool_call.id": 5},
			claimed:   true,
			malformed: []string{dialect.ReasonInvalidCallID},
		},
		{
			name:    "root AGENT span: an ungrouped session end",
			span:    "Agent workflow",
			attrs:   map[string]any{"openinference.span.kind": "AGENT"},
			root:    true,
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindSessionEnd, Time: 20}},
		},
		{
			name:    "root CHAIN span",
			span:    "workflow",
			attrs:   map[string]any{"openinference.span.kind": "CHAIN"},
			root:    true,
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindSessionEnd, Time: 20}},
		},
		{name: "nested AGENT span is not read", span: "CaptureAgent", attrs: map[string]any{"openinference.span.kind": "AGENT"}},
		{name: "turn CHAIN span is not read", span: "turn", attrs: map[string]any{"openinference.span.kind": "CHAIN"}},
		{name: "RETRIEVER span", span: "r", attrs: map[string]any{"openinference.span.kind": "RETRIEVER"}},
		{name: "span kind not a string", span: "r", attrs: map[string]any{"openinference.span.kind": 3}},
		{name: "genai chat span", span: "chat", attrs: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.output.messages": "[]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := dialecttest.NewSpan(t, tt.span, tt.attrs, tt.root)
			var f dialect.Found
			assert.Equal(t, tt.claimed, ExtractSpan(s, &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}

// TestRepeatedKeyLastWins: of a flattened key repeated on the wire, the last occurrence is
// read (specification section 2).
func TestRepeatedKeyLastWins(t *testing.T) {
	const otlp = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"aa010000000000000000000000000000","spanId":"bb02000000000000","name":"response","endTimeUnixNano":"20","attributes":[
		{"key":"openinference.span.kind","value":{"stringValue":"LLM"}},
		{"key":"llm.output_messages.0.message.tool_calls.0.tool_call.id","value":{"stringValue":"first"}},
		{"key":"llm.output_messages.0.message.tool_calls.0.tool_call.id","value":{"stringValue":"last"}}]}]}]}]}`
	var u ptrace.JSONUnmarshaler
	td, err := u.UnmarshalTraces([]byte(otlp))
	require.NoError(t, err)
	s := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	require.Equal(t, 3, s.Attributes().Len(), "the decoder keeps the repeated key")
	var f dialect.Found
	require.True(t, ExtractSpan(s, &f))
	require.Len(t, f.Items, 2)
	assert.Equal(t, "last", f.Items[1].CallID)
}

// TestToolSpanCancelled: a TOOL span with a call ID that says its call was cancelled
// (dialect.Cancelled) is an abort; one without a call ID stays a KindMatch, marked Aborted
// (the engine decides what a match that reports its abort gets).
func TestToolSpanCancelled(t *testing.T) {
	for _, m := range dialecttest.Markers() {
		t.Run(m.Name, func(t *testing.T) {
			s := dialecttest.MarkedSpan(t, "run_shell", map[string]any{
				"openinference.span.kind": "TOOL", "tool.name": "run_shell", "tool_call.id": "call_1",
			}, false, m)
			var f dialect.Found
			assert.True(t, ExtractSpan(s, &f))
			assert.Equal(t, []dialect.Item{{Kind: m.Kind, CallID: "call_1", ToolName: "run_shell", Time: 20}}, f.Items)

			s = dialecttest.MarkedSpan(t, "run_shell", map[string]any{
				"openinference.span.kind": "TOOL", "tool.name": "run_shell", "input.value": `{"command":"ls"}`,
			}, false, m)
			f.Reset()
			assert.True(t, ExtractSpan(s, &f))
			require.Len(t, f.Items, 1)
			assert.Equal(t, pairing.KindMatch, f.Items[0].Kind)
			assert.Equal(t, m.Kind == pairing.KindAbort, f.Items[0].Abort)
		})
	}
}
