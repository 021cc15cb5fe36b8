// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package openllmetry

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	step := pairing.GroupStep(testParent.String(), testSpan.String())
	shell := dialecttest.Match(t, "run_shell", `{"command":"echo hello"}`)
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
			name: "0.27 chat span in a workflow: read as genai, uses with their arguments",
			span: "chat gpt-4.1-mini",
			attrs: map[string]any{
				"gen_ai.operation.name":   "chat",
				"traceloop.workflow.name": "capture_agent",
				"gen_ai.output.messages":  `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"run_shell","arguments":{"command":"echo hello"}}]}]`,
				"gen_ai.input.messages":   `[{"role":"tool","parts":[{"type":"tool_call_response","id":"c0","response":"ok"}]}]`,
			},
			claimed: true,
			items: []dialect.Item{
				{Kind: pairing.KindBoundary, Time: 10, Step: step},
				{Kind: pairing.KindUse, CallID: "c1", ToolName: "run_shell", Time: 20, Step: step, Match: shell},
				{Kind: pairing.KindEcho, CallID: "c0", Time: 10},
			},
		},
		{
			name: "0.27 chat span outside any workflow: left to genai",
			span: "chat gpt-4.1-mini",
			attrs: map[string]any{
				"gen_ai.operation.name":  "chat",
				"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"run_shell"}]}]`,
			},
		},
		{
			name: "older release: flattened completions and prompts",
			span: "openai.chat",
			attrs: map[string]any{
				"llm.request.type":                           "chat",
				"gen_ai.completion.0.role":                   "assistant",
				"gen_ai.completion.0.tool_calls.0.id":        "c1",
				"gen_ai.completion.0.tool_calls.0.name":      "run_shell",
				"gen_ai.completion.0.tool_calls.0.arguments": `{"command": "echo hello"}`,
				"gen_ai.completion.0.tool_calls.1.name":      "read_file",
				"gen_ai.prompt.2.role":                       "tool",
				"gen_ai.prompt.2.tool_call_id":               "c0",
			},
			claimed: true,
			items: []dialect.Item{
				{Kind: pairing.KindBoundary, Time: 10, Step: step},
				{Kind: pairing.KindUse, CallID: "c1", ToolName: "run_shell", Time: 20, Step: step, Match: shell},
				{Kind: pairing.KindEcho, CallID: "c0", Time: 10},
			},
			malformed: []string{dialect.ReasonMissingCallID},
		},
		{
			name:    "older release chat span with content tracing off: a boundary only",
			span:    "openai.chat",
			attrs:   map[string]any{"llm.request.type": "chat", "traceloop.workflow.name": "w"},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindBoundary, Time: 10, Step: step}},
		},
		{
			name: "tool span: kwargs matched",
			span: "run_shell.tool",
			attrs: map[string]any{
				"traceloop.span.kind":    "tool",
				"traceloop.entity.name":  "run_shell",
				"traceloop.entity.input": `{"args":[],"kwargs":{"command":"echo hello"}}`,
			},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindMatch, ToolName: "run_shell", Time: 20, Match: shell}},
		},
		{
			name:    "tool span: one object in args, name from the span name",
			span:    "run_shell.tool",
			attrs:   map[string]any{"traceloop.span.kind": "tool", "traceloop.entity.input": `{"args":[{"command":"echo hello"}],"kwargs":{}}`},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindMatch, ToolName: "run_shell", Time: 20, Match: shell}},
		},
		{
			name:    "tool span: no arguments at all",
			span:    "now.tool",
			attrs:   map[string]any{"traceloop.span.kind": "tool", "traceloop.entity.input": `{"args":[],"kwargs":{}}`},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindMatch, ToolName: "now", Time: 20, Match: dialecttest.Match(t, "now", `{}`)}},
		},
		{
			name:    "tool span: positional arguments cannot be matched",
			span:    "run_shell.tool",
			attrs:   map[string]any{"traceloop.span.kind": "tool", "traceloop.entity.input": `{"args":["echo hello"],"kwargs":{}}`},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindMatch, ToolName: "run_shell", Time: 20}},
		},
		{
			name:    "tool span: input not JSON, or missing",
			span:    "run_shell.tool",
			attrs:   map[string]any{"traceloop.span.kind": "tool", "traceloop.entity.input": `{"args":`},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindMatch, ToolName: "run_shell", Time: 20}},
		},
		{
			name:    "tool span already carrying gen_ai.tool.call.id (a replay)",
			span:    "run_shell.tool",
			attrs:   map[string]any{"traceloop.span.kind": "tool", "gen_ai.tool.call.id": "c1", "traceloop.entity.input": `{"args":[],"kwargs":{"command":"echo hello"}}`},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindResult, CallID: "c1", ToolName: "run_shell", Time: 20}},
		},
		{
			name:    "agent span under a workflow: session end of its own group",
			span:    "capture_agent.agent",
			attrs:   map[string]any{"traceloop.span.kind": "agent"},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindSessionEnd, Time: 20, Step: pairing.GroupStep(testSpan.String(), "")}},
		},
		{
			name:    "root workflow span: an ungrouped session end",
			span:    "w.workflow",
			attrs:   map[string]any{"traceloop.span.kind": "workflow"},
			root:    true,
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindSessionEnd, Time: 20}},
		},
		{name: "task span", span: "t.task", attrs: map[string]any{"traceloop.span.kind": "task"}},
		{name: "embeddings span in a workflow", span: "e", attrs: map[string]any{"gen_ai.operation.name": "embeddings", "traceloop.workflow.name": "w"}},
		{name: "OpenInference span", span: "response", attrs: map[string]any{"openinference.span.kind": "LLM"}},
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

// TestToolSpanCancelled: a *.tool span (no call ID, matched by arguments) whose status or
// attributes carry a cancellation marker of specification section 2 is a match marked Abort,
// so the engine resolves its call as interrupted/aborted; any other status leaves it a match.
func TestToolSpanCancelled(t *testing.T) {
	for _, m := range dialecttest.Markers() {
		t.Run(m.Name, func(t *testing.T) {
			s := dialecttest.MarkedSpan(t, "run_shell.tool", map[string]any{
				"traceloop.span.kind": "tool", "traceloop.entity.input": `{"args":[],"kwargs":{"command":"ls"}}`,
			}, false, m)
			var f dialect.Found
			assert.True(t, ExtractSpan(s, &f))
			require.Len(t, f.Items, 1)
			assert.Equal(t, pairing.KindMatch, f.Items[0].Kind)
			assert.Equal(t, m.Kind == pairing.KindAbort, f.Items[0].Abort)
		})
	}
}
