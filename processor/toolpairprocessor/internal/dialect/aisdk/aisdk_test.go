// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package aisdk

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

var (
	testSpan = dialecttest.Span
	testRun  = dialecttest.Parent // the ai.generateText span, parent of the others
)

func TestExtractSpan(t *testing.T) {
	step := pairing.GroupStep(testRun.String(), testSpan.String())
	tests := []struct {
		name      string
		span      string // the span name, when it is not the operation's
		attrs     map[string]any
		root      bool
		claimed   bool
		items     []dialect.Item
		malformed []string
	}{
		{
			name: "doGenerate: a boundary at its start, its tool calls (v5/v6 input) announced at its end",
			attrs: map[string]any{
				"ai.operationId":        "ai.generateText.doGenerate",
				"operation.name":        "ai.generateText.doGenerate capture-agent",
				"ai.response.toolCalls": `[{"toolCallId":"call_1","toolName":"run_shell","input":"{\"command\": \"echo hello\"}"},{"toolCallId":"call_2","toolName":"read_file","input":"{}"}]`,
			},
			claimed: true,
			items: []dialect.Item{
				{Kind: pairing.KindBoundary, Time: 10, Step: step},
				{Kind: pairing.KindUse, CallID: "call_1", ToolName: "run_shell", Time: 20, Step: step},
				{Kind: pairing.KindUse, CallID: "call_2", ToolName: "read_file", Time: 20, Step: step},
			},
		},
		{
			name: "doStream with v4 args",
			attrs: map[string]any{
				"ai.operationId":        "ai.streamText.doStream",
				"ai.response.toolCalls": `[{"toolCallType":"function","toolCallId":"call_3","toolName":"weather","args":"{\"city\":\"Paris\"}"}]`,
			},
			claimed: true,
			items: []dialect.Item{
				{Kind: pairing.KindBoundary, Time: 10, Step: step},
				{Kind: pairing.KindUse, CallID: "call_3", ToolName: "weather", Time: 20, Step: step},
			},
		},
		{
			name:    "doGenerate answering with text: only the boundary",
			attrs:   map[string]any{"ai.operationId": "ai.generateText.doGenerate", "ai.response.text": "Done."},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindBoundary, Time: 10, Step: step}},
		},
		{
			name: "tool calls without a usable ID",
			attrs: map[string]any{
				"ai.operationId":        "ai.generateText.doGenerate",
				"ai.response.toolCalls": `[{"toolName":"a"},{"toolCallId":null},{"toolCallId":5},{"toolCallId":""}]`,
			},
			claimed:   true,
			items:     []dialect.Item{{Kind: pairing.KindBoundary, Time: 10, Step: step}},
			malformed: []string{dialect.ReasonMissingCallID, dialect.ReasonNullCallID, dialect.ReasonInvalidCallID, dialect.ReasonMissingCallID},
		},
		{
			name:      "tool calls that are not a JSON array",
			attrs:     map[string]any{"ai.operationId": "ai.generateText.doGenerate", "ai.response.toolCalls": `{"toolCallId":"x"}`},
			claimed:   true,
			items:     []dialect.Item{{Kind: pairing.KindBoundary, Time: 10, Step: step}},
			malformed: []string{dialect.ReasonInvalidJSON},
		},
		{
			name:      "truncated tool calls: the entries before the cut still read",
			attrs:     map[string]any{"ai.operationId": "ai.generateText.doGenerate", "ai.response.toolCalls": `[{"toolCallId":"call_1","toolName":"a"},{"toolCallId":"call_`},
			claimed:   true,
			items:     []dialect.Item{{Kind: pairing.KindBoundary, Time: 10, Step: step}, {Kind: pairing.KindUse, CallID: "call_1", ToolName: "a", Time: 20, Step: step}},
			malformed: []string{dialect.ReasonInvalidJSON},
		},
		{
			name:      "tool call entries that are not objects: one reason for the array",
			attrs:     map[string]any{"ai.operationId": "ai.generateText.doGenerate", "ai.response.toolCalls": `["a","b","c"]`},
			claimed:   true,
			items:     []dialect.Item{{Kind: pairing.KindBoundary, Time: 10, Step: step}},
			malformed: []string{dialect.ReasonInvalidType},
		},
		{
			name:      "tool calls of the wrong type",
			attrs:     map[string]any{"ai.operationId": "ai.generateText.doGenerate", "ai.response.toolCalls": true},
			claimed:   true,
			items:     []dialect.Item{{Kind: pairing.KindBoundary, Time: 10, Step: step}},
			malformed: []string{dialect.ReasonInvalidType},
		},
		{
			name:    "ai.toolCall: a result at its end",
			attrs:   map[string]any{"ai.operationId": "ai.toolCall", "ai.toolCall.id": "call_1", "ai.toolCall.name": "run_shell", "ai.toolCall.result": `"hello\n"`},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindResult, CallID: "call_1", ToolName: "run_shell", Time: 20}},
		},
		{
			name:      "ai.toolCall without an ID",
			attrs:     map[string]any{"ai.operationId": "ai.toolCall", "ai.toolCall.name": "run_shell"},
			claimed:   true,
			malformed: []string{dialect.ReasonMissingCallID},
		},
		{
			name:    "ai.generateText: a session end grouped by its own span",
			attrs:   map[string]any{"ai.operationId": "ai.generateText"},
			root:    true,
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindSessionEnd, Time: 20, Step: pairing.GroupStep(testSpan.String(), "")}},
		},
		{
			name:    "ai.streamText: a session end",
			attrs:   map[string]any{"ai.operationId": "ai.streamText"},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindSessionEnd, Time: 20, Step: pairing.GroupStep(testSpan.String(), "")}},
		},
		{name: "a span named otherwise than its operation ID", span: "toolCall", attrs: map[string]any{"ai.operationId": "ai.toolCall", "ai.toolCall.id": "c"}},
		{name: "an ai.* span without an operation ID", span: "ai.toolCall", attrs: map[string]any{"ai.toolCall.id": "c"}},
		{name: "ai.generateObject is not read", attrs: map[string]any{"ai.operationId": "ai.generateObject"}},
		{name: "ai.embed is not read", attrs: map[string]any{"ai.operationId": "ai.embed.doEmbed"}},
		{name: "operation ID of the wrong type", attrs: map[string]any{"ai.operationId": int64(1)}},
		{name: "a semconv span", attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := tt.span
			if op, ok := tt.attrs["ai.operationId"].(string); ok && name == "" {
				name = op // the SDK names a span after its operation
			}
			s := dialecttest.NewSpan(t, name, tt.attrs, tt.root)
			var f dialect.Found
			assert.Equal(t, tt.claimed, ExtractSpan(s, &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}

// TestToolCallCancelled: an ai.toolCall span that says its call was cancelled
// (dialect.Cancelled) is an abort; a tool that threw is a result.
func TestToolCallCancelled(t *testing.T) {
	for _, m := range dialecttest.Markers() {
		t.Run(m.Name, func(t *testing.T) {
			s := dialecttest.MarkedSpan(t, "ai.toolCall", map[string]any{
				"ai.operationId": "ai.toolCall", "ai.toolCall.id": "call_1", "ai.toolCall.name": "run_shell",
			}, false, m)
			var f dialect.Found
			assert.True(t, ExtractSpan(s, &f))
			assert.Equal(t, []dialect.Item{{Kind: m.Kind, CallID: "call_1", ToolName: "run_shell", Time: 20}}, f.Items)
		})
	}
}
