// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package timeout

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

func defaultNames(t *testing.T) *Names {
	t.Helper()
	n, err := NewNames([]string{`^claude_code\.compaction$`, `^openclaw\.compaction$`}, []string{`^claude_code\.compaction$`, `^openclaw\.compaction$`})
	require.NoError(t, err)
	return n
}

func TestMessage(t *testing.T) {
	for _, s := range []string{
		"Request timed out.",                       // Claude Code, OpenAI Agents SDK
		"The operation was aborted due to timeout", // Vercel AI SDK
		"idle timeout waiting for SSE",             // Codex
		"stream disconnected before completion: idle timeout waiting for SSE",
		"Command timed out after 2s",
		"TimeoutError",
		"context deadline exceeded",                     // Go
		"LLM idle timeout (6s): no response from model", // OpenClaw
		"api_timeout",                                   // Claude Code error_class
		"REQUEST TIMED OUT",
		"time out",
		"connect ETIMEDOUT 10.0.0.1:443", // Node
		"DeadlineExceeded",
	} {
		assert.True(t, Message(s), s)
	}
	for _, s := range []string{
		"",
		"Overloaded",
		"529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
		"http 503",
		"503 The server is overloaded or not ready yet.",
		"Shell command failed",
		"server_overload",
		"Command aborted: interrupted by SIGINT",
		"exception TypeError: fetch failed sending request",
		`{"tools":[{"parameters":{"properties":{"timeout_ms":{"type":"number"}}}}]}`, // a request's tool schema
		`{"timeoutMs":2000}`,
		"request_timeout_seconds",
	} {
		assert.False(t, Message(s), s)
	}
}

func TestErrorTypeAndStatusCode(t *testing.T) {
	for _, v := range []string{"timeout", "TimeoutError", "APITimeoutError", "DeadlineExceeded", "408", "504"} {
		assert.True(t, ErrorType(v), v)
	}
	for _, v := range []string{"", "tool_error", "AI_RetryError", "Error", "ApiError", "503", "529", "server_overload"} {
		assert.False(t, ErrorType(v), v)
	}
	for _, v := range []string{"408", "504", " 504"} {
		assert.True(t, StatusCode(v), v)
	}
	for _, v := range []string{"", "200", "429", "500", "503", "529", "4080"} {
		assert.False(t, StatusCode(v), v)
	}
}

func TestToolOutput(t *testing.T) {
	assert.True(t, ToolOutput("Exit code 143\nCommand timed out after 2s\nstart"))       // Claude Code
	assert.True(t, ToolOutput("start\n\n\nCommand timed out after 2 seconds"))           // pi
	assert.True(t, ToolOutput("Command timed out after 2 seconds. The command was ...")) // OpenClaw
	assert.False(t, ToolOutput("FAIL TestX: read tcp: i/o timeout"), "the command's own output is not read")
	assert.False(t, ToolOutput("grep: Command timed out"))
	assert.False(t, ToolOutput(""))
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		kind Kind
		f    pairing.InFlight
		want Phase
	}{
		{"a tool record is tool_execution", KindTool, pairing.InFlight{}, PhaseToolExecution},
		{"a tool record is tool_execution even with a model call in flight", KindTool, pairing.InFlight{Model: true}, PhaseToolExecution},
		{"a model call is provider", KindModel, pairing.InFlight{}, PhaseProvider},
		{"a model call is provider even with tools in flight", KindModel, pairing.InFlight{Tools: 2}, PhaseProvider},
		{"a compaction record is compaction", KindCompaction, pairing.InFlight{}, PhaseCompaction},
		{"turn with a tool in flight", KindOther, pairing.InFlight{Tools: 1, Model: true, Compaction: true}, PhaseToolExecution},
		{"turn with two parallel calls", KindOther, pairing.InFlight{Tools: 2}, PhaseToolExecution},
		{"turn with a compaction in flight and no tool", KindOther, pairing.InFlight{Compaction: true, Model: true}, PhaseCompaction},
		{"turn with a model call in flight only", KindOther, pairing.InFlight{Model: true}, PhaseProvider},
		{"turn with nothing in flight", KindOther, pairing.InFlight{}, PhaseUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Classify(tt.kind, tt.f))
		})
	}
	assert.Equal(t, "tool_execution", PhaseToolExecution.String())
	assert.Equal(t, "provider", PhaseProvider.String())
	assert.Equal(t, "compaction", PhaseCompaction.String())
	assert.Equal(t, "unknown", PhaseUnknown.String())
	assert.Empty(t, PhaseNone.String())
}

// TestCompactionNames: exact patterns (looked up in a set) and regular expressions answer the
// same way.
func TestCompactionNames(t *testing.T) {
	n, err := NewNames([]string{`^claude_code\.compaction$`, `compact(ion)?$`, `(?i)^OPENCLAW\.COMPACTION$`}, []string{`^a\.b$`})
	require.NoError(t, err)
	for _, name := range []string{"claude_code.compaction", "my.compact", "x.compaction", "openclaw.compaction"} {
		assert.True(t, n.CompactionSpan(name), name)
	}
	for _, name := range []string{"", "claude_code.compaction.x", "xclaude_code.compaction2", "run_pre_sampling_compact_", "a.b"} {
		assert.False(t, n.CompactionSpan(name), name)
	}
	assert.True(t, n.CompactionEvent("a.b"))
	assert.False(t, n.CompactionEvent("aXb"), "the dot is escaped")
	assert.False(t, n.CompactionEvent("a.b\n"))
	lit, ok := exactLiteral(`^claude_code\.compaction$`)
	assert.True(t, ok)
	assert.Equal(t, "claude_code.compaction", lit)
	for _, p := range []string{`claude_code\.compaction`, `^a.b$`, `(?i)^ab$`, `^ab`, `^a|b$`} {
		_, ok := exactLiteral(p)
		assert.False(t, ok, p)
	}
}

func TestNewNamesRefusesBadPattern(t *testing.T) {
	_, err := NewNames([]string{"ok", "("}, nil)
	var pe *PatternError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 1, pe.Index)
	_, err = NewNames(nil, []string{"[z-a]"})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 0, pe.Index)
}

// TestSpan: the span shapes of the corpus captures (see shared/corpus/README.md) and the
// semantic conventions.
func TestSpan(t *testing.T) {
	type exception struct{ typ, msg string }
	tests := []struct {
		name      string
		span      string
		attrs     map[string]any
		status    ptrace.StatusCode
		message   string
		exception *exception
		timeout   bool
		kind      Kind
	}{
		{
			name: "AI SDK chat aborted by its timeout", span: "chat gpt-4.1-mini",
			attrs:  map[string]any{"gen_ai.operation.name": "chat"},
			status: ptrace.StatusCodeError, message: "The operation was aborted due to timeout",
			exception: &exception{"TimeoutError", "The operation was aborted due to timeout"},
			timeout:   true, kind: KindModel,
		},
		{
			name: "exception event type alone", span: "chat m",
			attrs:  map[string]any{"gen_ai.operation.name": "chat"},
			status: ptrace.StatusCodeError, message: "aborted",
			exception: &exception{"TimeoutError", "aborted"},
			timeout:   true, kind: KindModel,
		},
		{
			name: "AI SDK step and agent spans", span: "step 2",
			attrs:  map[string]any{"gen_ai.operation.name": "agent_step"},
			status: ptrace.StatusCodeError, message: "The operation was aborted due to timeout",
			timeout: true, kind: KindOther,
		},
		{
			name: "AI SDK 503 after retries", span: "chat gpt-4.1-mini",
			attrs:  map[string]any{"gen_ai.operation.name": "chat", "http.response.status_code": int64(503)},
			status: ptrace.StatusCodeError, message: "Failed after 3 attempts. Last error: AI_APICallError: Service Unavailable",
			exception: &exception{"AI_RetryError", "Failed after 3 attempts."},
			kind:      KindModel,
		},
		{
			name: "Claude Code llm_request timeout", span: "claude_code.llm_request",
			attrs:  map[string]any{"error_class": "api_timeout", "error": "Request timed out.", "success": false},
			status: ptrace.StatusCodeError, message: "Request timed out.",
			timeout: true, kind: KindModel,
		},
		{
			name: "Claude Code error_class api_timeout alone", span: "claude_code.llm_request",
			attrs:   map[string]any{"error_class": "api_timeout"},
			timeout: true, kind: KindModel,
		},
		{
			name: "Claude Code 529 overloaded is not a timeout", span: "claude_code.llm_request",
			attrs:  map[string]any{"status_code": "529", "error": "Overloaded", "error_class": "server_overload"},
			status: ptrace.StatusCodeError, message: "Overloaded",
			kind: KindModel,
		},
		{
			name: "Claude Code shell failure is not a timeout", span: "claude_code.tool.execution",
			attrs:  map[string]any{"error.type": "tool_error", "error": "Shell command failed", "error_class": "ShellError", "tool_use_id": "toolu_1"},
			status: ptrace.StatusCodeError, message: "Shell command failed",
			kind: KindTool,
		},
		{
			name: "AI SDK tool timeout", span: "execute_tool run_shell",
			attrs:  map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "call_1"},
			status: ptrace.StatusCodeError, message: "Command timed out after 2000 ms; partial output: start",
			timeout: true, kind: KindTool,
		},
		{
			name: "error.type timeout", span: "invoke_agent a",
			attrs:   map[string]any{"gen_ai.operation.name": "invoke_agent", "error.type": "timeout"},
			timeout: true, kind: KindOther,
		},
		{
			name: "HTTP 504 as int", span: "POST",
			attrs:   map[string]any{"http.response.status_code": int64(504)},
			timeout: true, kind: KindOther,
		},
		{
			name: "HTTP 408 as string in the old key", span: "POST",
			attrs:   map[string]any{"http.status_code": "408"},
			timeout: true, kind: KindOther,
		},
		{
			name: "a status message is read only on an Error status", span: "chat m",
			attrs:  map[string]any{"gen_ai.operation.name": "chat"},
			status: ptrace.StatusCodeOk, message: "timed out",
			kind: KindModel,
		},
		{
			name: "Codex sampling span (never Error)", span: "codex.sampling",
			attrs: map[string]any{"conversation.id": "c"},
			kind:  KindModel,
		},
		{
			name: "Codex span named after the tool", span: "exec_command",
			attrs: map[string]any{"call_id": "call_1", "codex.tool.phase": "dispatch"},
			kind:  KindTool,
		},
		{
			name: "Codex pre-sampling compaction check is not a compaction", span: "run_pre_sampling_compact",
			kind: KindOther,
		},
		{
			name: "Claude Code compaction span", span: "claude_code.compaction",
			kind: KindCompaction,
		},
		{
			name: "OpenInference LLM span", span: "response",
			attrs:  map[string]any{"openinference.span.kind": "LLM"},
			status: ptrace.StatusCodeError, message: "Request timed out.",
			timeout: true, kind: KindModel,
		},
		{
			name: "OpenInference tool span", span: "run_shell",
			attrs: map[string]any{"openinference.span.kind": "TOOL"},
			kind:  KindTool,
		},
		{
			name: "OpenLLMetry model call", span: "openai.chat",
			attrs:   map[string]any{"llm.request.type": "chat", "error.type": "APITimeoutError"},
			timeout: true, kind: KindModel,
		},
		{
			name: "OpenLLMetry tool", span: "run_shell.tool",
			attrs: map[string]any{"traceloop.span.kind": "tool"},
			kind:  KindTool,
		},
		{
			name: "Gemini CLI llm_call fetch failure is not a timeout", span: "llm_call",
			attrs:  map[string]any{"gen_ai.operation.name": "llm_call"},
			status: ptrace.StatusCodeError, message: "exception TypeError: fetch failed sending request",
			kind: KindModel,
		},
	}
	n := defaultNames(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ptrace.NewSpan()
			s.SetName(tt.span)
			s.SetStartTimestamp(1_000)
			s.SetEndTimestamp(2_000)
			require.NoError(t, s.Attributes().FromRaw(tt.attrs))
			s.Status().SetCode(tt.status)
			s.Status().SetMessage(tt.message)
			if tt.exception != nil {
				e := s.Events().AppendEmpty()
				e.SetName("exception")
				e.Attributes().PutStr("exception.type", tt.exception.typ)
				e.Attributes().PutStr("exception.message", tt.exception.msg)
			}
			r := n.Span(s)
			requireResultAgrees(t, r, resultOfSpan(n, s))
			assert.Equal(t, tt.timeout, r.Timeout)
			assert.Equal(t, tt.kind.String(), r.Kind.String())
			assert.Equal(t, int64(1_000), r.Start)
			assert.Equal(t, int64(2_000), r.End)
		})
	}
}

// TestLog: the log event shapes of the corpus captures.
func TestLog(t *testing.T) {
	const at = int64(1_795_323_345_000_000_000)
	tests := []struct {
		name      string
		body      any
		eventName string
		attrs     map[string]any
		timeout   bool
		kind      Kind
		start     int64
	}{
		{
			name: "Codex SSE idle timeout", body: nil,
			attrs:   map[string]any{"event.name": "codex.sse_event", "duration_ms": "6001", "error.message": "idle timeout waiting for SSE"},
			timeout: true, kind: KindModel, start: at - 6001e6,
		},
		{
			name: "Codex stream disconnected after the idle timeout",
			attrs: map[string]any{"event.name": "codex.sse_event", "event.kind": "response.completed",
				"error.message": "stream disconnected before completion: idle timeout waiting for SSE"},
			timeout: true, kind: KindModel,
		},
		{
			name:  "Codex 503 is not a timeout",
			attrs: map[string]any{"event.name": "codex.api_request", "http.response.status_code": int64(503), "error.message": "http 503", "duration_ms": "9"},
			kind:  KindModel, start: at - 9e6,
		},
		{
			name:  "Codex api_request 200 before the stall",
			attrs: map[string]any{"event.name": "codex.api_request", "http.response.status_code": "200"},
			kind:  KindModel,
		},
		{
			name: "Claude Code api_error timeout", body: "claude_code.api_error",
			attrs:   map[string]any{"event.name": "api_error", "error": "Request timed out.", "duration_ms": int64(6007), "attempt": int64(3)},
			timeout: true, kind: KindModel, start: at - 6007e6,
		},
		{
			name: "Claude Code api_retries_exhausted timeout", body: "claude_code.api_retries_exhausted",
			attrs:   map[string]any{"event.name": "api_retries_exhausted", "error": "Request timed out."},
			timeout: true, kind: KindModel,
		},
		{
			name: "Claude Code 529 overloaded is not a timeout", body: "claude_code.api_error",
			attrs: map[string]any{"event.name": "api_error", "error": "Overloaded", "status_code": "529"},
			kind:  KindModel,
		},
		{
			name: "Claude Code tool_result failure", body: "claude_code.tool_result",
			attrs: map[string]any{"event.name": "tool_result", "tool_use_id": "toolu_1", "success": "false", "error": "Shell command failed", "duration_ms": "2035"},
			kind:  KindTool, start: at - 2035e6,
		},
		{
			name: "Claude Code compaction event", body: "claude_code.compaction",
			attrs: map[string]any{"event.name": "compaction", "duration_ms": "40000", "success": "true"},
			kind:  KindCompaction, start: at - 40e9,
		},
		{
			name: "OTLP EventName", eventName: "gemini_cli.api_error",
			attrs:   map[string]any{"error.type": "TimeoutError", "status_code": ""},
			timeout: true, kind: KindModel,
		},
		{
			name:  "Gemini CLI 503",
			attrs: map[string]any{"event.name": "gemini_cli.api_error", "status_code": int64(503), "http.status_code": int64(503), "error.type": "ApiError"},
			kind:  KindModel,
		},
		{
			name: "a sentence body is not an event name", body: "Request timed out while doing x",
			kind: KindOther,
		},
	}
	n := defaultNames(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := plog.NewLogRecord()
			lr.SetObservedTimestamp(pcommon.Timestamp(at))
			lr.SetEventName(tt.eventName)
			if tt.body != nil {
				require.NoError(t, lr.Body().FromRaw(tt.body))
			}
			require.NoError(t, lr.Attributes().FromRaw(tt.attrs))
			r := n.Log(lr)
			requireResultAgrees(t, r, resultOfLog(n, lr, dialect.LineUnread))
			assert.Equal(t, tt.timeout, r.Timeout)
			assert.Equal(t, tt.kind.String(), r.Kind.String())
			assert.Equal(t, at, r.End)
			assert.Equal(t, tt.start, r.Start)
		})
	}
}

// TestTranscriptLine: transcript lines of the corpus (Claude Code, pi, OpenClaw), as string
// bodies and as parsed maps.
func TestTranscriptLine(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		timeout bool
		kind    Kind
		scope   string
		end     int64 // Unix ns, checked when set
	}{
		{
			name:    "Claude Code Bash timeout (tool_timeout_nobg)",
			line:    `{"type":"user","sessionId":"s1","timestamp":"2026-11-22T04:54:20.481Z","message":{"role":"user","content":[{"type":"tool_result","content":"Exit code 143\nCommand timed out after 2s\nstart","is_error":true,"tool_use_id":"toolu_1"}]}}`,
			timeout: true, kind: KindTool, scope: "s1",
		},
		{
			name:    "Claude Code subagent line, content as text parts",
			line:    `{"type":"user","sessionId":"s1","agentId":"a7","timestamp":"2026-11-22T04:54:20.481Z","message":{"content":[{"type":"tool_result","content":[{"type":"text","text":"Command timed out after 2m"}],"is_error":true,"tool_use_id":"toolu_1"}]}}`,
			timeout: true, kind: KindTool, scope: "s1/a7",
		},
		{
			name: "Claude Code successful output mentioning a timeout",
			line: `{"type":"user","sessionId":"s1","timestamp":"2026-11-22T04:54:20.481Z","message":{"content":[{"type":"tool_result","content":"Command timed out after 2s (in the log we grepped)","is_error":false,"tool_use_id":"toolu_1"}]}}`,
		},
		{
			name: "Claude Code api-request-blob repeating the result is not a result line",
			line: `{"type":"api-request-blob","sessionId":"s1","message":{"role":"user","content":[{"type":"tool_result","content":"Exit code 143\nCommand timed out after 2s","is_error":true,"tool_use_id":"toolu_1"}]}}`,
		},
		{
			name:    "Claude Code system api_error timeout",
			line:    `{"type":"system","subtype":"api_error","level":"error","error":{"message":"Request timed out.","status":null},"sessionId":"s1","timestamp":"2026-11-22T04:54:51.724Z"}`,
			timeout: true, kind: KindModel, scope: "s1",
		},
		{
			name:    "Claude Code system api_error 504",
			line:    `{"type":"system","subtype":"api_error","error":{"message":"504 Gateway Time-out","status":504},"sessionId":"s1","timestamp":"2026-11-22T04:54:51.724Z"}`,
			timeout: true, kind: KindModel, scope: "s1",
		},
		{
			name:    "a 504 whose message spells no timeout",
			line:    `{"type":"system","subtype":"api_error","error":{"message":"Bad gateway","status":504},"sessionId":"s1","timestamp":"2026-11-22T04:54:51.724Z"}`,
			timeout: true, kind: KindModel, scope: "s1",
		},
		{
			name:    "a 408 as a string whose message spells no timeout",
			line:    `{"type":"system","subtype":"api_error","error":{"message":"Request Time-limit","status":"408"},"sessionId":"s1","timestamp":"2026-11-22T04:54:51.724Z"}`,
			timeout: true, kind: KindModel, scope: "s1",
		},
		{
			name: "a 502 with 504 in its request ID is decoded and is no timeout",
			line: `{"type":"system","subtype":"api_error","error":{"message":"Bad gateway","status":502,"requestId":"req_5045"},"sessionId":"s1","timestamp":"2026-11-22T04:54:51.724Z"}`,
		},
		{
			name: "Claude Code system api_error 529",
			line: `{"type":"system","subtype":"api_error","error":{"message":"529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}","status":529},"sessionId":"s1","timestamp":"2026-11-22T04:54:51.724Z"}`,
		},
		{
			name:    "Claude Code synthetic API error message",
			line:    `{"type":"assistant","isApiErrorMessage":true,"sessionId":"s1","timestamp":"2026-11-22T04:54:53.297Z","message":{"content":[{"type":"text","text":"API Error: Request timed out."}]}}`,
			timeout: true, kind: KindModel, scope: "s1",
		},
		{
			name:    "pi bash timeout",
			line:    `{"type":"message","id":"1","timestamp":"2026-11-22T05:53:26.756Z","message":{"role":"toolResult","toolCallId":"toolu_1","toolName":"bash","content":[{"type":"text","text":"start\n\n\nCommand timed out after 2 seconds"}],"details":{},"isError":true,"timestamp":1795326806750}}`,
			timeout: true, kind: KindTool, end: 1795326806750 * 1e6, // the message's own time

		},
		{
			name:    "OpenClaw exec timeout (structured)",
			line:    `{"type":"message","id":"1","timestamp":"2026-11-22T05:55:08.068Z","message":{"role":"toolResult","toolCallId":"toolu_1","toolName":"exec","content":[{"type":"text","text":"killed"}],"isError":true,"details":{"status":"failed","timedOut":true,"failureKind":"overall-timeout"}}}`,
			timeout: true, kind: KindTool,
		},
		{
			name:    "pi model timeout",
			line:    `{"type":"message","id":"2","timestamp":"2026-11-22T05:53:26.756Z","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"Request timed out."}}`,
			timeout: true, kind: KindModel,
		},
		{
			name:    "OpenClaw idle timeout",
			line:    `{"type":"message","id":"2","timestamp":"2026-11-22T05:53:26.756Z","message":{"role":"assistant","content":[],"stopReason":"aborted","errorMessage":"LLM idle timeout (6s): no response from model"}}`,
			timeout: true, kind: KindModel,
		},
		{
			name: "pi 529",
			line: `{"type":"message","id":"2","timestamp":"2026-11-22T05:53:26.756Z","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}}`,
		},
		{
			name: "not JSON",
			line: `Request timed out`,
		},
		{
			name: "broken JSON",
			line: `{"type":"message","message":{"role":"assistant","stopReason":"error","errorMessage":"Request timed out`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(t *testing.T, body pcommon.Value) {
				r, ok := TranscriptLine(body)
				assert.Equal(t, tt.timeout, ok)
				assert.Equal(t, tt.timeout, r.Timeout)
				if tt.timeout {
					assert.Equal(t, tt.kind.String(), r.Kind.String())
					assert.Equal(t, tt.scope, r.Scope)
					assert.NotZero(t, r.End, "the line's timestamp")
					if tt.end != 0 {
						assert.Equal(t, tt.end, r.End)
					}
				}
			}
			t.Run("string", func(t *testing.T) { check(t, pcommon.NewValueStr(tt.line)) })
			var m map[string]any
			if err := jsonUnmarshal(tt.line, &m); err == nil {
				t.Run("map", func(t *testing.T) {
					v := pcommon.NewValueMap()
					require.NoError(t, v.Map().FromRaw(m))
					check(t, v)
				})
			}
		})
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
