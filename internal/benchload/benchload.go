// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package benchload builds the synthetic batches of the cost measurements: the per-pair
// benchmark against contrib's servicegraph connector (processor/toolpairprocessor) and the
// end-to-end measurement of the built collector (test/e2ebench). Every batch holds a number
// of tool calls whose use and result are both in the batch, CallsPerSession calls per session,
// with call IDs, session IDs, trace IDs and span IDs never used by an earlier batch of the
// same Generator, so that each batch brings new calls as live traffic does.
//
// The records copy the shapes of the real captures under testdata/ (attribute names, value
// types, the Claude Code event bodies and the GenAI message JSON), with short tool arguments
// and outputs.
package benchload

import (
	"encoding/binary"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// CallsPerSession is the number of tool calls of one session (one Claude Code session.id,
// one GenAI conversation and trace, one servicegraph trace).
const CallsPerSession = 10

// RecordsPerCall is the number of records each workload spends on one call: its use and its
// result (Claude Code: tool_decision and tool_result; GenAI: the chat span announcing it and
// its execute_tool span; servicegraph: a client span and its server span).
const RecordsPerCall = 2

// Time steps of the synthetic records: consecutive calls of a session start callStep apart,
// and each call's result (tool_result event, execute_tool span end, server span end) comes
// toolTime after its use.
const (
	callStep = 40 * time.Millisecond
	toolTime = 25 * time.Millisecond
)

// Generator makes batches with fresh IDs. It is not safe for concurrent use.
type Generator struct {
	prefix string    // distinguishes the IDs of two generators
	start  time.Time // record time of the first call
	calls  uint64    // calls made so far, across batches and workloads
	spans  uint64    // span IDs handed out so far
}

// NewGenerator returns a Generator whose first call happens at start and whose IDs begin
// with prefix (any string; "" is allowed).
func NewGenerator(prefix string, start time.Time) *Generator {
	return &Generator{prefix: prefix, start: start}
}

// session is the part of a batch that belongs to one session: its index in the generator
// (for the IDs) and the number of calls it holds.
type session struct {
	id    uint64
	calls int
}

// sessions splits calls into sessions of CallsPerSession calls (the last may hold fewer) and
// advances the generator's call counter by calls. The session index is the counter value of
// its first call, which no other session of the generator shares.
func (g *Generator) sessions(calls int) []session {
	var out []session
	for calls > 0 {
		n := min(calls, CallsPerSession)
		out = append(out, session{id: g.calls, calls: n})
		g.calls += uint64(n)
		calls -= n
	}
	return out
}

// callTime is the record time of call n of the session s.
func (g *Generator) callTime(s session, n int) time.Time {
	return g.start.Add(time.Duration(s.id+uint64(n)) * callStep)
}

func (g *Generator) sessionID(s session) string {
	return g.prefix + "sess-" + strconv.FormatUint(s.id, 10)
}

func (g *Generator) callID(kind string, s session, n int) string {
	return kind + g.prefix + strconv.FormatUint(s.id+uint64(n), 10)
}

// traceID is the session's trace ID: its index in the last 8 bytes, a fixed non-zero
// first byte so that it is never the empty ID.
func traceID(s session) pcommon.TraceID {
	var id pcommon.TraceID
	id[0] = 0x7b
	binary.BigEndian.PutUint64(id[8:], s.id+1)
	return id
}

// spanID hands out the next span ID, never zero.
func (g *Generator) spanID() pcommon.SpanID {
	g.spans++
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], g.spans)
	return id
}

func ts(t time.Time) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t) }

// ClaudeCodeLogs returns a batch of calls Claude Code tool calls as its log events: for each
// call a claude_code.tool_decision event (decision accept) followed by its
// claude_code.tool_result event (success "true", duration_ms as a string), 2*calls log
// records under one resource (service.name claude-code) and one scope. Attribute names and
// value types are those of testdata/claude/normal/logs.json (Claude Code 2.1.330).
func (g *Generator) ClaudeCodeLogs(calls int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	res := rl.Resource().Attributes()
	res.PutStr("service.name", "claude-code")
	res.PutStr("service.version", "2.1.330")
	res.PutStr("os.type", "linux")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("com.anthropic.claude_code.events")
	sl.Scope().SetVersion("2.1.330")
	lrs := sl.LogRecords()
	lrs.EnsureCapacity(RecordsPerCall * calls)
	for _, s := range g.sessions(calls) {
		sid := g.sessionID(s)
		for n := range s.calls {
			id := g.callID("toolu_", s, n)
			use := g.callTime(s, n)
			d := lrs.AppendEmpty()
			claudeEvent(d, "tool_decision", sid, use, 2*n)
			a := d.Attributes()
			a.PutStr("decision", "accept")
			a.PutStr("source", "config")
			a.PutStr("tool_name", "Bash")
			a.PutStr("tool_use_id", id)
			a.PutStr("tool_source", "builtin")
			a.PutStr("tool_parameters", `{"bash_command":"echo","full_command":"echo hello","description":"Print hello"}`)

			r := lrs.AppendEmpty()
			claudeEvent(r, "tool_result", sid, use.Add(toolTime), 2*n+1)
			a = r.Attributes()
			a.PutStr("tool_name", "Bash")
			a.PutStr("tool_use_id", id)
			a.PutStr("success", "true")
			a.PutStr("duration_ms", strconv.Itoa(int(toolTime/time.Millisecond)))
			a.PutStr("tool_parameters", `{"bash_command":"echo","full_command":"echo hello","description":"Print hello"}`)
			a.PutStr("tool_input", `{"command":"echo hello","description":"Print hello"}`)
			a.PutStr("tool_input_size_bytes", "52")
			a.PutStr("tool_result_size_bytes", "5")
		}
	}
	return ld
}

// claudeEvent fills the fields every Claude Code event record carries: the body
// "claude_code.{name}", the times, and the session attributes.
func claudeEvent(lr plog.LogRecord, name, sessionID string, t time.Time, seq int) {
	lr.SetTimestamp(ts(t))
	lr.SetObservedTimestamp(ts(t))
	lr.Body().SetStr("claude_code." + name)
	a := lr.Attributes()
	a.EnsureCapacity(16)
	a.PutStr("session.id", sessionID)
	a.PutStr("terminal.type", "dumb")
	a.PutStr("event.name", name)
	a.PutStr("event.timestamp", t.UTC().Format("2006-01-02T15:04:05.000Z"))
	a.PutInt("event.sequence", int64(seq))
}

// GenAISpans returns a batch of calls GenAI semantic-convention tool calls: for each call a
// chat span (kind CLIENT, operation chat) announcing it as a tool_call part of its
// gen_ai.output.messages, followed by the call's execute_tool span (kind INTERNAL,
// gen_ai.tool.call.id), 2*calls spans under one resource and one scope. A session is one
// trace with gen_ai.conversation.id on its spans; the chat span of call n starts after the
// execute_tool span of call n-1 ends. Message content is captured, as in
// testdata/aisdk/normal/traces.json (Vercel AI SDK 7 with @ai-sdk/otel), with the user's
// prompt as the chat span's only input message.
func (g *Generator) GenAISpans(calls int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "genai-agent")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("capture-agent")
	spans := ss.Spans()
	spans.EnsureCapacity(RecordsPerCall * calls)
	for _, s := range g.sessions(calls) {
		tid, sid := traceID(s), g.sessionID(s)
		root := g.spanID() // the agent span, not part of the batch
		for n := range s.calls {
			id := g.callID("call_", s, n)
			use := g.callTime(s, n)
			chatStart := use.Add(-10 * time.Millisecond)

			c := spans.AppendEmpty()
			c.SetTraceID(tid)
			c.SetSpanID(g.spanID())
			c.SetParentSpanID(root)
			c.SetName("chat gpt-4.1-mini")
			c.SetKind(ptrace.SpanKindClient)
			c.SetStartTimestamp(ts(chatStart))
			c.SetEndTimestamp(ts(use))
			a := c.Attributes()
			a.EnsureCapacity(10)
			a.PutStr("gen_ai.operation.name", "chat")
			a.PutStr("gen_ai.provider.name", "openai")
			a.PutStr("gen_ai.request.model", "gpt-4.1-mini")
			a.PutStr("gen_ai.conversation.id", sid)
			a.PutStr("gen_ai.response.id", "resp_"+id)
			a.PutInt("gen_ai.usage.input_tokens", 900)
			a.PutInt("gen_ai.usage.output_tokens", 35)
			a.PutStr("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"Run the shell command `+"`echo hello`"+` and tell me what it printed."}]}]`)
			a.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"tool_call","id":"`+id+`","name":"run_shell","arguments":{"command":"echo hello"}}],"finish_reason":"tool_call"}]`)

			t := spans.AppendEmpty()
			t.SetTraceID(tid)
			t.SetSpanID(g.spanID())
			t.SetParentSpanID(root)
			t.SetName("execute_tool run_shell")
			t.SetKind(ptrace.SpanKindInternal)
			t.SetStartTimestamp(ts(use.Add(time.Millisecond)))
			t.SetEndTimestamp(ts(use.Add(toolTime)))
			a = t.Attributes()
			a.EnsureCapacity(8)
			a.PutStr("gen_ai.operation.name", "execute_tool")
			a.PutStr("gen_ai.tool.name", "run_shell")
			a.PutStr("gen_ai.tool.call.id", id)
			a.PutStr("gen_ai.tool.type", "function")
			a.PutStr("gen_ai.conversation.id", sid)
			a.PutStr("gen_ai.tool.call.arguments", `{"command":"echo hello"}`)
			a.PutStr("gen_ai.tool.call.result", `"hello\n"`)
		}
	}
	return td
}

// ClientServerSpans returns the servicegraph connector's equivalent of a batch of calls
// calls: for each call a client span of service genai-agent (an HTTP POST to the tool
// server) and the server span of service tool-server that handled it (its parent is the
// client span), in the same trace, 2*calls spans. A session is one trace; each session's
// client spans are under one resource and its server spans under another, as two services
// export them.
func (g *Generator) ClientServerSpans(calls int) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, s := range g.sessions(calls) {
		tid := traceID(s)
		crs := td.ResourceSpans().AppendEmpty()
		crs.Resource().Attributes().PutStr("service.name", "genai-agent")
		clients := crs.ScopeSpans().AppendEmpty().Spans()
		srs := td.ResourceSpans().AppendEmpty()
		srs.Resource().Attributes().PutStr("service.name", "tool-server")
		servers := srs.ScopeSpans().AppendEmpty().Spans()
		for n := range s.calls {
			use := g.callTime(s, n)
			c := clients.AppendEmpty()
			c.SetTraceID(tid)
			c.SetSpanID(g.spanID())
			c.SetName("POST /tools/run_shell")
			c.SetKind(ptrace.SpanKindClient)
			c.SetStartTimestamp(ts(use))
			c.SetEndTimestamp(ts(use.Add(toolTime)))
			a := c.Attributes()
			a.PutStr("http.request.method", "POST")
			a.PutStr("server.address", "tool-server")
			a.PutStr("url.full", "http://tool-server/tools/run_shell")
			a.PutInt("http.response.status_code", 200)

			sv := servers.AppendEmpty()
			sv.SetTraceID(tid)
			sv.SetSpanID(g.spanID())
			sv.SetParentSpanID(c.SpanID())
			sv.SetName("POST /tools/{name}")
			sv.SetKind(ptrace.SpanKindServer)
			sv.SetStartTimestamp(ts(use.Add(time.Millisecond)))
			sv.SetEndTimestamp(ts(use.Add(toolTime - time.Millisecond)))
			a = sv.Attributes()
			a.PutStr("http.request.method", "POST")
			a.PutStr("http.route", "/tools/{name}")
			a.PutInt("http.response.status_code", 200)
		}
	}
	return td
}
