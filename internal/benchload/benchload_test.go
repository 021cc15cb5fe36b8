// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package benchload

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func str(m pcommon.Map, k string) string {
	v, _ := m.Get(k)
	return v.AsString()
}

func logRecords(ld plog.Logs) []plog.LogRecord {
	var out []plog.LogRecord
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				out = append(out, lr)
			}
		}
	}
	return out
}

// resSpan is a span with its resource's service.name.
type resSpan struct {
	service string
	span    ptrace.Span
}

func spans(td ptrace.Traces) []resSpan {
	var out []resSpan
	for _, rs := range td.ResourceSpans().All() {
		svc := str(rs.Resource().Attributes(), "service.name")
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				out = append(out, resSpan{svc, s})
			}
		}
	}
	return out
}

// TestClaudeCodeLogs: a decision then its result for every call, CallsPerSession calls a
// session, and no call ID or session ID of a batch used again by the next.
func TestClaudeCodeLogs(t *testing.T) {
	g := NewGenerator("x", time.Unix(1_800_000_000, 0))
	seenCalls, seenSessions := map[string]bool{}, map[string]bool{}
	for range 2 {
		lrs := logRecords(g.ClaudeCodeLogs(25))
		require.Len(t, lrs, 25*RecordsPerCall)
		calls, sessions := map[string]bool{}, map[string]int{}
		for i := 0; i < len(lrs); i += 2 {
			d, r := lrs[i], lrs[i+1]
			assert.Equal(t, "claude_code.tool_decision", d.Body().Str())
			assert.Equal(t, "claude_code.tool_result", r.Body().Str())
			id := str(d.Attributes(), "tool_use_id")
			assert.Equal(t, id, str(r.Attributes(), "tool_use_id"))
			assert.Equal(t, str(d.Attributes(), "session.id"), str(r.Attributes(), "session.id"))
			assert.Less(t, d.Timestamp(), r.Timestamp())
			assert.False(t, calls[id] || seenCalls[id], "call ID %s used twice", id)
			calls[id] = true
			sessions[str(d.Attributes(), "session.id")]++
		}
		assert.Equal(t, map[int]int{10: 2, 5: 1}, countOf(sessions))
		for id := range calls {
			seenCalls[id] = true
		}
		for s := range sessions {
			assert.False(t, seenSessions[s], "session %s used by two batches", s)
			seenSessions[s] = true
		}
	}
}

// countOf counts the sessions of each size.
func countOf(sessions map[string]int) map[int]int {
	out := map[int]int{}
	for _, n := range sessions {
		out[n]++
	}
	return out
}

// TestGenAISpans: a chat span announcing each call, then the call's execute_tool span, in the
// session's trace; fresh IDs in the next batch.
func TestGenAISpans(t *testing.T) {
	g := NewGenerator("", time.Unix(1_800_000_000, 0))
	seen := map[string]bool{}
	for range 2 {
		ss := spans(g.GenAISpans(20))
		require.Len(t, ss, 20*RecordsPerCall)
		for i := 0; i < len(ss); i += 2 {
			c, x := ss[i].span, ss[i+1].span
			assert.Equal(t, "chat", str(c.Attributes(), "gen_ai.operation.name"))
			id := str(x.Attributes(), "gen_ai.tool.call.id")
			assert.Contains(t, str(c.Attributes(), "gen_ai.output.messages"), `"id":"`+id+`"`)
			assert.Equal(t, c.TraceID(), x.TraceID())
			assert.Equal(t, str(c.Attributes(), "gen_ai.conversation.id"), str(x.Attributes(), "gen_ai.conversation.id"))
			assert.LessOrEqual(t, c.EndTimestamp(), x.StartTimestamp())
			if i >= 2 && ss[i-1].span.TraceID() == c.TraceID() {
				assert.LessOrEqual(t, ss[i-1].span.EndTimestamp(), c.StartTimestamp(), "the next step starts after the previous tool")
			}
			assert.False(t, seen[id], "call ID %s used twice", id)
			seen[id] = true
		}
	}
}

// TestClientServerSpans: every server span's parent is a client span of the other service in
// the same trace, each client span has exactly one server span, span IDs are unique.
func TestClientServerSpans(t *testing.T) {
	g := NewGenerator("", time.Unix(1_800_000_000, 0))
	ids := map[pcommon.SpanID]bool{}
	for range 2 {
		clients := map[pcommon.SpanID]pcommon.TraceID{}
		var servers []ptrace.Span
		ss := spans(g.ClientServerSpans(30))
		require.Len(t, ss, 30*RecordsPerCall)
		for _, s := range ss {
			assert.False(t, ids[s.span.SpanID()], "span ID used twice")
			ids[s.span.SpanID()] = true
			switch s.span.Kind() {
			case ptrace.SpanKindClient:
				assert.Equal(t, "genai-agent", s.service)
				clients[s.span.SpanID()] = s.span.TraceID()
			case ptrace.SpanKindServer:
				assert.Equal(t, "tool-server", s.service)
				servers = append(servers, s.span)
			default:
				t.Errorf("span kind %v", s.span.Kind())
			}
		}
		require.Len(t, servers, 30)
		for _, sv := range servers {
			tid, ok := clients[sv.ParentSpanID()]
			assert.True(t, ok, "a server span's parent is a client span")
			assert.Equal(t, tid, sv.TraceID())
			delete(clients, sv.ParentSpanID())
		}
		assert.Empty(t, clients, "every client span has its server span")
	}
}
