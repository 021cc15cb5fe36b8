package genai

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
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
	chatStep := pairing.GroupStep(testParent.String(), testSpan.String())
	tests := []struct {
		name      string
		span      string
		attrs     map[string]any
		root      bool // no parent span
		kind      SpanKind
		items     []dialect.Item
		malformed []string
	}{
		{
			name: "chat span: a boundary at its start, calls announced at its end, in its parent's group",
			span: "chat gpt",
			attrs: map[string]any{
				"gen_ai.operation.name":  "chat",
				"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"run_shell"},{"type":"text","content":"x"}]}]`,
				"gen_ai.input.messages":  `[{"role":"tool","parts":[{"type":"tool_call_response","id":"c0","response":"ok"}]}]`,
			},
			kind: ModelCall,
			items: []dialect.Item{
				{Kind: pairing.KindBoundary, Time: 10, Step: chatStep},
				{Kind: pairing.KindUse, CallID: "c1", ToolName: "run_shell", Time: 20, Step: chatStep},
				{Kind: pairing.KindEcho, CallID: "c0", Time: 10},
			},
		},
		{
			name:  "root chat span without captured messages: a boundary grouped by its trace",
			span:  "chat gpt",
			attrs: map[string]any{"gen_ai.operation.name": "chat"},
			root:  true,
			kind:  ModelCall,
			items: []dialect.Item{{Kind: pairing.KindBoundary, Time: 10, Step: pairing.GroupStep(testTrace.String(), testSpan.String())}},
		},
		{
			name: "custom model call span with messages: uses without a step, no boundary",
			span: "llm",
			attrs: map[string]any{
				"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"run_shell"}]}]`,
			},
			kind:  ModelCall,
			items: []dialect.Item{{Kind: pairing.KindUse, CallID: "c1", ToolName: "run_shell", Time: 20}},
		},
		{
			name: "invoke_agent: a session end of its own group; repeated calls without a step",
			span: "invoke_agent a",
			attrs: map[string]any{
				"gen_ai.operation.name":  "invoke_agent",
				"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"run_shell"}]}]`,
			},
			kind: InvokeAgent,
			items: []dialect.Item{
				{Kind: pairing.KindSessionEnd, Time: 20, Step: pairing.GroupStep(testSpan.String(), "")},
				{Kind: pairing.KindUse, CallID: "c1", ToolName: "run_shell", Time: 20},
			},
		},
		{
			name:  "execute_tool resolves at its end, name from the attribute",
			span:  "execute_tool whatever",
			attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "c1", "gen_ai.tool.name": "run_shell"},
			kind:  ExecuteTool,
			items: []dialect.Item{{Kind: pairing.KindResult, CallID: "c1", ToolName: "run_shell", Time: 20}},
		},
		{
			name:  "execute_tool name from the span name",
			span:  "execute_tool read_file",
			attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "c2"},
			kind:  ExecuteTool,
			items: []dialect.Item{{Kind: pairing.KindResult, CallID: "c2", ToolName: "read_file", Time: 20}},
		},
		{
			name:      "execute_tool without a call ID",
			span:      "execute_tool x",
			attrs:     map[string]any{"gen_ai.operation.name": "execute_tool"},
			kind:      ExecuteTool,
			malformed: []string{dialect.ReasonMissingCallID},
		},
		{
			name:  "invoke_agent without messages is still an agent span",
			span:  "invoke_agent",
			attrs: map[string]any{"gen_ai.operation.name": "invoke_agent"},
			kind:  InvokeAgent,
			items: []dialect.Item{{Kind: pairing.KindSessionEnd, Time: 20, Step: pairing.GroupStep(testSpan.String(), "")}},
		},
		{
			name:  "unrelated span",
			span:  "GET /",
			attrs: map[string]any{"http.request.method": "GET"},
			kind:  Other,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := dialecttest.NewSpan(t, tt.span, tt.attrs, tt.root)
			var f dialect.Found
			assert.Equal(t, tt.kind, ExtractSpan(s, &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}

// TestExtractSpanMatching: the uses of ExtractSpanMatching carry the match hash of their
// name and arguments, whether the history is a JSON string or structured; ExtractSpan's do
// not.
func TestExtractSpanMatching(t *testing.T) {
	h, ok := dialect.MatchJSON("run_shell", []byte(`{"command":"ls"}`))
	assert.True(t, ok)
	want := dialect.InTrace(h, testTrace)
	structured := pcommon.NewValueSlice()
	msg := structured.Slice().AppendEmpty().SetEmptyMap()
	part := msg.PutEmptySlice("parts").AppendEmpty().SetEmptyMap()
	part.PutStr("type", "tool_call")
	part.PutStr("id", "c1")
	part.PutStr("name", "run_shell")
	part.PutEmptyMap("arguments").PutStr("command", "ls")
	for name, set := range map[string]func(s ptrace.Span){
		"json": func(s ptrace.Span) {
			s.Attributes().PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"run_shell","arguments":{"command":"ls"}}]}]`)
		},
		"structured": func(s ptrace.Span) { structured.CopyTo(s.Attributes().PutEmpty("gen_ai.output.messages")) },
	} {
		t.Run(name, func(t *testing.T) {
			s := ptrace.NewSpan()
			s.SetTraceID(testTrace)
			s.SetSpanID(testSpan)
			s.Attributes().PutStr("gen_ai.operation.name", "chat")
			set(s)
			var f dialect.Found
			assert.Equal(t, ModelCall, ExtractSpanMatching(s, &f))
			assert.Len(t, f.Items, 2)
			assert.Equal(t, want, f.Items[1].Match)
			f.Reset()
			ExtractSpan(s, &f)
			assert.Zero(t, f.Items[1].Match)
		})
	}
}

// TestExtractSpanMatchingNoArguments: a tool_call part without "arguments", in JSON text or
// in a structured history, is a call without arguments (the match hash of {}), never a
// panic.
func TestExtractSpanMatchingNoArguments(t *testing.T) {
	h, ok := dialect.MatchJSON("run_shell", []byte(`{}`))
	require.True(t, ok)
	want := dialect.InTrace(h, testTrace)
	structured := pcommon.NewValueSlice()
	part := structured.Slice().AppendEmpty().SetEmptyMap().PutEmptySlice("parts").AppendEmpty().SetEmptyMap()
	part.PutStr("type", "tool_call")
	part.PutStr("id", "c1")
	part.PutStr("name", "run_shell")
	for name, set := range map[string]func(s ptrace.Span){
		"json": func(s ptrace.Span) {
			s.Attributes().PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"run_shell"}]}]`)
		},
		"structured": func(s ptrace.Span) { structured.CopyTo(s.Attributes().PutEmpty("gen_ai.output.messages")) },
	} {
		t.Run(name, func(t *testing.T) {
			s := dialecttest.NewSpan(t, "chat", map[string]any{"gen_ai.operation.name": "chat"}, true)
			set(s)
			var f dialect.Found
			assert.Equal(t, ModelCall, ExtractSpanMatching(s, &f))
			require.Len(t, f.Items, 2)
			assert.Equal(t, want, f.Items[1].Match)
		})
	}
}

// TestExecuteToolCancelled: an execute_tool span that says its call was cancelled
// (dialect.Cancelled: Copilot's error.type cancelled and status "Operation aborted", Qwen
// Code's tool.failure_kind) is an abort; a failed one is a result.
func TestExecuteToolCancelled(t *testing.T) {
	for _, m := range dialecttest.Markers() {
		t.Run(m.Name, func(t *testing.T) {
			s := dialecttest.MarkedSpan(t, "execute_tool bash", map[string]any{
				"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "c1", "gen_ai.tool.name": "bash",
			}, false, m)
			var f dialect.Found
			assert.Equal(t, ExecuteTool, ExtractSpan(s, &f))
			assert.Equal(t, []dialect.Item{{Kind: m.Kind, CallID: "c1", ToolName: "bash", Time: 20}}, f.Items)
		})
	}
}
