// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package genai

import (
	"path/filepath"
	"strings"
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

// event is a span event of a test span: its name and attributes (as pcommon.Map.FromRaw
// reads them).
type event struct {
	name  string
	attrs map[string]any
}

// strandsChoice is a gen_ai.choice span event as AWS Strands Agents TS 1.19.0 writes it on a
// chat span, its message the JSON text message.
func strandsChoice(message string) event {
	return event{name: "gen_ai.choice", attrs: map[string]any{"finish_reason": "toolUse", "message": message}}
}

// TestExtractSpanEvents: the gen_ai.choice and gen_ai.client.inference.operation.details span
// events of the spans genai reads (model calls, invoke_agent) announce calls at the span's
// end, with the span's step, and echo results at its start, as the message attributes do;
// malformed event attributes are counted as malformed; the events of other spans, and other
// events, are not read.
func TestExtractSpanEvents(t *testing.T) {
	chatStep := pairing.GroupStep(testParent.String(), testSpan.String())
	chat := map[string]any{"gen_ai.operation.name": "chat"}
	boundary := dialect.Item{Kind: pairing.KindBoundary, Time: 10, Step: chatStep}
	use := func(id, name string) dialect.Item {
		return dialect.Item{Kind: pairing.KindUse, CallID: id, ToolName: name, Time: 20, Step: chatStep}
	}
	tests := []struct {
		name      string
		span      string
		attrs     map[string]any
		events    []event
		kind      SpanKind
		items     []dialect.Item
		malformed []string
	}{
		{
			name:   "Strands gen_ai.choice: each toolUse block a use at the span's end, in its step",
			span:   "chat",
			attrs:  chat,
			events: []event{{name: "gen_ai.user.message", attrs: map[string]any{"content": `[{"toolUse":{"toolUseId":"old"}}]`}}, strandsChoice(`[{"type":"text","text":"ok"},{"type":"toolUse","name":"run_shell","toolUseId":"call_1","input":{"command":"ls"}},{"type":"toolUse","name":"read_file","toolUseId":"call_2","input":{}}]`)},
			kind:   ModelCall,
			items:  []dialect.Item{boundary, use("call_1", "run_shell"), use("call_2", "read_file")},
		},
		{
			name:   "Bedrock Converse toolUse block",
			span:   "chat",
			attrs:  chat,
			events: []event{strandsChoice(`[{"toolUse":{"name":"run_shell","toolUseId":"call_1"}}]`)},
			kind:   ModelCall,
			items:  []dialect.Item{boundary, use("call_1", "run_shell")},
		},
		{
			name:   "OpenAI message shape as a JSON string",
			span:   "chat",
			attrs:  chat,
			events: []event{{name: "gen_ai.choice", attrs: map[string]any{"index": 0, "message": `{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]}`}}},
			kind:   ModelCall,
			items:  []dialect.Item{boundary, use("call_1", "get_weather")},
		},
		{
			name:  "OpenAI message shape as a map, and tool_calls at the top level",
			span:  "chat",
			attrs: chat,
			events: []event{
				{name: "gen_ai.choice", attrs: map[string]any{"message": map[string]any{"tool_calls": []any{map[string]any{"id": "call_1", "function": map[string]any{"name": "a"}}}}}},
				{name: "gen_ai.choice", attrs: map[string]any{"tool_calls": []any{map[string]any{"id": "call_2", "function": map[string]any{"name": "b"}}}}},
			},
			kind:  ModelCall,
			items: []dialect.Item{boundary, use("call_1", "a"), use("call_2", "b")},
		},
		{
			name:  "operation details event: output tool_call parts uses, input tool_call_response parts echoes",
			span:  "chat",
			attrs: chat,
			events: []event{{name: "gen_ai.client.inference.operation.details", attrs: map[string]any{
				"gen_ai.input.messages":  `[{"role":"tool","parts":[{"type":"tool_call_response","id":"call_0","response":"ok"}]}]`,
				"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"run_shell","arguments":{}}]}]`,
			}}},
			kind:  ModelCall,
			items: []dialect.Item{boundary, use("call_1", "run_shell"), {Kind: pairing.KindEcho, CallID: "call_0", Time: 10}},
		},
		{
			name:   "text answers: nothing announced, nothing malformed",
			span:   "chat",
			attrs:  chat,
			events: []event{strandsChoice(`[{"text":"hello"}]`), strandsChoice(`[]`), strandsChoice(`[1] was printed`), strandsChoice(""), {name: "gen_ai.choice", attrs: map[string]any{"finish_reason": "stop"}}},
			kind:   ModelCall,
			items:  []dialect.Item{boundary},
		},
		{
			name:   "invoke_agent: its choice's final text read as text; its calls without a step",
			span:   "invoke_agent a",
			attrs:  map[string]any{"gen_ai.operation.name": "invoke_agent"},
			events: []event{{name: "gen_ai.choice", attrs: map[string]any{"message": "Cancelled by user", "finish_reason": "cancelled"}}, strandsChoice(`[{"type":"toolUse","name":"x","toolUseId":"call_1"}]`)},
			kind:   InvokeAgent,
			items: []dialect.Item{
				{Kind: pairing.KindSessionEnd, Time: 20, Step: pairing.GroupStep(testSpan.String(), "")},
				{Kind: pairing.KindUse, CallID: "call_1", ToolName: "x", Time: 20},
			},
		},
		{
			name:   "custom model call span (messages attributes): its events read too, without a step",
			span:   "llm",
			attrs:  map[string]any{"gen_ai.output.messages": `[]`},
			events: []event{strandsChoice(`[{"type":"toolUse","name":"x","toolUseId":"call_1"}]`)},
			kind:   ModelCall,
			items:  []dialect.Item{{Kind: pairing.KindUse, CallID: "call_1", ToolName: "x", Time: 20}},
		},
		{
			name:  "malformed choice events",
			span:  "chat",
			attrs: chat,
			events: []event{
				strandsChoice(`[{"type":"toolUse","name":"x"}]`),
				strandsChoice(`[{"type":"toolUse","toolUseId":null}]`),
				strandsChoice(`[{"type":"toolUse","toolUseId":7}]`),
				strandsChoice(`[{"type":"toolUse","toolUseId":""}]`),
				strandsChoice(`[{"type":"toolUse","toolUseId":"call_1"`),
				strandsChoice(`[{"type":"toolUse","toolUseId":"call_2"}, 3]`),
				strandsChoice(`{"tool_calls":[{"function":{"name":"x"}}]`),
				{name: "gen_ai.choice", attrs: map[string]any{"message": 42}},
				{name: "gen_ai.choice", attrs: map[string]any{"tool_calls": "[]"}},
			},
			kind:  ModelCall,
			items: []dialect.Item{boundary, use("call_2", "")},
			malformed: []string{
				dialect.ReasonMissingCallID, dialect.ReasonNullCallID, dialect.ReasonInvalidCallID, dialect.ReasonMissingCallID,
				dialect.ReasonInvalidJSON, dialect.ReasonInvalidType, dialect.ReasonInvalidJSON, dialect.ReasonInvalidType, dialect.ReasonInvalidType,
			},
		},
		{
			name:  "malformed operation details event",
			span:  "chat",
			attrs: chat,
			events: []event{{name: "gen_ai.client.inference.operation.details", attrs: map[string]any{
				"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"tool_call","name":"x"}]}]`,
				"gen_ai.input.messages":  int64(3),
			}}},
			kind:      ModelCall,
			items:     []dialect.Item{boundary},
			malformed: []string{"missing_call_id", dialect.ReasonInvalidType},
		},
		{
			name:   "execute_tool: its events not read (Strands writes a gen_ai.choice with the result there)",
			span:   "execute_tool run_shell",
			attrs:  map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "call_1"},
			events: []event{strandsChoice(`[{"type":"toolUse","name":"x","toolUseId":"call_9"}]`), {name: "gen_ai.choice", attrs: map[string]any{"message": `[{"text":"hello"}]`, "id": "call_1"}}},
			kind:   ExecuteTool,
			items:  []dialect.Item{{Kind: pairing.KindResult, CallID: "call_1", ToolName: "run_shell", Time: 20}},
		},
		{
			name:   "a span genai does not read: its events not read",
			span:   "execute_agent_loop_cycle",
			attrs:  map[string]any{"agent_loop.cycle_id": "cycle-1"},
			events: []event{strandsChoice(`[{"type":"toolUse","name":"x","toolUseId":"call_1"}]`), strandsChoice(`[{`)},
			kind:   Other,
		},
		{
			name:   "other events of a model call: not read",
			span:   "chat",
			attrs:  chat,
			events: []event{{name: "gen_ai.assistant.message", attrs: map[string]any{"content": `[{"toolUse":{"toolUseId":"call_1"}}]`}}, {name: "gen_ai.tool.message", attrs: map[string]any{"id": "call_0"}}, {name: "exception", attrs: map[string]any{"message": `[{`}}},
			kind:   ModelCall,
			items:  []dialect.Item{boundary},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := dialecttest.NewSpan(t, tt.span, tt.attrs, false)
			for _, e := range tt.events {
				ev := s.Events().AppendEmpty()
				ev.SetName(e.name)
				ev.SetTimestamp(15)
				require.NoError(t, ev.Attributes().FromRaw(e.attrs))
			}
			var f dialect.Found
			assert.Equal(t, tt.kind, ExtractSpan(s, &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}

// TestExtractSpanMatchingReadsNoEvents: ExtractSpanMatching (openllmetry's chat spans) reads
// the message attributes only, not the span events.
func TestExtractSpanMatchingReadsNoEvents(t *testing.T) {
	s := dialecttest.NewSpan(t, "chat", map[string]any{"gen_ai.operation.name": "chat"}, false)
	ev := s.Events().AppendEmpty()
	ev.SetName("gen_ai.choice")
	ev.Attributes().PutStr("message", `[{"type":"toolUse","name":"x","toolUseId":"call_1"}]`)
	var f dialect.Found
	assert.Equal(t, ModelCall, ExtractSpanMatching(s, &f))
	assert.Equal(t, []dialect.Item{{Kind: pairing.KindBoundary, Time: 10, Step: pairing.GroupStep(testParent.String(), testSpan.String())}}, f.Items)
}

// TestExtractSpanMastra: Mastra's agent_step span (mastra.span.type model_step) is a step of
// its parent model_generation: a boundary at its start, and the toolCalls of its
// mastra.model_step.output uses at its start in the same step; its model_generation span's end
// (mastra.span.type model_generation) is a session end of the steps under it; its
// model_generation output, repeating the run's calls, is not read. Without Mastra's span type,
// those operation names are not read.
func TestExtractSpanMastra(t *testing.T) {
	step := pairing.GroupStep(testParent.String(), testSpan.String())
	agentStep := func(output any) map[string]any {
		attrs := map[string]any{"gen_ai.operation.name": "agent_step", "mastra.span.type": "model_step"}
		if output != nil {
			attrs["mastra.model_step.output"] = output
		}
		return attrs
	}
	boundary := dialect.Item{Kind: pairing.KindBoundary, Time: 10, Step: step}
	tests := []struct {
		name      string
		attrs     map[string]any
		kind      SpanKind
		items     []dialect.Item
		malformed []string
	}{
		{
			name:  "agent_step with tool calls",
			attrs: agentStep(`{"text":"I'll run it.","toolCalls":[{"toolCallId":"call_1","toolName":"run_shell","args":{"command":"ls"}},{"toolCallId":"call_2","toolName":"read_file","args":{}}]}`),
			kind:  ModelCall,
			items: []dialect.Item{
				boundary,
				{Kind: pairing.KindUse, CallID: "call_1", ToolName: "run_shell", Time: 10, Step: step},
				{Kind: pairing.KindUse, CallID: "call_2", ToolName: "read_file", Time: 10, Step: step},
			},
		},
		{name: "agent_step without calls", attrs: agentStep(`{"text":"Done.","toolCalls":[]}`), kind: ModelCall, items: []dialect.Item{boundary}},
		{name: "agent_step, null toolCalls", attrs: agentStep(`{"text":"Done.","toolCalls":null}`), kind: ModelCall, items: []dialect.Item{boundary}},
		{name: "agent_step without output", attrs: agentStep(nil), kind: ModelCall, items: []dialect.Item{boundary}},
		{
			name:      "agent_step, calls without a string ID",
			attrs:     agentStep(`{"toolCalls":[{"toolName":"a"},{"toolCallId":null},{"toolCallId":1},"x",{"toolCallId":"call_1"}]}`),
			kind:      ModelCall,
			items:     []dialect.Item{boundary, {Kind: pairing.KindUse, CallID: "call_1", Time: 10, Step: step}},
			malformed: []string{dialect.ReasonMissingCallID, dialect.ReasonNullCallID, dialect.ReasonInvalidCallID, dialect.ReasonInvalidType},
		},
		{name: "agent_step, truncated output", attrs: agentStep(`{"toolCalls":[{"toolCallId":"call_1"}`), kind: ModelCall, items: []dialect.Item{boundary}, malformed: []string{dialect.ReasonInvalidJSON}},
		{name: "agent_step, toolCalls not an array", attrs: agentStep(`{"toolCalls":{"toolCallId":"call_1"}}`), kind: ModelCall, items: []dialect.Item{boundary}, malformed: []string{dialect.ReasonInvalidType}},
		{name: "agent_step, output not a string", attrs: agentStep(int64(1)), kind: ModelCall, items: []dialect.Item{boundary}, malformed: []string{dialect.ReasonInvalidType}},
		{
			name: "model_generation: a session end of its own group; its output not read",
			attrs: map[string]any{"gen_ai.operation.name": "model_generation", "mastra.span.type": "model_generation",
				"mastra.model_generation.output": `{"toolCalls":[{"toolCallId":"call_1","toolName":"run_shell"}]}`},
			kind:  InvokeAgent,
			items: []dialect.Item{{Kind: pairing.KindSessionEnd, Time: 20, Step: pairing.GroupStep(testSpan.String(), "")}},
		},
		{name: "agent_step of another source", attrs: map[string]any{"gen_ai.operation.name": "agent_step", "mastra.model_step.output": `{"toolCalls":[{"toolCallId":"call_1"}]}`}, kind: Other},
		{name: "model_generation of another source", attrs: map[string]any{"gen_ai.operation.name": "model_generation", "mastra.span.type": "agent_run"}, kind: Other},
		{name: "Mastra's model_chunk: not read", attrs: map[string]any{"gen_ai.operation.name": "model_chunk", "mastra.span.type": "model_chunk", "mastra.model_chunk.output": `{"toolName":"x","toolCallId":"call_1"}`}, kind: Other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := dialecttest.NewSpan(t, "agent_step capture-agent", tt.attrs, false)
			var f dialect.Found
			assert.Equal(t, tt.kind, ExtractSpan(s, &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}

// TestExtractSpanAllocations: with a reused Found, genai allocates nothing for a span that
// announces no call, span events or not (the Strands and Mastra spans read now, and the AI
// SDK, Copilot and Claude Code spans of before); a span announcing calls through a span event
// or Mastra's step output allocates at most four times per call (the call ID and tool name,
// each unescaped and copied).
func TestExtractSpanAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector are not the code's: make test runs this without -race")
	}
	for _, p := range []string{"aisdk/*/traces.json", "copilot/*/traces.json", "claude/normal/traces.json", "strands/*/traces.json", "mastra/*/traces.json"} {
		files, err := filepath.Glob(dialecttest.Testdata(p))
		require.NoError(t, err)
		require.NotEmpty(t, files, p)
		var spans []ptrace.Span
		for _, file := range files {
			spans = append(spans, dialecttest.CaptureSpans(t, strings.TrimPrefix(file, dialecttest.Testdata()+"/"))...)
		}
		for _, s := range spans {
			var f dialect.Found
			ExtractSpan(s, &f)
			uses := 0
			for _, it := range f.Items {
				if it.Kind == pairing.KindUse {
					uses++
				}
			}
			allocs := testing.AllocsPerRun(100, func() {
				f.Reset()
				ExtractSpan(s, &f)
			})
			if uses == 0 {
				assert.Zerof(t, allocs, "%s: span %s (%d events)", p, s.Name(), s.Events().Len())
			} else {
				assert.LessOrEqualf(t, allocs, float64(4*uses), "%s: span %s", p, s.Name())
			}
		}
	}
}
