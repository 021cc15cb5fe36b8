package dialect_test

import (
	"encoding/json"
	"fmt"
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
