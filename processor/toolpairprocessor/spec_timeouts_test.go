// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

// Specification section 4: which records are timeouts, and their phase.

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestContractS4Recognition: which records are timeouts. A record is a timeout when its
// error.type is one of the set, an HTTP status code is 408 or 504, or a status/error/exception
// message matches `timed? ?out|deadline exceeded` case-insensitively; a timeout record gets
// toolpair.timeout.phase, anything else nothing. The records are model call spans (phase
// provider) and Codex/Claude Code model-call log events, so only recognition is at stake.
func TestContractS4Recognition(t *testing.T) {
	chat := func(mod func(*ctSpan)) ctSpan {
		s := ctChat(1, 1, 0, 0, 100)
		mod(&s)
		return s
	}
	attr := func(kv ...any) func(*ctSpan) { return func(s *ctSpan) { *s = ctWith(*s, kv...) } }
	status := func(msg string) func(*ctSpan) {
		return func(s *ctSpan) { s.status, s.statusMessage = ptrace.StatusCodeError, msg }
	}
	spanTests := []struct {
		name    string
		span    ctSpan
		timeout bool
	}{
		{"error.type timeout", chat(attr("error.type", "timeout")), true},
		{"error.type TimeoutError", chat(attr("error.type", "TimeoutError")), true},
		{"error.type APITimeoutError", chat(attr("error.type", "APITimeoutError")), true},
		{"error.type DeadlineExceeded", chat(attr("error.type", "DeadlineExceeded")), true},
		{"error.type 408", chat(attr("error.type", "408")), true},
		{"error.type 504", chat(attr("error.type", "504")), true},
		{"error.type other", chat(attr("error.type", "tool_error")), false},
		{"error.type 500", chat(attr("error.type", "500")), false},
		{"http.response.status_code 408 (int)", chat(attr("http.response.status_code", int64(408))), true},
		{"http.response.status_code 504 (string)", chat(attr("http.response.status_code", "504")), true},
		{"http.status_code 504", chat(attr("http.status_code", int64(504))), true},
		{"status_code 408", chat(attr("status_code", "408")), true},
		{"http.response.status_code 429", chat(attr("http.response.status_code", int64(429))), false},
		{"http.response.status_code 503", chat(attr("http.response.status_code", int64(503))), false},
		{"http.response.status_code 529", chat(attr("http.response.status_code", "529")), false},
		{"http.response.status_code 200", chat(attr("http.response.status_code", int64(200))), false},
		{"status message timed out", chat(status("Request timed out.")), true},
		{"status message upper case", chat(status("REQUEST TIMED OUT")), true},
		{"status message timeout", chat(status("connect Timeout after 30s")), true},
		{"status message time out", chat(status("read time out")), true},
		{"status message deadline exceeded", chat(status("context Deadline Exceeded")), true},
		{"status message DEADLINE EXCEEDED", chat(status("rpc error: code = DEADLINE EXCEEDED")), true},
		{"status message other error", chat(status("overloaded_error")), false},
		{"status message naming a setting", chat(status(`invalid request: {"timeoutMs":2000,"request_timeout_seconds":5}`)), false},
		{"status message ETIMEDOUT", chat(status("connect ETIMEDOUT 10.0.0.1:443")), true},
		{"status message DeadlineExceeded", chat(status("rpc error: code = DeadlineExceeded")), true},
		{"error.message", chat(attr("error.message", "idle timeout waiting for SSE")), true},
		{"exception.message on an exception event", chat(func(s *ctSpan) {
			s.events = []ctEvent{{name: "exception", attrs: map[string]any{"exception.type": "Error", "exception.message": "The operation was aborted due to timeout"}}}
		}), true},
		{"exception.type on an exception event", chat(func(s *ctSpan) {
			s.events = []ctEvent{{name: "exception", attrs: map[string]any{"exception.type": "TimeoutError", "exception.message": "aborted"}}}
		}), true},
		{"fetch failed is not a timeout", chat(func(s *ctSpan) {
			s.status, s.statusMessage = ptrace.StatusCodeError, "fetch failed sending request"
			s.events = []ctEvent{{name: "exception", attrs: map[string]any{"exception.type": "TypeError", "exception.message": "fetch failed"}}}
		}), false},
		{"no error at all", chat(func(*ctSpan) {}), false},
	}
	for _, tt := range spanTests {
		t.Run("span/"+tt.name, func(t *testing.T) {
			r := newRig(t)
			r.spans(tt.span)
			out := r.outSpans()
			require.Len(t, out, 1)
			phase, ok := out[0].Attributes().Get("toolpair.timeout.phase")
			require.Equal(t, tt.timeout, ok, "timeout recognised")
			if ok {
				assert.Equal(t, "provider", phase.Str(), "a model call's timeout")
				n, ok := out[0].Attributes().Get("toolpair.timeout.active_tools")
				require.True(t, ok)
				assert.Equal(t, pcommon.ValueTypeInt, n.Type())
				assert.Equal(t, int64(1), r.sum("otelcol_processor_toolpair_timeouts", map[string]string{"toolpair.timeout.phase": "provider"}))
			}
		})
	}

	logTests := []struct {
		name   string
		record ctLog
		phase  string // "" when not a timeout
	}{
		{"Codex codex.sse_event idle timeout waiting for SSE", ctCodex("codex.sse_event", 100, 9, "event.kind", "response", "error.message", "idle timeout waiting for SSE", "duration_ms", "6000"), "provider"},
		{"Codex codex.api_request 504", ctCodex("codex.api_request", 100, 9, "http.response.status_code", "504", "duration_ms", "10"), "provider"},
		{"Codex codex.api_request 200", ctCodex("codex.api_request", 100, 9, "http.response.status_code", "200", "duration_ms", "10"), ""},
		{"Codex codex.tool_result timed out", ctCodex("codex.tool_result", 100, 9, "call_id", "call_t", "tool_name", "exec_command", "duration_ms", "50", "success", "false", "error.message", "command timed out"), "tool_execution"},
		{"Claude Code api_error Request timed out.", ctClaude("api_error", 100, "sess-1", "error", "Request timed out.", "status_code", "undefined", "duration_ms", "60000"), "provider"},
		{"Claude Code api_error 504", ctClaude("api_error", 100, "sess-1", "error", "upstream", "status_code", "504", "duration_ms", "60000"), "provider"},
		{"Claude Code api_error overloaded (529)", ctClaude("api_error", 100, "sess-1", "error", "Overloaded", "status_code", "529", "duration_ms", "900"), ""},
		{"Claude Code api_error error_class api_timeout", ctClaude("api_error", 100, "sess-1", "error_class", "api_timeout", "duration_ms", "60000"), "provider"},
		{"Claude Code tool_result Command timed out", ctClaude("tool_result", 100, "sess-1", "tool_use_id", "toolu_t", "tool_name", "Bash", "success", "false", "duration_ms", "120000", "error", "Command timed out after 2m 0s"), "tool_execution"},
		{"Claude Code tool_result Shell command failed", ctClaude("tool_result", 100, "sess-1", "tool_use_id", "toolu_t", "tool_name", "Bash", "success", "false", "duration_ms", "120000", "error", "Shell command failed"), ""},
		{"a gen_ai.choice with error.type DeadlineExceeded", ctLog{time: 100, body: "x", attrs: map[string]any{"event.name": "gen_ai.choice", "error.type": "DeadlineExceeded"}}, "provider"},
		{"a log record with exception.type TimeoutError", ctLog{time: 100, body: "boom", attrs: map[string]any{"exception.type": "TimeoutError", "exception.message": "x"}}, "unknown"},
		// VoltAgent's retry log: its error attribute holds the failed request's JSON, whose
		// tool schema names the timeout_ms argument, an identifier, not a timeout word.
		{"a VoltAgent-like retry log whose error holds a request with a timeout_ms schema", ctLog{time: 100, body: "[Agent:capture-agent] - Retrying generateText", attrs: map[string]any{
			"component": "agent", "agentId": "capture-agent", "attempt": int64(1),
			"error": `{"tools":[{"parameters":{"properties":{"timeout_ms":{"type":"number"}}}}]}`,
		}}, ""},
		{"a retry log whose error is a timeout", ctLog{time: 100, body: "[Agent:capture-agent] - Retrying generateText", attrs: map[string]any{
			"component": "agent", "agentId": "capture-agent", "error": "Request timed out.",
		}}, "unknown"},
		{"a transcript api_error line, status 504, no timeout text", ctLog{time: 100, body: `{"type":"system","subtype":"api_error","error":{"message":"Bad gateway","status":504},"sessionId":"sess-1","timestamp":"2026-11-22T04:54:51.724Z"}`}, "provider"},
		{"a transcript api_error line, status 502", ctLog{time: 100, body: `{"type":"system","subtype":"api_error","error":{"message":"Bad gateway","status":502,"requestId":"req_504"},"sessionId":"sess-1","timestamp":"2026-11-22T04:54:51.724Z"}`}, ""},
	}
	for _, tt := range logTests {
		t.Run("log/"+tt.name, func(t *testing.T) {
			r := newRig(t)
			r.logRecords(tt.record)
			r.advance(31 * time.Second) // a result without its use is held for orphan_grace
			out := r.outLogs()
			require.Len(t, out, 1)
			assert.Equal(t, tt.phase, ctStr(out[0].Attributes(), "toolpair.timeout.phase"))
		})
	}
}

// TestContractS4Phase: the phase and what was in flight, on GenAI spans of one trace (the
// scope): tool_execution for a tool record, or for an agent/turn-level record with a tool
// call of its scope in flight at its end; provider for a model call, or when a model call and
// no tool was in flight; compaction; unknown. active_tools counts calls once each;
// active_tool.* describe the most recently started call in flight.
func TestContractS4Phase(t *testing.T) {
	timedOut := func(s ctSpan) ctSpan {
		s.status, s.statusMessage = ptrace.StatusCodeError, "timed out"
		return s
	}
	tests := []struct {
		name  string
		spans []ctSpan
		check string // name of the span checked
		want  map[string]any
	}{
		{name: "agent timeout with two calls in flight", spans: []ctSpan{
			ctChat(1, 1, 7, 0, 100, "c1", "c2"), ctChat(1, 2, 7, 100, 300, "c3"), ctTool(1, 3, 7, "c3", 300, 400),
			timedOut(ctAgent(1, 7, 0, 0, 60_300)),
		}, check: "invoke_agent a", want: map[string]any{
			"toolpair.timeout.phase": "tool_execution", "toolpair.timeout.active_tools": int64(2),
			"toolpair.timeout.active_tool.name": "run_shell", "toolpair.timeout.active_tool.call_id": "c2",
			"toolpair.timeout.active_tool.elapsed_ms": int64(60_200),
		}},
		{name: "a call announced twice counts once", spans: []ctSpan{
			ctChat(1, 1, 7, 0, 100, "c1"), ctChat(1, 1, 7, 0, 100, "c1"),
			timedOut(ctAgent(1, 7, 0, 0, 5100)),
		}, check: "invoke_agent a", want: map[string]any{
			"toolpair.timeout.phase": "tool_execution", "toolpair.timeout.active_tools": int64(1),
			"toolpair.timeout.active_tool.name": "run_shell", "toolpair.timeout.active_tool.call_id": "c1",
			"toolpair.timeout.active_tool.elapsed_ms": int64(5000),
		}},
		{name: "the tool record's own timeout", spans: []ctSpan{
			ctChat(1, 1, 7, 0, 100, "c1"), ctWith(ctTool(1, 3, 7, "c1", 100, 2100), "error.type", "timeout"),
		}, check: "execute_tool run_shell", want: map[string]any{
			"toolpair.timeout.phase": "tool_execution", "toolpair.timeout.active_tools": int64(1),
			"toolpair.timeout.active_tool.name": "run_shell", "toolpair.timeout.active_tool.call_id": "c1",
			"toolpair.timeout.active_tool.elapsed_ms": int64(2000),
		}},
		{name: "a model call's timeout, a tool of the scope in flight too: provider", spans: []ctSpan{
			ctChat(1, 1, 7, 0, 100, "c1"), timedOut(ctChat(1, 2, 7, 200, 9000)),
		}, check: "chat m", want: map[string]any{
			"toolpair.timeout.phase": "provider", "toolpair.timeout.active_tools": int64(1),
			"toolpair.timeout.active_tool.name": "run_shell", "toolpair.timeout.active_tool.call_id": "c1",
			"toolpair.timeout.active_tool.elapsed_ms": int64(8900),
		}},
		{name: "agent timeout, the model call in flight and no tool: provider", spans: []ctSpan{
			ctChat(1, 1, 7, 0, 100, "c1"), ctTool(1, 3, 7, "c1", 100, 200), timedOut(ctChat(1, 2, 7, 300, 30_000)),
			timedOut(ctAgent(1, 7, 0, 0, 30_001)),
		}, check: "invoke_agent a", want: map[string]any{"toolpair.timeout.phase": "provider", "toolpair.timeout.active_tools": int64(0)}},
		{name: "agent timeout during a compaction: compaction", spans: []ctSpan{
			{trace: 1, id: 4, parent: 7, name: "claude_code.compaction", start: 100, end: 40_000},
			timedOut(ctAgent(1, 7, 0, 0, 40_000)),
		}, check: "invoke_agent a", want: map[string]any{"toolpair.timeout.phase": "compaction", "toolpair.timeout.active_tools": int64(0)}},
		{name: "agent timeout with nothing in flight: unknown", spans: []ctSpan{
			ctChat(1, 1, 7, 0, 100, "c1"), ctTool(1, 3, 7, "c1", 100, 200),
			timedOut(ctAgent(1, 7, 0, 0, 50_000)),
		}, check: "invoke_agent a", want: map[string]any{"toolpair.timeout.phase": "unknown", "toolpair.timeout.active_tools": int64(0)}},
		{name: "a call of another scope is not counted", spans: []ctSpan{
			ctChat(2, 1, 7, 0, 100, "c1"),
			timedOut(ctAgent(1, 7, 0, 0, 50_000)),
		}, check: "invoke_agent a", want: map[string]any{"toolpair.timeout.phase": "unknown", "toolpair.timeout.active_tools": int64(0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			r.spans(tt.spans...)
			var checked int
			for _, s := range r.outSpans() {
				if s.Name() != tt.check {
					continue
				}
				if _, ok := s.Attributes().Get("toolpair.timeout.phase"); !ok {
					continue
				}
				checked++
				got := map[string]any{}
				s.Attributes().Range(func(k string, v pcommon.Value) bool {
					if strings.HasPrefix(k, "toolpair.timeout.") {
						got[k] = v.AsRaw()
					}
					return true
				})
				assert.Equal(t, tt.want, got)
			}
			assert.Equal(t, 1, checked)
		})
	}
}

// TestContractS4Transcripts: the markers the agents write in their transcripts (section 8):
// Claude Code's and pi's `Command timed out` tool results and OpenClaw's details.timedOut make
// a tool_execution timeout, with the call in flight (the real captures are in timeouts_test.go).
func TestContractS4Transcripts(t *testing.T) {
	tests := []struct {
		name  string
		line  ctLog
		use   ctLog
		phase string
	}{
		{name: "Claude Code Bash Command timed out", use: ctLine("/p/s1.jsonl", ctClaudeUse("s1", "", "msg_1", "toolu_1", 100)),
			line: func() ctLog {
				l := ctClaudeResultLine("s1", "", "toolu_1", "Exit code 143\nCommand timed out after 2s", 2200)
				l["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["is_error"] = true
				return ctLine("/p/s1.jsonl", l)
			}(), phase: "tool_execution"},
		{name: "OpenClaw details.timedOut", use: ctLine("/oc/a.jsonl", ctPiUse("e1", "call_oc", 100)),
			line: ctLine("/oc/a.jsonl", func() map[string]any {
				l := ctPiResult("e2", "call_oc", 2200, map[string]any{"timedOut": true, "exitCode": nil})
				l["message"].(map[string]any)["isError"] = true
				return l
			}()), phase: "tool_execution"},
		{name: "pi Command timed out", use: ctLine("/pi/a.jsonl", ctPiUse("e1", "call_pi", 100)),
			line: ctLine("/pi/a.jsonl", func() map[string]any {
				l := ctPiResult("e2", "call_pi", 2200, nil)
				l["message"].(map[string]any)["isError"] = true
				l["message"].(map[string]any)["content"] = []any{map[string]any{"type": "text", "text": "partial\n\nCommand timed out after 2 seconds"}}
				return l
			}()), phase: "tool_execution"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			r.logRecords(tt.use, tt.line)
			out := r.outLogs()
			require.Len(t, out, 2)
			attrs := out[1].Attributes()
			assert.Equal(t, tt.phase, ctStr(attrs, "toolpair.timeout.phase"))
			assert.Equal(t, "1", ctStr(attrs, "toolpair.timeout.active_tools"))
			assert.Equal(t, int64(2100), func() int64 { v, _ := attrs.Get("toolpair.timeout.active_tool.elapsed_ms"); return v.Int() }())
			assert.Equal(t, "paired", ctStr(attrs, "toolpair.outcome"))
		})
	}
}

// TestContractS4TranscriptModelErrors: a model error line of a transcript whose message
// matches the pattern, case-insensitively, is a provider timeout.
func TestContractS4TranscriptModelErrors(t *testing.T) {
	for _, msg := range []string{"LLM idle timeout (6s): no response from model", "Request timed out.", "REQUEST TIMED OUT", "context deadline exceeded", "rpc: DEADLINE EXCEEDED"} {
		t.Run(msg, func(t *testing.T) {
			r := newRig(t)
			line := map[string]any{"type": "message", "id": "e9", "timestamp": ctISO(5000), "message": map[string]any{
				"role": "assistant", "timestamp": ctBase + 100, "stopReason": "error", "errorMessage": msg, "content": []any{}}}
			r.logRecords(ctLine("/oc/a.jsonl", line))
			out := r.outLogs()
			require.Len(t, out, 1)
			assert.Equal(t, "provider", ctStr(out[0].Attributes(), "toolpair.timeout.phase"))
		})
	}
}
