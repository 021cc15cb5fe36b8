// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package openinference

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/dialecttest"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// lcResult is a LangChain LLMResult holding one AIMessage whose kwargs.tool_calls are calls
// (JSON text of the array), as LangGraph.js' ChatOpenAI span writes it in output.value.
func lcResult(calls string) string {
	return `{"generations":[[{"text":"I'll run it.","message":{"lc":1,"type":"constructor","id":["langchain_core","messages","AIMessage"],` +
		`"kwargs":{"id":"chatcmpl-mock-1","content":"I'll run it.","additional_kwargs":{"tool_calls":[]},"type":"ai","tool_calls":` + calls +
		`,"invalid_tool_calls":[]}},"generationInfo":{"finish_reason":"tool_calls"}}]],"llmOutput":{"tokenUsage":{"promptTokens":800}}}`
}

// lcToolMessage is a TOOL span's output.value holding a ToolMessage with kwargs (JSON text
// of its members after status).
func lcToolMessage(kwargs string) string {
	return `{"output":{"lc":1,"type":"constructor","id":["langchain_core","messages","ToolMessage"],"kwargs":{"status":"success"` + kwargs + `}}}`
}

// lcMatch is the match hash of a LangChain use of tool with the JSON arguments args, in
// trace Trace.
func lcMatch(tool, args string) uint64 {
	return dialect.InTrace(matchLangChain(tool, []byte(args)), testTrace)
}

func TestExtractLangChainLLMSpan(t *testing.T) {
	step := pairing.GroupStep(testTrace.String(), testSpan.String())
	boundary := dialect.Item{Kind: pairing.KindBoundary, Time: 10, Step: step}
	llm := func(outputValue string, more map[string]any) map[string]any {
		a := map[string]any{
			"openinference.span.kind": "LLM",
			"output.mime_type":        "application/json",
			"output.value":            outputValue,
			// As LangGraph.js writes them: the flattened call without its ID.
			"llm.output_messages.0.message.tool_calls.0.tool_call.function.name":      "run_shell",
			"llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": `{"command": "echo hello"}`,
		}
		for k, v := range more {
			a[k] = v
		}
		return a
	}
	tests := []struct {
		name      string
		attrs     map[string]any
		items     []dialect.Item
		malformed []string
	}{
		{
			name:  "LangGraph.js ChatOpenAI: the call from output.value, its one string argument hashed as that string",
			attrs: llm(lcResult(`[{"name":"run_shell","args":{"command":"echo hello"},"type":"tool_call","id":"call_mock_normal_01"}]`), nil),
			items: []dialect.Item{boundary, {Kind: pairing.KindUse, CallID: "call_mock_normal_01", ToolName: "run_shell", Time: 20, Step: step,
				Match: dialect.InTrace(dialect.MatchAny("run_shell", "echo hello"), testTrace)}},
		},
		{
			name: "two calls, two arguments, an escaped ID, no args, the last of a repeated key",
			attrs: llm(lcResult(`[{"name":"run_shell","args":{"command":"ls","timeout_ms":2000},"id":"c\u0031"},`+
				`{"name":"read_file","id":"old","id":"c2"}]`), nil),
			items: []dialect.Item{boundary,
				{Kind: pairing.KindUse, CallID: "c1", ToolName: "run_shell", Time: 20, Step: step, Match: dialecttest.Match(t, "run_shell", `{"timeout_ms":2e3,"command":"ls"}`)},
				{Kind: pairing.KindUse, CallID: "c2", ToolName: "read_file", Time: 20, Step: step, Match: dialecttest.Match(t, "read_file", `{}`)},
			},
		},
		{
			name: "IDs missing, empty, null, not a string; an entry not an object; a name not a string",
			attrs: llm(lcResult(`[{"name":"a","args":{}},{"name":"b","id":""},{"name":"c","id":null},{"name":"d","id":7},"x",3,`+
				`{"name":5,"args":{"n":1},"id":"ok"}]`), nil),
			items:     []dialect.Item{boundary, {Kind: pairing.KindUse, CallID: "ok", Time: 20, Step: step, Match: dialecttest.Match(t, "", `{"n":1}`)}},
			malformed: []string{dialect.ReasonInvalidType, dialect.ReasonMissingCallID, dialect.ReasonMissingCallID, dialect.ReasonNullCallID, dialect.ReasonInvalidCallID},
		},
		{
			name: "every generation of the first set, none of the others",
			attrs: llm(`{"generations":[[{"message":{"kwargs":{"tool_calls":[{"name":"t","id":"g0"}]}}},`+
				`{"message":{"kwargs":{"tool_calls":[{"name":"t","id":"g1"}]}}}],[{"message":{"kwargs":{"tool_calls":[{"name":"t","id":"other"}]}}}]]}`, nil),
			items: []dialect.Item{boundary,
				{Kind: pairing.KindUse, CallID: "g0", ToolName: "t", Time: 20, Step: step, Match: lcMatch("t", `{}`)},
				{Kind: pairing.KindUse, CallID: "g1", ToolName: "t", Time: 20, Step: step, Match: lcMatch("t", `{}`)},
			},
		},
		{
			name:  "a final answer: no tool calls, and the flattened attributes are not read",
			attrs: llm(lcResult(`[]`), nil),
			items: []dialect.Item{boundary},
		},
		{
			name:  "echoes are still read from the flattened input messages",
			attrs: llm(lcResult(`[]`), map[string]any{"llm.input_messages.3.message.tool_call_id": "c0"}),
			items: []dialect.Item{boundary, {Kind: pairing.KindEcho, CallID: "c0", Time: 10}},
		},
		{
			name:      "output.value as text: the flattened attributes, whose call has no ID",
			attrs:     llm(lcResult(`[{"name":"run_shell","id":"c1"}]`), map[string]any{"output.mime_type": "text/plain"}),
			items:     []dialect.Item{boundary},
			malformed: []string{dialect.ReasonMissingCallID},
		},
		{
			name: "another instrumentation's output (the OpenAI Agents SDK's response): the flattened attributes",
			attrs: llm(`{"id":"resp_1","object":"response","output":[{"type":"function_call","call_id":"c9"}]}`,
				map[string]any{"llm.output_messages.0.message.tool_calls.0.tool_call.id": "c9"}),
			items: []dialect.Item{boundary, {Kind: pairing.KindUse, CallID: "c9", ToolName: "run_shell", Time: 20, Step: step,
				Match: dialecttest.Match(t, "run_shell", `{"command":"echo hello"}`)}},
		},
		{
			name:  "a message without kwargs is not LangChain's",
			attrs: llm(`{"generations":[[{"message":{"content":"hi"}}]]}`, map[string]any{"llm.output_messages.0.message.tool_calls.0.tool_call.id": "c9"}),
			items: []dialect.Item{boundary, {Kind: pairing.KindUse, CallID: "c9", ToolName: "run_shell", Time: 20, Step: step,
				Match: dialecttest.Match(t, "run_shell", `{"command":"echo hello"}`)}},
		},
		{
			name:      "output.value an object that is not JSON: reported, then the flattened attributes",
			attrs:     llm(`{"generations":[[{"message":{"kwargs":{"tool_calls":[{"id" "c1"}]}}}]]}`, nil),
			items:     []dialect.Item{boundary},
			malformed: []string{dialect.ReasonInvalidJSON, dialect.ReasonMissingCallID},
		},
		{
			name:      "output.value not JSON at all: not LangChain's, not reported",
			attrs:     llm(`not json`, nil),
			items:     []dialect.Item{boundary},
			malformed: []string{dialect.ReasonMissingCallID},
		},
		{
			name:      "output.value not a string",
			attrs:     llm("", map[string]any{"output.value": int64(3)}),
			items:     []dialect.Item{boundary},
			malformed: []string{dialect.ReasonMissingCallID},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := dialecttest.NewSpan(t, "ChatOpenAI", tt.attrs, false)
			var f dialect.Found
			assert.True(t, ExtractSpan(s, &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}

func TestExtractLangChainToolSpan(t *testing.T) {
	tool := func(more map[string]any) map[string]any {
		a := map[string]any{"openinference.span.kind": "TOOL", "tool.name": "run_shell", "input.value": "echo hello", "input.mime_type": "text/plain"}
		for k, v := range more {
			a[k] = v
		}
		return a
	}
	withOutput := func(v string) map[string]any {
		return tool(map[string]any{"output.mime_type": "application/json", "output.value": v})
	}
	match := lcMatch("run_shell", `{"command":"echo hello"}`)
	tests := []struct {
		name      string
		attrs     map[string]any
		code      ptrace.StatusCode
		msg       string
		items     []dialect.Item
		malformed []string
	}{
		{
			name:  "LangGraph.js: the ToolMessage's tool_call_id",
			attrs: withOutput(lcToolMessage(`,"content":"hello\n","tool_call_id":"call_mock_normal_01","name":"run_shell"`)),
			items: []dialect.Item{{Kind: pairing.KindResult, CallID: "call_mock_normal_01", ToolName: "run_shell", Time: 20}},
		},
		{
			name:  "a ToolMessage with status error: a failed tool, a result",
			attrs: withOutput(`{"output":{"kwargs":{"status":"error","content":"Error: boom","tool_call_id":"c1"}}}`),
			items: []dialect.Item{{Kind: pairing.KindResult, CallID: "c1", ToolName: "run_shell", Time: 20}},
		},
		{
			name:  "a ToolMessage on a span that reports its abort",
			attrs: withOutput(lcToolMessage(`,"tool_call_id":"c1"`)),
			code:  ptrace.StatusCodeError, msg: "interrupted by SIGINT",
			items: []dialect.Item{{Kind: pairing.KindAbort, CallID: "c1", ToolName: "run_shell", Time: 20}},
		},
		{
			name:  "an ID attribute first",
			attrs: tool(map[string]any{"tool_call.id": "attr", "output.mime_type": "application/json", "output.value": lcToolMessage(`,"tool_call_id":"c1"`)}),
			items: []dialect.Item{{Kind: pairing.KindResult, CallID: "attr", ToolName: "run_shell", Time: 20}},
		},
		{
			name:  "LangGraph.js interrupted: no output, status interrupted by SIGTERM: a match marked aborted",
			attrs: tool(nil),
			code:  ptrace.StatusCodeError, msg: "interrupted by SIGTERM\n\nError: interrupted by SIGTERM\n    at process.<anonymous> (file:///srv/agent.mjs:42:22)",
			items: []dialect.Item{{Kind: pairing.KindMatch, ToolName: "run_shell", Time: 20, Match: match, Abort: true}},
		},
		{
			name:  "LangGraph.js failed tool: no output, status Error: a match",
			attrs: tool(nil),
			code:  ptrace.StatusCodeError, msg: "Command failed: exit 1",
			items: []dialect.Item{{Kind: pairing.KindMatch, ToolName: "run_shell", Time: 20, Match: match}},
		},
		{
			name:  "two arguments: JSON input, keys in another order",
			attrs: tool(map[string]any{"input.value": `{"timeout_ms":2000,"command":"sleep 5"}`, "input.mime_type": "application/json"}),
			items: []dialect.Item{{Kind: pairing.KindMatch, ToolName: "run_shell", Time: 20, Match: lcMatch("run_shell", `{"command":"sleep 5","timeout_ms":2000}`)}},
		},
		{
			name:      "tool_call_id null: reported, then a match",
			attrs:     withOutput(lcToolMessage(`,"tool_call_id":null`)),
			items:     []dialect.Item{{Kind: pairing.KindMatch, ToolName: "run_shell", Time: 20, Match: match}},
			malformed: []string{dialect.ReasonNullCallID},
		},
		{
			name:      "tool_call_id empty",
			attrs:     withOutput(lcToolMessage(`,"tool_call_id":""`)),
			items:     []dialect.Item{{Kind: pairing.KindMatch, ToolName: "run_shell", Time: 20, Match: match}},
			malformed: []string{dialect.ReasonMissingCallID},
		},
		{
			name:  "a LangGraph Command, not a ToolMessage: a match",
			attrs: withOutput(`{"output":{"lc":1,"type":"constructor","id":["langgraph","Command"],"kwargs":{"update":{"messages":[{"kwargs":{"tool_call_id":"c1"}}]}}}}`),
			items: []dialect.Item{{Kind: pairing.KindMatch, ToolName: "run_shell", Time: 20, Match: match}},
		},
		{
			name:      "output.value an object that is not JSON: reported, then a match",
			attrs:     withOutput(`{"output":{"kwargs":{"tool_call_id" "c1"}}}`),
			items:     []dialect.Item{{Kind: pairing.KindMatch, ToolName: "run_shell", Time: 20, Match: match}},
			malformed: []string{dialect.ReasonInvalidJSON},
		},
		{
			name:  "output.value JSON but not an object (a tool's own JSON output): a match",
			attrs: withOutput(`[1,2]`),
			items: []dialect.Item{{Kind: pairing.KindMatch, ToolName: "run_shell", Time: 20, Match: match}},
		},
		{
			name:  "output.value as text: not read",
			attrs: tool(map[string]any{"output.mime_type": "text/plain", "output.value": lcToolMessage(`,"tool_call_id":"c1"`)}),
			items: []dialect.Item{{Kind: pairing.KindMatch, ToolName: "run_shell", Time: 20, Match: match}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := dialecttest.NewSpan(t, "run_shell", tt.attrs, false)
			s.Status().SetCode(tt.code)
			s.Status().SetMessage(tt.msg)
			var f dialect.Found
			assert.True(t, ExtractSpan(s, &f))
			assert.Equal(t, tt.items, f.Items)
			assert.Equal(t, tt.malformed, f.Malformed)
		})
	}
}

// TestLangChainMatchAgrees: the match hash of a use read from LangChain's output.value and
// that of the TOOL span of the same call, whose input.value LangChain writes as the one string
// argument's bare value (text/plain) or as the arguments' JSON (application/json), are equal;
// calls with other arguments hash differently.
func TestLangChainMatchAgrees(t *testing.T) {
	tests := []struct {
		args, input, mime string
	}{
		{`{"command":"echo hello"}`, "echo hello", "text/plain"},
		{`{"command":"echo start; sleep 20; echo done"}`, "echo start; sleep 20; echo done", "text/plain"},
		{`{"file_path":"/srv/notes.txt"}`, "/srv/notes.txt", "text/plain"},
		{`{"q":"42"}`, "42", "text/plain"},
		{`{"q":"{\"a\":1}"}`, `{"a":1}`, "text/plain"},
		{`{"q":""}`, "", "text/plain"},
		{`{"command":"sleep 5","timeout_ms":2000}`, `{"timeout_ms":2000,"command":"sleep 5"}`, "application/json"},
		{`{"n":5}`, `{"n":5}`, "application/json"},
		{`{}`, `{}`, "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			s := dialecttest.NewSpan(t, "run_shell", map[string]any{
				"openinference.span.kind": "TOOL", "tool.name": "run_shell", "input.value": tt.input, "input.mime_type": tt.mime,
			}, false)
			var f dialect.Found
			require.True(t, ExtractSpan(s, &f))
			require.Len(t, f.Items, 1)
			assert.Equal(t, lcMatch("run_shell", tt.args), f.Items[0].Match)
			assert.NotEqual(t, lcMatch("read_file", tt.args), f.Items[0].Match, "another tool")
			assert.NotEqual(t, lcMatch("run_shell", `{"command":"other","x":1}`), f.Items[0].Match, "other arguments")
		})
	}
}

// refLangChainCalls is langChainCalls written with encoding/json, the reference the scanner is
// checked against on valid JSON: the calls (ID, malformed reason, name, match hash),
// recognised and wrong.
func refLangChainCalls(data []byte) (calls [][4]any, recognised, wrong bool) {
	var top any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dec.Decode(&top) != nil {
		return nil, false, false
	}
	obj := func(v any, k string) any {
		m, _ := v.(map[string]any)
		return m[k]
	}
	sets, _ := obj(top, "generations").([]any)
	if len(sets) == 0 {
		return nil, false, false
	}
	set, _ := sets[0].([]any)
	for _, gen := range set {
		tc, ok := obj(obj(obj(gen, "message"), "kwargs"), "tool_calls").([]any)
		if !ok {
			continue
		}
		recognised = true
		for _, el := range tc {
			m, ok := el.(map[string]any)
			if !ok {
				wrong = true
				continue
			}
			var id, bad string
			switch v, present := m["id"]; {
			case !present:
				bad = dialect.ReasonMissingCallID
			case v == nil:
				bad = dialect.ReasonNullCallID
			default:
				s, isStr := v.(string)
				switch {
				case !isStr:
					bad = dialect.ReasonInvalidCallID
				case s == "":
					bad = dialect.ReasonMissingCallID
				default:
					id = s
				}
			}
			name, _ := m["name"].(string)
			var h uint64
			if args, present := m["args"]; present {
				raw, err := json.Marshal(args)
				if err != nil {
					panic(err)
				}
				h = matchLangChain(name, raw)
			} else {
				h = matchLangChain(name, nil)
			}
			calls = append(calls, [4]any{id, bad, name, h})
		}
	}
	return calls, recognised, wrong
}

// langChainSeeds returns the output.value of every LLM and TOOL span of the LangGraph.js
// captures, and small edge cases.
func langChainSeeds(t testing.TB) [][]byte {
	seeds := [][]byte{
		[]byte(lcResult(`[{"name":"a","args":{"x":"y"},"id":"c1"},{"name":"b","id":null},3]`)),
		[]byte(`{"generations":[[{"message":{"kwargs":{"tool_calls":[]}}}],[]]}`),
		[]byte(`{"generations":[]}`), []byte(`{"generations":[[1,{"message":2}]]}`), []byte(`{}`), []byte(`[]`), []byte(`"x"`),
		[]byte(`{"output":{"kwargs":{"tool_call_id":"c1"}}}`), []byte(`{"output":{"kwargs":{"tool_call_id":1}}}`),
		[]byte(`{"generations":[[{"message":{"kwargs":{"tool_calls":[{"id":"a\u00e9","name":"n\"","args":[1,{"b":"c"}]}]}}}]]}`),
	}
	for _, p := range []string{"normal", "interrupt_sigterm"} {
		file := dialecttest.Testdata("langgraph", p, "traces.json")
		if _, err := os.Stat(file); err != nil {
			t.Fatal(err)
		}
		td, err := golden.ReadTraces(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range dialecttest.SpansOf(td) {
			if v, ok := s.Attributes().Get("output.value"); ok {
				seeds = append(seeds, []byte(v.Str()))
			}
		}
	}
	return seeds
}

// TestLangChainCallsIsItsReference: on the captures' output values and edge cases, the
// scanner finds what encoding/json finds.
func TestLangChainCallsIsItsReference(t *testing.T) {
	for _, data := range langChainSeeds(t) {
		checkLangChainCalls(t, data)
	}
}

func checkLangChainCalls(t *testing.T, data []byte) {
	t.Helper()
	calls, recognised, invalid, wrong := langChainCalls(data, nil)
	valid := json.Valid(data) && utf8.Valid(data)
	if invalid {
		require.False(t, valid, "valid JSON reported invalid: %q", data)
		return
	}
	if !valid {
		return // some invalid JSON inside skipped values is accepted (package jsonscan)
	}
	wantCalls, wantRecognised, wantWrong := refLangChainCalls(data)
	got := make([][4]any, 0, len(calls))
	for _, c := range calls {
		got = append(got, [4]any{c.id, c.bad, c.name, matchLangChain(c.name, c.args)})
	}
	if len(wantCalls) == 0 {
		wantCalls = [][4]any{}
	}
	require.Equal(t, wantRecognised, recognised, "%q", data)
	require.Equal(t, wantWrong, wrong, "%q", data)
	require.Equal(t, wantCalls, got, "%q", data)
	if id, bad, found := langChainToolCallID(data); found {
		require.True(t, bad != "" || id != "", "%q", data)
		var ref any
		require.NoError(t, json.Unmarshal(data, &ref))
		out, _ := ref.(map[string]any)["output"].(map[string]any)
		kw, _ := out["kwargs"].(map[string]any)
		if s, ok := kw["tool_call_id"].(string); ok && s != "" {
			require.Equal(t, s, id, "%q", data)
		} else {
			require.NotEmpty(t, bad, "%q", data)
		}
	}
}

// FuzzLangChainCalls: on any input the LangChain readers never panic, and on valid JSON they
// find what encoding/json finds.
func FuzzLangChainCalls(f *testing.F) {
	for _, s := range langChainSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkLangChainCalls(t, data)
		slices.Reverse(data) // and on the mirror image, which is rarely JSON
		langChainCalls(data, nil)
		langChainToolCallID(data)
	})
}
