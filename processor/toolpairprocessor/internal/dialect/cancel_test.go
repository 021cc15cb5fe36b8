// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package dialect_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/timeout"
)

// kv is one attribute of a test span, in wire order (a key may repeat).
type kv struct {
	k string
	v any // string or int64
}

// spanOf returns a span decoded from OTLP JSON with the attributes in order, repeats
// included as they arrive on the wire, and the status code and message.
func spanOf(t *testing.T, attrs []kv, code ptrace.StatusCode, msg string) ptrace.Span {
	t.Helper()
	parts := make([]string, 0, len(attrs))
	for _, a := range attrs {
		switch v := a.v.(type) {
		case string:
			parts = append(parts, fmt.Sprintf(`{"key":%q,"value":{"stringValue":%q}}`, a.k, v))
		case int64:
			parts = append(parts, fmt.Sprintf(`{"key":%q,"value":{"intValue":"%d"}}`, a.k, v))
		}
	}
	m, err := json.Marshal(msg)
	require.NoError(t, err)
	doc := fmt.Sprintf(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"s","attributes":[%s],"status":{"code":%d,"message":%s}}]}]}]}`,
		strings.Join(parts, ","), code, m)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(doc))
	require.NoError(t, err)
	return td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
}

func TestCancelled(t *testing.T) {
	const errCode, unset = ptrace.StatusCodeError, ptrace.StatusCodeUnset
	tests := []struct {
		name  string
		attrs []kv
		code  ptrace.StatusCode
		msg   string
		want  bool
	}{
		{name: "nothing", want: false},
		{name: "Copilot execute_tool", attrs: []kv{{"error.type", "cancelled"}}, code: errCode, msg: "Operation aborted", want: true},
		{name: "error.type cancelled alone", attrs: []kv{{"error.type", "cancelled"}}, code: unset, want: true},
		{name: "error.type canceled", attrs: []kv{{"error.type", "canceled"}}, want: true},
		{name: "error.type aborted", attrs: []kv{{"error.type", "aborted"}}, want: true},
		{name: "error.type AbortError", attrs: []kv{{"error.type", "AbortError"}}, want: true},
		{name: "error.type compared exactly", attrs: []kv{{"error.type", "CANCELLED"}}, want: false},
		{name: "error.type of a failure", attrs: []kv{{"error.type", "tool_error"}}, code: errCode, msg: "Shell command failed", want: false},
		{name: "error.type of a timeout", attrs: []kv{{"error.type", "TimeoutError"}}, want: false},
		{name: "error.type not a string", attrs: []kv{{"error.type", int64(1)}}, want: false},
		{name: "error.type repeated: the last is cancelled", attrs: []kv{{"error.type", "tool_error"}, {"error.type", "cancelled"}}, want: true},
		{name: "error.type repeated: the first only is cancelled", attrs: []kv{{"error.type", "cancelled"}, {"error.type", "tool_error"}}, want: false},
		{name: "Qwen Code tool.failure_kind", attrs: []kv{{"tool.failure_kind", "cancelled"}, {"duration_ms", int64(4002)}}, want: true},
		{name: "other failure kind", attrs: []kv{{"tool.failure_kind", "execution_error"}}, want: false},
		{name: "status cancelled", attrs: []kv{{"status", "cancelled"}}, want: true},
		{name: "status success", attrs: []kv{{"status", "success"}}, want: false},
		{name: "status error", attrs: []kv{{"status", "error"}}, want: false},
		{name: "status canceled is not the value", attrs: []kv{{"status", "canceled"}}, want: false},
		{name: "message alone", code: errCode, msg: "Operation aborted", want: true},
		{name: "message sentence", code: errCode, msg: "The operation was aborted.", want: true},
		{name: "message of the AI SDK app's tool", code: errCode, msg: "Command aborted: echo start; sleep 20; echo done", want: true},
		{name: "message cancelled by user", code: errCode, msg: "Tool execution cancelled by user", want: true},
		{name: "message with error name", code: errCode, msg: "AbortError: This operation was aborted", want: true},
		{name: "message Go context", code: errCode, msg: "context canceled", want: true},
		{name: "message without error status", code: unset, msg: "Operation aborted", want: false},
		{name: "message of an OK status", code: ptrace.StatusCodeOk, msg: "cancelled", want: false},
		{name: "message of a timeout", code: errCode, msg: "The operation was aborted due to timeout", want: false},
		{name: "message of the tool's own failure", code: errCode, msg: "fatal: rebase aborted", want: false},
		{name: "message word inside another", code: errCode, msg: "Operation abortedness", want: false},
		{name: "message far from the start", code: errCode, msg: "the build step number one was aborted", want: false},
		{name: "message of a failure", code: errCode, msg: "Shell command failed", want: false},
		{name: "message in capitals after white space", code: errCode, msg: " \tREQUEST ABORTED", want: true},
		{name: "message with Error prefix", code: errCode, msg: "Error: operation cancelled", want: true},
		{name: "message word and underscore", code: errCode, msg: "aborted_by_policy", want: false},
		{name: "message word and digit", code: errCode, msg: "cancelled2", want: false},
		{name: "message with two spaces", code: errCode, msg: "Operation  aborted", want: false},
		{name: "LangGraph.js capture app: interrupted by SIGTERM, with its stack", code: errCode,
			msg: "interrupted by SIGTERM\n\nError: interrupted by SIGTERM\n    at process.<anonymous> (file:///srv/realclients/clients/langgraph/agent.mjs:42:22)", want: true},
		{name: "interrupted by SIGINT", code: errCode, msg: "interrupted by SIGINT", want: true},
		{name: "interrupted by a signal after words", code: errCode, msg: "Command interrupted by sighup.", want: true},
		{name: "interrupted by a signal after Error:", code: errCode, msg: "Error: interrupted by SIGTERM", want: true},
		{name: "VoltAgent root span", code: errCode, msg: "Operation aborted: interrupted by SIGINT", want: true},
		{name: "interrupted by a signal of a timeout", code: errCode, msg: "interrupted by SIGTERM: timed out", want: false},
		{name: "interrupted by SIG and nothing", code: errCode, msg: "interrupted by SIG", want: false},
		{name: "interrupted by a signal name with a digit", code: errCode, msg: "interrupted by SIGRT1", want: false},
		{name: "interrupted system call", code: errCode, msg: "Interrupted system call", want: false},
		{name: "interrupted by the user", code: errCode, msg: "interrupted by user", want: false},
		{name: "interrupted by a signal after other punctuation", code: errCode, msg: "make: *** interrupted by SIGINT", want: false},
		{name: "interrupted by a signal without error status", code: unset, msg: "interrupted by SIGTERM", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			span := spanOf(t, tt.attrs, tt.code, tt.msg)
			assert.Equal(t, tt.want, dialect.Cancelled(span.Attributes(), tt.code, tt.msg))
			want := pairing.KindResult
			if tt.want {
				want = pairing.KindAbort
			}
			assert.Equal(t, want, dialect.ResultKind(span))
			// A log record has no status: only its attributes count.
			assert.Equal(t, tt.want && len(tt.attrs) > 0, dialect.Cancelled(span.Attributes(), unset, ""))
		})
	}
}

// TestCancelledTimeoutPatternIsSection4: the timeout exclusion of Cancelled is the timeout
// classifier's own message pattern (package timeout imports dialect, so it is written twice).
func TestCancelledTimeoutPatternIsSection4(t *testing.T) {
	for _, msg := range []string{"The operation was aborted due to timeout", "Request aborted: timed out", "Cancelled: deadline exceeded"} {
		assert.True(t, timeout.Message(msg), msg)
		assert.False(t, dialect.Cancelled(spanOf(t, nil, 0, "").Attributes(), ptrace.StatusCodeError, msg), msg)
	}
	assert.True(t, dialect.Cancelled(spanOf(t, nil, 0, "").Attributes(), ptrace.StatusCodeError, "Request aborted"))
}

// BenchmarkCancelled measures the rule on the attributes of a real result span without a
// marker (Copilot CLI's normal execute_tool span, 10 attributes, status Unset: the three
// keys looked up are absent) and on the interrupted one (error.type cancelled, found first).
func BenchmarkCancelled(b *testing.B) {
	attrs := []kv{
		{"gen_ai.operation.name", "execute_tool"}, {"gen_ai.conversation.id", "d60f6f48-4f8a-4fe3-8b2a-0ca343f451e1"},
		{"gen_ai.tool.name", "bash"}, {"gen_ai.tool.call.id", "call_mock_normal_01"}, {"gen_ai.tool.type", "function"},
		{"gen_ai.provider.name", "openai"}, {"gen_ai.tool.call.arguments", `{"command":"echo hello"}`},
		{"github.copilot.tool.parameters.command", "echo hello"}, {"gen_ai.tool.call.result", "hello"},
		{"github.copilot.tool.duration", int64(34)},
	}
	t := &testing.T{}
	for _, bc := range []struct {
		name string
		span ptrace.Span
	}{
		{"no marker", spanOf(t, attrs, ptrace.StatusCodeUnset, "")},
		{"error.type cancelled", spanOf(t, append(attrs, kv{"error.type", "cancelled"}), ptrace.StatusCodeError, "Operation aborted")},
		{"failed tool", spanOf(t, append(attrs, kv{"error.type", "tool_error"}), ptrace.StatusCodeError, "Shell command failed")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				dialect.ResultKind(bc.span)
			}
		})
	}
}

// abortPattern is AbortMessage's rule written as a regular expression, the reference the
// hand-written matcher is checked against.
var abortPattern = regexp.MustCompile(`(?i)^[\t\n\f\r ]*(?:[a-z]*error: )?(?:[a-z]+ ){0,4}(?:aborted|cancell?ed|interrupted by sig[a-z]+)\b`)

var abortSeeds = []string{
	"", "Operation aborted", "The operation was aborted.", "Command aborted: echo start; sleep 20; echo done",
	"Tool execution cancelled by user", "AbortError: This operation was aborted", "context canceled",
	"fatal: rebase aborted", "Operation abortedness", "the build step number one was aborted",
	"one two three four aborted", "one two three four five aborted", "Error: aborted", "error:aborted",
	"xError: Cancelled", "Error: Error: aborted", "aborted_x", "aborted9", "ABORTED!", "canceled.", "cancelledd",
	"  \n cancelled", "Cancelled: deadline exceeded", "Shell command failed", "\u00e9 aborted", "abort",
	"interrupted by SIGTERM", "interrupted by SIGINT\n\nError: interrupted by SIGINT", "Interrupted system call",
	"interrupted by user", "interrupted by SIG", "interrupted by SIGRT1", "interrupted by SIGTERM_x",
	"one two three four interrupted by SIGHUP", "one two three four five interrupted by SIGHUP",
	"INTERRUPTED BY sigint.", "interrupted  by SIGINT", "interrupted by  SIGINT", "interruptedd by SIGINT",
}

// TestAbortMessageIsItsPattern: AbortMessage says what abortPattern says, on the examples of
// its documentation and on edge cases.
func TestAbortMessageIsItsPattern(t *testing.T) {
	for _, msg := range abortSeeds {
		assert.Equal(t, abortPattern.MatchString(msg), dialect.AbortMessage(msg), "%q", msg)
	}
}

// FuzzAbortMessage: on any message, AbortMessage says what abortPattern says.
func FuzzAbortMessage(f *testing.F) {
	for _, msg := range abortSeeds {
		f.Add(msg)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		if want := abortPattern.MatchString(msg); dialect.AbortMessage(msg) != want {
			t.Fatalf("AbortMessage(%q) = %v, the pattern says %v", msg, !want, want)
		}
	})
}
