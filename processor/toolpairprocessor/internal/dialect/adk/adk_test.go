// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package adk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/genai"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

var (
	callLLMID = pcommon.SpanID{0xca, 0x11}
	agentID   = pcommon.SpanID{0xa9}
)

func matchOf(t *testing.T, tool, args string) uint64 {
	t.Helper()
	h, ok := dialect.MatchJSON(tool, []byte(args))
	require.True(t, ok)
	return h
}

func TestExtractCallLLM(t *testing.T) {
	s := ptrace.NewSpan()
	s.SetName("call_llm")
	s.SetSpanID(callLLMID)
	s.SetParentSpanID(agentID)
	s.SetStartTimestamp(10)
	s.SetEndTimestamp(20)
	step := genai.ModelStep(s)
	boundary := dialect.Item{Kind: pairing.KindBoundary, Time: 10, Step: step}
	use := func(id, tool string) dialect.Item {
		return dialect.Item{Kind: pairing.KindUse, CallID: id, ToolName: tool, Time: 20, Step: step, Match: NameMatch(tool, callLLMID)}
	}
	tests := []struct {
		name      string
		attrs     map[string]any
		claimed   bool
		items     []dialect.Item
		malformed []string
	}{
		{
			name: "response with a function call",
			attrs: map[string]any{"gen_ai.system": "gcp.vertex.agent", "gcp.vertex.agent.llm_response": `{"content":{"role":"model","parts":[` +
				`{"text":"I'll run the requested command."},{"functionCall":{"name":"run_shell","args":{"command":"echo hello"}}}]},"finishReason":"STOP"}`},
			claimed: true, items: []dialect.Item{boundary, use(DerivedID(callLLMID, matchOf(t, "run_shell", `{"command":"echo hello"}`)), "run_shell")},
		},
		{
			name: "two calls, one with the model's id, one without arguments",
			attrs: map[string]any{"gen_ai.system": "gcp.vertex.agent", "gcp.vertex.agent.llm_response": `{"content":{"parts":[` +
				`{"functionCall":{"name":"read_file","args":{"file_path":"a"},"id":"fc_1"}},{"functionCall":{"name":"run_shell"}}]}}`},
			claimed: true, items: []dialect.Item{boundary, use("fc_1", "read_file"), use(DerivedID(callLLMID, matchOf(t, "run_shell", `{}`)), "run_shell")},
		},
		{
			name:    "text only: the boundary",
			attrs:   map[string]any{"gen_ai.system": "gcp.vertex.agent", "gcp.vertex.agent.llm_response": `{"content":{"parts":[{"text":"Done."}]}}`},
			claimed: true, items: []dialect.Item{boundary},
		},
		{
			name:    "content not captured",
			attrs:   map[string]any{"gen_ai.system": "gcp.vertex.agent", "gcp.vertex.agent.llm_response": `{}`},
			claimed: true, items: []dialect.Item{boundary},
		},
		{
			name:    "no response attribute",
			attrs:   map[string]any{"gen_ai.system": "gcp.vertex.agent"},
			claimed: true, items: []dialect.Item{boundary},
		},
		{
			name:    "response not JSON",
			attrs:   map[string]any{"gen_ai.system": "gcp.vertex.agent", "gcp.vertex.agent.llm_response": `{"content":`},
			claimed: true, items: []dialect.Item{boundary}, malformed: []string{dialect.ReasonInvalidJSON},
		},
		{
			name:    "response not a string",
			attrs:   map[string]any{"gen_ai.system": "gcp.vertex.agent", "gcp.vertex.agent.llm_response": 3},
			claimed: true, items: []dialect.Item{boundary}, malformed: []string{dialect.ReasonInvalidType},
		},
		{
			name:    "function call without a name",
			attrs:   map[string]any{"gen_ai.system": "gcp.vertex.agent", "gcp.vertex.agent.llm_response": `{"content":{"parts":[{"functionCall":{"name":7,"args":{}}}]}}`},
			claimed: true, items: []dialect.Item{boundary}, malformed: []string{dialect.ReasonInvalidType},
		},
		{
			name:    "parts of the wrong type",
			attrs:   map[string]any{"gen_ai.system": "gcp.vertex.agent", "gcp.vertex.agent.llm_response": `{"content":{"parts":{"functionCall":{}}}}`},
			claimed: true, items: []dialect.Item{boundary}, malformed: []string{dialect.ReasonInvalidJSON},
		},
		{name: "another system's call_llm", attrs: map[string]any{"gen_ai.system": "openai"}},
		{name: "call_llm without attributes (a failed request)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.Attributes().Clear()
			require.NoError(t, s.Attributes().FromRaw(tt.attrs))
			var f dialect.Found
			assert.Equal(t, tt.claimed, ExtractSpan(s, &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}

func TestExtractTool(t *testing.T) {
	derived := DerivedID(callLLMID, matchOf(t, "run_shell", `{"command":"echo hello"}`))
	success := func(extra map[string]any) map[string]any {
		m := map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "run_shell", "gen_ai.tool.type": "FunctionTool",
			"gcp.vertex.agent.tool_call_args": `{"command": "echo hello"}`, "gen_ai.tool.call.id": "adk-8482c766-2302-4179-b924-14e08836175f",
			"gcp.vertex.agent.tool_response": `{"result":"hello\n"}`}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name      string
		span      string
		root      bool
		attrs     map[string]any
		claimed   bool
		items     []dialect.Item
		malformed []string
	}{
		{
			name: "successful tool: the derived ID of its parent, name and arguments", span: "execute_tool run_shell", attrs: success(nil),
			claimed: true, items: []dialect.Item{{Kind: pairing.KindResult, CallID: derived, ToolName: "run_shell", Time: 20}},
		},
		{
			name: "the model's own call ID", span: "execute_tool run_shell", attrs: success(map[string]any{"gen_ai.tool.call.id": "fc_9"}),
			claimed: true, items: []dialect.Item{{Kind: pairing.KindResult, CallID: "fc_9", ToolName: "run_shell", Time: 20}},
		},
		{
			name: "placeholder ID (a tool that threw, newer ADK), a cancellation marker", span: "execute_tool run_shell",
			attrs:   success(map[string]any{"gen_ai.tool.call.id": "<not specified>", "error.type": "AbortError"}),
			claimed: true, items: []dialect.Item{{Kind: pairing.KindAbort, CallID: derived, ToolName: "run_shell", Time: 20}},
		},
		{
			name: "arguments not JSON", span: "execute_tool run_shell", attrs: success(map[string]any{"gcp.vertex.agent.tool_call_args": "<not serializable>"}),
			claimed: true, malformed: []string{dialect.ReasonInvalidJSON},
		},
		{
			name: "arguments not a string", span: "execute_tool run_shell", attrs: success(map[string]any{"gcp.vertex.agent.tool_call_args": 1}),
			claimed: true, malformed: []string{dialect.ReasonInvalidType},
		},
		{name: "root tool span without the model's ID", span: "execute_tool run_shell", root: true, attrs: success(nil), claimed: true, malformed: []string{dialect.ReasonMissingCallID}},
		{
			name: "merged tools: claimed, nothing read", span: "execute_tool (merged)",
			attrs:   map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "(merged tools)", "gen_ai.tool.call.id": "h2jzA5ht", "gcp.vertex.agent.tool_call_args": "N/A"},
			claimed: true,
		},
		{
			name: "bare span: matched by tool name under its call_llm", span: "execute_tool run_shell",
			claimed: true, items: []dialect.Item{{Kind: pairing.KindMatch, ToolName: "run_shell", Time: 20, Match: NameMatch("run_shell", callLLMID)}},
		},
		{
			name: "bare span carrying the processor's route attribute", span: "execute_tool run_shell", attrs: map[string]any{"toolpair.route": "0123456789abcdef"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindMatch, ToolName: "run_shell", Time: 20, Match: NameMatch("run_shell", callLLMID)}},
		},
		{
			name: "bare span matched already: its ID", span: "execute_tool run_shell",
			attrs:   map[string]any{"gen_ai.tool.call.id": derived, "toolpair.outcome": "paired"},
			claimed: true, items: []dialect.Item{{Kind: pairing.KindResult, CallID: derived, ToolName: "run_shell", Time: 20}},
		},
		{name: "bare merged span", span: "execute_tool (merged)", claimed: true},
		{name: "bare root span: not read", span: "execute_tool run_shell", root: true},
		{
			name: "a semconv execute_tool span of another source: genai's", span: "execute_tool bash",
			attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash", "gen_ai.tool.call.id": "call_1"},
		},
		{name: "other span", span: "invoke_agent capture_agent", attrs: map[string]any{"gen_ai.operation.name": "invoke_agent"}},
		{name: "invocation root", span: "invocation", root: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ptrace.NewSpan()
			s.SetName(tt.span)
			s.SetSpanID(pcommon.SpanID{0x70})
			if !tt.root {
				s.SetParentSpanID(callLLMID)
			}
			s.SetStartTimestamp(10)
			s.SetEndTimestamp(20)
			require.NoError(t, s.Attributes().FromRaw(tt.attrs))
			var f dialect.Found
			assert.Equal(t, tt.claimed, ExtractSpan(s, &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}

// TestCapture: in the real capture the first call_llm span's use and the execute_tool span
// under it name the same call, and the second call_llm span is a boundary of the same group.
func TestCapture(t *testing.T) {
	var uses, results []dialect.Item
	boundaries := 0
	for _, s := range dialecttest.CaptureSpans(t, "adk/normal/traces.json") {
		var f dialect.Found
		if !ExtractSpan(s, &f) {
			continue
		}
		assert.Empty(t, f.Malformed, s.Name())
		for _, it := range f.Items {
			switch it.Kind {
			case pairing.KindUse:
				uses = append(uses, it)
			case pairing.KindResult:
				results = append(results, it)
			case pairing.KindBoundary:
				boundaries++
			default:
				t.Fatalf("%v item in %s", it.Kind, s.Name())
			}
		}
	}
	require.Len(t, uses, 1)
	require.Len(t, results, 1)
	assert.Equal(t, 2, boundaries)
	assert.Equal(t, uses[0].CallID, results[0].CallID)
	assert.Regexp(t, `^adk-derived-[0-9a-f]{16}$`, uses[0].CallID)
	assert.Equal(t, "run_shell", results[0].ToolName)
}

func TestFunctionCalls(t *testing.T) {
	calls, err := FunctionCalls([]byte(`{"content":{"parts":[{"functionCall":{"name":"a","args":{"x":1},"id":"i"}},{"text":"t"},{"functionCall":{"name":"b","args":null,"id":5}}]}}`))
	require.NoError(t, err)
	assert.Equal(t, []Call{{Name: "a", Args: []byte(`{"x":1}`), ID: "i"}, {Name: "b"}}, calls)
	calls, err = FunctionCalls([]byte(`{"content":null}`))
	assert.NoError(t, err)
	assert.Empty(t, calls)
	_, err = FunctionCalls([]byte(`[]`))
	assert.Error(t, err)
}

// The derived ID depends on the call_llm span and on the arguments as values, not on how
// they were written.
func TestDerivedID(t *testing.T) {
	a := DerivedID(callLLMID, matchOf(t, "run_shell", `{"command":"ls","timeout_ms":1000}`))
	assert.Equal(t, a, DerivedID(callLLMID, matchOf(t, "run_shell", `{ "timeout_ms": 1e3, "command": "ls" }`)))
	assert.NotEqual(t, a, DerivedID(pcommon.SpanID{1}, matchOf(t, "run_shell", `{"command":"ls","timeout_ms":1000}`)))
	assert.NotEqual(t, a, DerivedID(callLLMID, matchOf(t, "run_shell", `{"command":"ls"}`)))
	assert.NotEqual(t, NameMatch("run_shell", callLLMID), NameMatch("read_file", callLLMID))
	assert.NotEqual(t, NameMatch("run_shell", callLLMID), NameMatch("run_shell", pcommon.SpanID{1}))
}

// TestBareSpanCancelled: a bare execute_tool span (no call ID, matched by tool name) whose
// status carries a cancellation marker of specification section 2 is a match marked Abort,
// so the engine resolves its call as interrupted/aborted; any other status leaves it a match.
// Only the status markers: a span with attributes is not bare.
func TestBareSpanCancelled(t *testing.T) {
	for _, m := range dialecttest.Markers() {
		if len(m.Attrs) > 0 {
			continue
		}
		t.Run(m.Name, func(t *testing.T) {
			s := dialecttest.MarkedSpan(t, "execute_tool run_shell", nil, false, m)
			var f dialect.Found
			assert.True(t, ExtractSpan(s, &f))
			require.Len(t, f.Items, 1)
			assert.Equal(t, pairing.KindMatch, f.Items[0].Kind)
			assert.Equal(t, m.Kind == pairing.KindAbort, f.Items[0].Abort)
		})
	}
}
