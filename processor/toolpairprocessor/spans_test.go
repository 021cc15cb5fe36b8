// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func tracesOut(b *rig) []ptrace.Span {
	var out []ptrace.Span
	for _, td := range b.tsink.AllTraces() {
		out = append(out, allSpans(td)...)
	}
	return out
}

// TestClaudeCodeSpansAndLogs runs Claude Code's real normal capture, spans and logs, through
// one component in both orders: the call is paired exactly once; each other result record
// (the claude_code.tool.execution span, and the record of the other signal) is kept and
// marked duplicate; nothing is dropped or added.
func TestClaudeCodeSpansAndLogs(t *testing.T) {
	for _, logsFirst := range []bool{false, true} {
		t.Run(map[bool]string{false: "traces_first", true: "logs_first"}[logsFirst], func(t *testing.T) {
			b := newRig(t)
			td, ld := readClaude(t, "normal")
			nSpans, nLogs := td.SpanCount(), ld.LogRecordCount()
			b.consumeBoth(td, ld, logsFirst)
			b.advance(time.Minute)
			b.shutdown()
			spans, logs := tracesOut(b), allLogs(b.lsink)
			require.Len(t, spans, nSpans)
			require.Len(t, logs, nLogs)
			outcomes := map[string]string{}
			for _, s := range spans {
				if s.Name() == "claude_code.tool" || s.Name() == "claude_code.tool.execution" {
					outcomes[s.Name()] = strAttr(s, "toolpair.outcome")
				}
			}
			for _, lr := range logs {
				if logAttr(lr, "event.name") == "tool_result" {
					outcomes["tool_result"] = logAttr(lr, "toolpair.outcome")
				}
			}
			// Section 2: each source's first record is paired, in either order.
			want := map[string]string{"claude_code.tool": "paired", "claude_code.tool.execution": "paired", "tool_result": "paired"}
			assert.Equal(t, want, outcomes)
		})
	}
}

// TestClaudeCodeInteractionEndClosesItsCalls: in the real interrupted capture the call has
// only its tool_decision; the claude_code.interaction span's end (the turn ended with the
// call unanswered) interrupts it with reason session_end, ending at the interaction's end,
// instead of waiting for pairing_timeout.
func TestClaudeCodeInteractionEndClosesItsCalls(t *testing.T) {
	td, ld := readClaude(t, "interrupt_sigterm")
	var interactionEnd pcommon.Timestamp
	for _, s := range allSpans(td) {
		if s.Name() == "claude_code.interaction" {
			interactionEnd = s.EndTimestamp()
		}
	}
	require.NotZero(t, interactionEnd)
	b := newRig(t)
	require.NoError(t, b.traces.ConsumeTraces(context.Background(), td))
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
	b.advance(time.Minute) // past orphan_grace, well before pairing_timeout
	logs := syntheticLogs(b)
	require.Len(t, logs, 1)
	assert.Equal(t, "session_end", logAttr(logs[0], "toolpair.interrupt.reason"))
	assert.Equal(t, interactionEnd, logs[0].Timestamp())
	spans := syntheticSpans(b)
	require.Len(t, spans, 1)
	assert.Equal(t, interactionEnd, spans[0].EndTimestamp())
}

// TestCodexToolSpanAndLogs runs Codex's real normal capture: the exec_command span (named
// after the tool, with call_id) and the codex.tool_result log both resolve the call; the
// first is paired and the other kept as a duplicate; the spans that only mention call_id
// (guardian_scoring_observation, unified_exec.exec_command) are not results.
func TestCodexToolSpanAndLogs(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "codex", "normal")
	td, err := golden.ReadTraces(filepath.Join(dir, "traces.json"))
	require.NoError(t, err)
	ld, err := golden.ReadLogs(filepath.Join(dir, "logs.json"))
	require.NoError(t, err)
	nSpans, nLogs := td.SpanCount(), ld.LogRecordCount()
	b := newRig(t)
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))
	require.NoError(t, b.traces.ConsumeTraces(context.Background(), td))
	b.advance(time.Minute)
	b.shutdown()
	spans, logs := tracesOut(b), allLogs(b.lsink)
	require.Len(t, spans, nSpans)
	require.Len(t, logs, nLogs)
	marked := map[string]string{}
	for _, s := range spans {
		if o := strAttr(s, "toolpair.outcome"); o != "" {
			marked[s.Name()] = o
		}
	}
	assert.Equal(t, map[string]string{"exec_command": "paired"}, marked, "its source's first record of the call (section 2)")
	for _, lr := range logs {
		if logAttr(lr, "event.name") == "codex.tool_result" {
			assert.Equal(t, "paired", logAttr(lr, "toolpair.outcome"))
		}
	}
}

// TestCodexAbortedToolSpan: an exec_command span with aborted=true resolves its call as
// interrupted/aborted, is marked so, and no synthetic record is made.
func TestCodexAbortedToolSpan(t *testing.T) {
	b := newRig(t)
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "codex_exec")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetObservedTimestamp(1_000_000_000)
	lr.Attributes().PutStr("event.name", "codex.tool_decision")
	lr.Attributes().PutStr("call_id", "call_a")
	lr.Attributes().PutStr("tool_name", "exec_command")
	lr.Attributes().PutStr("decision", "approved")
	lr.Attributes().PutStr("conversation.id", "conv1")
	require.NoError(t, b.logs.ConsumeLogs(context.Background(), ld))

	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "codex_exec")
	s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetName("exec_command")
	s.SetTraceID(pcommon.TraceID{1})
	s.SetSpanID(pcommon.SpanID{2})
	s.SetStartTimestamp(1_000_000_000)
	s.SetEndTimestamp(5_000_000_000)
	s.Attributes().PutStr("tool_name", "exec_command")
	s.Attributes().PutStr("call_id", "call_a")
	s.Attributes().PutBool("aborted", true)
	s.Attributes().PutStr("conversation.id", "conv1")
	require.NoError(t, b.traces.ConsumeTraces(context.Background(), td))
	b.advance(11 * time.Minute)
	b.shutdown()
	spans := tracesOut(b)
	require.Len(t, spans, 1, "no synthetic span")
	assert.Equal(t, "interrupted", strAttr(spans[0], "toolpair.outcome"))
	assert.Equal(t, "aborted", strAttr(spans[0], "toolpair.interrupt.reason"))
	assert.Empty(t, syntheticLogs(b))
}

// nestedAgentTrace builds the GenAI spans of an agent that calls another agent as a tool:
//
//	invoke_agent outer (A)
//	  chat (A1): announces delegate and lost
//	  execute_tool delegate
//	    invoke_agent inner (B)
//	      chat (B1): announces grep, which never runs
//	      chat (B2)
//	  chat (A2)
//
// Times in ms: A1 0-10, B1 20-30, B2 40-50, inner end 55, delegate result 60, A2 70-80, outer
// end 90.
func nestedAgentTrace() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "nested")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	trace := pcommon.TraceID{9, 9}
	add := func(id, parent byte, name, op string, startMs, endMs int64, attrs map[string]any) {
		s := spans.AppendEmpty()
		s.SetName(name)
		s.SetTraceID(trace)
		s.SetSpanID(pcommon.SpanID{id})
		if parent != 0 {
			s.SetParentSpanID(pcommon.SpanID{parent})
		}
		s.SetStartTimestamp(pcommon.Timestamp(1e12 + startMs*1e6))
		s.SetEndTimestamp(pcommon.Timestamp(1e12 + endMs*1e6))
		s.Attributes().PutStr("gen_ai.operation.name", op)
		for k, v := range attrs {
			s.Attributes().PutStr(k, v.(string))
		}
	}
	calls := func(ids ...string) map[string]any {
		parts := ""
		for i, id := range ids {
			if i > 0 {
				parts += ","
			}
			parts += `{"type":"tool_call","id":"` + id + `","name":"` + id + `"}`
		}
		return map[string]any{"gen_ai.output.messages": `[{"role":"assistant","parts":[` + parts + `]}]`}
	}
	const outer, a1, tool, inner, b1, b2, a2 = 1, 2, 3, 4, 5, 6, 7
	add(a1, outer, "chat m", "chat", 0, 10, calls("delegate", "lost"))
	add(b1, inner, "chat m", "chat", 20, 30, calls("grep"))
	add(b2, inner, "chat m", "chat", 40, 50, nil)
	add(inner, tool, "invoke_agent inner", "invoke_agent", 15, 55, nil)
	add(tool, outer, "execute_tool delegate", "execute_tool", 12, 60, map[string]any{"gen_ai.tool.call.id": "delegate", "gen_ai.tool.name": "delegate"})
	add(a2, outer, "chat m", "chat", 70, 80, nil)
	add(outer, 0, "invoke_agent outer", "invoke_agent", 0, 90, nil)
	return td
}

// TestNestedAgentDoesNotCloseTheOuterCall: the inner agent's model calls and end close only
// its own calls; the outer call waiting for it pairs, and the outer call that never ran is
// closed by the outer agent's next model call.
func TestNestedAgentDoesNotCloseTheOuterCall(t *testing.T) {
	pl := newRig(t, tracesOnly())
	pl.consume(nestedAgentTrace())
	pl.advance(time.Minute)
	got := map[string]string{}
	for _, s := range allSpans(pl.output()) {
		id := strAttr(s, "gen_ai.tool.call.id")
		if id == "" {
			continue
		}
		o := strAttr(s, "toolpair.outcome")
		if r := strAttr(s, "toolpair.interrupt.reason"); r != "" {
			o += "/" + r + "@" + time.Duration(int64(s.EndTimestamp())-1e12).String()
		}
		got[id] = o
	}
	assert.Equal(t, map[string]string{
		"delegate": "paired",
		"grep":     "interrupted/next_step@40ms",
		"lost":     "interrupted/next_step@70ms",
	}, got)
}
