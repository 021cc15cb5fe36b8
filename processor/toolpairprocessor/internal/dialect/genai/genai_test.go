package genai

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

func TestExtractSpan(t *testing.T) {
	tests := []struct {
		name      string
		span      string
		attrs     map[string]any
		kind      SpanKind
		items     []dialect.Item
		malformed []string
	}{
		{
			name: "chat span announces calls at its end",
			span: "chat gpt",
			attrs: map[string]any{
				"gen_ai.operation.name":  "chat",
				"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"run_shell"},{"type":"text","content":"x"}]}]`,
				"gen_ai.input.messages":  `[{"role":"tool","parts":[{"type":"tool_call_response","id":"c0","response":"ok"}]}]`,
			},
			kind: ModelCall,
			items: []dialect.Item{
				{Kind: pairing.KindUse, CallID: "c1", ToolName: "run_shell", Time: 20},
				{Kind: pairing.KindEcho, CallID: "c0", Time: 10},
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
			s := ptrace.NewSpan()
			s.SetName(tt.span)
			s.SetStartTimestamp(10)
			s.SetEndTimestamp(20)
			assert.NoError(t, s.Attributes().FromRaw(tt.attrs))
			var f dialect.Found
			assert.Equal(t, tt.kind, ExtractSpan(s, &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}
