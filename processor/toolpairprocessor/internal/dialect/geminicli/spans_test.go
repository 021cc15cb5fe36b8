// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package geminicli

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

var (
	testSpan   = dialecttest.Span
	testParent = dialecttest.Parent
)

func TestExtractSpan(t *testing.T) {
	rootStep := pairing.GroupStep("", testSpan.String())
	nestedStep := pairing.GroupStep(testParent.String(), testSpan.String())
	tests := []struct {
		name      string
		span      string // the span name, when it is not the operation's
		attrs     map[string]any
		nested    bool // the span has a parent (a sub-agent's)
		claimed   bool
		items     []dialect.Item
		malformed []string
	}{
		{
			name: "llm_call: a boundary at its start, functionCall parts announced at its end in Gemini's ID form",
			attrs: map[string]any{
				"gen_ai.operation.name": "llm_call",
				"gen_ai.output.messages": `[{"role":"model","parts":[{"text":"I'll run it."},` +
					`{"functionCall":{"name":"run_shell_command","args":{"command":"echo hello"},"id":"run_shell_command__run_shell_command_17_0"}},` +
					`{"functionCall":{"name":"read_file","args":{},"id":"read_file__read_file_17_1"}}]}]`,
			},
			claimed: true,
			items: []dialect.Item{
				{Kind: pairing.KindBoundary, Time: 10, Step: rootStep},
				{Kind: pairing.KindUse, CallID: "run_shell_command_17_0", ToolName: "run_shell_command", Time: 20, Step: rootStep},
				{Kind: pairing.KindUse, CallID: "read_file_17_1", ToolName: "read_file", Time: 20, Step: rootStep},
			},
		},
		{
			name: "llm_call: functionResponse parts of its input messages are echoes at its start",
			attrs: map[string]any{
				"gen_ai.operation.name": "llm_call",
				"gen_ai.input.messages": `[{"role":"user","parts":[{"text":"run it"}]},` +
					`{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{},"id":"run_shell_command_17_0"}}]},` +
					`{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{"output":"hello"},"id":"run_shell_command_17_0"}},` +
					`{"type":"tool_call_response","id":"read_file__read_file_17_1","name":"read_file"},{"functionResponse":{"name":"x"}}]}]`,
			},
			claimed: true,
			items: []dialect.Item{
				{Kind: pairing.KindBoundary, Time: 10, Step: rootStep},
				{Kind: pairing.KindEcho, CallID: "run_shell_command_17_0", Time: 10},
				{Kind: pairing.KindEcho, CallID: "read_file_17_1", Time: 10},
			},
			malformed: []string{dialect.ReasonMissingCallID},
		},
		{
			name: "llm_call of a sub-agent: its steps are grouped by its parent",
			attrs: map[string]any{
				"gen_ai.operation.name":  "llm_call",
				"gen_ai.output.messages": `[{"role":"model","parts":[{"type":"tool_call","id":"glob__glob_1_0","name":"glob"}]}]`,
			},
			nested:  true,
			claimed: true,
			items: []dialect.Item{
				{Kind: pairing.KindBoundary, Time: 10, Step: nestedStep},
				{Kind: pairing.KindUse, CallID: "glob_1_0", ToolName: "glob", Time: 20, Step: nestedStep},
			},
		},
		{
			name:    "failed llm_call without output: only the boundary",
			attrs:   map[string]any{"gen_ai.operation.name": "llm_call"},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindBoundary, Time: 10, Step: rootStep}},
		},
		{
			name: "llm_call functionCall without an ID, with a null ID, with a numeric ID",
			attrs: map[string]any{
				"gen_ai.operation.name": "llm_call",
				"gen_ai.output.messages": `[{"parts":[{"functionCall":{"name":"a"}},{"functionCall":{"name":"b","id":null}},` +
					`{"functionCall":{"name":"c","id":7}},{"functionCall":{"name":"d","id":""}}]}]`,
			},
			claimed:   true,
			items:     []dialect.Item{{Kind: pairing.KindBoundary, Time: 10, Step: rootStep}},
			malformed: []string{dialect.ReasonMissingCallID, dialect.ReasonNullCallID, dialect.ReasonInvalidCallID, dialect.ReasonMissingCallID},
		},
		{
			name:      "llm_call with truncated output messages",
			attrs:     map[string]any{"gen_ai.operation.name": "llm_call", "gen_ai.output.messages": `[{"parts":[{"functionCall":{"id":"x"`},
			claimed:   true,
			items:     []dialect.Item{{Kind: pairing.KindBoundary, Time: 10, Step: rootStep}},
			malformed: []string{dialect.ReasonInvalidJSON},
		},
		{
			name: "llm_call messages: escaped keys and IDs decoded, parts null or not an array, a single Content object",
			attrs: map[string]any{
				"gen_ai.operation.name": "llm_call",
				"gen_ai.output.messages": `{"role":"model","parts":[{"function\u0043all":{"name":"a","id":"a__a_\u0031"}},` +
					`{"functionCall":"not an object"},{"text":"functionCall"}]}`,
				"gen_ai.input.messages": `[{"parts":null},{"parts":{"functionResponse":{"id":"x"}}},{"parts":[1,2,{"functionResponse":{"id":"b_1","name":"b"}}]}]`,
			},
			claimed: true,
			items: []dialect.Item{
				{Kind: pairing.KindBoundary, Time: 10, Step: rootStep},
				{Kind: pairing.KindUse, CallID: "a_1", ToolName: "a", Time: 20, Step: rootStep},
				{Kind: pairing.KindEcho, CallID: "b_1", Time: 10},
			},
			malformed: []string{dialect.ReasonInvalidType, dialect.ReasonInvalidType},
		},
		{
			name: "llm_call messages with trailing bytes: the parts before still read",
			attrs: map[string]any{
				"gen_ai.operation.name":  "llm_call",
				"gen_ai.output.messages": `[{"parts":[{"type":"tool_call","id":"c_1","name":"c"}]}] x`,
			},
			claimed:   true,
			items:     []dialect.Item{{Kind: pairing.KindBoundary, Time: 10, Step: rootStep}, {Kind: pairing.KindUse, CallID: "c_1", ToolName: "c", Time: 20, Step: rootStep}},
			malformed: []string{dialect.ReasonInvalidJSON},
		},
		{
			name:      "llm_call with output messages of the wrong type",
			attrs:     map[string]any{"gen_ai.operation.name": "llm_call", "gen_ai.output.messages": int64(3)},
			claimed:   true,
			items:     []dialect.Item{{Kind: pairing.KindBoundary, Time: 10, Step: rootStep}},
			malformed: []string{dialect.ReasonInvalidType},
		},
		{
			name:      "llm_call whose messages are not objects: one reason for the array",
			attrs:     map[string]any{"gen_ai.operation.name": "llm_call", "gen_ai.output.messages": `[1,2,3,4,5,6]`},
			claimed:   true,
			items:     []dialect.Item{{Kind: pairing.KindBoundary, Time: 10, Step: rootStep}},
			malformed: []string{dialect.ReasonInvalidType},
		},
		{
			name: "schedule_tool_calls: request.callId of the output messages, uses at its start",
			attrs: map[string]any{
				"gen_ai.operation.name": "schedule_tool_calls",
				"gen_ai.input.messages": `[{"callId":"ignored__x","name":"ignored"}]`,
				"gen_ai.output.messages": `[{"request":{"callId":"run_shell_command__run_shell_command_17_0","name":"run_shell_command","args":{}},` +
					`"response":{"callId":"run_shell_command__run_shell_command_17_0"},"status":"success"}]`,
			},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindUse, CallID: "run_shell_command_17_0", ToolName: "run_shell_command", Time: 10, Step: rootStep}},
		},
		{
			name: "schedule_tool_calls still open: the input messages' callId",
			attrs: map[string]any{
				"gen_ai.operation.name": "schedule_tool_calls",
				"gen_ai.input.messages": `[{"callId":"read_file__read_file_17_1","name":"read_file"}]`,
			},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindUse, CallID: "read_file_17_1", ToolName: "read_file", Time: 10, Step: rootStep}},
		},
		{
			name: "tool_call: a result at its end",
			attrs: map[string]any{
				"gen_ai.operation.name": "tool_call", "gen_ai.tool.name": "run_shell_command",
				"gen_ai.tool.call_id":    "run_shell_command__run_shell_command_17_0",
				"gen_ai.output.messages": `{"status":"success","request":{"callId":"run_shell_command__run_shell_command_17_0"}}`,
			},
			nested:  true,
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindResult, CallID: "run_shell_command_17_0", ToolName: "run_shell_command", Time: 20}},
		},
		{
			name: "tool_call that failed: still a result",
			attrs: map[string]any{
				"gen_ai.operation.name": "tool_call", "gen_ai.tool.name": "read_file",
				"gen_ai.tool.call_id": "read_file__read_file_17_1", "gen_ai.output.messages": `{"status":"error"}`,
			},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindResult, CallID: "read_file_17_1", ToolName: "read_file", Time: 20}},
		},
		{
			name: "tool_call cancelled: an abort",
			attrs: map[string]any{
				"gen_ai.operation.name": "tool_call", "gen_ai.tool.name": "run_shell_command",
				"gen_ai.tool.call_id": "run_shell_command__run_shell_command_17_0", "gen_ai.output.messages": `{"status":"cancelled"}`,
			},
			claimed: true,
			items:   []dialect.Item{{Kind: pairing.KindAbort, CallID: "run_shell_command_17_0", ToolName: "run_shell_command", Time: 20}},
		},
		{
			name:      "tool_call without a call ID",
			attrs:     map[string]any{"gen_ai.operation.name": "tool_call", "gen_ai.tool.name": "x"},
			claimed:   true,
			malformed: []string{dialect.ReasonMissingCallID},
		},
		{
			name:  "semconv execute_tool is not Gemini CLI's",
			attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "c1"},
		},
		{
			name:  "a span named tool_call of another operation",
			span:  "tool_call",
			attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call_id": "c1"},
		},
		{
			name:  "a span of another name with Gemini's operation",
			span:  "llm_call_wrapper",
			attrs: map[string]any{"gen_ai.operation.name": "llm_call"},
		},
		{
			name:  "agent_call span",
			attrs: map[string]any{"gen_ai.operation.name": "agent_call", "gen_ai.agent.name": "codebase_investigator"},
		},
		{
			name:  "span without an operation name",
			attrs: map[string]any{"http.request.method": "POST"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := tt.span
			if op, ok := tt.attrs["gen_ai.operation.name"].(string); ok && name == "" {
				name = op // the SDK names a span after its operation
			}
			s := dialecttest.NewSpan(t, name, tt.attrs, !tt.nested)
			var f dialect.Found
			assert.Equal(t, tt.claimed, ExtractSpan(s, &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}

// TestToolCallSpanCancelled: a tool_call span is an abort when the status of its output
// messages is "cancelled" or when dialect.Cancelled says so; a span with both is one abort.
func TestToolCallSpanCancelled(t *testing.T) {
	for _, status := range []string{"success", "cancelled"} {
		for _, m := range dialecttest.Markers() {
			t.Run(status+"/"+m.Name, func(t *testing.T) {
				s := dialecttest.MarkedSpan(t, "tool_call", map[string]any{
					"gen_ai.operation.name": "tool_call", "gen_ai.tool.name": "run_shell_command",
					"gen_ai.tool.call_id":    "run_shell_command__run_shell_command_17_0",
					"gen_ai.output.messages": `{"status":"` + status + `"}`,
				}, true, m)
				want := m.Kind
				if status == "cancelled" {
					want = pairing.KindAbort
				}
				var f dialect.Found
				assert.True(t, ExtractSpan(s, &f))
				assert.Equal(t, []dialect.Item{{Kind: want, CallID: "run_shell_command_17_0", ToolName: "run_shell_command", Time: 20}}, f.Items)
			})
		}
	}
}
