// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

// Builders of the records the specification tests send, and readers of what comes out.

import (
	"crypto/sha256"
	"encoding/json"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// ctBase is the time origin of the hand-made records: times in the tables are ms after it.
const ctBase = int64(1_800_000_000_000) // ms

func ctTS(ms int64) pcommon.Timestamp {
	return pcommon.Timestamp((ctBase + ms) * int64(time.Millisecond))
}

// ctEachSpan calls fn for every span of td with its resource.
func ctEachSpan(td ptrace.Traces, fn func(pcommon.Resource, ptrace.Span)) {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			spans := rs.ScopeSpans().At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				fn(rs.Resource(), spans.At(k))
			}
		}
	}
}

func ctEachLog(ld plog.Logs, fn func(pcommon.Resource, plog.LogRecord)) {
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			lrs := rl.ScopeLogs().At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				fn(rl.Resource(), lrs.At(k))
			}
		}
	}
}

// ctSpan describes one span of a hand-made batch. trace, id and parent are one-byte IDs (0:
// none). res holds resource attributes besides service.name (default "app").
type ctSpan struct {
	service           string
	res               map[string]any
	trace, id, parent byte
	name              string
	start, end        int64 // ms after ctBase
	attrs             map[string]any
	status            ptrace.StatusCode
	statusMessage     string
	events            []ctEvent
}

type ctEvent struct {
	name  string
	attrs map[string]any
}

func ctTraceID(b byte) pcommon.TraceID {
	if b == 0 {
		return pcommon.TraceID{}
	}
	return pcommon.TraceID{0xc7, b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, b}
}

func ctSpanID(b byte) pcommon.SpanID {
	if b == 0 {
		return pcommon.SpanID{}
	}
	return pcommon.SpanID{0x5a, b, 0, 0, 0, 0, 0, b}
}

func ctResource(res pcommon.Resource, service string, attrs map[string]any) {
	if service == "" {
		service = "app"
	}
	if attrs != nil {
		if err := res.Attributes().FromRaw(attrs); err != nil {
			panic(err)
		}
	}
	res.Attributes().PutStr("service.name", service)
}

func ctTraces(specs ...ctSpan) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, sp := range specs {
		rs := td.ResourceSpans().AppendEmpty()
		ctResource(rs.Resource(), sp.service, sp.res)
		s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		s.SetName(sp.name)
		s.SetTraceID(ctTraceID(sp.trace))
		s.SetSpanID(ctSpanID(sp.id))
		s.SetParentSpanID(ctSpanID(sp.parent))
		s.SetStartTimestamp(ctTS(sp.start))
		s.SetEndTimestamp(ctTS(sp.end))
		if sp.attrs != nil {
			if err := s.Attributes().FromRaw(sp.attrs); err != nil {
				panic(err)
			}
		}
		if sp.status != ptrace.StatusCodeUnset {
			s.Status().SetCode(sp.status)
			s.Status().SetMessage(sp.statusMessage)
		}
		for _, e := range sp.events {
			ev := s.Events().AppendEmpty()
			ev.SetName(e.name)
			ev.SetTimestamp(ctTS(sp.end))
			if err := ev.Attributes().FromRaw(e.attrs); err != nil {
				panic(err)
			}
		}
	}
	return td
}

// ctLog describes one log record. time is ms after ctBase (0: no timestamp); observed
// likewise. body is a string, a map[string]any or nil.
type ctLog struct {
	service        string
	res            map[string]any
	time, observed int64
	eventName      string
	body           any
	attrs          map[string]any
	trace, spanID  byte
}

func ctLogs(specs ...ctLog) plog.Logs {
	ld := plog.NewLogs()
	for _, sp := range specs {
		rl := ld.ResourceLogs().AppendEmpty()
		ctResource(rl.Resource(), sp.service, sp.res)
		lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		if sp.time != 0 {
			lr.SetTimestamp(ctTS(sp.time))
		}
		if sp.observed != 0 {
			lr.SetObservedTimestamp(ctTS(sp.observed))
		}
		lr.SetEventName(sp.eventName)
		lr.SetTraceID(ctTraceID(sp.trace))
		lr.SetSpanID(ctSpanID(sp.spanID))
		switch b := sp.body.(type) {
		case string:
			lr.Body().SetStr(b)
		case map[string]any:
			if err := lr.Body().SetEmptyMap().FromRaw(b); err != nil {
				panic(err)
			}
		}
		if sp.attrs != nil {
			if err := lr.Attributes().FromRaw(sp.attrs); err != nil {
				panic(err)
			}
		}
	}
	return ld
}

// Builders of the records of each source.

// ctChat is a GenAI chat span announcing calls (tool name run_shell) in its output messages.
func ctChat(trace, id, parent byte, start, end int64, calls ...string) ctSpan {
	parts := make([]string, 0, len(calls))
	for _, c := range calls {
		parts = append(parts, `{"type":"tool_call","id":"`+c+`","name":"run_shell","arguments":{"command":"cat /etc/secret"}}`)
	}
	attrs := map[string]any{"gen_ai.operation.name": "chat"}
	if len(calls) > 0 {
		attrs["gen_ai.output.messages"] = `[{"role":"assistant","parts":[` + strings.Join(parts, ",") + `]}]`
	}
	return ctSpan{trace: trace, id: id, parent: parent, name: "chat m", start: start, end: end, attrs: attrs}
}

// ctTool is a GenAI execute_tool span resolving call.
func ctTool(trace, id, parent byte, call string, start, end int64) ctSpan {
	return ctSpan{trace: trace, id: id, parent: parent, name: "execute_tool run_shell", start: start, end: end, attrs: map[string]any{
		"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "run_shell", "gen_ai.tool.call.id": call,
	}}
}

func ctAgent(trace, id, parent byte, start, end int64) ctSpan {
	return ctSpan{trace: trace, id: id, parent: parent, name: "invoke_agent a", start: start, end: end, attrs: map[string]any{
		"gen_ai.operation.name": "invoke_agent",
	}}
}

func ctWith(s ctSpan, kv ...any) ctSpan {
	attrs := map[string]any{}
	for k, v := range s.attrs {
		attrs[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		attrs[kv[i].(string)] = kv[i+1]
	}
	s.attrs = attrs
	return s
}

// ctClaude is a Claude Code log event (body and event.name as Claude Code 2.1 writes them).
func ctClaude(event string, ms int64, session string, kv ...any) ctLog {
	attrs := map[string]any{"event.name": event, "session.id": session, "event.timestamp": time.UnixMilli(ctBase + ms).UTC().Format(time.RFC3339Nano)}
	for i := 0; i < len(kv); i += 2 {
		attrs[kv[i].(string)] = kv[i+1]
	}
	return ctLog{service: "claude-code", time: ms, observed: ms, body: "claude_code." + event, attrs: attrs}
}

func ctClaudeDecision(call, decision string, ms int64) ctLog {
	return ctClaude("tool_decision", ms, "sess-1", "tool_use_id", call, "tool_name", "Bash", "decision", decision, "source", "config")
}

func ctClaudeResult(call string, ms int64) ctLog {
	return ctClaude("tool_result", ms, "sess-1", "tool_use_id", call, "tool_name", "Bash", "success", "true", "duration_ms", "12")
}

// ctCodex is a Codex log event: timeUnixNano 0, the observed time set.
func ctCodex(event string, ms int64, trace byte, kv ...any) ctLog {
	attrs := map[string]any{"event.name": event, "conversation.id": "conv-x"}
	for i := 0; i < len(kv); i += 2 {
		attrs[kv[i].(string)] = kv[i+1]
	}
	return ctLog{service: "codex_exec", observed: ms, body: "event", attrs: attrs, trace: trace}
}

func ctCodexDecision(call, decision string, ms int64) ctLog {
	return ctCodex("codex.tool_decision", ms, 9, "call_id", call, "tool_name", "exec_command", "decision", decision)
}

func ctCodexResult(call string, ms int64) ctLog {
	return ctCodex("codex.tool_result", ms, 9, "call_id", call, "tool_name", "exec_command", "duration_ms", "7", "success", "true")
}

// ctCodexToolSpan is Codex's tool dispatch span (named after the tool, carrying call_id).
func ctCodexToolSpan(call string, start, end int64, aborted bool) ctSpan {
	return ctSpan{service: "codex_exec", trace: 9, id: 0x90, name: "exec_command", start: start, end: end, attrs: map[string]any{
		"tool_name": "exec_command", "call_id": call, "aborted": aborted, "conversation.id": "conv-x",
	}}
}

// ctLine is a transcript line as the filelog receiver emits it (the line as a string body,
// no timestamp, the file's path).
func ctLine(path string, line map[string]any) ctLog {
	b, err := json.Marshal(line)
	if err != nil {
		panic(err)
	}
	return ctLog{service: "transcripts", observed: 999_000, body: string(b), attrs: map[string]any{"log.file.path": path, "log.file.name": path[strings.LastIndexByte(path, '/')+1:]}}
}

func ctISO(ms int64) string {
	return time.UnixMilli(ctBase + ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// ctClaudeUse is a Claude Code transcript assistant line holding one tool_use block.
func ctClaudeUse(session, agent, msgID, call string, ms int64) map[string]any {
	l := map[string]any{"type": "assistant", "sessionId": session, "timestamp": ctISO(ms), "uuid": call + "-u",
		"message": map[string]any{"id": msgID, "role": "assistant", "content": []any{
			map[string]any{"type": "tool_use", "id": call, "name": "Bash", "input": map[string]any{"command": "cat /etc/secret"}},
		}}}
	if agent != "" {
		l["agentId"], l["isSidechain"] = agent, true
	}
	return l
}

// ctClaudeText is a Claude Code transcript assistant line with text only (a new message).
func ctClaudeText(session, agent, msgID string, ms int64) map[string]any {
	l := map[string]any{"type": "assistant", "sessionId": session, "timestamp": ctISO(ms),
		"message": map[string]any{"id": msgID, "role": "assistant", "content": []any{map[string]any{"type": "text", "text": "done"}}}}
	if agent != "" {
		l["agentId"], l["isSidechain"] = agent, true
	}
	return l
}

// ctClaudeResultLine is a Claude Code transcript user line holding one tool_result block.
func ctClaudeResultLine(session, agent, call, content string, ms int64) map[string]any {
	l := map[string]any{"type": "user", "sessionId": session, "timestamp": ctISO(ms),
		"message": map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": call, "content": content, "is_error": false},
		}}}
	if agent != "" {
		l["agentId"], l["isSidechain"] = agent, true
	}
	return l
}

// ctPiUse is a pi/OpenClaw assistant entry with one toolCall block (message.timestamp in ms).
// ctClaudeRefusalLine is a Claude Code transcript line answering call with an is_error
// tool_result of content, with the top-level toolUseResult "User rejected tool use" and, when
// denial is not "", a toolDenialKind.
func ctClaudeRefusalLine(session, call, content, denial string, ms int64) map[string]any {
	l := ctClaudeResultLine(session, "", call, content, ms)
	l["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["is_error"] = true
	l["toolUseResult"] = "User rejected tool use"
	if denial != "" {
		l["toolDenialKind"] = denial
	}
	return l
}

func ctPiUse(entryID, call string, ms int64) map[string]any {
	return map[string]any{"type": "message", "id": entryID, "parentId": nil, "timestamp": ctISO(ms + 5),
		"message": map[string]any{"role": "assistant", "timestamp": ctBase + ms, "content": []any{
			map[string]any{"type": "toolCall", "id": call, "name": "bash", "arguments": map[string]any{"command": "cat /etc/secret"}},
		}}}
}

func ctPiResult(entryID, call string, ms int64, details map[string]any) map[string]any {
	msg := map[string]any{"role": "toolResult", "toolCallId": call, "toolName": "bash", "timestamp": ctBase + ms,
		"isError": false, "content": []any{map[string]any{"type": "text", "text": "secret"}}}
	if details != nil {
		msg["details"] = details
	}
	return map[string]any{"type": "message", "id": entryID, "timestamp": ctISO(ms + 5), "message": msg}
}

// Reading the output.

// ctCallIDOf reads the call ID of an output record: the semconv attribute, else the Claude
// Code or Codex one.
func ctCallIDOf(attrs pcommon.Map) string {
	for _, k := range []string{"gen_ai.tool.call.id", "tool_use_id", "call_id"} {
		if v, ok := attrs.Get(k); ok {
			return v.AsString()
		}
	}
	return ""
}

func ctStr(attrs pcommon.Map, k string) string {
	if v, ok := attrs.Get(k); ok {
		return v.AsString()
	}
	return ""
}

// ctMark describes what the processor wrote on one record: its outcome, "/reason" when it
// has one, and "+synthetic" for a synthetic record ("span:" or "log:" first).
func ctMark(signal string, attrs pcommon.Map) string {
	s := signal + ":" + ctStr(attrs, "toolpair.outcome")
	if r := ctStr(attrs, "toolpair.interrupt.reason"); r != "" {
		s += "/" + r
	}
	if v, ok := attrs.Get("toolpair.synthetic"); ok && v.Bool() {
		s += "+synthetic"
	}
	return s
}

// ctTranscriptCallID reads the call ID of a transcript line body (the first tool block).
func ctTranscriptCallID(lr plog.LogRecord) string {
	var l struct {
		Message struct {
			ToolCallID string `json:"toolCallId"`
			Content    []struct {
				ID        string `json:"id"`
				ToolUseID string `json:"tool_use_id"`
			} `json:"content"`
		} `json:"message"`
	}
	if lr.Body().Type() != pcommon.ValueTypeStr || json.Unmarshal([]byte(lr.Body().Str()), &l) != nil {
		return ""
	}
	if l.Message.ToolCallID != "" {
		return l.Message.ToolCallID
	}
	for _, c := range l.Message.Content {
		if c.ToolUseID != "" {
			return c.ToolUseID
		}
		if c.ID != "" {
			return c.ID
		}
	}
	return ""
}

// ctSyntheticSpanID is the specification's deterministic span ID, computed independently: the
// first 8 bytes of SHA-256(trace ID || call ID).
func ctSyntheticSpanID(trace pcommon.TraceID, call string) pcommon.SpanID {
	sum := sha256.Sum256(append(trace[:], call...))
	var id pcommon.SpanID
	copy(id[:], sum[:8])
	return id
}
